// RestartPolicy: when to start again a process that keeps dying, and when to give up — the one
// rule for both the supervisor's broker and planes and a seat's runtime (decision 025).
//
// A crash streak counts the ends in a row of runs that never became stable. A run is stable
// when it lasted `stableAfter` or reported progress (progressed(): a seat's turn ended); a run
// that failed to start never is. The crash after a stable run starts a new streak of 1. The
// wait before the next start is doublingBackoff(firstBackoff, maxBackoff, streak) (base/
// backoff.h): 1 → first, 2 → 2·first, … capped. The crash that makes `maxCrashesInARow` gives
// up: crashed() returns false and the owner says so (the supervisor reports the crash loop, a
// seat parks until `shoal seat start`, which reset()s the streak).
//
// Pure (times are passed in), so it is unit-tested without clocks or sleeps.
//
// Thread safety: one owner.
#pragma once

#include <chrono>

namespace shoal {

struct RestartLimits {
  std::chrono::milliseconds firstBackoff{500};
  std::chrono::milliseconds maxBackoff{8'000};
  std::chrono::milliseconds stableAfter{60'000};
  int maxCrashesInARow = 6;
};

class RestartPolicy {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  explicit RestartPolicy(RestartLimits limits = {}) : limits_(limits) {}

  // The process (re)started at `now`.
  void started(TimePoint now) {
    startedAt_ = now;
    progressed_ = false;
  }
  // The current run did useful work: it is stable, and the streak ends now.
  void progressed() {
    progressed_ = true;
    streak_ = 0;
  }
  // The process died at `now` (`failedToStart`: it never ran). False when this crash gives up;
  // otherwise the next start is due at nextStartAt().
  bool crashed(TimePoint now, bool failedToStart = false);
  // An operator asked for a fresh start: no streak, no backoff.
  void reset() { streak_ = 0; }

  TimePoint nextStartAt() const { return nextStartAt_; }
  std::chrono::milliseconds backoff() const { return backoff_; }
  int crashesInARow() const { return streak_; }

 private:
  RestartLimits limits_;
  int streak_ = 0;
  bool progressed_ = false;
  std::chrono::milliseconds backoff_{0};
  TimePoint startedAt_{};
  TimePoint nextStartAt_{};
};

}  // namespace shoal
