#include "base/clock.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

// The fake clock moves only when told, and moves both readings together.
TEST(FakeClock, MovesOnlyWhenAdvanced) {
  FakeClock clock(1000);
  EXPECT_EQ(clock.wallMs(), 1000);
  EXPECT_EQ(clock.monotonicNs(), 0);
  clock.advance(std::chrono::milliseconds(250));
  EXPECT_EQ(clock.wallMs(), 1250);
  EXPECT_EQ(clock.monotonicNs(), 250'000'000);
}

// A wall-clock jump does not move the monotonic reading.
TEST(FakeClock, WallJumpLeavesMonotonic) {
  FakeClock clock(1000);
  clock.setWallMs(10);
  EXPECT_EQ(clock.wallMs(), 10);
  EXPECT_EQ(clock.monotonicNs(), 0);
}

// The real clock reads a plausible epoch time and never goes backwards.
TEST(RealClock, MonotonicNeverGoesBack) {
  Clock& c = Clock::real();
  EXPECT_GT(c.wallMs(), 1'600'000'000'000);
  int64_t a = c.monotonicNs();
  int64_t b = c.monotonicNs();
  EXPECT_LE(a, b);
}

}  // namespace
}  // namespace shoal
