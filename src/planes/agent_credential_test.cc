// A real mesh::Endpoint under an agent credential minted from the grant table (issue 19 item
// 2): against a broker in operator mode, with the manager plane serving, two agents provision
// their durables, see each other in the roster, exchange a DM and a channel post — and the
// broker refuses none of what they do. This is what keeps the table in step with what the
// endpoint really sends.
#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>

#include "mesh/endpoint.h"
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
    auto admin = connectWith(mintAllowAll("manager"));  // the plane's own profile is not built
    ASSERT_TRUE(admin.isOk()) << admin.status().toString() << "\n" << server_->logTail();
    admin_ = std::move(admin).value();
    auto js = transport::JetStream::create(*admin_);
    ASSERT_TRUE(js.isOk());
    js_.emplace(std::move(js).value());
    ASSERT_TRUE(ensureSpace(*js_, "main").isOk());
    auto plane = ManagerPlane::start(*admin_, *js_, "main");
    ASSERT_TRUE(plane.isOk()) << plane.status().toString();
    manager_ = std::move(plane).value();
  }

  void TearDown() override {
    endpoints_.clear();
    manager_.reset();
    js_.reset();
    admin_.reset();
  }

  // An endpoint for local.<actor> holding exactly the agent profile's grants.
  mesh::Endpoint* openAgent(const std::string& actor, const std::string& uid) {
    AgentScope scope;
    scope.space = "main";
    scope.principal = wire::Principal{"local", actor};
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
    o.onWarning = [this](const Status& s) {
      if (s.code() == StatusCode::kPermissionDenied) ++refusals_;
      warnings_.push_back(s.toString());
    };
    o.onDelivery = [this, actor](const mesh::Delivery& d) {
      std::lock_guard lock(mu_);
      texts_.push_back(actor + " <- " + d.message.id);
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

  std::unique_ptr<transport::Connection> admin_;
  std::optional<transport::JetStream> js_;
  std::unique_ptr<ManagerPlane> manager_;
  std::vector<std::unique_ptr<mesh::Endpoint>> endpoints_;
  std::atomic<int> refusals_{0};
  std::vector<std::string> warnings_;
  std::mutex mu_;
  std::vector<std::string> texts_;
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
}

}  // namespace
}  // namespace shoal::planes
