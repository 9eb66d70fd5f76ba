// Receipts in WAKE_<space> against a real broker: a receipt published again is stored once,
// and a different outcome of the same message is stored whichever came first (issue 18 item 2:
// a `failed` must never swallow a later `surfaced`, nor the reverse).
#include "daemon/wake_events.h"

#include <boost/json.hpp>

#include "planes/space_provisioner.h"
#include "testing/nats_fixture.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

namespace json = boost::json;

class WakeEventsTest : public shoal::testing::JetStreamServerTest {
 protected:
  void SetUp() override {
    JetStreamServerTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(planes::ensureSpace(*js_, "main").isOk());
    SeatProfile seat;
    seat.name = "Reviewer";
    seat.principal = wire::Principal{"local", "reviewer"};
    events_.emplace(*js_, "main", seat);
  }

  // The outcomes stored for `id`, in stream order.
  std::vector<std::string> stored(const std::string& id) {
    std::vector<std::string> out;
    for (uint64_t seq = 1;; ++seq) {
      auto m = js_->findMessage("WAKE_main", seq, "cotal.main.rcpt.local.alice.>");
      if (!m.isOk()) break;
      seq = m->seq;
      json::object o = json::parse(m->data).as_object();
      if (o.at("id").as_string() != id) continue;
      out.push_back(o.contains("surfacedAt") ? "surfaced" : "failed");
    }
    return out;
  }

  std::optional<WakeEvents> events_;
};

TEST_F(WakeEventsTest, EachOutcomeIsStoredOnceInEitherOrder) {
  ASSERT_TRUE(events_->failed("m-1", "local.alice", "runtime-exited: code 1", 1000).isOk());
  ASSERT_TRUE(events_->surfaced("m-1", "local.alice", 2000).isOk());  // evidence came late
  ASSERT_TRUE(events_->surfaced("m-2", "local.alice", 1000).isOk());
  ASSERT_TRUE(events_->failed("m-2", "local.alice", "later failure", 2000).isOk());
  // A daemon restart publishes the recent receipts again: the window keeps one of each.
  ASSERT_TRUE(events_->failed("m-1", "local.alice", "runtime-exited: code 1", 1000).isOk());
  ASSERT_TRUE(events_->surfaced("m-1", "local.alice", 2000).isOk());
  EXPECT_EQ(stored("m-1"), (std::vector<std::string>{"failed", "surfaced"}));
  EXPECT_EQ(stored("m-2"), (std::vector<std::string>{"surfaced", "failed"}));
}

// A channel post reaches several seats under one message id: each seat's receipt is its own
// (the broker-side id names the seat), so none is dropped as another's duplicate.
TEST_F(WakeEventsTest, EachSeatsReceiptOfOnePostIsStored) {
  SeatProfile other;
  other.name = "Coder";
  other.principal = wire::Principal{"local", "coder"};
  WakeEvents coder(*js_, "main", other);
  ASSERT_TRUE(events_->surfaced("post-1", "local.alice", 1000, "stdin-read").isOk());
  ASSERT_TRUE(coder.surfaced("post-1", "local.alice", 1001, "stdin-read").isOk());
  EXPECT_EQ(stored("post-1"), (std::vector<std::string>{"surfaced", "surfaced"}));
}

// A receipt the broker could not store (here its stream is gone, as in a broker that lost its
// store) is owed and stored once the stream is back: before, it was logged and lost.
TEST_F(WakeEventsTest, AnUnstoredReceiptIsOwedUntilTheBrokerStoresIt) {
  ASSERT_TRUE(js_->deleteStream("WAKE_main").isOk());
  EXPECT_FALSE(events_->surfaced("m-1", "local.alice", 1000, "stdin-read").isOk());
  EXPECT_FALSE(
      events_->failed("m-2", "local.alice", "runtime-exited-before-reading: x", 1001).isOk());
  EXPECT_EQ(events_->owedCount(), 2u);
  const int64_t now = Clock::real().wallMs();
  ASSERT_TRUE(events_->nextRetryMs().has_value());
  EXPECT_EQ(events_->retryOwed(now + 1500), 0u) << "the stream is still gone";
  EXPECT_EQ(events_->owedCount(), 2u);

  ASSERT_TRUE(planes::ensureSpace(*js_, "main").isOk());
  EXPECT_EQ(events_->retryOwed(now + 60000), 2u);
  EXPECT_EQ(events_->owedCount(), 0u);
  EXPECT_EQ(stored("m-1"), (std::vector<std::string>{"surfaced"}));
  EXPECT_EQ(stored("m-2"), (std::vector<std::string>{"failed"}));
  EXPECT_EQ(events_->retryOwed(now + 120000), 0u) << "nothing is published twice";
  EXPECT_EQ(stored("m-1"), (std::vector<std::string>{"surfaced"}));
}

}  // namespace
}  // namespace shoal::daemon
