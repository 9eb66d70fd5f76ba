// Which mesh a command talks to, and the connections commands open to it.
//
// Every command that reaches the broker takes `--space` (default `main`), `--server` and
// `--nkey` (default: the broker and the secret recorded by `shoal up` for that space; there is
// no fallback URL — supervisor/broker_target.h), plus `--timeout` for its waits.
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
#include <vector>

#include "base/result.h"
#include "mesh/endpoint.h"
#include "supervisor/auth_mode.h"
#include "supervisor/broker_target.h"

namespace CLI {
class App;
}

namespace shoal::cli {

struct MeshTargetArgs {
  std::string space = "main";
  std::string server;
  std::string nkeyFile;
  double timeoutSeconds = 3;
  // Auth mode: the channels this command posts to (its credential is minted for them).
  std::vector<std::string> postChannels;
  // A joined machine's daemon connects under its own credential, not the person's.
  bool asDaemon = false;

  std::chrono::milliseconds timeout() const {
    return std::chrono::milliseconds(static_cast<int64_t>(timeoutSeconds * 1000));
  }
};

// Adds --space, --server, --nkey and --timeout (`timeoutWhat` says what is waited for).
void addMeshTargetOptions(CLI::App* command, MeshTargetArgs& args, std::string_view timeoutWhat);

using MeshTarget = supervisor::BrokerTarget;

// The validated space, the broker URL and the credential to use for it.
Result<MeshTarget> resolveMeshTarget(const MeshTargetArgs& args);

// Auth mode on the authority's machine: `target` connects under the person's credential of
// `privilege` (supervisor::privilegedCredential) instead of the agent-profile one, for a command
// that reads the space's history or edits its channel registry. Open mode: unchanged. A joined
// machine holds no such credential: kFailedPrecondition `needs-authority-machine`.
Status usePrivilege(const MeshTargetArgs& args, MeshTarget& target, supervisor::Privilege privilege,
                    std::string_view what);

// The owner of the seats the person at the CLI names by name: `local` in open mode, the
// person's own `u_…` in auth mode (supervisor/auth_mode.h). Reads no broker.
std::string seatOwnerOf(const MeshTargetArgs& args);

// A plain broker connection to `target` (no reconnects: a one-shot command), with the failure
// explained (supervisor::explainConnectFailure).
Result<std::unique_ptr<transport::Connection>> openConnection(const MeshTarget& target,
                                                              std::string_view name,
                                                              std::chrono::milliseconds timeout);

// An operator endpoint without presence or durables (see above); `connectionName` is shown by
// the broker. Names the remedy when the broker or the space is missing.
Result<std::unique_ptr<mesh::Endpoint>> openObserver(const MeshTarget& target,
                                                     std::string_view connectionName);

}  // namespace shoal::cli
