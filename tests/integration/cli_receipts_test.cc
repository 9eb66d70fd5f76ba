// `shoal send dm --wait surfaced` against receipts in both orders (issue 18 item 2): the
// recipient's seat may report a message failed and then prove it surfaced after all (seed 004
// lets surfaced evidence upgrade a failed tombstone), or report surfaced and then — wrongly or
// late — a failure. Here a raw NATS client plays the recipient's daemon, publishing both
// receipts on the receipt subject by hand; the sender's --wait must end on `surfaced` either way.
#include <condition_variable>
#include <mutex>
#include <thread>

#include <boost/json.hpp>

#include "cli_fixture.h"
#include "wire/principal.h"
#include "wire/subject.h"

namespace shoal {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

class CliReceiptsTest : public CliTest {
 protected:
  // Sends a DM to local.nobody with --wait, and answers it as nobody's seat would: the
  // receipts in `order` ("failed" / "surfaced"), 100 ms apart. Returns the sender's run.
  CliRun sendAndAnswer(const std::vector<std::string>& order) {
    std::mutex mu;
    std::condition_variable cv;
    std::string id, sender;
    auto sub = conn_->subscribe("cotal.itest.inst.local.nobody.>", [&](transport::Message m) {
      json::value v = json::parse(m.data);
      std::lock_guard lock(mu);
      id = std::string(v.at("id").as_string());
      sender = std::string(v.at("from").at("id").as_string());
      cv.notify_all();
    });
    EXPECT_TRUE(sub.isOk()) << sub.status().toString();
    EXPECT_TRUE(conn_->flush(std::chrono::seconds(2)).isOk());
    Background* send =
        spawnShoal({"send", "dm", "local.nobody", "hello", "--wait", "surfaced=10", "--json"});
    if (send == nullptr) return {};
    {
      std::unique_lock lock(mu);
      EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(15), [&] { return !id.empty(); }));
    }
    auto from = wire::parsePrincipal(sender);
    auto subject = wire::rcptSubject("itest", *from, wire::Principal{"local", "nobody"});
    EXPECT_TRUE(subject.isOk());
    const int64_t now = Clock::real().wallMs();
    for (const auto& outcome : order) {
      json::object body{{"id", id}, {"recipient", "local.nobody"}};
      if (outcome == "surfaced") {
        body["surfacedAt"] = now;
        body["evidence"] = "inbox-page";
      } else {
        body["failedAt"] = now;
        body["reason"] = "no-runtime-ack: the turn ended without it";
      }
      EXPECT_TRUE(conn_->publish(*subject, json::serialize(body)).isOk());
      EXPECT_TRUE(conn_->flush(std::chrono::seconds(2)).isOk());
      std::this_thread::sleep_for(milliseconds(100));  // the second arrives behind the first
    }
    auto exit = send->child.wait(std::chrono::seconds(30));
    EXPECT_TRUE(exit.isOk());
    return CliRun{exit.isOk() && exit->exited ? exit->code : -1, send->output(), ""};
  }
};

TEST_F(CliReceiptsTest, AFailureUpgradedBySurfacedEvidenceEndsSurfaced) {
  ASSERT_NO_FATAL_FAILURE(upAndConnect());
  CliRun run = sendAndAnswer({"failed", "surfaced"});
  EXPECT_EQ(run.code, 0) << run.out;
  json::object o = json::parse(run.out).as_object();
  EXPECT_TRUE(o.at("surfacedAt").is_int64()) << run.out;
  EXPECT_EQ(o.at("evidence").as_string(), "inbox-page") << run.out;
  EXPECT_EQ(std::string(o.at("failedFirst").as_string()).rfind("no-runtime-ack", 0), 0u) << run.out;
}

TEST_F(CliReceiptsTest, ALateFailureNeverUndoesSurfaced) {
  ASSERT_NO_FATAL_FAILURE(upAndConnect());
  CliRun run = sendAndAnswer({"surfaced", "failed"});
  EXPECT_EQ(run.code, 0) << run.out;
  json::object o = json::parse(run.out).as_object();
  EXPECT_TRUE(o.at("surfacedAt").is_int64()) << run.out;
  EXPECT_FALSE(o.contains("failReason")) << run.out;
}

}  // namespace
}  // namespace shoal
