// RestartPolicy: when to restart a supervised process that died, and when to give up.
//
// After a crash the next start waits a backoff that starts at `firstBackoff` and doubles up to
// `maxBackoff`; it resets once the process has stayed up for `stableAfter`. More than
// `maxCrashes` crashes inside `window` means a crash loop: give up and say so.
//
// Pure (times are passed in), so it is unit-tested without clocks or sleeps.
//
// Thread safety: one owner.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>

namespace shoal::supervisor {

struct RestartLimits {
  std::chrono::milliseconds firstBackoff{500};
  std::chrono::milliseconds maxBackoff{8'000};
  std::chrono::milliseconds stableAfter{60'000};
  int maxCrashes = 5;
  std::chrono::milliseconds window{60'000};
};

class RestartPolicy {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  explicit RestartPolicy(RestartLimits limits = {}) : limits_(limits) {}

  // The process (re)started at `now`.
  void started(TimePoint now) { startedAt_ = now; }

  // The process died at `now`. Returns false when this crash makes a crash loop (give up);
  // otherwise the restart is due at nextStartAt().
  bool crashed(TimePoint now);

  TimePoint nextStartAt() const { return nextStartAt_; }
  int crashesInWindow() const { return static_cast<int>(crashes_.size()); }

 private:
  RestartLimits limits_;
  std::deque<TimePoint> crashes_;
  std::chrono::milliseconds backoff_{0};
  TimePoint startedAt_{};
  TimePoint nextStartAt_{};
};

}  // namespace shoal::supervisor
