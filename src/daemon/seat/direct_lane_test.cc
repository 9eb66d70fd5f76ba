#include "daemon/seat/direct_lane.h"

#include <gtest/gtest.h>

namespace shoal::daemon::seat_parts {
namespace {

TEST(DirectLane, AClosedLaneIsNeverClaimed) {
  DirectLane lane;
  EXPECT_FALSE(lane.claim("m1", "h1"));
  lane.open(3, "s3");
  lane.close();  // a queued owner is coming
  EXPECT_FALSE(lane.claim("m1", "h1"));
  EXPECT_FALSE(lane.busy());
}

TEST(DirectLane, AClaimNamesTheGenerationItWasOpenedForAndClosesTheLane) {
  DirectLane lane;
  lane.open(3, "s3");
  auto claim = lane.claim("m1", "h1");
  ASSERT_TRUE(claim);
  EXPECT_EQ(claim->id, "m1");
  EXPECT_EQ(claim->generation, 3u);
  EXPECT_EQ(claim->sessionId, "s3");
  EXPECT_EQ(claim->handoffId, "h1");
  EXPECT_TRUE(lane.busy());
  EXPECT_TRUE(lane.pending("m1"));
  EXPECT_FALSE(lane.pending("m2"));
  // One claim at a time: the next DM is queued until the gate reopens the lane.
  EXPECT_FALSE(lane.claim("m2", "h2"));
}

TEST(DirectLane, OnlyTheGateReopensALaneAfterItsClaimIsReleased) {
  DirectLane lane;
  lane.open(1, "s");
  ASSERT_TRUE(lane.claim("m1", "h1"));
  lane.release("m2");  // another id does not end the claim
  EXPECT_TRUE(lane.pending("m1"));
  lane.release("m1");
  EXPECT_FALSE(lane.busy());
  EXPECT_FALSE(lane.claim("m2", "h2")) << "the claim closed the lane; only open() reopens it";
  lane.open(2, "s2");
  auto next = lane.claim("m2", "h2");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->generation, 2u);
}

}  // namespace
}  // namespace shoal::daemon::seat_parts
