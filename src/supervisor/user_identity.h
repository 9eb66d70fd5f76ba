// UserIdentity: the key a person (or a machine's daemon) holds, and the owner token derived
// from it (issue 19 item 3; Cotal §2: the authenticated owner is `u_` + 26 lower-case base32,
// its derivation pluggable).
//
// The key is a user nkey kept in `<secretsDir>/identity.seed` (0600 in the 0700 secrets
// directory), made the first time and read back ever after. The owner token is
// `u_` + the first 26 characters of the lower-case base32 of SHA-256(public key): 130 bits, so
// two people on one broker never share an owner, and the same person keeps theirs across
// machines only by carrying the key. A derived token can never look like an nkey (nkeys are
// upper-case and 56 characters), and `local` is never one.
//
// Auth mode (not wired yet) names every principal of this person `<owner>.<actor>`.
//
// Thread safety: free functions over the file system; one caller per secrets directory.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace shoal::supervisor {

struct UserIdentity {
  std::string seedFile;
  std::string publicKey;  // "U…"
  std::string owner;      // "u_…"
};

// Reads `<secretsDir>/identity.seed`, making it (and the directory, 0700) first when absent.
// Refuses a file another user could read (`secret-exposed`) or that is not a user seed.
Result<UserIdentity> ensureUserIdentity(const std::string& secretsDir);

// `u_` + 26 of [a-z2-7] for a user public key (kInvalidArgument `bad-user-key` otherwise).
Result<std::string> ownerTokenOf(std::string_view userPublicKey);

}  // namespace shoal::supervisor
