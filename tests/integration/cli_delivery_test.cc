// The delivery plane as `shoal serve` runs it, against a real nats-server: two planes started at
// once (exactly one serves, the other refuses and exits), the liveness probe's verdicts, and a
// plane SIGKILLed in the middle of a fan-out and started again — every member ends up with
// every post exactly once, read from the member's own DLV durable.
#include <csignal>
#include <map>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "base/ids.h"
#include "cli_fixture.h"
#include "mesh/delivery_rail.h"
#include "mesh/endpoint.h"
#include "planes/space_provisioner.h"
#include "testing/nats_server.h"
#include "transport/pull_consumer.h"
#include "wire/delivery_frame.h"
#include "wire/names.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

constexpr int kMembers = 40;
constexpr int kPosts = 10;

class CliDeliveryTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    auto server = testing::TestNatsServer::start();
    ASSERT_TRUE(server.isOk()) << server.status().toString();
    server_ = std::move(server).value();
    transport::ConnectOptions o;
    o.servers = {server_->url()};
    o.name = "cli_delivery_test";
    auto conn = transport::Connection::connect(o);
    ASSERT_TRUE(conn.isOk());
    conn_ = std::move(conn).value();
    auto js = transport::JetStream::create(*conn_);
    ASSERT_TRUE(js.isOk());
    js_.emplace(std::move(js).value());
    ASSERT_TRUE(planes::ensureSpace(*js_, "itest").isOk());
  }

  void TearDown() override {
    CliTest::TearDown();  // stops the background `shoal serve`s first
    js_.reset();
    conn_.reset();
    server_.reset();
  }

  Background* serve(double leaseWait) {
    return spawnShoal({"serve", "--server", server_->url(), "--redelivery", "2", "--lease-wait",
                       std::to_string(static_cast<int>(leaseWait))});
  }

  std::string probe() {
    CliRun run = shoal({"probe", "delivery", "--server", server_->url(), "--json"});
    boost::system::error_code ec;
    json::value v = json::parse(run.out, ec);
    if (ec || !v.is_object()) return "unparsed: " + run.out + run.err;
    return std::string(v.at("responder").as_string());
  }

  uint64_t inboxStored() {
    auto info = js_->streamInfo("INBOX_itest");
    return info.isOk() ? info->state.msgs : 0;
  }

  std::unique_ptr<testing::TestNatsServer> server_;
  std::unique_ptr<transport::Connection> conn_;
  std::optional<transport::JetStream> js_;
};

TEST_F(CliDeliveryTest, OnePlaneServesAndAKillMidFanOutLosesAndDuplicatesNothing) {
  // Two planes started at once: exactly one holds the lease, the other refuses and exits.
  Background* a = serve(0);
  Background* b = serve(0);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(testing::eventually(
      [&] {
        return a->child.poll().isOk() && b->child.poll().isOk() &&
               (!a->child.running() || !b->child.running());
      },
      milliseconds(15000)));
  Background* holder = a->child.running() ? a : b;
  Background* refused = a->child.running() ? b : a;
  ASSERT_TRUE(outputShows(*holder, "delivery plane serving space itest"));
  ASSERT_TRUE(refused->child.exitStatus().has_value());
  EXPECT_EQ(refused->child.exitStatus()->code, 1) << refused->output();
  EXPECT_NE(refused->output().find("already held by"), std::string::npos) << refused->output();
  EXPECT_EQ(probe(), "bound");

  // Members: their DLV durables and ACL rows (as provisioning makes them) and memberships
  // granted by the plane over its rail.
  struct Member {
    wire::Principal principal;
    std::string uid;
    std::string durable;
  };
  std::vector<Member> members;
  for (int i = 0; i < kMembers; ++i) {
    Member m{wire::Principal{"local", "m" + std::to_string(i)}, newLifecycleUid().valueOr(""), ""};
    auto provisioned = planes::provisionPrincipal(*js_, "itest", m.principal, m.uid, {});
    ASSERT_TRUE(provisioned.isOk()) << provisioned.status().toString();
    m.durable = provisioned->dlvDurable;
    auto joined = mesh::requestDurableJoin(*conn_, "itest", m.principal, m.uid, "team", 0,
                                           milliseconds(5000));
    ASSERT_TRUE(joined.isOk()) << joined.status().toString();
    ASSERT_TRUE(joined->durable);
    members.push_back(std::move(m));
  }

  // Posts, and a SIGKILL while their copies are being written (some stored, not all).
  mesh::EndpointOptions so;
  so.servers = {server_->url()};
  so.space = "itest";
  so.principal = wire::Principal{"local", "poster"};
  so.receiveDirect = false;
  so.presence = false;
  so.onWarning = [](const Status&) {};
  auto poster = mesh::Endpoint::open(so);
  ASSERT_TRUE(poster.isOk()) << poster.status().toString();
  std::vector<std::string> ids;
  for (int i = 0; i < kPosts; ++i) {
    auto sent = (*poster)->post("team", "post " + std::to_string(i));
    ASSERT_TRUE(sent.isOk()) << sent.status().toString();
    ids.push_back(sent->stored.messageId);
  }
  const uint64_t total = kMembers * kPosts;
  ASSERT_TRUE(testing::eventually([&] { return inboxStored() > 0; }, milliseconds(10000)));
  ASSERT_TRUE(holder->child.signal(SIGKILL).isOk());
  (void)holder->child.wait(milliseconds(5000));
  const uint64_t atKill = inboxStored();
  EXPECT_LT(atKill, total) << "the kill must land mid-fan-out for this test to mean anything";
  RecordProperty("copies_stored_at_kill", std::to_string(atKill));
  std::printf("copies stored when the plane was killed: %llu of %llu\n",
              static_cast<unsigned long long>(atKill), static_cast<unsigned long long>(total));
  EXPECT_EQ(probe(), "unbound");  // no responders

  // The killed plane's lease row outlives it (30 s TTL): a plane that does not wait refuses,
  // one that waits takes over once the row expires and finishes the fan-out.
  Background* impatient = serve(0);
  ASSERT_NE(impatient, nullptr);
  ASSERT_TRUE(impatient->child.wait(milliseconds(15000)).isOk());
  EXPECT_EQ(impatient->child.exitStatus()->code, 1);
  EXPECT_NE(impatient->output().find("expires after 30 s"), std::string::npos)
      << impatient->output();
  Background* successor = serve(45);
  ASSERT_NE(successor, nullptr);
  ASSERT_TRUE(outputShows(*successor, "delivery plane serving space itest", milliseconds(50000)))
      << successor->output();
  EXPECT_EQ(probe(), "bound");

  // Every member gets every post exactly once.
  for (const auto& m : members) {
    auto consumer = transport::PullConsumer::bind(*js_, "DLV_itest", m.durable);
    ASSERT_TRUE(consumer.isOk());
    std::map<std::string, int> seen;
    ASSERT_TRUE(testing::eventually(
        [&] {
          auto batch = consumer->fetch(64, milliseconds(200));
          if (batch.isOk()) {
            for (auto& msg : *batch) {
              auto frame = wire::decodeDeliveryFrame(msg.data());
              EXPECT_TRUE(frame.isOk()) << msg.data();
              if (frame.isOk()) ++seen[frame->msg.id];
              (void)msg.ack();
            }
          }
          return seen.size() == ids.size();
        },
        milliseconds(20000)))
        << m.principal.dotForm() << " got " << seen.size() << " of " << ids.size();
    auto rest = consumer->fetch(64, milliseconds(300));  // a duplicate would be waiting now
    ASSERT_TRUE(rest.isOk());
    EXPECT_TRUE(rest->empty()) << m.principal.dotForm() << " got a duplicate";
    for (const auto& id : ids)
      EXPECT_EQ(seen[id], 1) << m.principal.dotForm() << " " << id;
  }
  EXPECT_EQ(inboxStored(), total);  // per-copy ids: the repeated fan-out stored nothing new

  // A clean stop releases the lease: the next plane needs no wait.
  ASSERT_TRUE(successor->child.terminate(std::chrono::seconds(5)).isOk());
  EXPECT_EQ(probe(), "unbound");
  Background* next = serve(0);
  ASSERT_NE(next, nullptr);
  EXPECT_TRUE(outputShows(*next, "delivery plane serving space itest"));
}

}  // namespace
}  // namespace shoal
