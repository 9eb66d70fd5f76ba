#include "runtime/byte_source.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include "runtime/reasons.h"

namespace shoal::runtime {
namespace {

Status cancelledRead(int fd) {
  return cancelled(reason::kReadCancelled,
                   "reading fd " + std::to_string(fd) + " was cancelled (the owner stopped it)");
}

Status readFailed(int fd, int err) {
  std::string what = "read(fd " + std::to_string(fd) + "): " + errnoText(err);
  if (err == EBADF || err == EFAULT || err == EINVAL) {
    return internalError(reason::kReadFailed, what);
  }
  return unavailable(reason::kReadFailed, what);
}

}  // namespace

Result<std::unique_ptr<FdByteSource>> FdByteSource::create(UniqueFd fd, std::stop_token cancel) {
  if (!fd.valid()) {
    return invalidArgument(reason::kReadFailed, "FdByteSource needs an open file descriptor");
  }
  std::optional<StopWakeup> wakeup;
  if (cancel.stop_possible()) {
    SHOAL_ASSIGN_OR_RETURN(auto made, StopWakeup::create());
    wakeup.emplace(std::move(made));
  }
  return std::unique_ptr<FdByteSource>(
      new FdByteSource(std::move(fd), std::move(wakeup), std::move(cancel)));
}

FdByteSource::FdByteSource(UniqueFd fd, std::optional<StopWakeup> wakeup, std::stop_token cancel)
    : fd_(std::move(fd)), wakeup_(std::move(wakeup)), cancel_(std::move(cancel)) {
  // The callback points into *this, which is heap-allocated and never moves.
  if (wakeup_) onStop_.emplace(cancel_, SignalWakeup{&*wakeup_});
}

FdByteSource::~FdByteSource() {
  onStop_.reset();  // waits for a callback running on another thread, then none can start
}

Result<size_t> FdByteSource::read(std::span<char> buffer) {
  for (;;) {
    if (cancel_.stop_requested()) return cancelledRead(fd_.get());
    if (wakeup_) {
      // Block in poll, not read, so a stop request can wake us.
      SHOAL_ASSIGN_OR_RETURN(FdWait waited,
                             waitForFd(fd_.get(), POLLIN, wakeup_->fd(), Deadline::never()));
      if (waited == FdWait::kWoken) return cancelledRead(fd_.get());
    }
    ssize_t n = ::read(fd_.get(), buffer.data(), buffer.size());
    if (n >= 0) return static_cast<size_t>(n);
    int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) {
      if (!wakeup_) {
        auto waited = waitForFd(fd_.get(), POLLIN, -1, Deadline::never());
        if (!waited.isOk()) return waited.status();
      }
      continue;
    }
    return readFailed(fd_.get(), err);
  }
}

}  // namespace shoal::runtime
