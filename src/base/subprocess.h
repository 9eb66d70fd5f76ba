// Subprocess: the process-launch seam. Spawns a program, watches it exit, signals it.
//
// `Subprocess::spawn` starts argv[0] (searched on PATH when it has no '/') through base/spawn.h
// (posix_spawn): stdin is /dev/null; stdout and stderr each go to the parent's (inherit),
// /dev/null, or are appended to a file; every descriptor other than 0-2 is closed in the child,
// signal dispositions and the signal mask are reset to defaults; `newSession` runs the child in a
// new session (setsid), so it has no controlling terminal and survives its parent's session
// (`shoal up` uses this to detach a supervisor). A spawn failure is a Status naming the binary:
// a missing binary is kNotFound (reason `binary-missing`), a non-executable one
// kPermissionDenied (reason `binary-not-executable`).
//
// Waiting never sleeps blindly: it blocks on a pidfd (Linux ≥ 5.3) with the caller's deadline,
// falling back to short waitpid polls only where pidfds are unavailable.
//
// Invariant: a Subprocess owns one child pid until it reaps it (poll/wait/terminate observe
// the exit) or `release()` gives it up. After the exit is reaped, pid() keeps the old number
// for logging but signal() refuses (the number may already belong to another process).
//
// Thread safety: one Subprocess is used by one thread at a time. Distinct objects are
// independent.
// Lifetime: move-only. The destructor does NOT kill the child unless SpawnOptions::killOnDestroy
// was set (then it sends SIGKILL and reaps). A child left running outlives this object; if it
// exits later it stays a zombie until this process exits (call wait() or terminate() first).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "base/result.h"
#include "base/status.h"

namespace shoal {

// Where one of the child's output streams goes.
struct StdioTarget {
  enum class Mode { kInherit, kNull, kAppendToFile };
  Mode mode = Mode::kNull;
  std::string path{};  // for kAppendToFile: created (0600) if missing, appended to

  static StdioTarget inherit() { return {Mode::kInherit, {}}; }
  static StdioTarget null() { return {Mode::kNull, {}}; }
  static StdioTarget appendTo(std::string filePath) {
    return {Mode::kAppendToFile, std::move(filePath)};
  }
};

struct SpawnOptions {
  // argv[0] is the program; without a '/' it is searched on the parent's PATH. Must not be
  // empty.
  std::vector<std::string> argv{};
  // Additions to / overrides of the parent's environment, applied in order.
  std::vector<std::pair<std::string, std::string>> env{};
  // Variables removed from the inherited environment.
  std::vector<std::string> unsetEnv{};
  // Working directory of the child; empty = the parent's.
  std::string cwd{};
  StdioTarget stdoutTarget = StdioTarget::null();
  StdioTarget stderrTarget = StdioTarget::null();
  // setsid(): new session and process group, no controlling terminal.
  bool newSession = false;
  // The destructor SIGKILLs and reaps a still-running child (test harnesses, scoped helpers).
  bool killOnDestroy = false;
};

// How a child ended.
struct ExitStatus {
  bool exited = false;  // true: exit code in `code`; false: killed by `signal`
  int code = 0;
  int signal = 0;

  bool success() const { return exited && code == 0; }
  // "exit code 3" / "killed by signal 15 (Terminated)".
  std::string toString() const;
};

class Subprocess {
 public:
  static Result<Subprocess> spawn(const SpawnOptions& options);

  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  ~Subprocess();

  pid_t pid() const { return pid_; }
  const std::string& program() const { return program_; }
  // True until the exit has been reaped (or the child released).
  bool running() const { return pid_ > 0 && !exit_.has_value() && !released_; }
  // The reaped exit status, if any.
  const std::optional<ExitStatus>& exitStatus() const { return exit_; }

  // Non-blocking: the exit status if the child has exited (reaping it), nullopt if it runs.
  Result<std::optional<ExitStatus>> poll();
  // Blocks until the child exits or `timeout` passes (kDeadlineExceeded, reason
  // `still-running`; the child is left running).
  Result<ExitStatus> wait(std::chrono::milliseconds timeout);
  // Blocks until the child exits.
  Result<ExitStatus> wait();
  // Sends `sig`. kFailedPrecondition (reason `not-running`) once the exit was reaped.
  Status signal(int sig);
  // SIGTERM, wait up to `grace`, then SIGKILL and wait. Returns how it ended. A child that
  // already exited just reports its status.
  Result<ExitStatus> terminate(std::chrono::milliseconds grace);
  // Gives up ownership: the child keeps running and is no longer waited for or killed here.
  void release();

 private:
  Subprocess(pid_t pid, int pidfd, std::string program, bool killOnDestroy)
      : pid_(pid), pidfd_(pidfd), program_(std::move(program)), killOnDestroy_(killOnDestroy) {}
  void closePidfd();
  void destroy();

  pid_t pid_ = -1;
  int pidfd_ = -1;  // -1 when the kernel has no pidfd_open
  std::string program_;
  bool killOnDestroy_ = false;
  bool released_ = false;
  std::optional<ExitStatus> exit_;
};

}  // namespace shoal
