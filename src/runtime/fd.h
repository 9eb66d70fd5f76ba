// File-descriptor plumbing for runtime/: UniqueFd (owns one fd), Pipe (a CLOEXEC pipe whose
// ends are never 0-2), StopWakeup (an eventfd that a std::stop_token request makes readable)
// and waitForFd (poll one fd plus a wakeup with a Deadline).
//
// Every descriptor created here is O_CLOEXEC from birth, so a concurrent fork/exec anywhere in
// the daemon never inherits it.
//
// Thread safety: UniqueFd and Pipe are used by one thread at a time. StopWakeup::signal() may
// be called from any thread (it is what a stop_callback runs); clear() by its owner only.
// Lifetime: UniqueFd closes its fd on destruction; move-only.
#pragma once

#include <stop_token>
#include <utility>

#include "base/mutex.h"
#include "base/result.h"
#include "base/status.h"
#include "runtime/deadline.h"

namespace shoal::runtime {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Closes the current fd (if any) and owns `fd` instead.
  void reset(int fd = -1);
  // Gives up ownership without closing.
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

// "strerror-name (EFOO)" for messages: "Broken pipe (EPIPE)".
std::string errnoText(int err);

struct Pipe {
  UniqueFd read;
  UniqueFd write;
  // pipe2(O_CLOEXEC); an end that landed on 0-2 (a daemon with closed stdio) is moved to >= 3,
  // so dup2-ing ends onto a child's 0-2 can never clobber another end.
  static Result<Pipe> create();
};

// Moves `fd` to a number >= 3 (keeping O_CLOEXEC) if it sits on 0-2 (a daemon whose stdio is
// closed), so dup2-ing it onto a child's 0-2 cannot clobber another descriptor.
Status liftAboveStdio(UniqueFd& fd);

// An eventfd that becomes readable when signal() is called; used to interrupt a poll(2) from a
// std::stop_callback.
class StopWakeup {
 public:
  static Result<StopWakeup> create();
  int fd() const { return fd_.get(); }
  // Async-signal-safe; never blocks (the counter saturates harmlessly).
  void signal() const noexcept;
  // Drains pending signals so the next wait starts clean.
  void clear() const noexcept;

 private:
  explicit StopWakeup(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

// The callable a std::stop_callback runs: wakes the StopWakeup.
struct SignalWakeup {
  const StopWakeup* wakeup;
  void operator()() const noexcept { wakeup->signal(); }
};
using StopWakeupCallback = std::stop_callback<SignalWakeup>;

enum class FdWait { kReady, kTimedOut, kWoken };

// Waits until `fd` reports `events` (or POLLHUP/POLLERR, which the next read/write reports),
// `wakeFd` (-1: none) is readable, or `deadline` passes. EINTR is retried. A poll(2) failure is
// kInternal, reason `system-call-failed`.
Result<FdWait> waitForFd(int fd, short events, int wakeFd, const Deadline& deadline);

}  // namespace shoal::runtime
