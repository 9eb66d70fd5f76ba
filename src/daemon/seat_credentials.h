// SeatCredentials: in auth mode, each seat's own agent credential (issue 19 items 2 and 4). The
// daemon holds only its daemon credential; for each seat it makes a key pair and a reply inbox,
// sends the public key to the manager over the credential rail (mesh/credential_rail.h) and
// writes the JWT it gets back, with the seed, as a standard `.creds` file:
//
//   <dir>/<owner>.<actor>.creds   0600, in an owner-only directory under the daemon's state
//                                 directory — never inside a seat's cwd
//
// The seat's connections read that file at every (re)connect. renewDue() asks again for every
// credential past half its lifetime, keeping the key and the inbox (a connection keeps its
// inbox across reconnects), so a seat never reconnects with an expired credential while the
// manager answers; one that cannot be renewed is logged and tried again a tenth of its lifetime
// later (at most 10 s).
//
// The grants follow the profile: its declared channels (read and post), its role. A channel
// joined later at runtime is outside the credential (the broker refuses it; still planned:
// re-issuing on join).
//
// Thread safety: every method may be called from any thread (one mutex).
// Lifetime: must not outlive `conn`.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "base/mutex.h"
#include "base/result.h"
#include "daemon/seat_profile.h"
#include "transport/connection.h"

namespace shoal::daemon {

// Where a seat's connections find their credential.
struct SeatCredential {
  std::string credsFile;
  std::string inboxPrefix;  // `_INBOX_<connId>`: the only inbox its grants allow
  int64_t expiresAt = 0;    // Unix seconds
};

// The daemon's own place in auth mode: the owner whose seats it runs and its machine name.
struct DaemonIdentity {
  std::string owner;
  std::string machine;
};

class SeatCredentials {
 public:
  SeatCredentials(transport::Connection& conn, std::string space, DaemonIdentity identity,
                  std::string dir, std::chrono::milliseconds timeout = std::chrono::seconds(5));

  // `profile`'s credential: the one held while it is valid for more than half its lifetime
  // and was issued for the same grants, else a fresh issue. Errors: the manager's refusal or
  // silence (`manager-not-serving`, a timeout), the file cannot be written.
  Result<SeatCredential> issue(const SeatProfile& profile);
  // Forgets `profile`'s key and removes its file (the seat was removed).
  void forget(const wire::Principal& principal);
  // Re-issues every credential past half its lifetime; returns how many were renewed.
  size_t renewDue();

 private:
  struct Held {
    SeatProfile profile;
    std::string seed;
    std::string userKey;
    std::string connId;
    SeatCredential credential;
    int64_t issuedAt = 0;
    int64_t retryAt = 0;  // a failed renewal is tried again from then (Unix seconds)
  };
  Result<SeatCredential> issueLocked(Held& held) SHOAL_REQUIRES(mu_);

  transport::Connection& conn_;
  const std::string space_;
  const DaemonIdentity identity_;
  const std::string dir_;
  const std::chrono::milliseconds timeout_;
  Mutex mu_;
  std::map<std::string, Held> held_ SHOAL_GUARDED_BY(mu_);  // by principal dot-form
};

}  // namespace shoal::daemon
