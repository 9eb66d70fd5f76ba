// Deadline: a point on the real monotonic clock after which a blocking runtime call gives up,
// or never. (Real time: the waits it bounds are condition variables and poll(2), which cannot
// wait on a FakeClock.)
//
// Thread safety: a value type.
#pragma once

#include <chrono>
#include <optional>

namespace shoal::runtime {

// A point on the real monotonic clock after which a wait gives up, or never.
class Deadline {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  static Deadline never() { return Deadline(std::nullopt); }
  // `timeout` from now; a negative timeout is already expired, a huge one saturates to never.
  static Deadline after(std::chrono::nanoseconds timeout);
  // nullopt = never. (A separate name: an overload of after() would make a plain duration
  // argument ambiguous.)
  static Deadline afterOrNever(std::optional<std::chrono::nanoseconds> timeout) {
    return timeout ? after(*timeout) : never();
  }

  bool isNever() const { return !at_.has_value(); }
  bool expired() const;
  // Milliseconds left for poll(2): -1 for never, 0 once expired, rounded up otherwise.
  int pollTimeoutMs() const;
  const std::optional<TimePoint>& at() const { return at_; }

 private:
  explicit Deadline(std::optional<TimePoint> at) : at_(at) {}
  std::optional<TimePoint> at_;
};

}  // namespace shoal::runtime
