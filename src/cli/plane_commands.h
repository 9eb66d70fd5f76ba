// `shoal serve` and `shoal probe`: run a space's manager plane in the foreground, and ask a
// plane whether it is serving (docs/planes.md).
//
//   shoal serve [--space S] [--server URL]
//       connects (the broker from --server, else the mesh registry record, else
//       nats://127.0.0.1:4222), ensures the space (prints what it created or that nothing
//       changed), then serves the provision rail and the manager liveness responder until
//       SIGTERM / SIGINT. Exit 0 after a clean stop, 1 on a failure.
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
  // serve: the ack wait the fan-out and reader consumers are created with.
  double redeliverySeconds = 60;
};

int runServe(const PlaneCommandArgs& args);
int runProbe(const PlaneCommandArgs& args);

}  // namespace shoal::cli
