// LogThrottle: one log line per key per interval, however often the thing it reports repeats.
//
// A flood of refused messages (a thousand poison DMs, a peer resending the same bad frame) must
// not become a flood of log lines. Callers ask `admit(key)` before writing; the first call for a
// key in an interval says yes, later ones in the same interval are counted and say no, and the
// next yes carries how many were held back so the line can say "and 997 more like it".
// Keys are the caller's choice (a refusal reason, a sender); at most `maxKeys` are remembered
// (the oldest interval's keys are forgotten first), so hostile input cannot grow it.
//
// Thread safety: every method may be called from any thread.
// Lifetime: the Clock must outlive the throttle.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/mutex.h"

namespace shoal::log {

class LogThrottle {
 public:
  LogThrottle(const Clock& clock, std::chrono::milliseconds interval, size_t maxKeys = 256)
      : clock_(clock), intervalNs_(interval.count() * 1'000'000), maxKeys_(maxKeys) {}

  // nullopt: stay quiet. Otherwise write the line now; the value is how many lines for this key
  // were held back since the last one written (0 the first time).
  std::optional<uint64_t> admit(std::string_view key);

 private:
  struct Window {
    int64_t openedNs = 0;
    uint64_t held = 0;
  };

  const Clock& clock_;
  const int64_t intervalNs_;
  const size_t maxKeys_;
  Mutex mu_;
  std::map<std::string, Window, std::less<>> windows_ SHOAL_GUARDED_BY(mu_);
};

// "" when nothing was held back, else " (and N more like it since the last report)".
std::string heldBackSuffix(uint64_t held);

}  // namespace shoal::log
