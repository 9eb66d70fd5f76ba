#include <future>
#include <string>

#include "testing/nats_fixture.h"
#include "transport/connection.h"
#include "transport/jetstream.h"

#include <gtest/gtest.h>

namespace shoal::transport {
namespace {

using shoal::testing::ConnectionEvents;
using std::chrono::seconds;

// A server where user `limited` may only publish and subscribe under `allowed.>`.
class PermissionsTest : public shoal::testing::NatsServerTest {
 protected:
  shoal::testing::TestNatsServerOptions serverOptions() override {
    shoal::testing::TestNatsServerOptions options;
    options.extraConfig = R"(
authorization {
  users = [
    { user: "admin", password: "admin-pw" }
    { user: "limited", password: "limited-pw",
      permissions: {
        publish: { allow: ["allowed.>"] }
        subscribe: { allow: ["allowed.>"] }
      }
    }
  ]
}
)";
    return options;
  }

  std::unique_ptr<Connection> connectLimited(ConnectionEvents& events) {
    auto options = optionsForServer();
    options.user = "limited";
    options.password = "limited-pw";
    options.onEvent = events.handler();
    return connect(options);
  }
};

// A subscribe the server refuses is reported only asynchronously, as kPermissionDenied naming
// the subject, and is counted on the connection.
TEST_F(PermissionsTest, RefusedSubscribeArrivesAsPermissionDenied) {
  ConnectionEvents events;
  auto conn = connectLimited(events);
  ASSERT_NE(conn, nullptr);
  auto sub = conn->subscribe("denied.topic", [](Message) {});
  ASSERT_TRUE(sub.isOk()) << "the subscribe call itself succeeds; the refusal is async";
  (void)conn->flush(seconds(5));
  auto event = events.waitFor(ConnectionEventKind::kAsyncError);
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->status.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(event->status.reason(), "permission-violation");
  EXPECT_EQ(event->subject, "denied.topic");
  EXPECT_NE(event->status.message().find("Subscription"), std::string_view::npos)
      << event->status.toString();
  EXPECT_EQ(conn->stats().permissionViolations, 1u);
  EXPECT_EQ(conn->lastAsyncError().code(), StatusCode::kPermissionDenied);
}

// nats.c records a refusal's text on its reader thread before the handler runs, so once flush()
// returned, lastViolationText() names the refused subject even while the handler is held up (a
// channel join that looked only at the handler's events took a refused subscribe as accepted).
TEST_F(PermissionsTest, AFlushedRefusalIsKnownBeforeItsEventIsHandled) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto options = optionsForServer();
  options.user = "limited";
  options.password = "limited-pw";
  options.onEvent = [released](const ConnectionEvent&) { released.wait(); };
  auto conn = connect(options);
  ASSERT_NE(conn, nullptr);
  auto allowed = conn->subscribe("allowed.x", [](Message) {});
  ASSERT_TRUE(allowed.isOk());
  ASSERT_TRUE(conn->flush(seconds(5)).isOk());
  EXPECT_EQ(conn->lastViolationText(), "");
  auto denied = conn->subscribe("denied.topic", [](Message) {});
  ASSERT_TRUE(denied.isOk());
  (void)conn->flush(seconds(5));
  const std::string text = conn->lastViolationText();
  release.set_value();
  EXPECT_NE(text.find("\"denied.topic\""), std::string::npos) << text;
  EXPECT_NE(text.find("Subscription"), std::string::npos) << text;
}

// A refused publish is reported the same way.
TEST_F(PermissionsTest, RefusedPublishArrivesAsPermissionDenied) {
  ConnectionEvents events;
  auto conn = connectLimited(events);
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(conn->publish("denied.topic", "x").isOk());
  (void)conn->flush(seconds(5));
  auto event = events.waitFor(ConnectionEventKind::kAsyncError);
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->status.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(event->subject, "denied.topic");
  EXPECT_NE(event->status.message().find("Publish"), std::string_view::npos);
}

// Allowed traffic of a restricted user works and raises no event.
TEST_F(PermissionsTest, AllowedTrafficRaisesNoEvent) {
  ConnectionEvents events;
  auto conn = connectLimited(events);
  ASSERT_NE(conn, nullptr);
  shoal::testing::EventQueue<Message> got;
  auto sub = conn->subscribe("allowed.x", [&](Message m) { got.push(std::move(m)); });
  ASSERT_TRUE(sub.isOk());
  ASSERT_TRUE(conn->flush(seconds(5)).isOk());
  ASSERT_TRUE(conn->publish("allowed.x", "ok").isOk());
  ASSERT_TRUE(got.pop().has_value());
  ASSERT_TRUE(conn->flush(seconds(5)).isOk());
  EXPECT_EQ(conn->stats().asyncErrors, 0u);
  EXPECT_TRUE(conn->lastAsyncError().isOk());
}

// Wrong credentials fail the connect with kPermissionDenied.
TEST_F(PermissionsTest, WrongPasswordIsPermissionDenied) {
  auto options = optionsForServer();
  options.user = "limited";
  options.password = "wrong";
  auto conn = Connection::connect(options);
  ASSERT_FALSE(conn.isOk());
  EXPECT_EQ(conn.status().code(), StatusCode::kPermissionDenied) << conn.status().toString();
}

// A server where `reader` may create its durable `hist` on stream S only through the create
// form that names the filter in the subject, and only with the filter `s.a.*`.
class PinnedConsumerTest : public shoal::testing::NatsServerTest {
 protected:
  shoal::testing::TestNatsServerOptions serverOptions() override {
    shoal::testing::TestNatsServerOptions options;
    options.extraConfig = R"(
authorization {
  users = [
    { user: "admin", password: "admin-pw" }
    { user: "reader", password: "reader-pw",
      permissions: {
        publish: { allow: ["$JS.API.CONSUMER.CREATE.S.hist.s.a.*",
                           "$JS.API.CONSUMER.DELETE.S.hist"] }
        subscribe: { allow: ["_INBOX_pinned.>"] }
      }
    }
  ]
}
)";
    return options;
  }

  std::unique_ptr<Connection> connectAs(const std::string& user, ConnectionEvents& events) {
    auto options = optionsForServer();
    options.user = user;
    options.password = user + "-pw";
    options.inboxPrefix = "_INBOX_pinned";
    options.onEvent = events.handler();
    return connect(options);
  }

  void SetUp() override {
    NatsServerTest::SetUp();
    admin_ = connectAs("admin", adminEvents_);
    ASSERT_NE(admin_, nullptr);
    auto js = JetStream::create(*admin_);
    ASSERT_TRUE(js.isOk());
    StreamConfig stream;
    stream.name = "S";
    stream.subjects = {"s.>"};
    ASSERT_TRUE(js->addStream(stream).isOk());
    for (const char* subject : {"s.a.1", "s.b.1", "s.a.2"}) {
      ASSERT_TRUE(js->publish(subject, "x").isOk());
    }
  }

  static ConsumerConfig hist(std::string filter) {
    ConsumerConfig config;
    config.durable = "hist";
    config.filterSubject = std::move(filter);
    config.ackPolicy = AckPolicy::kNone;
    config.memoryStorage = true;
    config.inactiveThreshold = std::chrono::milliseconds(5000);
    return config;
  }

  ConnectionEvents adminEvents_;
  std::unique_ptr<Connection> admin_;
};

// The grant pins the filter: the pinned form with the granted (wildcard) filter creates the
// consumer and counts what it selects; another filter, or the body-only create nats.c uses for
// durables, is the broker's permission refusal, named, never a hang.
TEST_F(PinnedConsumerTest, TheGrantPinsWhichFilterTheReaderMayCreate) {
  ConnectionEvents events;
  auto conn = connectAs("reader", events);
  ASSERT_NE(conn, nullptr);
  JetStreamOptions options;
  options.defaultTimeout = std::chrono::milliseconds(1500);
  auto js = JetStream::create(*conn, options);
  ASSERT_TRUE(js.isOk());

  auto created = js->addConsumerPinned("S", hist("s.a.*"));
  ASSERT_TRUE(created.isOk()) << created.status().toString();
  EXPECT_EQ(created->numPending, 2u) << "s.a.1 and s.a.2, not s.b.1";
  ASSERT_TRUE(js->deleteConsumer("S", "hist").isOk());

  auto wider = js->addConsumerPinned("S", hist("s.>"));
  ASSERT_FALSE(wider.isOk());
  EXPECT_EQ(wider.status().reason(), "permission-violation") << wider.status().toString();

  auto bodyOnly = js->addConsumer("S", hist("s.b.*"));
  ASSERT_FALSE(bodyOnly.isOk());
  EXPECT_EQ(bodyOnly.status().reason(), "permission-violation") << bodyOnly.status().toString();
}

// The server itself refuses a body whose filter is not the subject's, so a granted subject
// cannot carry a wider filter in its body.
TEST_F(PinnedConsumerTest, TheServerRefusesABodyFilterUnlikeTheSubjects) {
  const std::string subject = "$JS.API.CONSUMER.CREATE.S.hist.s.a.*";
  const std::string body = R"({"stream_name":"S","config":{"durable_name":"hist","name":"hist",)"
                           R"("filter_subject":"s.>","ack_policy":"none","deliver_policy":"all"}})";
  auto reply = admin_->request(subject, body, seconds(5));
  ASSERT_TRUE(reply.isOk()) << reply.status().toString();
  EXPECT_NE(reply->data.find("\"error\""), std::string::npos) << reply->data;
  auto js = JetStream::create(*admin_);
  ASSERT_TRUE(js.isOk());
  EXPECT_EQ(js->consumerInfo("S", "hist").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace shoal::transport
