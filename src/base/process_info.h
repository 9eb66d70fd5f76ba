// Facts about processes this process did not spawn (Linux /proc), for commands such as
// `shoal down` that act on a pid recorded by another process.
//
// A pid can be reused by an unrelated program after its owner exits, so callers never signal a
// recorded pid on its number alone: they first check its command line (processCommandLine)
// names what they expect.
//
// Thread safety: all functions may be called from any thread.
#pragma once

#include <string>
#include <vector>

#include <sys/types.h>

#include "base/result.h"

namespace shoal {

// True when a process with this pid exists (zombies included).
bool processExists(pid_t pid);

// The process's argv, or kNotFound when it does not exist (or is a zombie).
Result<std::vector<std::string>> processCommandLine(pid_t pid);

// The absolute path of the running executable (/proc/self/exe).
Result<std::string> selfExecutablePath();

// Sends `signal` to `pid`. kNotFound if it no longer exists, kPermissionDenied if not ours.
Status signalProcess(pid_t pid, int signal);

}  // namespace shoal
