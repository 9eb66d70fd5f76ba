#include "daemon/profile_seal.h"

#include <array>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "base/file_system.h"
#include "base/ids.h"
#include "base/owner_only.h"

namespace shoal::daemon {
namespace {

constexpr std::string_view kSealDomain = "shoal-seat-profile/1\n";
constexpr size_t kKeyHexChars = 64;

std::string hex(const unsigned char* bytes, size_t n) {
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i)
    out += fmt::format("{:02x}", bytes[i]);
  return out;
}

std::string sha256Hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest.data(), &len, EVP_sha256(), nullptr);
  return hex(digest.data(), len);
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

}  // namespace

std::string_view sealVerdictName(SealVerdict verdict) {
  switch (verdict) {
    case SealVerdict::kSealed:
      return "sealed";
    case SealVerdict::kUnsealed:
      return "unsealed";
    case SealVerdict::kForeign:
      return "foreign";
    case SealVerdict::kForged:
      return "forged";
  }
  return "unsealed";
}

ProfileSealer::ProfileSealer(std::string key)
    : key_(std::move(key)), keyId_(sha256Hex(key_).substr(0, 16)) {}

ProfileSealer ProfileSealer::withKeyForTest(std::string key) {
  return ProfileSealer(std::move(key));
}

Result<ProfileSealer> ProfileSealer::open(const std::string& keyFile) {
  FileSystem& fs = FileSystem::posix();
  size_t slash = keyFile.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    SHOAL_RETURN_IF_ERROR(ensureOwnerOnlyDir(keyFile.substr(0, slash)));
  }
  if (!fs.exists(keyFile)) {
    SHOAL_ASSIGN_OR_RETURN(std::string key, newHexToken(kKeyHexChars / 2));
    SHOAL_RETURN_IF_ERROR(writeFileAtomically(fs, keyFile, key + "\n"));
  }
  SHOAL_RETURN_IF_ERROR(checkOwnerOnlyFile(keyFile));
  SHOAL_ASSIGN_OR_RETURN(std::string text, fs.readFile(keyFile));
  std::string key = trimmed(std::move(text));
  if (key.size() != kKeyHexChars) {
    return dataLoss("bad-profile-key", "the seat-profile key " + keyFile +
                                           " is damaged; remove it (every seat must then be "
                                           "trusted again with `shoal seat trust`)");
  }
  return ProfileSealer(std::move(key));
}

ProfileSealValue ProfileSealer::seal(std::string_view space,
                                     std::string_view canonicalProfile) const {
  std::string message(kSealDomain);
  message += space;
  message += '\n';
  message += canonicalProfile;
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac.data(), &len);
  return ProfileSealValue{keyId_, hex(mac.data(), len)};
}

SealVerdict ProfileSealer::verify(std::string_view space, std::string_view canonicalProfile,
                                  const ProfileSealValue* seal) const {
  if (seal == nullptr) return SealVerdict::kUnsealed;
  if (seal->keyId != keyId_) return SealVerdict::kForeign;
  ProfileSealValue expected = this->seal(space, canonicalProfile);
  if (expected.mac.size() != seal->mac.size() ||
      CRYPTO_memcmp(expected.mac.data(), seal->mac.data(), expected.mac.size()) != 0) {
    return SealVerdict::kForged;
  }
  return SealVerdict::kSealed;
}

}  // namespace shoal::daemon
