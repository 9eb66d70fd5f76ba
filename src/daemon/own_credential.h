// OwnCredential: a joined machine's seat daemon keeps its own credential valid (issue 19;
// supervisor/space_join.h). The machine that holds the space's authority re-mints its daemon's
// credential itself (supervisor/auth_mode.h); a joined one has only the key its join made, so
// past half the credential's lifetime it asks the manager, on its own issue subject, for a new
// JWT for that same key (mesh/credential_rail.h `DaemonRenewal`) and writes it beside the seed.
// The connection keeps its inbox (the same connId) and nats.c reads the renewed file at its
// next reconnect, which the broker forces when the old JWT expires.
//
// A failed renewal (the manager down, the machine revoked) is logged and tried again at a
// tenth of the lifetime, clamped to 1–60 s, until the credential expires.
//
// Thread safety: renewIfDue() from one thread (the daemon's control tick).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "base/result.h"
#include "daemon/seat_credentials.h"
#include "transport/connection.h"

namespace shoal::daemon {

class OwnCredential {
 public:
  OwnCredential(transport::Connection& conn, std::string space, DaemonIdentity identity,
                std::string credsFile, std::chrono::milliseconds timeout = std::chrono::seconds(5));

  // Renews when past half the lifetime (and not waiting out a failed attempt): true when the
  // file now holds a new JWT.
  bool renewIfDue(int64_t nowSeconds);

 private:
  Status renew();

  transport::Connection& conn_;
  const std::string space_;
  const DaemonIdentity identity_;
  const std::string credsFile_;
  const std::chrono::milliseconds timeout_;
  int64_t retryAt_ = 0;
};

}  // namespace shoal::daemon
