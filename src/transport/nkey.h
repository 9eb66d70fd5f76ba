// NKey: an Ed25519 key pair in NATS's text encoding, generated and read by Shoal itself
// (OpenSSL for the curve, no external `nsc`).
//
// Encoding (the NATS nkeys format): a public key is base32 (RFC 4648, no padding) of
// `prefix byte ‖ 32-byte public key ‖ CRC-16/XMODEM little-endian`; a seed is base32 of
// `(0x90 | prefix >> 5) ‖ ((prefix & 31) << 3) ‖ 32-byte private seed ‖ CRC`. The prefix byte
// names the role: user `U` (20 << 3), account `A` (0), operator `O` (14 << 3); so a user seed
// reads `SU…` (58 characters) and its public key `U…` (56 characters).
//
// A broker that lists a user's public key (`authorization { users: [{nkey: U…}] }`) admits a
// client that signs the server's nonce with the seed; the seed itself never crosses the wire,
// so presenting it to a wrong server leaks nothing reusable.
//
// Thread safety: pure functions (OpenSSL's EVP calls are thread-safe).
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace shoal::transport {

enum class NKeyRole : unsigned char {
  kOperator = 14 << 3,
  kAccount = 0,
  kUser = 20 << 3,
};

struct NKeyPair {
  NKeyRole role = NKeyRole::kUser;
  std::string seed;       // "SU…": the secret; keep it in an owner-only file
  std::string publicKey;  // "U…": what a server config lists
};

// A fresh pair from the OS's randomness. kInternal if OpenSSL fails.
Result<NKeyPair> generateNKey(NKeyRole role);

// Decodes and checks an encoded seed (role prefix, length, CRC) and derives its public key.
// Surrounding whitespace is ignored. kInvalidArgument `bad-nkey-seed` otherwise.
Result<NKeyPair> nkeyFromSeed(std::string_view seed);

// Signs `data` with the seed (Ed25519): the 64-byte raw signature.
Result<std::string> nkeySign(std::string_view seed, std::string_view data);

// Whether `signature` is `publicKey`'s Ed25519 signature of `data` (false for a malformed key
// of any role, or a bad signature).
bool nkeyVerify(std::string_view publicKey, std::string_view data, std::string_view signature);

// Whether `publicKey` is a well-formed encoded public key of `role` (prefix, length, CRC).
bool isNKeyPublic(std::string_view publicKey, NKeyRole role);

}  // namespace shoal::transport
