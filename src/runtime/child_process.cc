#include "runtime/child_process.h"

#include <algorithm>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/spawn.h"
#include "runtime/reasons.h"

namespace shoal::runtime {
namespace {

UniqueFd openPidfd(pid_t pid) {
#if defined(SYS_pidfd_open)
  long fd = ::syscall(SYS_pidfd_open, pid, 0);  // always O_CLOEXEC
  if (fd >= 0) return UniqueFd(static_cast<int>(fd));
#else
  (void)pid;
#endif
  return UniqueFd();
}

Status setupFailed(std::string_view what, int rc) {
  return internalError(reason::kSystemCallFailed, std::string(what) + ": " + errnoText(rc));
}

ExitStatus fromSiginfo(const siginfo_t& info) {
  ExitStatus out;
  if (info.si_code == CLD_EXITED) {
    out.exited = true;
    out.code = info.si_status;
  } else {
    out.exited = false;  // CLD_KILLED / CLD_DUMPED
    out.signal = info.si_status;
  }
  return out;
}

// Blocks SIGPIPE in the calling thread for one stdin write; on destruction consumes a SIGPIPE
// the write raised (unless one was already pending) and restores the thread's mask.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipeSet_);
    sigaddset(&pipeSet_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipeSet_, &oldMask_);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    wasPending_ = sigismember(&pending, SIGPIPE) == 1;
  }
  ~SigpipeGuard() {
    if (raised_ && !wasPending_) {
      struct timespec zero = {0, 0};
      int r;
      do {
        r = sigtimedwait(&pipeSet_, nullptr, &zero);
      } while (r < 0 && errno == EINTR);
    }
    pthread_sigmask(SIG_SETMASK, &oldMask_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;
  void noteEpipe() { raised_ = true; }

 private:
  sigset_t pipeSet_{};
  sigset_t oldMask_{};
  bool wasPending_ = false;
  bool raised_ = false;
};

}  // namespace

Result<std::unique_ptr<ChildProcess>> ChildProcess::spawn(const ChildOptions& options) {
  if (options.argv.empty() || options.argv[0].empty()) {
    return invalidArgument("empty-argv", "spawning a runtime needs a program name in argv[0]");
  }
  const std::string& program = options.argv[0];
  if (!options.cwd.empty()) {
    struct stat st = {};
    if (::stat(options.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return notFound(reason::kCwdMissing, "cannot start '" + program + "': working directory '" +
                                               options.cwd +
                                               "' does not exist or is not a directory");
    }
  }

  SHOAL_ASSIGN_OR_RETURN(Pipe in, Pipe::create());
  SHOAL_ASSIGN_OR_RETURN(Pipe out, Pipe::create());
  std::optional<Pipe> err;
  UniqueFd errLog;
  switch (options.stderrTarget.mode) {
    case StderrTarget::Mode::kPipe: {
      SHOAL_ASSIGN_OR_RETURN(Pipe p, Pipe::create());
      err.emplace(std::move(p));
      break;
    }
    case StderrTarget::Mode::kAppendToFile: {
      const std::string& path = options.stderrTarget.path;
      if (path.empty()) {
        return invalidArgument("empty-log-path", "a stderr log file target needs a path");
      }
      errLog.reset(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
      if (!errLog.valid()) {
        int e = errno;
        return unavailable("stderr-log-unwritable",
                           "cannot open stderr log '" + path + "' for '" + program + "': " +
                               errnoText(e) + "; check the directory exists and is writable");
      }
      SHOAL_RETURN_IF_ERROR(liftAboveStdio(errLog));
      break;
    }
    case StderrTarget::Mode::kNull:
    case StderrTarget::Mode::kInherit:
      break;
  }
  // fd 3's source is copied to 4 or above, so closing from 4 in the child keeps only fd 3.
  UniqueFd third;
  if (options.fd3 >= 0) {
    third.reset(::fcntl(options.fd3, F_DUPFD_CLOEXEC, 4));
    if (!third.valid()) return setupFailed("fcntl(F_DUPFD_CLOEXEC)", errno);
  }
  SHOAL_ASSIGN_OR_RETURN(StopWakeup wakeup, StopWakeup::create());

  // Every source fd is >= 3 (Pipe::create, liftAboveStdio, the fd 3 copy), so no dup2 below
  // clobbers another source. dup2 clears CLOEXEC on the target.
  SpawnPlan plan;
  plan.argv = options.argv;
  plan.cwd = options.cwd;
  plan.environment = childEnvironment(options.envAllowList, {}, options.env);
  plan.fds.push_back(SpawnFd{0, in.read.get(), "", 0});
  plan.fds.push_back(SpawnFd{1, out.write.get(), "", 0});
  switch (options.stderrTarget.mode) {
    case StderrTarget::Mode::kPipe:
      plan.fds.push_back(SpawnFd{2, err->write.get(), "", 0});
      break;
    case StderrTarget::Mode::kAppendToFile:
      plan.fds.push_back(SpawnFd{2, errLog.get(), "", 0});
      break;
    case StderrTarget::Mode::kNull:
      plan.fds.push_back(SpawnFd{2, -1, "/dev/null", O_WRONLY});
      break;
    case StderrTarget::Mode::kInherit:
      break;
  }
  if (third.valid()) plan.fds.push_back(SpawnFd{3, third.get(), "", 0});
  plan.closeFrom = third.valid() ? 4 : 3;
  plan.newProcessGroup = true;
  if (program.find('/') == std::string::npos)
    plan.notFoundHint = " (not found on the daemon's PATH)";
  SHOAL_ASSIGN_OR_RETURN(const pid_t pid, spawnProcess(plan));

  // The child holds its ends now; the parent keeps only its own (CLOEXEC) ends.
  in.read.reset();
  out.write.reset();
  if (err) err->write.reset();
  errLog.reset();
  int fl = ::fcntl(in.write.get(), F_GETFL);
  if (fl < 0 || ::fcntl(in.write.get(), F_SETFL, fl | O_NONBLOCK) < 0) {
    int e = errno;
    ::kill(-pid, SIGKILL);
    int st;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return internalError(reason::kSystemCallFailed, "fcntl(O_NONBLOCK) on stdin: " + errnoText(e));
  }
  return std::unique_ptr<ChildProcess>(
      new ChildProcess(pid, program, openPidfd(pid), std::move(in.write), std::move(out.read),
                       err ? std::move(err->read) : UniqueFd(), std::move(wakeup)));
}

ChildProcess::ChildProcess(pid_t pid, std::string program, UniqueFd pidfd, UniqueFd stdinFd,
                           UniqueFd stdoutFd, UniqueFd stderrFd, StopWakeup wakeup)
    : pid_(pid),
      program_(std::move(program)),
      pidfd_(std::move(pidfd)),
      stdin_(std::move(stdinFd)),
      wakeup_(std::move(wakeup)),
      stdout_(std::move(stdoutFd)),
      stderr_(std::move(stderrFd)) {}

ChildProcess::~ChildProcess() {
  (void)killGroupAndReap();
}

std::string ChildProcess::describe() const {
  return "'" + program_ + "' (pid " + std::to_string(pid_) + ")";
}

UniqueFd ChildProcess::takeStdout() {
  MutexLock lock(mu_);
  return std::move(stdout_);
}

UniqueFd ChildProcess::takeStderr() {
  MutexLock lock(mu_);
  return std::move(stderr_);
}

StdinWrite ChildProcess::writeStdin(std::string_view bytes,
                                    std::optional<std::chrono::nanoseconds> timeout,
                                    const std::stop_token& cancel) {
  StdinWrite result;
  auto total = [&] {
    return " (" + std::to_string(result.bytesWritten) + " of " + std::to_string(bytes.size()) +
           " bytes written)";
  };
  if (!stdin_.valid()) {
    result.status = failedPrecondition(reason::kStdinNotOpen,
                                       "stdin of " + describe() + " was already closed by Shoal");
    return result;
  }
  const Deadline deadline = Deadline::afterOrNever(timeout);
  std::optional<StopWakeupCallback> onStop;
  if (cancel.stop_possible()) onStop.emplace(cancel, SignalWakeup{&wakeup_});
  {
    SigpipeGuard sigpipe;
    while (result.bytesWritten < bytes.size()) {
      if (cancel.stop_requested()) {
        result.status = cancelled(reason::kStdinWriteCancelled,
                                  "writing to stdin of " + describe() + " was cancelled" + total());
        break;
      }
      ssize_t n = ::write(stdin_.get(), bytes.data() + result.bytesWritten,
                          bytes.size() - result.bytesWritten);
      if (n > 0) {
        result.bytesWritten += static_cast<size_t>(n);
        continue;
      }
      int err = n < 0 ? errno : EAGAIN;
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) {
        auto waited = waitForFd(stdin_.get(), POLLOUT, wakeup_.fd(), deadline);
        if (!waited.isOk()) {
          result.status = waited.status().withContext("writing to stdin of " + describe());
          break;
        }
        if (*waited == FdWait::kTimedOut) {
          result.status = deadlineExceeded(reason::kStdinWriteTimeout,
                                           describe() + " did not take its stdin input in time" +
                                               total() + "; the write's outcome is partial");
          break;
        }
        continue;  // ready, or woken (the loop checks the stop token)
      }
      if (err == EPIPE) {
        sigpipe.noteEpipe();
        result.status = failedPrecondition(
            reason::kStdinClosed, describe() + " closed its stdin or exited (EPIPE)" + total());
        break;
      }
      result.status = unavailable(reason::kStdinWriteFailed, "write to stdin of " + describe() +
                                                                 ": " + errnoText(err) + total());
      break;
    }
  }
  onStop.reset();   // no callback runs after this
  wakeup_.clear();  // a stop that fired must not wake the next write
  return result;
}

void ChildProcess::closeStdin() {
  stdin_.reset();
}

std::optional<size_t> ChildProcess::stdinUnread() const {
  if (!stdin_.valid()) return std::nullopt;
  int unread = 0;
  if (::ioctl(stdin_.get(), FIONREAD, &unread) != 0 || unread < 0) return std::nullopt;
  return static_cast<size_t>(unread);
}

Status ChildProcess::signalGroup(int sig) {
  MutexLock lock(mu_);
  if (reaped_) {
    return failedPrecondition(reason::kNotRunning,
                              describe() + " was already reaped; its process group is gone");
  }
  // The unreaped leader pins the pgid, so -pid_ is still this child's group.
  if (::kill(-pid_, sig) == 0) return Status::ok();
  int err = errno;
  std::string what = "kill(-" + std::to_string(pid_) + ", " + std::to_string(sig) + "): ";
  if (err == ESRCH) {
    return notFound(reason::kNoProcessGroup,
                    what + "no process is left in the group of " + describe());
  }
  if (err == EPERM) return permissionDenied("signal-not-permitted", what + errnoText(err));
  return internalError(reason::kSystemCallFailed, what + errnoText(err));
}

Result<std::optional<ExitStatus>> ChildProcess::pollLocked() {
  if (exit_) return exit_;
  siginfo_t info = {};  // si_pid stays 0 while the child runs
  int r;
  do {
    r = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
  } while (r < 0 && errno == EINTR);
  if (r < 0) {
    int err = errno;
    return internalError(reason::kSystemCallFailed,
                         "waitid(" + describe() + "): " + errnoText(err) +
                             (err == ECHILD ? " — something else in this process reaped it" : ""));
  }
  if (info.si_pid == 0) return std::optional<ExitStatus>();
  exit_ = fromSiginfo(info);
  return exit_;
}

Result<std::optional<ExitStatus>> ChildProcess::poll() {
  MutexLock lock(mu_);
  return pollLocked();
}

Result<ExitStatus> ChildProcess::wait(std::optional<std::chrono::nanoseconds> timeout) {
  const Deadline deadline = Deadline::afterOrNever(timeout);
  for (;;) {
    {
      MutexLock lock(mu_);
      SHOAL_ASSIGN_OR_RETURN(auto polled, pollLocked());
      if (polled) return *polled;
    }
    if (deadline.expired()) {
      return deadlineExceeded(reason::kStillRunning, describe() + " did not exit in time");
    }
    if (pidfd_.valid()) {
      // Readable exactly when the leader has exited; waited on without holding mu_.
      auto waited = waitForFd(pidfd_.get(), POLLIN, -1, deadline);
      if (!waited.isOk()) return waited.status();
    } else {
      // No pidfd on this kernel: check again shortly.
      const int ms = deadline.isNever() ? 5 : std::min(5, deadline.pollTimeoutMs());
      ::poll(nullptr, 0, ms);
    }
  }
}

Result<ExitStatus> ChildProcess::killGroupAndReap() {
  {
    MutexLock lock(mu_);
    if (reaped_) return *exit_;
    ::kill(-pid_, SIGKILL);  // ESRCH only if every member left the group: nothing to kill
  }
  SHOAL_ASSIGN_OR_RETURN(ExitStatus status, wait());
  MutexLock lock(mu_);
  if (!reaped_) {
    int st = 0;
    pid_t r;
    do {
      r = ::waitpid(pid_, &st, 0);  // exited already: returns at once
    } while (r < 0 && errno == EINTR);
    if (r < 0) {
      return internalError(reason::kSystemCallFailed,
                           "waitpid(" + describe() + "): " + errnoText(errno));
    }
    reaped_ = true;
  }
  return status;
}

Result<ExitStatus> ChildProcess::terminate(std::chrono::milliseconds grace) {
  {
    MutexLock lock(mu_);
    if (reaped_) return *exit_;
    SHOAL_ASSIGN_OR_RETURN(auto polled, pollLocked());
    if (!polled) ::kill(-pid_, SIGTERM);
  }
  auto waited = wait(grace);
  if (!waited.isOk() && waited.status().code() != StatusCode::kDeadlineExceeded) {
    return waited.status();
  }
  return killGroupAndReap();
}

std::optional<ExitStatus> ChildProcess::exitStatus() const {
  MutexLock lock(mu_);
  return exit_;
}

bool ChildProcess::reaped() const {
  MutexLock lock(mu_);
  return reaped_;
}

}  // namespace shoal::runtime
