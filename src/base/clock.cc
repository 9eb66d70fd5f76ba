#include "base/clock.h"

namespace shoal {

Clock& Clock::real() {
  static RealClock clock;
  return clock;
}

int64_t RealClock::wallMs() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

int64_t RealClock::monotonicNs() const {
  using namespace std::chrono;
  return duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
}

void FakeClock::advance(std::chrono::nanoseconds d) {
  monoNs_.fetch_add(d.count(), std::memory_order_relaxed);
  wallMs_.fetch_add(std::chrono::duration_cast<std::chrono::milliseconds>(d).count(),
                    std::memory_order_relaxed);
}

}  // namespace shoal
