// `shoal up`, `shoal status`, `shoal down`: the local mesh's lifecycle and health.
//
// Parsing is registered on the App by registerMeshCommands; runMeshCommand runs whichever of
// the three was chosen and renders its outcome (human lines or --json).
//
// Thread safety: CLI thread only.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace shoal::cli {

struct MeshCommandArgs {
  std::string space = "main";
  std::string host = "127.0.0.1";
  int port = 4222;
  std::string server;      // status: inspect this broker instead of the local mesh
  std::string natsServer;  // up: nats-server binary
  bool foreground = false;
  bool json = false;
  bool force = false;
  double timeoutSeconds = 3;
};

void registerMeshCommands(CLI::App& app, MeshCommandArgs& up, MeshCommandArgs& status,
                          MeshCommandArgs& down);
// Returns the process exit code; -1 if none of the three subcommands was chosen.
int runMeshCommand(CLI::App& app, const MeshCommandArgs& up, const MeshCommandArgs& status,
                   const MeshCommandArgs& down);

}  // namespace shoal::cli
