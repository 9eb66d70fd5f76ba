#include "transport/connection.h"

#include <atomic>
#include <regex>
#include <set>

#include "testing/nats_fixture.h"

#include <gtest/gtest.h>

namespace shoal::transport {
namespace {

using shoal::testing::EventQueue;
using std::chrono::milliseconds;
using std::chrono::seconds;

class ConnectionTest : public shoal::testing::NatsServerTest {};

// A connection reports the server it reached, with JetStream, and an inbox of its own.
TEST_F(ConnectionTest, ConnectAndServerInfoShowJetStream) {
  auto conn = connect();
  ASSERT_NE(conn, nullptr);
  EXPECT_EQ(conn->state(), ConnectionState::kConnected);
  EXPECT_TRUE(std::regex_match(conn->connId(), std::regex("^ibx[0-9a-f]{32}$"))) << conn->connId();
  EXPECT_EQ(conn->inboxPrefix(), "_INBOX_" + conn->connId());
  EXPECT_EQ(conn->newInbox().rfind(conn->inboxPrefix() + ".", 0), 0u);
  EXPECT_NE(conn->newInbox(), conn->newInbox());

  auto info = conn->serverInfo();
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_TRUE(info->jetstream);
  EXPECT_FALSE(info->serverId.empty());
  EXPECT_FALSE(info->version.empty());
  EXPECT_TRUE(info->headers);
  EXPECT_GT(info->maxPayload, 0);
  EXPECT_EQ(info->connectedUrl, server_->url());

  auto rtt = conn->rtt();
  ASSERT_TRUE(rtt.isOk()) << rtt.status().toString();
  EXPECT_GE(rtt->count(), 0);
  EXPECT_TRUE(conn->flush(seconds(5)).isOk());
}

// A server without JetStream is reported as such.
class NoJetStreamTest : public shoal::testing::NatsServerTest {
  shoal::testing::TestNatsServerOptions serverOptions() override { return {.jetstream = false}; }
};
TEST_F(NoJetStreamTest, ServerInfoShowsJetStreamOff) {
  auto conn = connect();
  ASSERT_NE(conn, nullptr);
  auto info = conn->serverInfo();
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_FALSE(info->jetstream);
}

// A published message reaches a subscriber with its payload and headers.
TEST_F(ConnectionTest, PublishReachesSubscriberWithHeaders) {
  auto conn = connect();
  ASSERT_NE(conn, nullptr);
  EventQueue<Message> received;
  auto sub = conn->subscribe("demo.>", [&](Message m) { received.push(std::move(m)); });
  ASSERT_TRUE(sub.isOk()) << sub.status().toString();
  ASSERT_TRUE(conn->flush(seconds(5)).isOk());
  ASSERT_TRUE(
      conn->publish("demo.one", "hello", {{"X-Kind", "greeting"}, {"X-Kind", "second"}}).isOk());
  auto m = received.pop();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->subject, "demo.one");
  EXPECT_EQ(m->data, "hello");
  EXPECT_EQ(m->header("X-Kind"), "greeting");
  EXPECT_EQ(m->headers.size(), 2u);
  EXPECT_EQ(sub->subject(), "demo.>");
}

// A queue group delivers each message to exactly one of its members.
TEST_F(ConnectionTest, QueueSubscribeDeliversEachMessageToExactlyOne) {
  auto conn = connect();
  ASSERT_NE(conn, nullptr);
  std::mutex mu;
  std::multiset<std::string> seen;
  std::atomic<int> a{0};
  std::atomic<int> b{0};
  auto record = [&](std::atomic<int>& counter, const Message& m) {
    std::lock_guard lock(mu);
    seen.insert(m.data);
    counter.fetch_add(1);
  };
  auto subA = conn->queueSubscribe("work", "workers", [&](Message m) { record(a, m); });
  auto subB = conn->queueSubscribe("work", "workers", [&](Message m) { record(b, m); });
  ASSERT_TRUE(subA.isOk() && subB.isOk());
  ASSERT_TRUE(conn->flush(seconds(5)).isOk());
  constexpr int kCount = 200;
  for (int i = 0; i < kCount; ++i)
    ASSERT_TRUE(conn->publish("work", std::to_string(i)).isOk());
  ASSERT_TRUE(shoal::testing::eventually([&] { return a + b == kCount; }));
  std::lock_guard lock(mu);
  ASSERT_EQ(seen.size(), static_cast<size_t>(kCount));
  for (int i = 0; i < kCount; ++i)
    EXPECT_EQ(seen.count(std::to_string(i)), 1u) << i;
}

// A request is answered by a responder whose connection sends replies at once (SendAsap).
TEST_F(ConnectionTest, RequestReplyWithSendAsapResponder) {
  auto responderOptions = optionsForServer();
  responderOptions.sendAsap = true;
  auto responder = connect(responderOptions);
  auto requester = connect();
  ASSERT_NE(responder, nullptr);
  ASSERT_NE(requester, nullptr);
  Connection* r = responder.get();
  auto sub = responder->subscribe("svc.echo", [r](Message m) {
    (void)r->respond(m, "echo:" + m.data, {{"X-Reply", "1"}});
  });
  ASSERT_TRUE(sub.isOk());
  ASSERT_TRUE(responder->flush(seconds(5)).isOk());
  for (int i = 0; i < 20; ++i) {
    auto reply = requester->request("svc.echo", "ping" + std::to_string(i), seconds(5));
    ASSERT_TRUE(reply.isOk()) << reply.status().toString();
    EXPECT_EQ(reply->data, "echo:ping" + std::to_string(i));
    EXPECT_EQ(reply->header("X-Reply"), "1");
  }
}

// A request nobody listens to fails at once with `no-responders`.
TEST_F(ConnectionTest, RequestToNobodyIsNoResponders) {
  auto conn = connect();
  ASSERT_NE(conn, nullptr);
  auto reply = conn->request("nobody.home", "hi", seconds(5));
  ASSERT_FALSE(reply.isOk());
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(reply.status().reason(), "no-responders");
}

// A responder that never answers makes the request time out (kDeadlineExceeded).
TEST_F(ConnectionTest, SilentResponderIsDeadlineExceeded) {
  auto conn = connect();
  ASSERT_NE(conn, nullptr);
  auto sub = conn->subscribe("svc.silent", [](Message) {});
  ASSERT_TRUE(sub.isOk());
  ASSERT_TRUE(conn->flush(seconds(5)).isOk());
  auto reply = conn->request("svc.silent", "hi", milliseconds(100));
  ASSERT_FALSE(reply.isOk());
  EXPECT_EQ(reply.status().code(), StatusCode::kDeadlineExceeded);
}

// respond() refuses a message that has no reply subject.
TEST_F(ConnectionTest, RespondWithoutReplySubjectIsInvalid) {
  auto conn = connect();
  ASSERT_NE(conn, nullptr);
  Message m;
  m.subject = "x";
  EXPECT_EQ(conn->respond(m, "data").code(), StatusCode::kInvalidArgument);
}

// After a Subscription is destroyed its handler is never called again.
TEST_F(ConnectionTest, DestroyedSubscriptionStopsDelivery) {
  auto conn = connect();
  ASSERT_NE(conn, nullptr);
  std::atomic<int> calls{0};
  EventQueue<Message> barrier;
  auto barrierSub = conn->subscribe("barrier", [&](Message m) { barrier.push(std::move(m)); });
  ASSERT_TRUE(barrierSub.isOk());
  {
    auto sub = conn->subscribe("gone", [&](Message) { calls.fetch_add(1); });
    ASSERT_TRUE(sub.isOk());
    ASSERT_TRUE(conn->flush(seconds(5)).isOk());
    ASSERT_TRUE(conn->publish("gone", "1").isOk());
    ASSERT_TRUE(shoal::testing::eventually([&] { return calls == 1; }));
  }
  ASSERT_TRUE(conn->publish("gone", "2").isOk());
  ASSERT_TRUE(conn->publish("barrier", "after").isOk());
  ASSERT_TRUE(barrier.pop().has_value());
  EXPECT_EQ(calls.load(), 1);
}

// A handler may destroy its own subscription without deadlocking.
TEST_F(ConnectionTest, HandlerMayDestroyItsOwnSubscription) {
  auto conn = connect();
  ASSERT_NE(conn, nullptr);
  std::optional<Subscription> self;
  std::mutex mu;
  std::atomic<bool> done{false};
  auto sub = conn->subscribe("self", [&](Message) {
    std::lock_guard lock(mu);
    self.reset();
    done = true;
  });
  ASSERT_TRUE(sub.isOk());
  {
    std::lock_guard lock(mu);
    self.emplace(std::move(sub).value());
  }
  ASSERT_TRUE(conn->flush(seconds(5)).isOk());
  ASSERT_TRUE(conn->publish("self", "x").isOk());
  EXPECT_TRUE(shoal::testing::eventually([&] { return done.load(); }));
}

// Connecting where no server listens fails with a retryable error naming the address.
TEST_F(ConnectionTest, ConnectToStoppedServerIsUnavailable) {
  std::string url = server_->url();
  ASSERT_TRUE(server_->stop().isOk());
  ConnectOptions options;
  options.servers = {url};
  options.connectTimeout = milliseconds(500);
  auto conn = Connection::connect(options);
  ASSERT_FALSE(conn.isOk());
  EXPECT_EQ(conn.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(conn.status().reason(), "no-server");
  EXPECT_NE(conn.status().message().find(url), std::string_view::npos);
}

// Closing the connection reports `closed` to the event handler, and nothing after it.
TEST_F(ConnectionTest, DestroyReportsClosedLast) {
  shoal::testing::ConnectionEvents events;
  auto options = optionsForServer();
  options.onEvent = events.handler();
  auto conn = connect(options);
  ASSERT_NE(conn, nullptr);
  conn.reset();
  EXPECT_TRUE(events.waitFor(ConnectionEventKind::kClosed, milliseconds(1)).has_value());
}

}  // namespace
}  // namespace shoal::transport
