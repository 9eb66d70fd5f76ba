// ChildProcess: one runtime Process — a child with pipes for stdin and stdout (stderr to a pipe
// or appended to a log file), in its OWN process group, supervised until it is reaped.
//
// Spawn: base/spawn.h's spawnProcess (argv[0] searched on the daemon's PATH when it has no '/'),
// with POSIX_SPAWN_SETPGROUP so the child leads a new process group (pgid == pid) before it execs;
// signal mask and dispositions reset to defaults (a daemon that ignores SIGPIPE does not pass
// that on); every descriptor but 0-2 closed in the child (and 3, when `fd3` gives one). Every
// descriptor the parent keeps is O_CLOEXEC. Environment: the daemon's, or only the names on
// `envAllowList`, then `env` applied in order. Spawn failures are Status values naming the program
// (reasons.h).
//
// Process group: signalGroup()/terminate()/the destructor signal the whole group (kill(-pgid)),
// so the runtime's own children (tools, MCP servers, `sh -c '… &'`) go with it. A grandchild
// that moves itself to another group or session (setsid/setpgid) escapes; nothing here chases
// it.
//
// Reaping: the group leader is observed exiting without being reaped (waitid WNOWAIT), and is
// reaped only after its group was sent SIGKILL (terminate() or the destructor). While the leader
// is unreaped its pid — and so the pgid — cannot be reused, so signalGroup() can never hit a
// stranger's group, and stragglers left by a leader that exited on its own are still killed.
// Consequently an exited child stays a zombie until terminate() or destruction. Nothing else
// in the process may reap it (no waitpid(-1), no SIGCHLD=SIG_IGN).
//
// stdin: the parent's end is non-blocking; writeStdin() writes every byte (EINTR and EAGAIN
// handled, waiting in poll with the caller's timeout and stop token) and reports exactly how
// many bytes went out when it stops early. A child that closed its stdin or exited is
// kFailedPrecondition `stdin-closed`, never a SIGPIPE: SIGPIPE is blocked in the writing thread
// for the write and a SIGPIPE the write raised is consumed before unblocking.
//
// stdout/stderr pipes are taken with takeStdout()/takeStderr() and read elsewhere (e.g. by a
// LineReader on a reader thread). A piped stderr must be drained, or the child blocks when the
// pipe fills; use StderrTarget::appendTo(log) when nobody reads it.
//
// Thread safety: signalGroup(), poll(), wait(), terminate(), exitStatus(), takeStdout() and
// takeStderr() may be called from any thread concurrently. writeStdin(), closeStdin() and
// stdinOpen() are called by one thread at a time (the writer); to abort a blocked write from
// another thread use its stop token (never closeStdin(): closing an fd under a blocked writer is a
// reuse race). Lifetime: not movable; the destructor SIGKILLs the group, waits for the leader,
// reaps it and closes every descriptor — no zombie, no fd leak. It blocks only as long as a
// SIGKILLed leader takes to die. All other calls must have returned before destruction.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "base/mutex.h"
#include "base/result.h"
#include "base/status.h"
#include "base/subprocess.h"  // ExitStatus
#include "runtime/deadline.h"
#include "runtime/fd.h"

namespace shoal::runtime {

// Where the child's stderr goes.
struct StderrTarget {
  enum class Mode { kPipe, kAppendToFile, kNull, kInherit };
  Mode mode = Mode::kPipe;
  std::string path{};  // kAppendToFile: created 0600 if missing, opened by the parent

  static StderrTarget pipe() { return {Mode::kPipe, {}}; }
  static StderrTarget appendTo(std::string logPath) {
    return {Mode::kAppendToFile, std::move(logPath)};
  }
  static StderrTarget null() { return {Mode::kNull, {}}; }
  static StderrTarget inherit() { return {Mode::kInherit, {}}; }
};

struct ChildOptions {
  // argv[0] is the program; must not be empty.
  std::vector<std::string> argv{};
  // nullopt: inherit the daemon's whole environment. A list: inherit only these names.
  std::optional<std::vector<std::string>> envAllowList{};
  // Set after the allow-list is applied, in order (a later entry wins).
  std::vector<std::pair<std::string, std::string>> env{};
  // Working directory; empty = the daemon's. Must exist (kNotFound `cwd-missing`).
  std::string cwd{};
  StderrTarget stderrTarget = StderrTarget::pipe();
  // A descriptor of the parent's the child gets as its fd 3 (-1: none), e.g. the write end of
  // an acknowledgement pipe. The parent keeps its own copy; spawn() does not close it.
  int fd3 = -1;
};

// The outcome of one writeStdin(): how many bytes went out, and OK iff all of them did.
struct [[nodiscard]] StdinWrite {
  size_t bytesWritten = 0;
  Status status{};
};

class ChildProcess {
 public:
  static Result<std::unique_ptr<ChildProcess>> spawn(const ChildOptions& options);

  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The child's pid, which is also its process group id. Kept (for logs) after reaping.
  pid_t pid() const { return pid_; }
  const std::string& program() const { return program_; }

  // The parent's read end of the child's stdout / stderr pipe; an invalid fd if it was taken
  // already (or stderr is not piped).
  UniqueFd takeStdout() SHOAL_EXCLUDES(mu_);
  UniqueFd takeStderr() SHOAL_EXCLUDES(mu_);

  // Writes all of `bytes`. nullopt timeout = as long as it takes; a stop request ends the write
  // before its next write(2). Errors (bytesWritten says how many went out first):
  // kFailedPrecondition `stdin-closed` (EPIPE) / `stdin-not-open`, kDeadlineExceeded
  // `stdin-write-timeout`, kCancelled `stdin-write-cancelled`, kUnavailable `stdin-write-failed`.
  StdinWrite writeStdin(std::string_view bytes,
                        std::optional<std::chrono::nanoseconds> timeout = std::nullopt,
                        const std::stop_token& cancel = {});
  // Closes the parent's end: the child reads EOF. Idempotent.
  void closeStdin();
  // How many bytes written to stdin the child has not read yet (FIONREAD on the pipe): what a
  // caller subtracts from the bytes it wrote to know how many the child consumed. nullopt once
  // stdin is closed. May run on any thread while the writer writes, never while it closes.
  std::optional<size_t> stdinUnread() const;
  bool stdinOpen() const { return stdin_.valid(); }

  // Sends `sig` to the whole process group. kFailedPrecondition `not-running` once reaped;
  // kNotFound `no-such-process-group` if every member left the group.
  Status signalGroup(int sig) SHOAL_EXCLUDES(mu_);

  // Non-blocking: the leader's exit status once it exited (not reaped), nullopt while it runs.
  Result<std::optional<ExitStatus>> poll() SHOAL_EXCLUDES(mu_);
  // Blocks until the leader exits or `timeout` passes (kDeadlineExceeded `still-running`).
  Result<ExitStatus> wait(std::optional<std::chrono::nanoseconds> timeout = std::nullopt)
      SHOAL_EXCLUDES(mu_);
  // SIGTERM to the group, up to `grace` for the leader to exit, then SIGKILL to the group
  // (always: it also ends stragglers), wait, reap. Returns how the leader ended. On an already
  // exited or reaped child it just finishes the job and reports the status.
  Result<ExitStatus> terminate(std::chrono::milliseconds grace) SHOAL_EXCLUDES(mu_);

  // The leader's exit status if it was observed.
  std::optional<ExitStatus> exitStatus() const SHOAL_EXCLUDES(mu_);
  bool reaped() const SHOAL_EXCLUDES(mu_);

 private:
  ChildProcess(pid_t pid, std::string program, UniqueFd pidfd, UniqueFd stdinFd, UniqueFd stdoutFd,
               UniqueFd stderrFd, StopWakeup wakeup);

  Result<std::optional<ExitStatus>> pollLocked() SHOAL_REQUIRES(mu_);
  // SIGKILL to the group, wait for the leader, reap it. Idempotent.
  Result<ExitStatus> killGroupAndReap() SHOAL_EXCLUDES(mu_);
  std::string describe() const;  // "'cat' (pid 123)"

  // Constant after construction.
  const pid_t pid_;
  const std::string program_;
  const UniqueFd pidfd_;  // invalid when the kernel has no pidfd_open

  // Used only by the writer thread (writeStdin/closeStdin).
  UniqueFd stdin_;
  const StopWakeup wakeup_;  // interrupts a blocked stdin write on a stop request

  mutable Mutex mu_;
  UniqueFd stdout_ SHOAL_GUARDED_BY(mu_);
  UniqueFd stderr_ SHOAL_GUARDED_BY(mu_);
  std::optional<ExitStatus> exit_ SHOAL_GUARDED_BY(mu_);
  bool reaped_ SHOAL_GUARDED_BY(mu_) = false;
};

}  // namespace shoal::runtime
