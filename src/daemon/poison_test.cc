// Poison messages against a real seat: DMs the seat can never admit — an id a journal cannot
// hold (over 256 bytes, a newline in it), a body over the size bound — published raw on the
// seat's DM subject by a client that is not Shoal. Each is ended at the broker with a `failed`
// receipt to its sender, none holds a slot of the seat's durable, and a good DM behind a
// thousand of them surfaces promptly (issue 18 item 1).
#include <atomic>
#include <map>
#include <mutex>

#include <boost/json.hpp>

#include "base/file_system.h"
#include "daemon/seat.h"
#include "mesh/endpoint.h"
#include "testing/eventually.h"
#include "testing/managed_space.h"
#include "testing/occurrences.h"
#include "testing/temp_dir.h"
#include "wire/message_limits.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

using shoal::testing::eventually;
using std::chrono::milliseconds;
namespace json = boost::json;

using shoal::testing::occurrences;

constexpr std::string_view kToSeatFromMallory = "cotal.main.inst.local.reviewer.local.mallory";

// A DM envelope as any client could write it, with the id and text given.
std::string rawDm(const std::string& id, const std::string& text) {
  json::object o{{"id", id},
                 {"ts", 1764500000000.0},
                 {"space", "main"},
                 {"from", json::object{{"id", "local.mallory"}, {"name", "Mallory"}}},
                 {"to", "local.reviewer"},
                 {"parts", json::array{json::object{{"kind", "text"}, {"text", text}}}}};
  return json::serialize(o);
}

class PoisonTest : public shoal::testing::ManagedSpaceTest {
 protected:
  void SetUp() override {
    ManagedSpaceTest::SetUp();
    if (HasFatalFailure()) return;
    auto dir = shoal::testing::TempDir::create("poison");
    ASSERT_TRUE(dir.isOk());
    dir_.emplace(std::move(dir).value());
    alice_ = openSender("alice");
    ASSERT_NE(alice_, nullptr);
    // Mallory's receipts, counted by reason token, from a subscription taken before anything.
    auto sub = conn_->subscribe("cotal.main.rcpt.local.mallory.>", [this](transport::Message m) {
      boost::system::error_code ec;
      json::value v = json::parse(m.data, ec);
      if (ec || !v.is_object()) return;
      const auto* reason = v.as_object().if_contains("reason");
      std::string token =
          reason != nullptr && reason->is_string()
              ? std::string(reason->as_string()).substr(0, reason->as_string().find(':'))
              : std::string("surfaced");
      std::lock_guard lock(mu_);
      ++receipts_[token];
    });
    ASSERT_TRUE(sub.isOk()) << sub.status().toString();
    sub_.emplace(std::move(sub).value());
  }

  void TearDown() override {
    sub_.reset();
    alice_.reset();
    ManagedSpaceTest::TearDown();
  }

  std::unique_ptr<Seat> startSeat() {
    SeatProfile p;
    p.name = "Reviewer";
    p.principal = wire::Principal{"local", "reviewer"};
    p.command = {"/bin/cat"};
    p.cwd = dir_->join("reviewer");
    p.lifecycleUid = "abcdefghijklmnopqrstuvwxyz";
    SeatOptions so;
    so.url = server_->url();
    so.space = "main";
    so.restartBackoff = milliseconds(50);
    auto seat = Seat::open(p, so);
    EXPECT_TRUE(seat.isOk()) << seat.status().toString();
    return seat.isOk() ? std::move(seat).value() : nullptr;
  }

  std::string runtimeLog() {
    return FileSystem::posix().readFile(dir_->join("reviewer") + "/.shoal/runtime.log").valueOr("");
  }

  size_t receipts(const std::string& token) {
    std::lock_guard lock(mu_);
    return receipts_[token];
  }

  std::optional<shoal::testing::TempDir> dir_;
  std::unique_ptr<mesh::Endpoint> alice_;
  std::mutex mu_;
  std::map<std::string, size_t> receipts_;
  std::optional<transport::Subscription> sub_;
};

TEST_F(PoisonTest, AThousandUnadmittableDmsCannotStarveTheSeat) {
  auto seat = startSeat();
  ASSERT_NE(seat, nullptr);
  // More poison than the durable's max_ack_pending (1,000) would let wait unacknowledged.
  const std::string big(wire::kMaxMessageBytes + 1024, 'x');
  for (int i = 0; i < 1000; ++i) {
    std::string payload;
    if (i % 100 == 0) {
      payload = rawDm("big-" + std::to_string(i), big);
    } else if (i % 2 == 0) {
      payload =
          rawDm(std::string(wire::kMaxMessageIdBytes + 1, 'l') + std::to_string(i), "long id");
    } else {
      payload = rawDm("line\nbreak-" + std::to_string(i), "control character in the id");
    }
    ASSERT_TRUE(js_->publish(kToSeatFromMallory, payload).isOk()) << i;
  }
  ASSERT_TRUE(alice_->sendDirect("local.reviewer", "the good one").isOk());
  ASSERT_TRUE(eventually([&] { return runtimeLog().find("the good one") != std::string::npos; },
                         milliseconds(30000)))
      << "the good DM never surfaced behind the poison";
  // Every poison DM ended at the broker: nothing pending, nothing held for redelivery.
  ASSERT_TRUE(eventually([&] {
    auto info = js_->consumerInfo("DM_main", "dm_local-reviewer-abcdefghijklmnopqrstuvwxyz");
    return info.isOk() && info->numAckPending == 0 && info->numPending == 0;
  }));
  // …and its sender heard why, once per message.
  ASSERT_TRUE(eventually([&] { return receipts("message-id-invalid") == 990; }))
      << receipts("message-id-invalid");
  EXPECT_EQ(receipts("message-too-large"), 10u);
  EXPECT_EQ(receipts("surfaced"), 0u);
  EXPECT_EQ(occurrences(runtimeLog(), "long id") + occurrences(runtimeLog(), "xxxxxxxx"), 0u);
}

}  // namespace
}  // namespace shoal::daemon
