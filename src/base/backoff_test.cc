// The doubling backoff, with its cap and its floor.
#include "base/backoff.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

using std::chrono::milliseconds;

TEST(DoublingBackoff, DoublesFromTheFirstWaitUpToTheCap) {
  EXPECT_EQ(doublingBackoff(milliseconds(1000), milliseconds(30000), 0), milliseconds(1000));
  EXPECT_EQ(doublingBackoff(milliseconds(1000), milliseconds(30000), 1), milliseconds(1000));
  EXPECT_EQ(doublingBackoff(milliseconds(1000), milliseconds(30000), 2), milliseconds(2000));
  EXPECT_EQ(doublingBackoff(milliseconds(1000), milliseconds(30000), 5), milliseconds(16000));
  EXPECT_EQ(doublingBackoff(milliseconds(1000), milliseconds(30000), 6), milliseconds(30000));
  EXPECT_EQ(doublingBackoff(milliseconds(1000), milliseconds(30000), UINT64_MAX),
            milliseconds(30000));
}

TEST(DoublingBackoff, ACapBelowTheFirstWaitIsTheFirstWait) {
  EXPECT_EQ(doublingBackoff(milliseconds(500), milliseconds(100), 9), milliseconds(500));
}

}  // namespace
}  // namespace shoal
