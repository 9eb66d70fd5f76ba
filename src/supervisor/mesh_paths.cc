#include "supervisor/mesh_paths.h"

#include <cstdlib>

#include <fmt/format.h>

#include "wire/token.h"

namespace shoal::supervisor {
namespace {

std::string envOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && v[0] == '/') ? std::string(v) : fallback;
}

}  // namespace

Result<MeshPaths> MeshPaths::resolve(std::string_view space) {
  const char* home = std::getenv("HOME");
  std::string homeDir = (home != nullptr && home[0] == '/') ? home : "";
  std::string dataHome = envOr("XDG_DATA_HOME", homeDir.empty() ? "" : homeDir + "/.local/share");
  std::string stateHome = envOr("XDG_STATE_HOME", homeDir.empty() ? "" : homeDir + "/.local/state");
  if (dataHome.empty() || stateHome.empty()) {
    return failedPrecondition("no-home",
                              "cannot place Shoal's files: set HOME (or XDG_DATA_HOME and "
                              "XDG_STATE_HOME) to an absolute path");
  }
  // The name becomes file names and subject tokens: it is refused, never rewritten (a rewrite
  // would quietly put `../../etc` in a space called `______etc`).
  if (!wire::isRoutingToken(space) || space.size() > kMaxSpaceNameBytes) {
    return invalidArgument("bad-space",
                           fmt::format("the space name `{}` is not one: a space is 1–{} letters, "
                                       "digits, `_` or `-` (like `main` or `team-a`)",
                                       space.substr(0, 80), kMaxSpaceNameBytes));
  }
  MeshPaths p;
  p.space = std::string(space);
  p.dataDir = dataHome + "/shoal/" + p.space;
  p.brokerStoreDir = p.dataDir + "/broker";
  p.stateDir = stateHome + "/shoal";
  p.registryFile = p.stateDir + "/meshes/" + p.space + ".json";
  p.logDir = p.stateDir + "/logs";
  p.brokerLog = p.logDir + "/" + p.space + "-broker.log";
  p.supervisorLog = p.logDir + "/" + p.space + "-supervisor.log";
  p.planesLog = p.logDir + "/" + p.space + "-planes.log";
  p.daemonLog = p.logDir + "/" + p.space + "-daemon.log";
  p.secretsDir = p.stateDir + "/secrets";
  p.meshSecretFile = p.secretsDir + "/" + p.space + ".nk";
  p.profileKeyFile = p.secretsDir + "/" + p.space + "-seats.key";
  std::string runtimeDir = envOr("XDG_RUNTIME_DIR", "");
  p.controlSocket = !runtimeDir.empty() && runtimeDir.front() == '/'
                        ? runtimeDir + "/shoal/" + p.space + ".sock"
                        : p.stateDir + "/run/" + p.space + ".sock";
  return p;
}

}  // namespace shoal::supervisor
