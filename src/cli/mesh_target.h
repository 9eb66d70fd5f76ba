// Which mesh a command talks to, and the connections commands open to it.
//
// Every command that reaches the broker takes `--space` (default `main`) and `--server`
// (default: the URL recorded by `shoal up` for that space), plus `--timeout` for its waits.
// `openObserver` opens a mesh::Endpoint as the person at the CLI (`local.<login>`) that
// publishes no presence and binds no durable: it can read the roster and send, and it leaves
// no trace in the roster.
//
// Thread safety: CLI thread only.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "mesh/endpoint.h"

namespace CLI {
class App;
}

namespace shoal::cli {

struct MeshTargetArgs {
  std::string space = "main";
  std::string server;
  double timeoutSeconds = 3;

  std::chrono::milliseconds timeout() const {
    return std::chrono::milliseconds(static_cast<int64_t>(timeoutSeconds * 1000));
  }
};

// Adds --space, --server and --timeout (`timeoutWhat` says what is waited for).
void addMeshTargetOptions(CLI::App* command, MeshTargetArgs& args, std::string_view timeoutWhat);

struct MeshTarget {
  std::string space;
  std::string url;
};

// The validated space and the broker URL to use for it.
Result<MeshTarget> resolveMeshTarget(const MeshTargetArgs& args);

// An operator endpoint without presence or durables (see above); `connectionName` is shown by
// the broker. Names the remedy when the broker or the space is missing.
Result<std::unique_ptr<mesh::Endpoint>> openObserver(const MeshTarget& target,
                                                     std::string_view connectionName);

}  // namespace shoal::cli
