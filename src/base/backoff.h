// Doubling backoff: the wait before the n-th retry of something that keeps failing.
//
// `first` for the first retry, doubling with each one after it, never more than `max` (nor less
// than `first`, whatever `max` says). Overflow-safe for any attempt count: a message redelivered
// a million times waits `max`, not a wrapped-around zero.
//
// Thread safety: a pure function.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace shoal {

// attempt 1 → first, 2 → 2·first, … capped at max.
inline std::chrono::milliseconds doublingBackoff(std::chrono::milliseconds first,
                                                 std::chrono::milliseconds max, uint64_t attempt) {
  const std::chrono::milliseconds cap = std::max(first, max);
  std::chrono::milliseconds delay = first;
  for (uint64_t n = 1; n < attempt && delay < cap; ++n)
    delay *= 2;
  return std::min(delay, cap);
}

}  // namespace shoal
