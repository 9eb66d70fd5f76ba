#include "daemon/backlog_mark.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

TEST(BacklogMark, UnsetEverythingIsFresh) {
  BacklogMark mark;
  EXPECT_TRUE(mark.isFresh(1));
  EXPECT_TRUE(mark.isFresh(1));
}

TEST(BacklogMark, TheStreamsLastSequenceSplitsBacklogFromFresh) {
  BacklogMark mark;
  mark.setStreamSequence(40);
  EXPECT_FALSE(mark.isFresh(12));
  EXPECT_FALSE(mark.isFresh(40));
  EXPECT_TRUE(mark.isFresh(41));
  EXPECT_FALSE(mark.isFresh(39)) << "a redelivery of backlog stays backlog";
}

// The durable had delivered up to 10 (some unacked: redelivered) and held 3 more for it, at
// 14, 20 and 31 (other principals' DMs in between): those three are backlog, 35 is fresh.
TEST(BacklogMark, TheDurablesPendingCountIsTheNextFreshSequencesGiven) {
  BacklogMark mark;
  mark.setFromDurable(10, 3);
  EXPECT_FALSE(mark.isFresh(7)) << "delivered before, unacked, redelivered";
  EXPECT_FALSE(mark.isFresh(14));
  EXPECT_FALSE(mark.isFresh(14)) << "a redelivery of a counted one is not counted again";
  EXPECT_FALSE(mark.isFresh(20));
  EXPECT_FALSE(mark.isFresh(9));
  EXPECT_FALSE(mark.isFresh(31));
  EXPECT_TRUE(mark.isFresh(35));
  EXPECT_FALSE(mark.isFresh(20)) << "counted backlog stays backlog";
  EXPECT_TRUE(mark.isFresh(36));
}

TEST(BacklogMark, ADurableWithNothingPendingMakesTheNextDeliveryFresh) {
  BacklogMark mark;
  mark.setFromDurable(10, 0);
  EXPECT_FALSE(mark.isFresh(10));
  EXPECT_TRUE(mark.isFresh(11));
}

}  // namespace
}  // namespace shoal::daemon
