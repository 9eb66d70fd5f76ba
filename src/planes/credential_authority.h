// CredentialAuthority: a space's keys and the JWTs they sign — what makes the manager plane
// the space's credential authority in auth mode (issue 19 items 1 and 4; NATS decentralized
// JWT: operator → account = space → user = principal).
//
// Its directory (0700; each file 0600, never on the wire, never in a seat's cwd):
//   operator.seed      the operator's key: signs the account JWTs
//   system.seed        the broker's system account (its own traffic, and claim updates)
//   account.seed       the space's account identity
//   signing.seed       the account signing key listed in the account JWT: it mints users
//   revocations.json   {"U…": unix seconds}: users revoked at or before that time
//   issued.json        [{userKey, name, profile, issuedAt, expiresAt}]: the credentials handed
//                      out by hand (`shoal creds mint`), for `shoal creds list`
// Keys are generated once, on first open, and read back ever after; the JWTs are re-signed
// from them at each open (a change in revocations re-signs the account JWT).
//
// Users are minted from a profile's grant rows (grants.h) with a lifetime: 24 h for daemons
// and seats, minutes for one-shot CLI calls. A minted user is a standard `.creds` text.
//
// Thread safety: one thread at a time. Lifetime: a value; it holds no descriptors.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/result.h"
#include "planes/grants.h"

namespace shoal::planes {

struct MintedUser {
  std::string userKey;    // "U…"
  std::string creds;      // the `.creds` text (JWT + seed): a secret
  int64_t expiresAt = 0;  // Unix seconds
};

struct MintedJwt {
  std::string jwt;
  int64_t expiresAt = 0;  // Unix seconds
};

// A credential handed out by hand, as the ledger keeps it (never its seed).
struct IssuedCredential {
  std::string userKey;
  std::string name;     // the JWT's name: a principal `o.a`, or a label
  std::string profile;  // agent | observer | admin | daemon (a joined machine's)
  int64_t issuedAt = 0;
  int64_t expiresAt = 0;
};

class CredentialAuthority {
 public:
  // Opens `dir`, generating the keys it lacks. Errors: the directory cannot be made owner-only
  // (`not-owner`), a key file is exposed (`secret-exposed`) or damaged (`bad-nkey-seed`).
  static Result<CredentialAuthority> openOrCreate(FileSystem& fs, const std::string& dir,
                                                  std::string_view space, const Clock& clock);

  const std::string& operatorJwt() const { return operatorJwt_; }
  const std::string& systemJwt() const { return systemJwt_; }
  const std::string& accountJwt() const { return accountJwt_; }
  const std::string& systemKey() const { return systemKey_; }
  const std::string& accountKey() const { return accountKey_; }

  // The nats-server configuration that trusts this authority: operator, system account and a
  // full resolver in `resolverDir` preloaded with both accounts, so claim updates (revocations)
  // can be pushed to a running broker; and `max_control_line` 32 KiB, since an agent's JWT (its
  // whole grant table) makes a CONNECT line longer than the default 4 KiB.
  std::string serverConfig(const std::string& resolverDir) const;

  // A user of the space named `name` holding exactly `rows`, valid for `ttl`.
  Result<MintedUser> mint(const std::string& name, const std::vector<GrantRow>& rows,
                          std::chrono::seconds ttl) const;
  // A user JWT for a key someone else holds (the manager's credential rail: a daemon sends its
  // seat's public key, never the seed). kInvalidArgument `bad-user-key` for a key that is not
  // a user's.
  Result<MintedJwt> mintFor(const std::string& userKey, const std::string& name,
                            const std::vector<GrantRow>& rows, std::chrono::seconds ttl) const;
  // A user of the system account allowed to push claim updates (`$SYS.REQ.CLAIMS.UPDATE`) and
  // to read the answers in its inbox `_INBOX_<connId>`.
  Result<MintedUser> mintSystemUser(const std::string& connId, std::chrono::seconds ttl) const;

  // Revokes every credential of `userKey` issued up to now: records it and re-signs the account
  // JWT (push accountJwt() to the broker for it to take effect).
  Status revoke(const std::string& userKey);
  const std::map<std::string, int64_t>& revocations() const { return revocations_; }
  bool isRevoked(const std::string& userKey) const { return revocations_.count(userKey) > 0; }
  // As the authority's files say now (another process, `shoal creds revoke`, may have revoked
  // it since this one opened them); an unreadable file counts as revoked.
  bool isRevokedOnDisk(const std::string& userKey) const;

  // The ledger of credentials handed out by hand: recordIssued appends one (durably) and drops
  // those expired more than a week ago.
  Status recordIssued(const IssuedCredential& credential) const;
  Result<std::vector<IssuedCredential>> issued() const;

 private:
  CredentialAuthority() = default;
  Status signJwts();

  FileSystem* fs_ = nullptr;
  const Clock* clock_ = nullptr;
  std::string dir_;
  std::string space_;
  std::string operatorSeed_, systemSeed_, accountSeed_, signingSeed_;
  std::string operatorKey_, systemKey_, accountKey_, signingKey_;
  std::string operatorJwt_, systemJwt_, accountJwt_;
  std::map<std::string, int64_t> revocations_;
};

}  // namespace shoal::planes
