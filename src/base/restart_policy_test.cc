// The one restart rule (decision 025): a streak of unstable runs, doubling backoff, a bound.
#include "base/restart_policy.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace shoal {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using TP = RestartPolicy::TimePoint;

// Backoff starts small and doubles up to the cap while crashes keep coming.
TEST(RestartPolicy, BackoffDoublesToCap) {
  RestartPolicy p({milliseconds(500), milliseconds(2000), seconds(60), 100});
  TP t{};
  p.started(t);
  std::vector<int64_t> waits;
  for (int i = 0; i < 5; ++i) {
    t += milliseconds(10);
    ASSERT_TRUE(p.crashed(t));
    waits.push_back(std::chrono::duration_cast<milliseconds>(p.nextStartAt() - t).count());
    t = p.nextStartAt();
    p.started(t);
  }
  EXPECT_EQ(waits, (std::vector<int64_t>{500, 1000, 2000, 2000, 2000}));
}

// A process that stayed up long enough starts again from the first backoff, a new streak.
TEST(RestartPolicy, AStableRunEndsTheStreak) {
  RestartPolicy p({milliseconds(500), milliseconds(8000), seconds(60), 100});
  TP t{};
  p.started(t);
  ASSERT_TRUE(p.crashed(t += milliseconds(1)));
  p.started(t = p.nextStartAt());
  ASSERT_TRUE(p.crashed(t += milliseconds(1)));
  EXPECT_EQ(p.nextStartAt() - t, milliseconds(1000));
  EXPECT_EQ(p.crashesInARow(), 2);
  p.started(t = p.nextStartAt());
  ASSERT_TRUE(p.crashed(t += seconds(61)));
  EXPECT_EQ(p.nextStartAt() - t, milliseconds(500));
  EXPECT_EQ(p.crashesInARow(), 1);
}

// Progress (a seat's turn ended) makes a short run stable too; a failed start never is.
TEST(RestartPolicy, ProgressIsStableAndAFailedStartNeverIs) {
  RestartPolicy p({milliseconds(100), milliseconds(8000), seconds(60), 100});
  TP t{};
  p.started(t);
  ASSERT_TRUE(p.crashed(t += milliseconds(1)));
  p.started(t = p.nextStartAt());
  ASSERT_TRUE(p.crashed(t += milliseconds(1)));
  ASSERT_EQ(p.crashesInARow(), 2);
  p.started(t = p.nextStartAt());
  p.progressed();
  EXPECT_EQ(p.crashesInARow(), 0);
  ASSERT_TRUE(p.crashed(t += milliseconds(1)));
  EXPECT_EQ(p.crashesInARow(), 1);
  EXPECT_EQ(p.backoff(), milliseconds(100));
  // A start that failed after a long wait is still not a stable run.
  ASSERT_TRUE(p.crashed(t += seconds(120), /*failedToStart=*/true));
  EXPECT_EQ(p.crashesInARow(), 2);
}

// The crash that makes maxCrashesInARow gives up; reset() (an operator's start) begins anew.
TEST(RestartPolicy, TheBoundGivesUpAndResetStartsAgain) {
  RestartPolicy p({milliseconds(1), milliseconds(1), seconds(60), 3});
  TP t{};
  p.started(t);
  EXPECT_TRUE(p.crashed(t += seconds(1)));
  EXPECT_TRUE(p.crashed(t += seconds(1)));
  EXPECT_FALSE(p.crashed(t += seconds(1)));
  p.reset();
  EXPECT_TRUE(p.crashed(t += seconds(1)));
  EXPECT_EQ(p.crashesInARow(), 1);

  // Runs that each last past stableAfter never make a streak.
  RestartPolicy q({milliseconds(1), milliseconds(1), seconds(2), 3});
  TP u{};
  for (int i = 0; i < 10; ++i) {
    q.started(u);
    EXPECT_TRUE(q.crashed(u += seconds(4)));
  }
}

}  // namespace
}  // namespace shoal
