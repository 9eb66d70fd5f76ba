#include "base/subprocess.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

namespace shoal {
namespace {

std::string errnoText(int err) {
  return std::string(strerrordesc_np(err) ? strerrordesc_np(err) : "unknown error");
}

ExitStatus fromWaitStatus(int status) {
  ExitStatus out;
  if (WIFEXITED(status)) {
    out.exited = true;
    out.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    out.exited = false;
    out.signal = WTERMSIG(status);
  }
  return out;
}

int openPidfd(pid_t pid) {
#if defined(SYS_pidfd_open)
  long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd >= 0) return static_cast<int>(fd);
#else
  (void)pid;
#endif
  return -1;
}

// Owns a posix_spawn_file_actions_t / posix_spawnattr_t for the duration of one spawn.
struct SpawnResources {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  bool haveActions = false;
  bool haveAttr = false;
  ~SpawnResources() {
    if (haveActions) posix_spawn_file_actions_destroy(&actions);
    if (haveAttr) posix_spawnattr_destroy(&attr);
  }
};

Status addStdio(posix_spawn_file_actions_t* actions, int fd, const StdioTarget& target) {
  int rc = 0;
  switch (target.mode) {
    case StdioTarget::Mode::kInherit:
      return Status::ok();
    case StdioTarget::Mode::kNull:
      rc = posix_spawn_file_actions_addopen(actions, fd, "/dev/null", O_WRONLY, 0);
      break;
    case StdioTarget::Mode::kAppendToFile:
      if (target.path.empty()) {
        return invalidArgument("empty-output-path", "an append-to-file output needs a path");
      }
      rc = posix_spawn_file_actions_addopen(actions, fd, target.path.c_str(),
                                            O_WRONLY | O_CREAT | O_APPEND, 0600);
      break;
  }
  if (rc != 0)
    return internalError("spawn-setup", "posix_spawn_file_actions_addopen: " + errnoText(rc));
  return Status::ok();
}

// The child's environment: the parent's, minus unsetEnv, with env applied in order.
std::vector<std::string> buildEnvironment(const SpawnOptions& options) {
  std::map<std::string, std::string> vars;
  std::vector<std::string> order;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    std::string name = entry.substr(0, eq);
    if (vars.emplace(name, entry.substr(eq + 1)).second) order.push_back(name);
  }
  for (const auto& name : options.unsetEnv)
    vars.erase(name);
  for (const auto& [name, value] : options.env) {
    if (vars.find(name) == vars.end()) order.push_back(name);
    vars[name] = value;
  }
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& name : order) {
    auto it = vars.find(name);
    if (it == vars.end()) continue;
    out.push_back(name + "=" + it->second);
    vars.erase(it);  // a name listed twice in `order` is emitted once
  }
  return out;
}

}  // namespace

std::string ExitStatus::toString() const {
  if (exited) return "exit code " + std::to_string(code);
  const char* name = sigdescr_np(signal);
  return "killed by signal " + std::to_string(signal) + " (" + (name ? name : "unknown") + ")";
}

Result<Subprocess> Subprocess::spawn(const SpawnOptions& options) {
  if (options.argv.empty() || options.argv[0].empty()) {
    return invalidArgument("empty-argv", "spawn needs a program name in argv[0]");
  }
  const std::string& program = options.argv[0];

  SpawnResources res;
  if (int rc = posix_spawn_file_actions_init(&res.actions); rc != 0) {
    return internalError("spawn-setup", "posix_spawn_file_actions_init: " + errnoText(rc));
  }
  res.haveActions = true;
  if (int rc = posix_spawnattr_init(&res.attr); rc != 0) {
    return internalError("spawn-setup", "posix_spawnattr_init: " + errnoText(rc));
  }
  res.haveAttr = true;

  if (int rc = posix_spawn_file_actions_addopen(&res.actions, 0, "/dev/null", O_RDONLY, 0);
      rc != 0) {
    return internalError("spawn-setup", "stdin: " + errnoText(rc));
  }
  SHOAL_RETURN_IF_ERROR(addStdio(&res.actions, 1, options.stdoutTarget));
  SHOAL_RETURN_IF_ERROR(addStdio(&res.actions, 2, options.stderrTarget));
  if (!options.cwd.empty()) {
    if (int rc = posix_spawn_file_actions_addchdir_np(&res.actions, options.cwd.c_str()); rc != 0) {
      return internalError("spawn-setup", "chdir action: " + errnoText(rc));
    }
  }
  // Descriptor hygiene: nothing but 0-2 crosses into the child, CLOEXEC or not.
  if (int rc = posix_spawn_file_actions_addclosefrom_np(&res.actions, 3); rc != 0) {
    return internalError("spawn-setup", "closefrom action: " + errnoText(rc));
  }

  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (options.newSession) flags |= POSIX_SPAWN_SETSID;
  sigset_t empty;
  sigset_t all;
  sigemptyset(&empty);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&res.attr, &empty);
  posix_spawnattr_setsigdefault(&res.attr, &all);
  if (int rc = posix_spawnattr_setflags(&res.attr, flags); rc != 0) {
    return internalError("spawn-setup", "posix_spawnattr_setflags: " + errnoText(rc));
  }

  std::vector<std::string> envStrings = buildEnvironment(options);
  std::vector<char*> envp;
  envp.reserve(envStrings.size() + 1);
  for (auto& s : envStrings)
    envp.push_back(s.data());
  envp.push_back(nullptr);

  std::vector<std::string> argvCopy = options.argv;
  std::vector<char*> argv;
  argv.reserve(argvCopy.size() + 1);
  for (auto& s : argvCopy)
    argv.push_back(s.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawnp(&pid, program.c_str(), &res.actions, &res.attr, argv.data(), envp.data());
  if (rc != 0) {
    std::string what = "cannot start '" + program + "': " + errnoText(rc);
    switch (rc) {
      case ENOENT:
        if (!options.cwd.empty() && program.find('/') == std::string::npos) {
          return notFound("binary-missing",
                          what + " (not found on PATH, or cwd '" + options.cwd + "' is missing)");
        }
        return notFound("binary-missing", what);
      case EACCES:
      case EPERM:
        return permissionDenied("binary-not-executable", what);
      case ENOEXEC:
        return invalidArgument("binary-not-executable", what);
      default:
        return unavailable("spawn-failed", what);
    }
  }
  return Subprocess(pid, openPidfd(pid), program, options.killOnDestroy);
}

Subprocess::Subprocess(Subprocess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      pidfd_(std::exchange(other.pidfd_, -1)),
      program_(std::move(other.program_)),
      killOnDestroy_(other.killOnDestroy_),
      released_(other.released_),
      exit_(std::move(other.exit_)) {}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    destroy();
    pid_ = std::exchange(other.pid_, -1);
    pidfd_ = std::exchange(other.pidfd_, -1);
    program_ = std::move(other.program_);
    killOnDestroy_ = other.killOnDestroy_;
    released_ = other.released_;
    exit_ = std::move(other.exit_);
  }
  return *this;
}

Subprocess::~Subprocess() {
  destroy();
}

void Subprocess::destroy() {
  if (killOnDestroy_ && running()) {
    ::kill(pid_, SIGKILL);
    (void)wait();
  }
  closePidfd();
}

void Subprocess::closePidfd() {
  if (pidfd_ >= 0) {
    ::close(pidfd_);
    pidfd_ = -1;
  }
}

void Subprocess::release() {
  released_ = true;
  closePidfd();
}

Result<std::optional<ExitStatus>> Subprocess::poll() {
  if (exit_) return std::optional<ExitStatus>(*exit_);
  if (pid_ <= 0 || released_) {
    return failedPrecondition("not-running", "no child process is owned by this Subprocess");
  }
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r < 0) {
    return internalError("waitpid-failed",
                         "waitpid(" + std::to_string(pid_) + "): " + errnoText(errno));
  }
  if (r == 0) return std::optional<ExitStatus>();
  exit_ = fromWaitStatus(status);
  closePidfd();
  return std::optional<ExitStatus>(*exit_);
}

Result<ExitStatus> Subprocess::wait(std::chrono::milliseconds timeout) {
  using SteadyClock = std::chrono::steady_clock;
  const auto deadline = SteadyClock::now() + timeout;
  for (;;) {
    SHOAL_ASSIGN_OR_RETURN(auto polled, poll());
    if (polled) return *polled;
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (left.count() <= 0) {
      return deadlineExceeded("still-running", "'" + program_ + "' (pid " + std::to_string(pid_) +
                                                   ") did not exit within " +
                                                   std::to_string(timeout.count()) + " ms");
    }
    if (pidfd_ >= 0) {
      // Readable exactly when the child has exited.
      struct pollfd pfd = {pidfd_, POLLIN, 0};
      int r = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
      if (r < 0 && errno != EINTR) {
        return internalError("poll-failed", "poll(pidfd): " + errnoText(errno));
      }
    } else {
      // No pidfd on this kernel: check again shortly.
      struct timespec ts = {0, 5'000'000};
      ::nanosleep(&ts, nullptr);
    }
  }
}

Result<ExitStatus> Subprocess::wait() {
  for (;;) {
    auto r = wait(std::chrono::hours(24));
    if (r.isOk() || r.status().code() != StatusCode::kDeadlineExceeded) return r;
  }
}

Status Subprocess::signal(int sig) {
  if (!running()) {
    return failedPrecondition("not-running", "'" + program_ + "' is not running (already reaped)");
  }
  if (::kill(pid_, sig) != 0) {
    int err = errno;
    if (err == ESRCH)
      return notFound("no-such-process", "pid " + std::to_string(pid_) + " is gone");
    if (err == EPERM) {
      return permissionDenied("signal-not-permitted",
                              "kill(" + std::to_string(pid_) + "): " + errnoText(err));
    }
    return internalError("kill-failed", "kill(" + std::to_string(pid_) + "): " + errnoText(err));
  }
  return Status::ok();
}

Result<ExitStatus> Subprocess::terminate(std::chrono::milliseconds grace) {
  if (exit_) return *exit_;
  SHOAL_ASSIGN_OR_RETURN(auto polled, poll());
  if (polled) return *polled;
  SHOAL_RETURN_IF_ERROR(signal(SIGTERM));
  auto waited = wait(grace);
  if (waited.isOk()) return waited;
  if (waited.status().code() != StatusCode::kDeadlineExceeded) return waited.status();
  SHOAL_RETURN_IF_ERROR(signal(SIGKILL));
  return wait();
}

}  // namespace shoal
