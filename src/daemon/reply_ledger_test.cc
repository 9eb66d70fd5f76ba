// ReplyLedger (daemon/reply_ledger.h): target-frontier settlement and final-check.
#include "daemon/reply_ledger.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

// A row handed over now (its sequence reserved) and surfaced.
ReplyRow row(ReplyLedger& ledger, std::string id, std::string key) {
  const uint64_t seq = ledger.reserve(key);
  return ReplyRow{std::move(id), key.substr(key.find(':') + 1), key, seq, "h1"};
}

TEST(ReplyLedger, AReplySettlesOnlyItsTargetUpToTheFrontierItSaw) {
  ReplyLedger ledger;
  const std::string alice = peerTargetKey("local.alice");
  const std::string bob = peerTargetKey("local.bob");
  ASSERT_FALSE(ledger.add(row(ledger, "a1", alice)));
  ASSERT_FALSE(ledger.add(row(ledger, "b1", bob)));
  ASSERT_FALSE(ledger.add(row(ledger, "a2", alice)));
  const uint64_t seen = ledger.frontier(alice);  // the reply observed a1 and a2
  EXPECT_EQ(seen, 2u);
  ASSERT_FALSE(ledger.add(row(ledger, "a3", alice)));  // surfaced after the reply was sent

  auto replied = ledger.settle(alice, seen, "reply-1");
  ASSERT_EQ(replied.size(), 2u);
  EXPECT_EQ(replied[0].messageId, "a1");
  EXPECT_EQ(replied[1].messageId, "a2");
  EXPECT_EQ(replied[0].result, "replied");
  EXPECT_EQ(replied[0].replyId, "reply-1");
  EXPECT_EQ(ledger.size(), 2u);  // b1 (another target) and a3 (after the frontier)

  auto rest = ledger.finalCheck("");
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].messageId, "b1");
  EXPECT_EQ(rest[0].result, "completed_without_visible_reply");
  EXPECT_EQ(rest[1].messageId, "a3");
  EXPECT_EQ(ledger.size(), 0u);
  EXPECT_TRUE(ledger.finalCheck("").empty());  // cleared: one result per row, once
}

TEST(ReplyLedger, DuplicatesAreSuppressedAndFailuresCarryTheReason) {
  ReplyLedger ledger(2);
  const std::string general = channelTargetKey("general");
  EXPECT_FALSE(ledger.add(row(ledger, "m1", general)));
  EXPECT_FALSE(ledger.add(row(ledger, "m1", general)));  // a duplicate id: dropped
  EXPECT_EQ(ledger.size(), 1u);
  EXPECT_FALSE(ledger.full());
  EXPECT_FALSE(ledger.add(row(ledger, "m2", general)));
  EXPECT_TRUE(ledger.full());
  EXPECT_FALSE(ledger.add(row(ledger, "m3", general)));  // an accepted input keeps its obligation
  EXPECT_EQ(ledger.size(), 3u);
  EXPECT_TRUE(ledger.settle(peerTargetKey("local.x"), 99, "r").empty());
  auto failed = ledger.finalCheck("the runtime exited");
  ASSERT_EQ(failed.size(), 3u);
  EXPECT_EQ(failed[2].result, "failed");
  EXPECT_EQ(failed[2].reason, "the runtime exited");
  // Sequences are per target and keep growing across turns.
  EXPECT_FALSE(ledger.add(row(ledger, "m4", general)));
  EXPECT_EQ(ledger.frontier(general), 5u);
  EXPECT_EQ(ledger.frontier(peerTargetKey("local.x")), 0u);
}

// The runtime answered before its acknowledgement was processed: the row settles as it lands.
TEST(ReplyLedger, ARowSurfacingAfterTheReplyThatCoveredItSettlesAtOnce) {
  ReplyLedger ledger;
  const std::string alice = peerTargetKey("local.alice");
  const uint64_t handed = ledger.reserve(alice);  // written to the runtime, ack pending
  EXPECT_TRUE(ledger.settle(alice, ledger.frontier(alice), "reply-1").empty());
  auto early = ledger.add(ReplyRow{"a1", "local.alice", alice, handed, "h1"});
  ASSERT_TRUE(early.has_value());
  EXPECT_EQ(early->result, "replied");
  EXPECT_EQ(early->replyId, "reply-1");
  EXPECT_EQ(ledger.size(), 0u);
  // A later delivery is beyond that frontier: it waits for its own reply.
  const uint64_t later = ledger.reserve(alice);
  EXPECT_FALSE(ledger.add(ReplyRow{"a2", "local.alice", alice, later, "h2"}).has_value());
  EXPECT_EQ(ledger.size(), 1u);
}

}  // namespace
}  // namespace shoal::daemon
