// The bounded local inbox (daemon/local_inbox.h): the eviction order and the per-id bound.
#include "daemon/local_inbox.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

using C = InboxClass;

InboxEntry entry(std::string id, InboxClass c, uint64_t order) {
  return InboxEntry{std::move(id), c, order};
}

TEST(LocalInbox, AnInboxWithRoomAdmitsWithoutEvicting) {
  std::vector<InboxEntry> queued{entry("d1", C::kDirected, 1), entry("p1", C::kPullOnly, 2)};
  for (C arrival : {C::kPullOnly, C::kChannel, C::kDirected}) {
    InboxChoice c = chooseInboxVictims(queued, arrival, 3);
    EXPECT_EQ(c.verdict, InboxVerdict::kAdmit);
    EXPECT_TRUE(c.evict.empty());
  }
  EXPECT_EQ(chooseInboxVictims({}, C::kDirected, 1).verdict, InboxVerdict::kAdmit);
}

// Pull-only backlog goes first, oldest first — even before older channel and directed items.
TEST(LocalInbox, PullOnlyBacklogGoesFirstOldestFirst) {
  std::vector<InboxEntry> queued{entry("d1", C::kDirected, 1), entry("c1", C::kChannel, 2),
                                 entry("p2", C::kPullOnly, 5), entry("p1", C::kPullOnly, 3)};
  for (C arrival : {C::kPullOnly, C::kChannel, C::kDirected}) {
    InboxChoice c = chooseInboxVictims(queued, arrival, 4);
    ASSERT_EQ(c.verdict, InboxVerdict::kAdmit) << inboxClassName(arrival);
    EXPECT_EQ(c.evict, std::vector<std::string>{"p1"}) << inboxClassName(arrival);
  }
}

// Then channel traffic (a mention is channel traffic: its class comes from the subject).
TEST(LocalInbox, ChannelTrafficGoesNextOldestFirst) {
  std::vector<InboxEntry> queued{entry("d1", C::kDirected, 1), entry("c2", C::kChannel, 4),
                                 entry("c1", C::kChannel, 2), entry("d2", C::kDirected, 3)};
  for (C arrival : {C::kChannel, C::kDirected}) {
    InboxChoice c = chooseInboxVictims(queued, arrival, 4);
    ASSERT_EQ(c.verdict, InboxVerdict::kAdmit);
    EXPECT_EQ(c.evict, std::vector<std::string>{"c1"});
  }
}

// A pull-only arrival into an inbox with no pull-only backlog is itself the first victim.
TEST(LocalInbox, TheArrivalGivesWayWhenItRanksLowest) {
  std::vector<InboxEntry> queued{entry("c1", C::kChannel, 1), entry("d1", C::kDirected, 2)};
  InboxChoice c = chooseInboxVictims(queued, C::kPullOnly, 2);
  EXPECT_EQ(c.verdict, InboxVerdict::kEvictArrival);
  EXPECT_TRUE(c.evict.empty());
  // A channel post arriving while everything queued is directed.
  std::vector<InboxEntry> directed{entry("d1", C::kDirected, 1), entry("d2", C::kDirected, 2)};
  c = chooseInboxVictims(directed, C::kChannel, 2);
  EXPECT_EQ(c.verdict, InboxVerdict::kEvictArrival);
  EXPECT_TRUE(c.evict.empty());
}

// A queued directed item is acknowledged already: it is never the victim; a directed arrival
// into an all-directed inbox is refused instead (it waits at the broker).
TEST(LocalInbox, AQueuedDirectedItemIsNeverEvicted) {
  std::vector<InboxEntry> directed{entry("d1", C::kDirected, 1), entry("d2", C::kDirected, 2)};
  InboxChoice c = chooseInboxVictims(directed, C::kDirected, 2);
  EXPECT_EQ(c.verdict, InboxVerdict::kRefuseArrival);
  EXPECT_TRUE(c.evict.empty());
}

// Over capacity (a smaller capacity after a restart): exactly the room the arrival needs is
// freed; if that would reach a directed item or the arrival, nothing is evicted at all.
TEST(LocalInbox, OverCapacityFreesExactlyTheRoomNeededOrNothing) {
  std::vector<InboxEntry> queued{entry("c1", C::kChannel, 1), entry("p1", C::kPullOnly, 2),
                                 entry("d1", C::kDirected, 3), entry("c2", C::kChannel, 4),
                                 entry("d2", C::kDirected, 5)};
  InboxChoice c = chooseInboxVictims(queued, C::kDirected, 3);
  ASSERT_EQ(c.verdict, InboxVerdict::kAdmit);
  EXPECT_EQ(c.evict, (std::vector<std::string>{"p1", "c1", "c2"}));
  c = chooseInboxVictims(queued, C::kDirected, 2);  // would need d1 too
  EXPECT_EQ(c.verdict, InboxVerdict::kRefuseArrival);
  EXPECT_TRUE(c.evict.empty());
  c = chooseInboxVictims(queued, C::kChannel, 2);  // c1, c2, then the arrival
  EXPECT_EQ(c.verdict, InboxVerdict::kEvictArrival);
  EXPECT_TRUE(c.evict.empty());
  // A capacity of 0 is read as 1.
  EXPECT_EQ(chooseInboxVictims({}, C::kChannel, 0).verdict, InboxVerdict::kAdmit);
}

TEST(LocalInbox, EvictionCountsCountPerIdAndForget) {
  EvictionCounts counts;
  EXPECT_EQ(counts.count("m1"), 0u);
  EXPECT_EQ(counts.note("m1"), 1u);
  EXPECT_EQ(counts.note("m2"), 1u);
  EXPECT_EQ(counts.note("m1"), 2u);
  EXPECT_EQ(counts.count("m1"), 2u);
  counts.forget("m1");
  EXPECT_EQ(counts.count("m1"), 0u);
  EXPECT_EQ(counts.size(), 1u);
  counts.forget("never");  // harmless
  EXPECT_EQ(counts.note("m1"), 1u);
}

TEST(LocalInbox, EvictionCountsAreBoundedForgettingTheOldestNoted) {
  EvictionCounts counts(3);
  for (const char* id : {"a", "b", "c"})
    counts.note(id);
  counts.note("a");  // a second turn-away does not make it newer
  counts.note("d");
  EXPECT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts.count("a"), 0u);
  EXPECT_EQ(counts.count("b"), 1u);
  EXPECT_EQ(counts.count("d"), 1u);
  counts.forget("c");
  counts.note("e");
  counts.note("f");
  EXPECT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts.count("b"), 0u);
  EXPECT_EQ(counts.count("d"), 1u);
  EXPECT_EQ(counts.count("f"), 1u);
}

}  // namespace
}  // namespace shoal::daemon
