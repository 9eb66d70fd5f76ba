// One line per key per interval, with a count of the lines held back.
#include "base/log_throttle.h"

#include <gtest/gtest.h>

namespace shoal::log {
namespace {

using std::chrono::milliseconds;

TEST(LogThrottle, TheFirstLineOfAnIntervalIsWrittenTheRestAreCounted) {
  FakeClock clock;
  LogThrottle throttle(clock, milliseconds(10'000));
  EXPECT_EQ(throttle.admit("message-too-large"), 0u);
  for (int i = 0; i < 999; ++i)
    EXPECT_EQ(throttle.admit("message-too-large"), std::nullopt);
  // Another key has its own interval.
  EXPECT_EQ(throttle.admit("bad-message-id"), 0u);
  clock.advance(milliseconds(9'999));
  EXPECT_EQ(throttle.admit("message-too-large"), std::nullopt);
  clock.advance(milliseconds(1));
  EXPECT_EQ(throttle.admit("message-too-large"), 1000u);
  EXPECT_EQ(throttle.admit("message-too-large"), std::nullopt);
}

TEST(LogThrottle, HostileKeysCannotGrowItPastItsBound) {
  FakeClock clock;
  LogThrottle throttle(clock, milliseconds(10'000), 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(throttle.admit("k" + std::to_string(i)), 0u);
    clock.advance(milliseconds(1));
  }
  EXPECT_EQ(throttle.admit("k0"), std::nullopt);
  // A fifth key forgets the oldest one, which then starts afresh.
  EXPECT_EQ(throttle.admit("k4"), 0u);
  EXPECT_EQ(throttle.admit("k0"), 0u);
  EXPECT_EQ(throttle.admit("k2"), std::nullopt);
}

TEST(LogThrottle, TheSuffixSaysHowManyWereHeldBack) {
  EXPECT_EQ(heldBackSuffix(0), "");
  EXPECT_EQ(heldBackSuffix(997), " (and 997 more like it since the last report)");
}

}  // namespace
}  // namespace shoal::log
