// `shoal up`, `shoal status`, `shoal down`: the local mesh's lifecycle and health.
//
// registerMeshCommands (cli/command.h) adds them to the App; each run* function runs one and
// renders its outcome (human lines or --json), returning the exit code.
//
// Thread safety: CLI thread only.
#pragma once

#include <string>

namespace shoal::cli {

struct MeshCommandArgs {
  std::string space = "main";
  std::string host = "127.0.0.1";
  int port = 4222;
  std::string server;      // status: inspect this broker instead of the local mesh
  std::string nkeyFile;    // status: the credential for --server
  std::string natsServer;  // up: nats-server binary
  bool foreground = false;
  bool noPlanes = false;           // up: run only the broker
  bool noDaemon = false;           // up: no seat daemon
  bool auth = false;               // up: auth mode (supervisor/auth_mode.h)
  bool tls = false;                // up: TLS with the space's own CA (supervisor/broker_tls.h)
  int64_t planeCredsTtl = 86'400;  // up, auth mode: the planes' credential lifetime (seconds)
  bool json = false;
  bool force = false;
  double timeoutSeconds = 3;
};

int runUp(const MeshCommandArgs& args);
int runStatus(const MeshCommandArgs& args);
int runDown(const MeshCommandArgs& args);

}  // namespace shoal::cli
