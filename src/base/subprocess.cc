#include "base/subprocess.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/spawn.h"

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

// What `target` makes of the child's descriptor `fd` (nothing: inherited).
Status addStdio(std::vector<SpawnFd>& fds, int fd, const StdioTarget& target) {
  switch (target.mode) {
    case StdioTarget::Mode::kInherit:
      return Status::ok();
    case StdioTarget::Mode::kNull:
      fds.push_back(SpawnFd{fd, -1, "/dev/null", O_WRONLY});
      return Status::ok();
    case StdioTarget::Mode::kAppendToFile:
      if (target.path.empty()) {
        return invalidArgument("empty-output-path", "an append-to-file output needs a path");
      }
      fds.push_back(SpawnFd{fd, -1, target.path, O_WRONLY | O_CREAT | O_APPEND});
      return Status::ok();
  }
  return Status::ok();
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
  SpawnPlan plan;
  plan.argv = options.argv;
  plan.cwd = options.cwd;
  plan.environment = childEnvironment(std::nullopt, options.unsetEnv, options.env);
  plan.fds.push_back(SpawnFd{0, -1, "/dev/null", O_RDONLY});
  SHOAL_RETURN_IF_ERROR(addStdio(plan.fds, 1, options.stdoutTarget));
  SHOAL_RETURN_IF_ERROR(addStdio(plan.fds, 2, options.stderrTarget));
  plan.closeFrom = 3;  // nothing but 0-2 crosses into the child, CLOEXEC or not
  plan.newSession = options.newSession;
  if (!options.cwd.empty() && options.argv[0].find('/') == std::string::npos) {
    plan.notFoundHint = " (not found on PATH, or cwd '" + options.cwd + "' is missing)";
  }
  SHOAL_ASSIGN_OR_RETURN(pid_t pid, spawnProcess(plan));
  return Subprocess(pid, openPidfd(pid), options.argv[0], options.killOnDestroy);
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
