#include "transport/local_broker.h"

#include "testing/nats_fixture.h"
#include "testing/temp_dir.h"
#include "transport/jetstream.h"
#include "transport/server_probe.h"

#include <gtest/gtest.h>

namespace shoal::transport {
namespace {

using shoal::testing::ConnectionEvents;
using shoal::testing::TempDir;
using std::chrono::milliseconds;
using std::chrono::seconds;

TempDir makeDir() {
  auto dir = TempDir::create("broker");
  EXPECT_TRUE(dir.isOk()) << dir.status().toString();
  return std::move(dir).value();
}

// A started broker accepts connections (with JetStream) until it is stopped.
TEST(LocalBroker, StartsOnAFreePortAndStops) {
  TempDir dir = makeDir();
  auto broker = LocalBroker::start({.storeDir = dir.join("store")});
  ASSERT_TRUE(broker.isOk()) << broker.status().toString();
  EXPECT_GT((*broker)->port(), 0);
  EXPECT_GT((*broker)->pid(), 0);
  EXPECT_EQ((*broker)->url(), "nats://127.0.0.1:" + std::to_string((*broker)->port()));
  auto probed = probeServer("127.0.0.1", (*broker)->port(), seconds(5));
  ASSERT_TRUE(probed.isOk()) << probed.status().toString();
  EXPECT_TRUE(probed->jetstream);
  EXPECT_FALSE(probed->version.empty());

  ASSERT_TRUE((*broker)->stop().isOk());
  EXPECT_FALSE((*broker)->running());
  auto after = probeServer("127.0.0.1", (*broker)->port(), milliseconds(500));
  EXPECT_EQ(after.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE((*broker)->stop().isOk()) << "stop is idempotent";
}

// A missing nats-server binary is refused with a remedy naming scripts/bootstrap.
TEST(LocalBroker, MissingBinaryIsRefusedWithRemedy) {
  TempDir dir = makeDir();
  auto broker = LocalBroker::start(
      {.serverBinary = "/nonexistent/nats-server", .storeDir = dir.join("store")});
  ASSERT_FALSE(broker.isOk());
  EXPECT_EQ(broker.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(broker.status().reason(), "nats-server-missing");
  EXPECT_NE(broker.status().message().find("scripts/bootstrap"), std::string_view::npos);
}

// A preferred port that is taken moves the broker to the next free one.
TEST(LocalBroker, TakenPreferredPortMovesToTheNextFreeOne) {
  TempDir dirA = makeDir();
  TempDir dirB = makeDir();
  auto first = LocalBroker::start({.storeDir = dirA.join("store")});
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  int taken = (*first)->port();
  auto second = LocalBroker::start({.preferredPort = taken, .storeDir = dirB.join("store")});
  ASSERT_TRUE(second.isOk()) << second.status().toString();
  EXPECT_GT((*second)->port(), taken);
  EXPECT_TRUE(probeServer("127.0.0.1", (*second)->port(), seconds(5)).isOk());
}

// A server that cannot start fails the start with its log.
TEST(LocalBroker, BadConfigFailsWithTheLog) {
  TempDir dir = makeDir();
  auto broker = LocalBroker::start(
      {.storeDir = dir.join("store"), .extraConfig = "this is { not valid nats config"});
  ASSERT_FALSE(broker.isOk());
  EXPECT_EQ(broker.status().reason(), "broker-start-failed") << broker.status().toString();
  EXPECT_NE(broker.status().message().find("nats-server.log"), std::string_view::npos);
}

// A broker stopped and restarted comes back on the same port and store.
TEST(LocalBroker, RestartAfterStopKeepsPortAndStore) {
  TempDir dir = makeDir();
  auto broker = LocalBroker::start({.storeDir = dir.join("store")});
  ASSERT_TRUE(broker.isOk()) << broker.status().toString();
  int port = (*broker)->port();
  {
    auto conn = Connection::connect({.servers = {(*broker)->url()}});
    ASSERT_TRUE(conn.isOk()) << conn.status().toString();
    auto js = JetStream::create(**conn);
    ASSERT_TRUE(js.isOk());
    ASSERT_TRUE(js->addStream({.name = "KEEP", .subjects = {"keep.>"}}).isOk());
    ASSERT_TRUE(js->publish("keep.1", "x").isOk());
  }
  ASSERT_TRUE((*broker)->stop().isOk());
  ASSERT_TRUE((*broker)->restart().isOk()) << (*broker)->logTail();
  EXPECT_EQ((*broker)->port(), port);
  auto conn = Connection::connect({.servers = {(*broker)->url()}});
  ASSERT_TRUE(conn.isOk()) << conn.status().toString();
  auto js = JetStream::create(**conn);
  ASSERT_TRUE(js.isOk());
  auto info = js->streamInfo("KEEP");
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_EQ(info->state.lastSeq, 1u);
}

class BrokerCrashTest : public shoal::testing::NatsServerTest {};

// A broker crash (kill -9) is reported as a disconnect; after a restart on the same store the
// connection reconnects by itself and the JetStream data is still there.
TEST_F(BrokerCrashTest, Kill9ThenRestartReconnectsAndKeepsJetStreamData) {
  ConnectionEvents events;
  auto options = optionsForServer();
  options.onEvent = events.handler();
  auto conn = connect(options);
  ASSERT_NE(conn, nullptr);
  auto js = JetStream::create(*conn);
  ASSERT_TRUE(js.isOk());
  ASSERT_TRUE(js->addStream({.name = "DM_main", .subjects = {"cotal.main.inst.>"}}).isOk());
  ASSERT_TRUE(js->addConsumer("DM_main", {.durable = "dm_a"}).isOk());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(js->publish("cotal.main.inst.a.b.c.d", "m" + std::to_string(i)).isOk());
  }

  ASSERT_TRUE(server_->kill9().isOk());
  ASSERT_TRUE(events.waitFor(ConnectionEventKind::kDisconnected).has_value());
  EXPECT_NE(conn->state(), ConnectionState::kConnected);

  ASSERT_TRUE(server_->restart().isOk()) << server_->logTail();
  ASSERT_TRUE(events.waitFor(ConnectionEventKind::kReconnected).has_value()) << server_->logTail();
  EXPECT_EQ(conn->stats().disconnects, 1u);
  EXPECT_EQ(conn->stats().reconnects, 1u);

  // JetStream may need a moment after the restart to serve its API; retry briefly.
  Result<StreamInfo> info = unavailable("not-yet", "");
  ASSERT_TRUE(shoal::testing::eventually([&] {
    info = js->streamInfo("DM_main");
    return info.isOk();
  })) << info.status().toString();
  EXPECT_EQ(info->state.lastSeq, 3u);
  auto consumer = js->consumerInfo("DM_main", "dm_a");
  ASSERT_TRUE(consumer.isOk()) << consumer.status().toString();
  EXPECT_EQ(consumer->numPending, 3u);
  auto ack = js->publish("cotal.main.inst.a.b.c.d", "after");
  ASSERT_TRUE(ack.isOk()) << ack.status().toString();
  EXPECT_EQ(ack->seq, 4u);
}

}  // namespace
}  // namespace shoal::transport
