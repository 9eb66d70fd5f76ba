// spawnProcess: the one place Shoal calls posix_spawn — for the supervisor's helpers
// (base/subprocess.h) and for runtime Processes (runtime/child_process.h).
//
// What every child gets: argv[0] searched on PATH when it has no '/'; the given working
// directory; exactly the environment passed (childEnvironment() builds one from the parent's);
// the descriptor plan applied in order (a dup2 of a parent descriptor, or a path opened), then
// every descriptor from `closeFrom` up closed, CLOEXEC or not; an empty signal mask and every
// disposition reset to its default (a parent that ignores SIGPIPE does not pass that on);
// optionally a new session (setsid) or its own process group.
//
// Errors: kNotFound `binary-missing` (with `notFoundHint` appended), kPermissionDenied or
// kInvalidArgument `binary-not-executable`, kUnavailable `spawn-failed`, kInternal
// `spawn-setup` for a posix_spawn attribute that could not be set; `empty-argv`.
//
// Thread safety: any thread (the environment is read once, by childEnvironment()).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "base/result.h"

namespace shoal {

struct SpawnFd {
  int childFd = -1;
  int sourceFd = -1;     // >= 0: dup2(sourceFd, childFd); it must not be one of 0..2
  std::string openPath;  // else: open(openPath, openFlags, 0600) as childFd
  int openFlags = 0;
};

struct SpawnPlan {
  std::vector<std::string> argv;
  std::string cwd;                       // empty: the parent's
  std::vector<std::string> environment;  // "NAME=value", the whole environment
  std::vector<SpawnFd> fds;              // applied in order
  int closeFrom = 3;                     // closed in the child from this descriptor up
  bool newSession = false;               // setsid()
  bool newProcessGroup = false;          // its own process group (it leads it)
  std::string notFoundHint;              // appended to a binary-missing message
};

Result<pid_t> spawnProcess(const SpawnPlan& plan);

// The parent's environment (only the names in `allowList` when it is given; without the names
// in `unset`), in its order with the first definition of a name winning, then `set` applied in
// order (replacing a value in place, or appending).
std::vector<std::string> childEnvironment(
    const std::optional<std::vector<std::string>>& allowList, const std::vector<std::string>& unset,
    const std::vector<std::pair<std::string, std::string>>& set);

}  // namespace shoal
