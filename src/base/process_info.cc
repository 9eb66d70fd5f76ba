#include "base/process_info.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

#include <signal.h>
#include <unistd.h>

#include "base/file_system.h"

namespace shoal {

bool processExists(pid_t pid) {
  if (pid <= 0) return false;
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

Result<std::vector<std::string>> processCommandLine(pid_t pid) {
  if (pid <= 0) return notFound("no-process", "pid " + std::to_string(pid) + " is not valid");
  auto raw = FileSystem::posix().readFile("/proc/" + std::to_string(pid) + "/cmdline");
  if (!raw.isOk()) return notFound("no-process", "no process " + std::to_string(pid));
  if (raw->empty())
    return notFound("no-process", "process " + std::to_string(pid) + " is a zombie");
  std::vector<std::string> args;
  size_t start = 0;
  while (start < raw->size()) {
    size_t end = raw->find('\0', start);
    if (end == std::string::npos) end = raw->size();
    args.push_back(raw->substr(start, end - start));
    start = end + 1;
  }
  return args;
}

Result<std::string> selfExecutablePath() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return unavailable("no-self-exe",
                       std::string("readlink /proc/self/exe: ") + std::strerror(errno));
  return std::string(buf, static_cast<size_t>(n));
}

Status signalProcess(pid_t pid, int signal) {
  if (pid <= 0) return invalidArgument("bad-pid", "refusing to signal pid " + std::to_string(pid));
  if (::kill(pid, signal) == 0) return Status::ok();
  if (errno == ESRCH) return notFound("no-process", "no process " + std::to_string(pid));
  if (errno == EPERM) {
    return permissionDenied("not-our-process",
                            "process " + std::to_string(pid) + " belongs to another user");
  }
  return internalError("kill-failed", std::strerror(errno));
}

}  // namespace shoal
