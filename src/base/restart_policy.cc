#include "base/restart_policy.h"

#include <cstdint>

#include "base/backoff.h"

namespace shoal {

bool RestartPolicy::crashed(TimePoint now, bool failedToStart) {
  const bool stable = !failedToStart && (progressed_ || now - startedAt_ >= limits_.stableAfter);
  streak_ = stable ? 1 : streak_ + 1;
  progressed_ = false;
  if (streak_ >= limits_.maxCrashesInARow) return false;
  backoff_ =
      doublingBackoff(limits_.firstBackoff, limits_.maxBackoff, static_cast<uint64_t>(streak_));
  nextStartAt_ = now + backoff_;
  return true;
}

}  // namespace shoal
