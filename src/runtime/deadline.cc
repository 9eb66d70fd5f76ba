#include "runtime/deadline.h"

#include <limits>

namespace shoal::runtime {

Deadline Deadline::after(std::chrono::nanoseconds timeout) {
  // Anything beyond ~100 years is "never": adding it to now() could overflow.
  constexpr auto kForever = std::chrono::hours(24 * 365 * 100);
  if (timeout >= kForever) return never();
  return Deadline(std::chrono::steady_clock::now() + timeout);
}

bool Deadline::expired() const {
  return at_.has_value() && std::chrono::steady_clock::now() >= *at_;
}

int Deadline::pollTimeoutMs() const {
  if (!at_) return -1;
  auto left = *at_ - std::chrono::steady_clock::now();
  if (left <= std::chrono::nanoseconds::zero()) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  if (ms > std::numeric_limits<int>::max()) return std::numeric_limits<int>::max();
  return static_cast<int>(ms);
}

}  // namespace shoal::runtime
