// ProfileSeal: proof that a stored seat profile was written by this machine's daemon, for its
// owner. A profile is code the daemon executes (its `command` runs as the daemon's user), and
// the profile bucket is shared state on the broker: anything that can write the bucket could
// otherwise make the daemon run a command. So the daemon runs only what it sealed itself.
//
// The key: 32 random bytes, hex, in an owner-only file (MeshPaths::profileKeyFile, 0600 in the
// 0700 secrets directory), made on first use; it never leaves the machine. Its id is the first
// 16 hex digits of its SHA-256, so a profile names which daemon sealed it without revealing
// the key.
//
// The seal: HMAC-SHA256 over "shoal-seat-profile/1\n" ‖ space ‖ "\n" ‖ the profile's canonical
// JSON (encodeSeatProfile), hex. The space and the profile's own id are inside the MAC, so a
// sealed profile cannot be moved to another seat or space.
//
//   verdict      meaning                                              the daemon
//   kSealed      sealed by this key and unchanged                     opens the seat
//   kUnsealed    no seal (written before seals, or by someone else)   refuses `unsealed-profile`
//   kForeign     sealed by another daemon's key                       leaves it (`foreign-profile`)
//   kForged      names this key but the MAC does not match            refuses `forged-profile`
//
// A replay of a profile this daemon sealed earlier still verifies: it was the owner's once.
//
// Thread safety: a sealer is immutable after open(); any thread may use it.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace shoal::daemon {

enum class SealVerdict { kSealed, kUnsealed, kForeign, kForged };
std::string_view sealVerdictName(SealVerdict verdict);  // "sealed" | "unsealed" | …

struct ProfileSealValue {
  std::string keyId;
  std::string mac;
};

class ProfileSealer {
 public:
  // Reads the key in `keyFile`, creating it (and an owner-only parent directory) when absent.
  // A key file others can read or write is refused (`secret-exposed`).
  static Result<ProfileSealer> open(const std::string& keyFile);
  // A sealer with a given key (tests).
  static ProfileSealer withKeyForTest(std::string key);

  const std::string& keyId() const { return keyId_; }
  ProfileSealValue seal(std::string_view space, std::string_view canonicalProfile) const;
  SealVerdict verify(std::string_view space, std::string_view canonicalProfile,
                     const ProfileSealValue* seal) const;

 private:
  explicit ProfileSealer(std::string key);
  std::string key_;
  std::string keyId_;
};

}  // namespace shoal::daemon
