#include "transport/nkey.h"

#include <array>
#include <cctype>
#include <cstdint>
#include <memory>
#include <optional>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "base/base32.h"

namespace shoal::transport {
namespace {

constexpr size_t kRawKeyBytes = 32;
constexpr unsigned char kSeedPrefix = 18 << 3;  // 'S'

uint16_t crc16Xmodem(std::string_view data) {
  uint16_t crc = 0;
  for (unsigned char byte : data) {
    crc ^= static_cast<uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc & 0x8000) != 0 ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                                : static_cast<uint16_t>(crc << 1);
  }
  return crc;
}

// `payload ‖ CRC-16 little-endian`, base32.
std::string withChecksum(std::string payload) {
  uint16_t crc = crc16Xmodem(payload);
  payload.push_back(static_cast<char>(crc & 0xff));
  payload.push_back(static_cast<char>(crc >> 8));
  return base32Encode(payload);
}

// The payload of an encoded key whose checksum holds, or nullopt.
std::optional<std::string> checkedPayload(std::string_view text) {
  auto raw = base32Decode(text);
  if (!raw || raw->size() < 3) return std::nullopt;
  std::string payload = raw->substr(0, raw->size() - 2);
  auto lo = static_cast<unsigned char>((*raw)[raw->size() - 2]);
  auto hi = static_cast<unsigned char>((*raw)[raw->size() - 1]);
  if (crc16Xmodem(payload) != static_cast<uint16_t>(lo | (hi << 8))) return std::nullopt;
  return payload;
}

struct PkeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyDeleter>;

Pkey privateKeyOf(std::string_view rawSeed) {
  return Pkey(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr,
                                           reinterpret_cast<const unsigned char*>(rawSeed.data()),
                                           rawSeed.size()));
}

Result<std::string> publicKeyOf(EVP_PKEY* key) {
  std::array<unsigned char, kRawKeyBytes> pub{};
  size_t len = pub.size();
  if (EVP_PKEY_get_raw_public_key(key, pub.data(), &len) != 1 || len != kRawKeyBytes) {
    return internalError("openssl", "deriving an Ed25519 public key failed");
  }
  return std::string(reinterpret_cast<const char*>(pub.data()), len);
}

std::string encodePublic(NKeyRole role, std::string_view rawPublic) {
  std::string payload(1, static_cast<char>(role));
  payload += rawPublic;
  return withChecksum(std::move(payload));
}

std::string encodeSeed(NKeyRole role, std::string_view rawSeed) {
  auto prefix = static_cast<unsigned char>(role);
  std::string payload;
  payload.push_back(static_cast<char>(kSeedPrefix | (prefix >> 5)));
  payload.push_back(static_cast<char>((prefix & 31) << 3));
  payload += rawSeed;
  return withChecksum(std::move(payload));
}

Status badSeed(std::string_view why) {
  return invalidArgument("bad-nkey-seed", "not an nkey seed: " + std::string(why));
}

// The role and raw 32-byte seed of an encoded seed.
Result<std::pair<NKeyRole, std::string>> decodeSeed(std::string_view seed) {
  while (!seed.empty() && std::isspace(static_cast<unsigned char>(seed.back())))
    seed.remove_suffix(1);
  while (!seed.empty() && std::isspace(static_cast<unsigned char>(seed.front())))
    seed.remove_prefix(1);
  auto payload = checkedPayload(seed);
  if (!payload) return badSeed("bad base32 or checksum");
  if (payload->size() != 2 + kRawKeyBytes) return badSeed("wrong length");
  auto b0 = static_cast<unsigned char>((*payload)[0]);
  auto b1 = static_cast<unsigned char>((*payload)[1]);
  if ((b0 & 0xf8) != kSeedPrefix) return badSeed("it does not start with S");
  auto role = static_cast<unsigned char>(((b0 & 7) << 5) | (b1 >> 3));
  if (role != static_cast<unsigned char>(NKeyRole::kUser) &&
      role != static_cast<unsigned char>(NKeyRole::kAccount) &&
      role != static_cast<unsigned char>(NKeyRole::kOperator)) {
    return badSeed("unknown role prefix");
  }
  return std::pair{static_cast<NKeyRole>(role), payload->substr(2)};
}

}  // namespace

Result<NKeyPair> generateNKey(NKeyRole role) {
  std::array<unsigned char, kRawKeyBytes> raw{};
  if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) {
    return internalError("openssl", "the OS randomness source failed");
  }
  std::string rawSeed(reinterpret_cast<const char*>(raw.data()), raw.size());
  Pkey key = privateKeyOf(rawSeed);
  if (!key) return internalError("openssl", "creating an Ed25519 key failed");
  SHOAL_ASSIGN_OR_RETURN(std::string pub, publicKeyOf(key.get()));
  return NKeyPair{role, encodeSeed(role, rawSeed), encodePublic(role, pub)};
}

Result<NKeyPair> nkeyFromSeed(std::string_view seed) {
  SHOAL_ASSIGN_OR_RETURN(auto decoded, decodeSeed(seed));
  Pkey key = privateKeyOf(decoded.second);
  if (!key) return badSeed("not an Ed25519 seed");
  SHOAL_ASSIGN_OR_RETURN(std::string pub, publicKeyOf(key.get()));
  return NKeyPair{decoded.first, encodeSeed(decoded.first, decoded.second),
                  encodePublic(decoded.first, pub)};
}

Result<std::string> nkeySign(std::string_view seed, std::string_view data) {
  SHOAL_ASSIGN_OR_RETURN(auto decoded, decodeSeed(seed));
  Pkey key = privateKeyOf(decoded.second);
  if (!key) return badSeed("not an Ed25519 seed");
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  std::array<unsigned char, 64> sig{};
  size_t len = sig.size();
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), sig.data(), &len,
                     reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1) {
    return internalError("openssl", "Ed25519 signing failed");
  }
  return std::string(reinterpret_cast<const char*>(sig.data()), len);
}

bool nkeyVerify(std::string_view publicKey, std::string_view data, std::string_view signature) {
  auto payload = checkedPayload(publicKey);
  if (!payload || payload->size() != 1 + kRawKeyBytes) return false;
  Pkey key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                       reinterpret_cast<const unsigned char*>(payload->data() + 1),
                                       kRawKeyBytes));
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  return key && ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) == 1 &&
         EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                          signature.size(), reinterpret_cast<const unsigned char*>(data.data()),
                          data.size()) == 1;
}

bool isNKeyPublic(std::string_view publicKey, NKeyRole role) {
  auto payload = checkedPayload(publicKey);
  return payload && payload->size() == 1 + kRawKeyBytes &&
         static_cast<unsigned char>((*payload)[0]) == static_cast<unsigned char>(role);
}

}  // namespace shoal::transport
