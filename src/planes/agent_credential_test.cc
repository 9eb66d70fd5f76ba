// Real mesh::Endpoints under agent credentials and the real planes under their own plane
// credentials, all minted from the grant tables (issue 19 item 2): against a broker in operator
// mode, two agents provision their durables, see each other in the roster, exchange a DM, a
// channel post and a durable channel copy made while the member was offline — and the broker
// refuses none of what any of them does. This is what keeps the tables in step with what the
// endpoint and the planes really send.
#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>

#include "mesh/endpoint.h"
#include "planes/delivery_plane.h"
#include "planes/grants.h"
#include "planes/manager_plane.h"
#include "planes/space_provisioner.h"
#include "testing/eventually.h"
#include "testing/operator_fixture.h"
#include "transport/jetstream.h"

#include <gtest/gtest.h>

namespace shoal::planes {
namespace {

using shoal::testing::eventually;
using std::chrono::milliseconds;
using std::chrono::seconds;

class AgentCredentialTest : public shoal::testing::OperatorModeServerTest {
 protected:
  void SetUp() override {
    OperatorModeServerTest::SetUp();
    if (HasFatalFailure()) return;
    managerConn_ = connectPlane("manager", &managerGrants);
    ASSERT_NE(managerConn_, nullptr);
    auto js = transport::JetStream::create(*managerConn_);
    ASSERT_TRUE(js.isOk());
    managerJs_.emplace(std::move(js).value());
    auto space = ensureSpace(*managerJs_, "main");
    ASSERT_TRUE(space.isOk()) << space.status().toString();
    auto plane = ManagerPlane::start(*managerConn_, *managerJs_, "main");
    ASSERT_TRUE(plane.isOk()) << plane.status().toString();
    manager_ = std::move(plane).value();

    deliveryConn_ = connectPlane("delivery", &deliveryGrants);
    ASSERT_NE(deliveryConn_, nullptr);
    auto djs = transport::JetStream::create(*deliveryConn_);
    ASSERT_TRUE(djs.isOk());
    deliveryJs_.emplace(std::move(djs).value());
    DeliveryPlaneOptions o;
    o.space = "main";
    o.holder = "local.delivery-test";
    auto delivery = DeliveryPlane::start(*deliveryConn_, *deliveryJs_, o);
    ASSERT_TRUE(delivery.isOk()) << delivery.status().toString() << "\n" << server_->logTail();
    delivery_ = std::move(delivery).value();
  }

  void TearDown() override {
    endpoints_.clear();
    if (delivery_) (void)delivery_->stop();
    delivery_.reset();
    deliveryJs_.reset();
    deliveryConn_.reset();
    manager_.reset();
    managerJs_.reset();
    managerConn_.reset();
  }

  // A plane's connection holding exactly its profile's grants, as `shoal serve` connects.
  std::unique_ptr<transport::Connection> connectPlane(
      const std::string& name, Result<std::vector<GrantRow>> (*grants)(const PlaneScope&)) {
    const std::string connId = "ibx" + name + "plane000000000000000000000";
    auto rows = grants(PlaneScope{"main", connId});
    EXPECT_TRUE(rows.isOk()) << rows.status().toString();
    if (!rows.isOk()) return nullptr;
    transport::ConnectOptions options = optionsForServer();
    options.credentialsFile = mintCreds(name, permissionsOf(*rows));
    options.inboxPrefix = "_INBOX_" + connId;
    options.sendAsap = true;
    options.allowReconnect = false;
    auto conn = transport::Connection::connect(options);
    EXPECT_TRUE(conn.isOk()) << conn.status().toString() << "\n" << server_->logTail();
    return conn.isOk() ? std::move(conn).value() : nullptr;
  }

  void expectNoPlaneRefused() {
    for (auto* conn : {managerConn_.get(), deliveryConn_.get()}) {
      EXPECT_EQ(conn->stats().permissionViolations, 0u)
          << "last: " << conn->lastAsyncError().toString();
    }
  }

  // An endpoint for <owner>.<actor> holding exactly the agent profile's grants (serving `role`
  // when given).
  mesh::Endpoint* openAgent(const std::string& actor, const std::string& uid,
                            const std::string& owner = "local", const std::string& role = "") {
    AgentScope scope;
    scope.space = "main";
    scope.principal = wire::Principal{owner, actor};
    if (!role.empty()) scope.role = role;
    scope.lifecycleUid = uid;
    scope.connId = "ibx" + actor + "0000000000000000000000000000";
    scope.readChannels = {"team.*"};
    scope.postChannels = {"team.backend"};
    auto rows = agentGrants(scope);
    EXPECT_TRUE(rows.isOk()) << rows.status().toString();
    mesh::EndpointOptions o;
    o.servers = {server_->url()};
    o.credentialsFile = mintCreds(actor, permissionsOf(*rows));
    o.inboxPrefix = "_INBOX_" + scope.connId;
    o.principal = scope.principal;
    o.displayName = actor;
    o.lifecycleUid = uid;
    if (!role.empty()) {
      o.role = role;
      o.serviceRoles = {role};
    }
    o.onWarning = [this](const Status& s) {
      if (s.code() == StatusCode::kPermissionDenied) ++refusals_;
      warnings_.push_back(s.toString());
    };
    o.onDelivery = [this, actor](const mesh::Delivery& d) {
      std::lock_guard lock(mu_);
      texts_.push_back(actor + " <- " + d.message.id);
      if (d.historical) historical_.push_back(actor + " <- " + d.message.id);
      return mesh::HandlerVerdict::kAccepted;
    };
    auto ep = mesh::Endpoint::open(o);
    EXPECT_TRUE(ep.isOk()) << ep.status().toString() << "\n" << server_->logTail();
    if (!ep.isOk()) return nullptr;
    endpoints_.push_back(std::move(ep).value());
    return endpoints_.back().get();
  }

  size_t receivedBy(const std::string& actor, const std::string& id) {
    std::lock_guard lock(mu_);
    return std::count(texts_.begin(), texts_.end(), actor + " <- " + id);
  }

  std::unique_ptr<transport::Connection> managerConn_, deliveryConn_;
  std::optional<transport::JetStream> managerJs_, deliveryJs_;
  std::unique_ptr<ManagerPlane> manager_;
  std::unique_ptr<DeliveryPlane> delivery_;
  std::vector<std::unique_ptr<mesh::Endpoint>> endpoints_;
  std::atomic<int> refusals_{0};
  std::vector<std::string> warnings_;
  std::mutex mu_;
  std::vector<std::string> texts_;
  std::vector<std::string> historical_;
};

TEST_F(AgentCredentialTest, TwoAgentsWorkUnderTheirGrantsAndNothingIsRefused) {
  mesh::Endpoint* ada = openAgent("ada", "aaaaaaaaaaaaaaaaaaaaaaaaaa");
  mesh::Endpoint* bob = openAgent("bob", "bbbbbbbbbbbbbbbbbbbbbbbbbb");
  ASSERT_NE(ada, nullptr);
  ASSERT_NE(bob, nullptr);
  ASSERT_TRUE(eventually([&] { return ada->findPeer("local.bob").isOk(); }))
      << "the roster, through a watch the grants allow; violations "
      << ada->connection().stats().permissionViolations << ", last "
      << ada->connection().lastAsyncError().toString() << ", warnings "
      << ::testing::PrintToString(warnings_);
  ASSERT_TRUE(bob->join("team.backend").isOk());
  auto dm = ada->sendDirect("local.bob", "hello under grants");
  ASSERT_TRUE(dm.isOk()) << dm.status().toString();
  EXPECT_TRUE(eventually([&] { return receivedBy("bob", dm->stored.messageId) == 1; }));
  auto post = ada->post("team.backend", "a post under grants");
  ASSERT_TRUE(post.isOk()) << post.status().toString();
  EXPECT_TRUE(eventually([&] { return receivedBy("bob", post->stored.messageId) == 1; }));
  for (auto* ep : {ada, bob})
    EXPECT_EQ(ep->connection().stats().permissionViolations, 0u) << ep->id();
  EXPECT_EQ(refusals_.load(), 0) << ::testing::PrintToString(warnings_);
  expectNoPlaneRefused();
}

// The wire digest's interop scenario (§11.3) in auth mode: two owners, every principal under
// its own agent credential. Multicast with a mention, a DM, anycast to exactly one of two
// reviewers, and a late joiner's replay marked historical — with no refusal anywhere.
TEST_F(AgentCredentialTest, TheInteropScenarioRunsUnderEachPrincipalsOwnCredential) {
  const std::string a = "u_aaaaaaaaaaaaaaaaaaaaaaaaaa", b = "u_bbbbbbbbbbbbbbbbbbbbbbbbbb";
  mesh::Endpoint* alice = openAgent("alice", "aaaaaaaaaaaaaaaaaaaaaaaaaa", a);
  mesh::Endpoint* bob = openAgent("bob", "bbbbbbbbbbbbbbbbbbbbbbbbbb", b, "reviewer");
  mesh::Endpoint* carol = openAgent("carol", "cccccccccccccccccccccccccc", b, "reviewer");
  ASSERT_TRUE(alice && bob && carol);
  ASSERT_TRUE(eventually([&] {
    return alice->findPeer(b + ".bob").isOk() && alice->findPeer(b + ".carol").isOk();
  })) << ::testing::PrintToString(warnings_);
  ASSERT_TRUE(alice->join("team.backend").isOk());
  ASSERT_TRUE(bob->join("team.backend").isOk());

  auto posted = alice->post("team.backend", "Can you review this?", {"bob"});
  ASSERT_TRUE(posted.isOk()) << posted.status().toString();
  EXPECT_TRUE(eventually([&] { return receivedBy("bob", posted->stored.messageId) == 1; }));
  auto dm = alice->sendDirect(b + ".bob", "a direct word");
  ASSERT_TRUE(dm.isOk()) << dm.status().toString();
  EXPECT_TRUE(eventually([&] { return receivedBy("bob", dm->stored.messageId) == 1; }));
  auto work = alice->ask("reviewer", "review PR 7");
  ASSERT_TRUE(work.isOk()) << work.status().toString();
  const std::string id = work->stored.messageId;
  EXPECT_TRUE(eventually([&] { return receivedBy("bob", id) + receivedBy("carol", id) == 1; }));
  // TASK is a work queue: once its one copy is acked no second holder can receive it.
  ASSERT_TRUE(eventually([&] {
    auto info = managerJs_->consumerInfo("TASK_main", "svc_reviewer");
    return info.isOk() && info->ackFloor.streamSeq >= work->stored.seq &&
           info->numAckPending == 0 && info->numPending == 0;
  }));
  EXPECT_EQ(receivedBy("bob", id) + receivedBy("carol", id), 1u) << "anycast reached both";

  mesh::Endpoint* dave = openAgent("dave", "dddddddddddddddddddddddddd", a);
  ASSERT_NE(dave, nullptr);
  mesh::JoinOptions replay;
  replay.replay = true;
  auto joined = dave->join("team.backend", replay);
  ASSERT_TRUE(joined.isOk()) << joined.status().toString();
  EXPECT_EQ(joined->replayed, 1u);
  {
    std::lock_guard lock(mu_);
    EXPECT_EQ(
        std::count(historical_.begin(), historical_.end(), "dave <- " + posted->stored.messageId),
        1);
  }
  EXPECT_EQ(receivedBy("alice", posted->stored.messageId), 0u) << "her own post is an echo";
  for (auto* ep : {alice, bob, carol, dave})
    EXPECT_EQ(ep->connection().stats().permissionViolations, 0u)
        << ep->id() << ": " << ep->connection().lastAsyncError().toString();
  EXPECT_EQ(refusals_.load(), 0) << ::testing::PrintToString(warnings_);
  expectNoPlaneRefused();
}

// A durable channel member offline when a post is made gets it once, on its return, from its
// DLV durable: the delivery plane's fan-out, trusted reader and rail all under its own grants.
TEST_F(AgentCredentialTest, ADurableCopyTravelsUnderThePlaneGrants) {
  const std::string bobUid = "bbbbbbbbbbbbbbbbbbbbbbbbbb";
  mesh::Endpoint* bob = openAgent("bob", bobUid);
  ASSERT_NE(bob, nullptr);
  auto joined = bob->join("team.backend");
  ASSERT_TRUE(joined.isOk()) << joined.status().toString();
  ASSERT_TRUE(joined->durable) << joined->backstop;
  endpoints_.clear();  // bob goes offline; the membership stays

  mesh::Endpoint* ada = openAgent("ada", "aaaaaaaaaaaaaaaaaaaaaaaaaa");
  ASSERT_NE(ada, nullptr);
  auto post = ada->post("team.backend", "while bob was away");
  ASSERT_TRUE(post.isOk()) << post.status().toString();
  ASSERT_TRUE(eventually([&] { return delivery_->counters().copies >= 1; }))
      << "copies " << delivery_->counters().copies << "; delivery plane refusals "
      << deliveryConn_->stats().permissionViolations << ": "
      << deliveryConn_->lastAsyncError().toString();

  bob = openAgent("bob", bobUid);
  ASSERT_NE(bob, nullptr);
  EXPECT_TRUE(eventually([&] { return receivedBy("bob", post->stored.messageId) == 1; }));
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(receivedBy("bob", post->stored.messageId), 1u);
  EXPECT_EQ(refusals_.load(), 0) << ::testing::PrintToString(warnings_);
  expectNoPlaneRefused();
}

// A rail request naming a reply subject outside any inbox gets no answer: the plane's
// allow_responses grant would let it publish there, so the plane itself refuses to.
TEST_F(AgentCredentialTest, ARailRequestCannotAimThePlanesReplyAtAnApplicationSubject) {
  auto watcher = connectWith(mintAllowAll("watcher"));
  ASSERT_TRUE(watcher.isOk());
  std::atomic<int> seen{0};
  auto sub = (*watcher)->subscribe("cotal.main.inst.>", [&](transport::Message) { ++seen; });
  ASSERT_TRUE(sub.isOk());
  ASSERT_TRUE((*watcher)->flush(seconds(5)).isOk());
  mesh::Endpoint* mallory = openAgent("mallory", "mmmmmmmmmmmmmmmmmmmmmmmmmm");
  ASSERT_NE(mallory, nullptr);
  const uint64_t before = manager_->provisionReplies();
  const std::string forged = "cotal.main.inst.local.bob.local.ada";  // a DM "from" ada
  ASSERT_TRUE(mallory->connection()
                  .publishRequest("cotal.main.ep.one.manager.provision.local.mallory."
                                  "mmmmmmmmmmmmmmmmmmmmmmmmmm.n1",
                                  forged, "{}")
                  .isOk());
  ASSERT_TRUE(mallory->connection().flush(seconds(5)).isOk());
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_EQ(seen.load(), 0);
  EXPECT_EQ(manager_->provisionReplies(), before);
  expectNoPlaneRefused();
}

}  // namespace
}  // namespace shoal::planes
