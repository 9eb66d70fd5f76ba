// ByteSource: where a LineReader gets its bytes. The seam lets tests feed scripted fragments
// and errors; FdByteSource is the production source over a pipe or file descriptor.
//
// FdByteSource reads with read(2) (EINTR retried; EAGAIN on a non-blocking fd waits in poll),
// and takes an optional std::stop_token: a stop request wakes a blocked read, which then fails
// with kCancelled, reason `read-cancelled` (the owner retiring a generation whose runtime, or
// an escaped grandchild, still holds the pipe open). A read(2) failure is reason `read-failed`
// and names errno: kInternal for EBADF/EFAULT/EINVAL (our bug), kUnavailable otherwise.
//
// Thread safety: read() is called by one thread at a time (the reader). The stop token may be
// triggered from any thread.
// Lifetime: FdByteSource owns its fd and closes it on destruction; the stop token's source may
// be destroyed at any time.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>

#include "base/result.h"
#include "runtime/fd.h"

namespace shoal::runtime {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads at most `buffer.size()` (>= 1) bytes into `buffer`. Returns how many (>= 1), 0 at
  // end of stream, or the error. The reader treats every error as fatal.
  virtual Result<size_t> read(std::span<char> buffer) = 0;
};

class FdByteSource final : public ByteSource {
 public:
  // Takes ownership of `fd` (must be valid).
  static Result<std::unique_ptr<FdByteSource>> create(UniqueFd fd, std::stop_token cancel = {});

  ~FdByteSource() override;
  FdByteSource(const FdByteSource&) = delete;
  FdByteSource& operator=(const FdByteSource&) = delete;

  Result<size_t> read(std::span<char> buffer) override;
  int fd() const { return fd_.get(); }

 private:
  FdByteSource(UniqueFd fd, std::optional<StopWakeup> wakeup, std::stop_token cancel);

  // Constant after construction.
  UniqueFd fd_;
  std::optional<StopWakeup> wakeup_;  // present iff the token can be stopped
  std::stop_token cancel_;
  std::optional<StopWakeupCallback> onStop_;  // after wakeup_: destroyed before it
};

}  // namespace shoal::runtime
