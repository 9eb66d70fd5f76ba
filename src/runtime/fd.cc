#include "runtime/fd.h"

#include <cstdint>
#include <string>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "runtime/reasons.h"

namespace shoal::runtime {

void UniqueFd::reset(int fd) {
  if (fd_ >= 0 && fd_ != fd) ::close(fd_);  // close(2) is never retried on Linux
  fd_ = fd;
}

std::string errnoText(int err) {
  const char* desc = strerrordesc_np(err);
  const char* name = strerrorname_np(err);
  std::string out = desc ? desc : ("errno " + std::to_string(err));
  if (name) out += std::string(" (") + name + ")";
  return out;
}

Status liftAboveStdio(UniqueFd& fd) {
  if (fd.get() > 2) return Status::ok();
  int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3);
  if (moved < 0) {
    return internalError(reason::kSystemCallFailed, "fcntl(F_DUPFD_CLOEXEC): " + errnoText(errno));
  }
  fd.reset(moved);
  return Status::ok();
}

Result<Pipe> Pipe::create() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    int err = errno;
    if (err == EMFILE || err == ENFILE) {
      return resourceExhausted("too-many-open-files", "pipe2: " + errnoText(err));
    }
    return internalError(reason::kSystemCallFailed, "pipe2: " + errnoText(err));
  }
  Pipe p{UniqueFd(fds[0]), UniqueFd(fds[1])};
  SHOAL_RETURN_IF_ERROR(liftAboveStdio(p.read));
  SHOAL_RETURN_IF_ERROR(liftAboveStdio(p.write));
  return p;
}

Result<StopWakeup> StopWakeup::create() {
  int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) {
    return internalError(reason::kSystemCallFailed, "eventfd: " + errnoText(errno));
  }
  return StopWakeup(UniqueFd(fd));
}

void StopWakeup::signal() const noexcept {
  uint64_t one = 1;
  ssize_t r;
  do {
    r = ::write(fd_.get(), &one, sizeof one);
  } while (r < 0 && errno == EINTR);
  // EAGAIN: the counter is saturated, so the fd is readable already. Nothing else can fail on
  // a valid eventfd.
}

void StopWakeup::clear() const noexcept {
  uint64_t value = 0;
  ssize_t r;
  do {
    r = ::read(fd_.get(), &value, sizeof value);
  } while (r < 0 && errno == EINTR);
}

Result<FdWait> waitForFd(int fd, short events, int wakeFd, const Deadline& deadline) {
  for (;;) {
    struct pollfd pfds[2] = {{fd, events, 0}, {wakeFd, POLLIN, 0}};
    int n = ::poll(pfds, wakeFd >= 0 ? 2 : 1, deadline.pollTimeoutMs());
    if (n < 0) {
      if (errno == EINTR) continue;
      return internalError(reason::kSystemCallFailed, "poll: " + errnoText(errno));
    }
    if (wakeFd >= 0 && (pfds[1].revents & POLLIN)) return FdWait::kWoken;
    if (pfds[0].revents != 0) return FdWait::kReady;  // incl. POLLHUP/POLLERR/POLLNVAL
    if (n == 0 && deadline.expired()) return FdWait::kTimedOut;
    // poll's timeout rounds to ms; loop until the deadline really passed.
  }
}

}  // namespace shoal::runtime
