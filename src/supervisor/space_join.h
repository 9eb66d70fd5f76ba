// SpaceJoin: a second machine joins a space in auth mode (issue 19; docs/multi-machine.md).
//
// On the machine that holds the space's authority, `shoal invite` makes a one-time join link
// (wire/join_link.h): a bootstrap credential (planes/grants.h `bootstrap`: it may only send its
// own invite to the manager's join rail, mesh/join_rail.h) valid for `ttl`, the broker's address
// and its CA's fingerprint. Nothing of it is stored or logged; it is printed once.
//
// On the other machine, `shoal daemon join <link>`:
//   1. reads the certificates the broker presents and keeps the one whose SHA-256 the link
//      names (`ca-mismatch` when none does: another broker, or a man in the middle);
//   2. connects over TLS trusting only that CA, under the bootstrap credential (a file that
//      exists only for the exchange);
//   3. makes the daemon's key pair and sends its public key over the join rail; the manager
//      records the invite's one use and answers with the daemon profile's JWT;
//   4. writes the joined space's context:
//
//   <secrets>/<space>-joined/           0700
//     context.json                      {"version":1,"space","url","owner","machine",
//                                        "joinedAtMs","expiresAt"}
//     ca.pem                            the space's CA, as verified
//     daemon.creds                      the daemon's credential (JWT + its own seed), 0600
//
// After that `shoal daemon run` (and the commands that go through the daemon: `shoal seat …`,
// `shoal daemon status`) use the context: the broker, the CA, the credential, the owner and the
// machine name. A machine joins a space once; joining again replaces the context.
//
// Thread safety: free functions over the file system; one caller at a time per space.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "base/result.h"
#include "supervisor/mesh_paths.h"
#include "supervisor/mesh_record.h"

namespace shoal::supervisor {

inline constexpr std::chrono::hours kDefaultInviteLifetime{1};
inline constexpr std::chrono::hours kMaxInviteLifetime{24 * 7};

struct InviteOptions {
  std::string machine;  // empty: the joiner names its machine
  std::chrono::seconds ttl{kDefaultInviteLifetime};
};

struct Invite {
  std::string link;  // a secret
  std::string owner;
  std::string machine;
  int64_t expiresAt = 0;
};

// The invite for a daemon of the person's own owner. Refusals: `no-authority` (this machine
// does not hold the space's), `invite-needs-tls` (the broker runs without TLS), `bad-ttl`,
// `bad-machine-name`, `invite-needs-address` (the broker listens on a wildcard address).
Result<Invite> createInvite(const MeshPaths& paths, const MeshRecord& record,
                            const InviteOptions& options);

struct JoinedSpace {
  std::string space;
  std::string url;  // tls://host:port
  std::string owner;
  std::string machine;
  int64_t joinedAtMs = 0;
  int64_t expiresAt = 0;  // the daemon credential's
  std::string caFile;
  std::string daemonCreds;
};

struct JoinedPaths {
  std::string dir;
  std::string contextFile;
  std::string caFile;
  std::string daemonCreds;
};
JoinedPaths joinedPathsOf(const MeshPaths& paths);

// kNotFound `space-not-joined` when this machine has not joined the space; kDataLoss for a context
// that does not parse.
Result<JoinedSpace> readJoinedSpace(const MeshPaths& paths);

// `shoal daemon join`: the steps above. `machine` names this machine when the invite leaves it
// open (else the invite's is used, and a different `machine` is refused `invite-names-machine`).
// Refusals: the link's (`plaintext-link`, `bad-join-link`), `space-mismatch`, `ca-mismatch`,
// `tls-not-offered`, `broker-unreachable`, `invite-expired` (the broker refused the bootstrap
// credential), `invite-used`, `manager-not-serving`.
Result<JoinedSpace> joinSpace(const MeshPaths& paths, const std::string& link,
                              const std::string& machine, std::chrono::milliseconds timeout);

}  // namespace shoal::supervisor
