#include "supervisor/restart_policy.h"

#include <algorithm>

namespace shoal::supervisor {

bool RestartPolicy::crashed(TimePoint now) {
  crashes_.push_back(now);
  while (!crashes_.empty() && now - crashes_.front() > limits_.window)
    crashes_.pop_front();
  if (static_cast<int>(crashes_.size()) > limits_.maxCrashes) return false;

  bool wasStable = now - startedAt_ >= limits_.stableAfter;
  if (backoff_.count() == 0 || wasStable) {
    backoff_ = limits_.firstBackoff;
  } else {
    backoff_ = std::min(backoff_ * 2, limits_.maxBackoff);
  }
  nextStartAt_ = now + backoff_;
  return true;
}

}  // namespace shoal::supervisor
