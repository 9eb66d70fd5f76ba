// MeshPaths: where one space's local mesh keeps its files on this machine (docs/architecture.md,
// Where files live).
//
//   data     $XDG_DATA_HOME/shoal/<space>/            (default ~/.local/share/shoal/<space>)
//   broker   <data>/broker                             JetStream store of the embedded broker
//   state    $XDG_STATE_HOME/shoal/                    (default ~/.local/state/shoal)
//   registry <state>/meshes/<space>.json               the mesh registry record (MeshRecord)
//   logs     <state>/logs/<space>-{broker,supervisor,planes,daemon}.log
//   secrets  <state>/secrets/<space>.nk                the mesh secret (mesh_secret.h), 0600
//            <state>/secrets/<space>-seats.key         the daemon's seat-profile key, 0600
//
// Every Shoal directory is created 0700 (base/owner_only.h): the broker's store holds every
// message of the space, the seats' journals their bodies, the secrets dir the keys.
//
// The space name must already be a routing token of at most 64 bytes ([A-Za-z0-9_-]); anything
// else is refused (`bad-space`), never rewritten, so a path can never escape its folder.
//
// Thread safety: a value type. Reads the environment once, in resolve().
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace shoal::supervisor {

struct MeshPaths {
  std::string space;
  std::string dataDir;
  std::string brokerStoreDir;
  std::string stateDir;
  std::string registryFile;
  std::string logDir;
  std::string brokerLog;
  std::string supervisorLog;
  std::string planesLog;
  std::string daemonLog;
  std::string secretsDir;
  std::string meshSecretFile;
  std::string profileKeyFile;
  // The seat daemon's control socket: $XDG_RUNTIME_DIR/shoal/<space>.sock when XDG_RUNTIME_DIR
  // is an absolute path, else <stateDir>/run/<space>.sock.
  std::string controlSocket;

  // kInvalidArgument `bad-space` for a name that is not a space; kFailedPrecondition `no-home`
  // when neither XDG variables nor HOME are set.
  static Result<MeshPaths> resolve(std::string_view space);
};

// The default space, and the longest name a space may have.
inline constexpr std::string_view kDefaultSpace = "main";
inline constexpr size_t kMaxSpaceNameBytes = 64;

}  // namespace shoal::supervisor
