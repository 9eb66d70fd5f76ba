// Integration tests (real nats-server): the manager's provision rail and liveness, probed by the
// mesh clients.
#include "planes/manager_plane.h"

#include "base/ids.h"
#include "mesh/liveness_probe.h"
#include "mesh/provision_client.h"
#include "planes/space_provisioner.h"
#include "testing/nats_fixture.h"
#include "transport/jetstream.h"

#include <gtest/gtest.h>

namespace shoal::planes {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kProbeTimeout{1500};
constexpr milliseconds kQuietWait{300};  // how long a test waits to see that nothing arrives

const wire::Principal kAlice{"local", "alice"};

class ManagerPlaneTest : public testing::NatsServerTest {
 protected:
  void SetUp() override {
    NatsServerTest::SetUp();
    auto options = optionsForServer();
    options.sendAsap = true;
    options.onEvent = [this](const transport::ConnectionEvent& e) {
      std::lock_guard lock(mu_);
      if (plane_) plane_->onConnectionEvent(e);
    };
    managerConn_ = connect(options);
    clientConn_ = connect();
    ASSERT_NE(managerConn_, nullptr);
    ASSERT_NE(clientConn_, nullptr);
    auto js = transport::JetStream::create(*managerConn_);
    ASSERT_TRUE(js.isOk());
    js_.emplace(std::move(js).value());
  }
  void TearDown() override {
    std::lock_guard lock(mu_);
    plane_.reset();
  }
  void startManager() {
    ASSERT_TRUE(ensureSpace(*js_, "main").isOk());
    auto plane = ManagerPlane::start(*managerConn_, *js_, "main");
    ASSERT_TRUE(plane.isOk()) << plane.status().toString();
    std::lock_guard lock(mu_);
    plane_ = std::move(plane).value();
  }
  mesh::LivenessVerdict probe(std::string_view plane) {
    auto v = mesh::probeLiveness(*clientConn_, "main", kAlice, plane, kProbeTimeout);
    EXPECT_TRUE(v.isOk()) << v.status().toString();
    return v.valueOr({});
  }

  std::unique_ptr<transport::Connection> managerConn_;
  std::unique_ptr<transport::Connection> clientConn_;
  std::optional<transport::JetStream> js_;
  std::mutex mu_;
  std::unique_ptr<ManagerPlane> plane_;
};

// A client's provision request creates its DM durable and role durables via the manager.
TEST_F(ManagerPlaneTest, ProvisionRailRoundTrip) {
  startManager();
  const std::string uid = newLifecycleUid().valueOr("");
  auto reply =
      mesh::requestProvision(*clientConn_, "main", kAlice, uid, {"reviewer"}, milliseconds(5000));
  ASSERT_TRUE(reply.isOk()) << reply.status().toString();
  EXPECT_EQ(reply->durable, "dm_local-alice-" + uid);
  EXPECT_TRUE(reply->created);
  EXPECT_EQ(reply->frontier, 0u);
  EXPECT_EQ(reply->roles.at("reviewer"), "svc_reviewer");
  EXPECT_TRUE(js_->consumerInfo("DM_main", reply->durable).isOk());
  EXPECT_TRUE(js_->consumerInfo("TASK_main", "svc_reviewer").isOk());

  auto again =
      mesh::requestProvision(*clientConn_, "main", kAlice, uid, {"reviewer"}, milliseconds(5000));
  ASSERT_TRUE(again.isOk());
  EXPECT_FALSE(again->created);
}

// A malformed request gets an error reply (never a crash), and the rail keeps serving.
TEST_F(ManagerPlaneTest, BadRequestGetsAnErrorReply) {
  startManager();
  const std::string subject = mesh::provisionSubject("main", kAlice, newLifecycleUid().valueOr(""),
                                                     "0123456789abcdef0123456789abcdef")
                                  .valueOr("");
  auto unknownKey =
      clientConn_->request(subject, R"({"roles":[],"admin":true})", milliseconds(5000));
  ASSERT_TRUE(unknownKey.isOk()) << unknownKey.status().toString();
  EXPECT_EQ(mesh::decodeProvisionReply(unknownKey->data).status().reason(),
            "bad-provision-request");
  auto notJson = clientConn_->request(subject, "{roles", milliseconds(5000));
  ASSERT_TRUE(notJson.isOk());
  EXPECT_EQ(mesh::decodeProvisionReply(notJson->data).status().reason(), "malformed-json");
  // Matches the serve filter, but the caller is not a real principal.
  auto badCaller = clientConn_->request(
      "cotal.main.ep.one.manager.provision.nobody.alice.abcdefghijklmnopqrstuvwxyz."
      "0123456789abcdef0123456789abcdef",
      "", milliseconds(5000));
  ASSERT_TRUE(badCaller.isOk());
  EXPECT_EQ(mesh::decodeProvisionReply(badCaller->data).status().code(),
            StatusCode::kInvalidArgument);
  // The plane counts a reply after sending it: the third may still be on its way to the count.
  EXPECT_TRUE(shoal::testing::eventually([&] { return plane_->provisionReplies() == 3u; }))
      << plane_->provisionReplies();
}

// With no manager serving, a provision request is refused as unavailable, naming `shoal serve`.
TEST_F(ManagerPlaneTest, ProvisionWithoutManagerIsUnavailable) {
  auto reply = mesh::requestProvision(*clientConn_, "main", kAlice, newLifecycleUid().valueOr(""),
                                      {}, milliseconds(2000));
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(reply.status().message().find("shoal serve"), std::string_view::npos);
}

// A serving manager answers `bound` with its instance token.
TEST_F(ManagerPlaneTest, ProbeOfBoundManagerIsBound) {
  startManager();
  auto v = probe("manager");
  EXPECT_EQ(v.responder, wire::Responder::kBound);
  EXPECT_EQ(v.evidence, mesh::LivenessEvidence::kReply);
  ASSERT_TRUE(v.instance.has_value());
  EXPECT_EQ(*v.instance, plane_->livenessInstance());
}

// With nobody serving the plane the broker says "no responders": the verdict is unbound.
TEST_F(ManagerPlaneTest, ProbeWithNoManagerIsUnbound) {
  auto v = probe("manager");
  EXPECT_EQ(v.responder, wire::Responder::kUnbound);
  EXPECT_EQ(v.evidence, mesh::LivenessEvidence::kNoResponders);
}

// No delivery plane runs yet, so a delivery probe is unbound even with a manager serving.
TEST_F(ManagerPlaneTest, ProbeOfDeliveryIsUnbound) {
  startManager();
  auto v = probe("delivery");
  EXPECT_EQ(v.responder, wire::Responder::kUnbound);
}

// A plane outside {manager, delivery} is refused before anything is sent.
TEST_F(ManagerPlaneTest, ProbeOfBogusPlaneIsRefusedBeforeSending) {
  testing::EventQueue<transport::Message> seen;
  auto tap = managerConn_->subscribe("cotal.>",
                                     [&seen](transport::Message m) { seen.push(std::move(m)); });
  ASSERT_TRUE(tap.isOk());
  ASSERT_TRUE(managerConn_->flush(milliseconds(2000)).isOk());
  auto v = mesh::probeLiveness(*clientConn_, "main", kAlice, "bogus", kProbeTimeout);
  EXPECT_EQ(v.status().reason(), "bad-plane");
  ASSERT_TRUE(clientConn_->flush(milliseconds(2000)).isOk());
  ASSERT_TRUE(managerConn_->flush(milliseconds(2000)).isOk());
  EXPECT_EQ(seen.size(), 0u);
}

// The responder drops a probe whose reply target is outside the request's `.reply.` subtree.
TEST_F(ManagerPlaneTest, ResponderDropsForeignReplySubject) {
  startManager();
  testing::EventQueue<transport::Message> replies;
  auto sub = clientConn_->subscribe(
      "elsewhere.>", [&replies](transport::Message m) { replies.push(std::move(m)); });
  ASSERT_TRUE(sub.isOk());
  ASSERT_TRUE(clientConn_->flush(milliseconds(2000)).isOk());
  ASSERT_TRUE(
      clientConn_->publishRequest("cotal.main.live.manager.local.alice", "elsewhere.reply.x", "")
          .isOk());
  EXPECT_TRUE(testing::eventually([&] { return plane_->livenessDropped() == 1; }));
  EXPECT_FALSE(replies.pop(kQuietWait).has_value());
  // ...and keeps serving.
  EXPECT_EQ(probe("manager").responder, wire::Responder::kBound);
}

// After a broker restart the manager answers again, under a new instance token.
TEST_F(ManagerPlaneTest, ReconnectRebindsUnderNewInstance) {
  startManager();
  auto before = probe("manager");
  ASSERT_EQ(before.responder, wire::Responder::kBound);
  ASSERT_TRUE(server_->kill9().isOk());
  ASSERT_TRUE(server_->restart().isOk());
  std::optional<mesh::LivenessVerdict> after;
  ASSERT_TRUE(testing::eventually(
      [&] {
        auto v = mesh::probeLiveness(*clientConn_, "main", kAlice, "manager", kProbeTimeout);
        if (!v.isOk() || v->responder != wire::Responder::kBound) return false;
        after = *v;
        return after->instance != before.instance;
      },
      milliseconds(20000), milliseconds(50)));
  EXPECT_NE(after->instance, before.instance);
}

}  // namespace
}  // namespace shoal::planes
