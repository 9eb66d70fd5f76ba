// The seat's history section: counters and generation round-trip; a damaged one is named.
#include "daemon/seat_history.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

TEST(SeatHistory, RoundTripsEveryCounterAndTheLife) {
  SeatHistory h;
  h.generation = 7;
  h.counters.admitted = 40;
  h.counters.failed = 3;
  h.counters.inboxDropped = 2;
  h.counters.unexpectedExits = 5;
  h.pid = 4242;
  h.startedAtMs = 1764500000000;
  h.clean = false;
  auto back = SeatHistory::fromJson(h.toJson());
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->generation, 7u);
  EXPECT_EQ(back->counters.admitted, 40u);
  EXPECT_EQ(back->counters.failed, 3u);
  EXPECT_EQ(back->counters.inboxDropped, 2u);
  EXPECT_EQ(back->counters.unexpectedExits, 5u);
  EXPECT_EQ(back->pid, 4242);
  EXPECT_FALSE(back->clean);
  EXPECT_NE(previousLifeText(*back).find("killed or crashed"), std::string::npos);
  back->clean = true;
  EXPECT_NE(previousLifeText(*back).find("stopped this seat cleanly"), std::string::npos);
}

TEST(SeatHistory, ADamagedHistoryIsNamedNotGuessed) {
  EXPECT_EQ(SeatHistory::fromJson("[]").status().reason(), "bad-seat-history");
  EXPECT_EQ(SeatHistory::fromJson(R"({"generation":-1})").status().reason(), "bad-seat-history");
  EXPECT_EQ(SeatHistory::fromJson(
                R"({"generation":1,"pid":1,"startedAt":1,"clean":true,"counters":{"failed":-2}})")
                .status()
                .reason(),
            "bad-seat-history");
  // A counter this build does not know is ignored; one it knows but the file lacks is 0.
  auto older = SeatHistory::fromJson(
      R"({"generation":1,"pid":1,"startedAt":1,"clean":true,"counters":{"failed":2,"x":9}})");
  ASSERT_TRUE(older.isOk());
  EXPECT_EQ(older->counters.failed, 2u);
  EXPECT_EQ(older->counters.admitted, 0u);
}

}  // namespace
}  // namespace shoal::daemon
