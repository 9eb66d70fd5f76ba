#include "testing/nats_fixture.h"
#include "transport/connection.h"

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

}  // namespace
}  // namespace shoal::transport
