#include "base/spawn.h"

#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

extern char** environ;

namespace shoal {
namespace {

std::string errnoText(int err) {
  return std::strerror(err);
}

// Owns a posix_spawn_file_actions_t / posix_spawnattr_t for the duration of one spawn.
struct SpawnResources {
  posix_spawn_file_actions_t actions{};
  posix_spawnattr_t attr{};
  bool haveActions = false;
  bool haveAttr = false;
  ~SpawnResources() {
    if (haveActions) posix_spawn_file_actions_destroy(&actions);
    if (haveAttr) posix_spawnattr_destroy(&attr);
  }
};

Status setupFailed(std::string_view what, int rc) {
  return internalError("spawn-setup", std::string(what) + ": " + errnoText(rc));
}

Status addActions(const SpawnPlan& plan, posix_spawn_file_actions_t* actions) {
  for (const SpawnFd& f : plan.fds) {
    int rc = f.sourceFd >= 0 ? posix_spawn_file_actions_adddup2(actions, f.sourceFd, f.childFd)
                             : posix_spawn_file_actions_addopen(
                                   actions, f.childFd, f.openPath.c_str(), f.openFlags, 0600);
    if (rc != 0) return setupFailed("file action for fd " + std::to_string(f.childFd), rc);
  }
  if (!plan.cwd.empty()) {
    if (int rc = posix_spawn_file_actions_addchdir_np(actions, plan.cwd.c_str()); rc != 0) {
      return setupFailed("chdir action", rc);
    }
  }
  if (int rc = posix_spawn_file_actions_addclosefrom_np(actions, plan.closeFrom); rc != 0) {
    return setupFailed("closefrom action", rc);
  }
  return Status::ok();
}

Status setAttributes(const SpawnPlan& plan, posix_spawnattr_t* attr) {
  sigset_t empty;
  sigset_t all;
  sigemptyset(&empty);
  sigfillset(&all);
  posix_spawnattr_setsigmask(attr, &empty);
  posix_spawnattr_setsigdefault(attr, &all);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (plan.newSession) flags |= POSIX_SPAWN_SETSID;
  if (plan.newProcessGroup) {
    if (int rc = posix_spawnattr_setpgroup(attr, 0); rc != 0) return setupFailed("setpgroup", rc);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  if (int rc = posix_spawnattr_setflags(attr, flags); rc != 0) return setupFailed("setflags", rc);
  return Status::ok();
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings)
    out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

Status spawnFailure(const SpawnPlan& plan, int rc) {
  const std::string& program = plan.argv[0];
  std::string what = "cannot start '" + program + "': " + errnoText(rc);
  switch (rc) {
    case ENOENT:
      return notFound("binary-missing", what + plan.notFoundHint);
    case EACCES:
    case EPERM:
      return permissionDenied("binary-not-executable", what);
    case ENOEXEC:
      return invalidArgument("binary-not-executable", what);
    default:
      return unavailable("spawn-failed", what);
  }
}

}  // namespace

Result<pid_t> spawnProcess(const SpawnPlan& plan) {
  if (plan.argv.empty() || plan.argv[0].empty()) {
    return invalidArgument("empty-argv", "spawn needs a program name in argv[0]");
  }
  SpawnResources res;
  if (int rc = posix_spawn_file_actions_init(&res.actions); rc != 0) {
    return setupFailed("posix_spawn_file_actions_init", rc);
  }
  res.haveActions = true;
  if (int rc = posix_spawnattr_init(&res.attr); rc != 0) {
    return setupFailed("posix_spawnattr_init", rc);
  }
  res.haveAttr = true;
  SHOAL_RETURN_IF_ERROR(addActions(plan, &res.actions));
  SHOAL_RETURN_IF_ERROR(setAttributes(plan, &res.attr));

  std::vector<std::string> envStrings = plan.environment;
  std::vector<std::string> argvStrings = plan.argv;
  std::vector<char*> envp = pointers(envStrings);
  std::vector<char*> argv = pointers(argvStrings);
  pid_t pid = -1;
  int rc =
      posix_spawnp(&pid, plan.argv[0].c_str(), &res.actions, &res.attr, argv.data(), envp.data());
  if (rc != 0) return spawnFailure(plan, rc);
  return pid;
}

std::vector<std::string> childEnvironment(
    const std::optional<std::vector<std::string>>& allowList, const std::vector<std::string>& unset,
    const std::vector<std::pair<std::string, std::string>>& set) {
  std::set<std::string> allowed;
  if (allowList) allowed.insert(allowList->begin(), allowList->end());
  const std::set<std::string> dropped(unset.begin(), unset.end());
  std::vector<std::pair<std::string, std::string>> vars;  // inherited order preserved
  std::map<std::string, size_t> index;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string name(entry.substr(0, eq));
    if ((allowList && allowed.count(name) == 0) || dropped.count(name) != 0) continue;
    if (index.count(name) != 0) continue;  // first definition wins, as getenv does
    index[name] = vars.size();
    vars.emplace_back(name, std::string(entry.substr(eq + 1)));
  }
  for (const auto& [name, value] : set) {
    if (auto it = index.find(name); it != index.end()) {
      vars[it->second].second = value;
    } else {
      index[name] = vars.size();
      vars.emplace_back(name, value);
    }
  }
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [name, value] : vars)
    out.push_back(name + "=" + value);
  return out;
}

}  // namespace shoal
