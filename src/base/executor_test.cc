#include "base/executor.h"

#include <atomic>
#include <future>
#include <vector>

#include <gtest/gtest.h>

namespace shoal {
namespace {

using std::chrono::milliseconds;

// Tasks posted from one thread run in order; timers run at their due time, in due order.
TEST(ManualExecutor, RunsTasksThenTimersInOrder) {
  FakeClock clock;
  ManualExecutor ex(clock);
  std::vector<int> seen;
  ex.postAfter(milliseconds(20), [&] { seen.push_back(3); });
  ex.postAfter(milliseconds(10), [&] { seen.push_back(2); });
  ex.post([&] { seen.push_back(1); });
  EXPECT_EQ(ex.runReady(), 1);
  EXPECT_EQ(seen, (std::vector<int>{1}));
  ex.advance(milliseconds(15));
  EXPECT_EQ(seen, (std::vector<int>{1, 2}));
  ex.advance(milliseconds(5));
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3}));
}

// A timer sees the clock at its own due time, and a cancelled timer never runs.
TEST(ManualExecutor, TimerSeesDueTimeAndCancelWorks) {
  FakeClock clock;
  ManualExecutor ex(clock);
  int64_t start = clock.monotonicNs();
  int64_t seenAt = -1;
  bool cancelledRan = false;
  ex.postAfter(milliseconds(7), [&] { seenAt = clock.monotonicNs() - start; });
  TimerId t = ex.postAfter(milliseconds(5), [&] { cancelledRan = true; });
  ex.cancel(t);
  ex.advance(milliseconds(100));
  EXPECT_EQ(seenAt, 7'000'000);
  EXPECT_FALSE(cancelledRan);
  EXPECT_EQ(clock.monotonicNs() - start, 100'000'000);
}

// A periodic task that re-arms itself runs once per period.
TEST(ManualExecutor, ReArmingTimerIsPeriodic) {
  FakeClock clock;
  ManualExecutor ex(clock);
  int ticks = 0;
  std::function<void()> tick = [&] {
    ++ticks;
    ex.postAfter(milliseconds(2000), tick);
  };
  ex.postAfter(milliseconds(2000), tick);
  ex.advance(milliseconds(10'000));
  EXPECT_EQ(ticks, 5);
}

// The event loop thread runs posted tasks on its own thread, and timers after their delay.
TEST(EventLoopThread, RunsTasksAndTimersOnItsThread) {
  EventLoopThread loop;
  std::promise<bool> onLoop;
  loop.post([&] { onLoop.set_value(loop.inExecutor()); });
  EXPECT_TRUE(onLoop.get_future().get());
  EXPECT_FALSE(loop.inExecutor());

  std::promise<int64_t> fired;
  int64_t start = Clock::real().monotonicNs();
  loop.postAfter(milliseconds(20), [&] { fired.set_value(Clock::real().monotonicNs() - start); });
  EXPECT_GE(fired.get_future().get(), 20'000'000);
}

// Stopping drops queued work and later posts; nothing runs after stop() returns.
TEST(EventLoopThread, StopDropsLaterWork) {
  std::atomic<int> ran{0};
  {
    EventLoopThread loop;
    loop.postAfter(std::chrono::hours(1), [&] { ran++; });
    loop.stop();
    loop.post([&] { ran++; });
  }
  EXPECT_EQ(ran.load(), 0);
}

}  // namespace
}  // namespace shoal
