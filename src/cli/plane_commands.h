// `shoal serve` and `shoal probe`: run a space's manager plane in the foreground, and ask a
// plane whether it is serving (docs/planes.md).
//
//   shoal serve [--space S] [--server URL] [--planes all|manager|delivery]
//               [--manager-creds F] [--delivery-creds F] [--authority DIR]
//       connects (the broker from --server, else the mesh registry record), ensures the space
//       (prints what it created or that nothing changed), then serves the provision rail and
//       the manager liveness responder, and the delivery plane, until SIGTERM / SIGINT. Open
//       mode: one connection under the mesh secret. Auth mode: each plane connects under its
//       own credential (planes/grants.h: the manager provisions, the delivery plane cannot);
//       with --authority the manager also serves the credential rail, minting seats'
//       credentials for their daemons (mesh/credential_rail.h).
//       Exit 0 after a clean stop, 1 on a failure, 2 on a usage error.
//   shoal probe manager|delivery [--space S] [--server URL] [--timeout SECONDS] [--json]
//       probes as `local.<login>` (open mode; docs/architecture.md, Conventions) and prints
//       the verdict. Exit 0 when the plane is bound, 1 otherwise, 2 for a plane name that is
//       not probeable.
//
// Thread safety: CLI thread only.
#pragma once

#include <string>

namespace shoal::cli {

struct PlaneCommandArgs {
  std::string space = "main";
  std::string server;    // empty: from the mesh registry (supervisor/broker_target.h)
  std::string nkeyFile;  // empty: the local mesh's secret when the broker is the local mesh
  std::string plane;     // probe: manager | delivery
  bool json = false;
  double timeoutSeconds = 1.5;
  // serve: which planes run here (all | manager | delivery).
  std::string planes = "all";
  // serve: how long to wait for a delivery lease another plane holds (a crashed holder's row
  // expires after 30 s); 0 refuses at once.
  double leaseWaitSeconds = 0;
  // serve, auth mode: each plane's own `.creds` (both, or the one of the plane that runs);
  // each plane then has its own connection, under that credential's grants and inbox.
  std::string managerCreds;
  std::string deliveryCreds;
  // serve, auth mode: the space's credential authority directory (the manager then mints
  // seats' credentials), and how long those last.
  std::string authorityDir;
  double seatCredsTtlSeconds = 24 * 3600;
  // serve: the ack wait the fan-out and reader consumers are created with.
  double redeliverySeconds = 60;
};

int runServe(const PlaneCommandArgs& args);
int runProbe(const PlaneCommandArgs& args);

}  // namespace shoal::cli
