#include "supervisor/restart_policy.h"

#include <gtest/gtest.h>

namespace shoal::supervisor {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using TP = RestartPolicy::TimePoint;

// Backoff starts small and doubles up to the cap while crashes keep coming.
TEST(RestartPolicy, BackoffDoublesToCap) {
  RestartPolicy p({milliseconds(500), milliseconds(2000), seconds(60), 100, seconds(60)});
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

// A process that stayed up long enough starts again from the first backoff.
TEST(RestartPolicy, StableRunResetsBackoff) {
  RestartPolicy p({milliseconds(500), milliseconds(8000), seconds(60), 100, seconds(1)});
  TP t{};
  p.started(t);
  ASSERT_TRUE(p.crashed(t += milliseconds(1)));
  p.started(t = p.nextStartAt());
  ASSERT_TRUE(p.crashed(t += milliseconds(1)));
  EXPECT_EQ(p.nextStartAt() - t, milliseconds(1000));
  p.started(t = p.nextStartAt());
  ASSERT_TRUE(p.crashed(t += seconds(61)));
  EXPECT_EQ(p.nextStartAt() - t, milliseconds(500));
}

// More than maxCrashes inside the window is a crash loop; crashes older than the window
// do not count.
TEST(RestartPolicy, CrashLoopGivesUp) {
  RestartPolicy p({milliseconds(1), milliseconds(1), seconds(60), 3, seconds(10)});
  TP t{};
  EXPECT_TRUE(p.crashed(t += seconds(1)));
  EXPECT_TRUE(p.crashed(t += seconds(1)));
  EXPECT_TRUE(p.crashed(t += seconds(1)));
  EXPECT_FALSE(p.crashed(t += seconds(1)));

  RestartPolicy q({milliseconds(1), milliseconds(1), seconds(60), 3, seconds(10)});
  TP u{};
  for (int i = 0; i < 10; ++i)
    EXPECT_TRUE(q.crashed(u += seconds(4)));
}

}  // namespace
}  // namespace shoal::supervisor
