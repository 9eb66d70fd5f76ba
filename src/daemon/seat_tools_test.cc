// The seat's tools against a real broker: what an agent gets from each call, and the failures
// it can act on. (The MCP transport is tested in src/mcp; the whole loop through a real Claude
// Code CLI in tests/runtime_real.)
#include "daemon/seat_tools.h"

#include <algorithm>
#include <map>
#include <mutex>

#include <boost/json.hpp>

#include "mesh/endpoint.h"
#include "testing/eventually.h"
#include "testing/managed_space.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

namespace json = boost::json;
using shoal::testing::eventually;

class SeatToolsTest : public shoal::testing::ManagedSpaceTest {
 protected:
  void SetUp() override {
    ManagedSpaceTest::SetUp();
    if (HasFatalFailure()) return;
    mesh::EndpointOptions ao;
    ao.servers = {server_->url()};
    ao.principal = wire::Principal{"local", "alice"};
    ao.displayName = "Alice";
    ao.onWarning = [](const Status&) {};
    ao.onDelivery = [this](const mesh::Delivery& d) {
      std::lock_guard lock(mu_);
      received_.push_back(d.message.parts.empty()
                              ? std::string()
                              : std::get<wire::TextPart>(d.message.parts[0]).text);
      return mesh::HandlerVerdict::kAccepted;
    };
    auto alice = mesh::Endpoint::open(ao);
    ASSERT_TRUE(alice.isOk()) << alice.status().toString();
    alice_ = std::move(alice).value();

    mesh::EndpointOptions so;
    so.servers = {server_->url()};
    so.principal = wire::Principal{"local", "reviewer"};
    so.displayName = "Reviewer";
    so.role = "reviewer";
    so.onWarning = [](const Status&) {};
    so.onDelivery = [](const mesh::Delivery&) { return mesh::HandlerVerdict::kAccepted; };
    auto seat = mesh::Endpoint::open(so);
    ASSERT_TRUE(seat.isOk()) << seat.status().toString();
    seat_ = std::move(seat).value();
    ASSERT_TRUE(seat_->waitForRoster(std::chrono::seconds(5)).isOk());
    ASSERT_TRUE(eventually([&] { return seat_->findPeer("local.alice").isOk(); }));

    SeatToolContext ctx;
    ctx.endpoint = seat_.get();
    ctx.profile.name = "Reviewer";
    ctx.profile.principal = wire::Principal{"local", "reviewer"};
    ctx.profile.role = "reviewer";
    ctx.space = "main";
    ctx.queued = [] { return size_t{3}; };
    for (auto& tool : seatTools(std::move(ctx)))
      tools_[tool.name] = std::move(tool);
  }

  void TearDown() override {
    tools_.clear();
    seat_.reset();
    alice_.reset();
    ManagedSpaceTest::TearDown();
  }

  mcp::ToolResult call(const std::string& name, const std::string& argsJson = "{}") {
    auto it = tools_.find(name);
    EXPECT_NE(it, tools_.end()) << name;
    if (it == tools_.end()) return mcp::ToolResult::error("no such tool");
    return it->second.call(json::parse(argsJson).as_object());
  }

  bool aliceGot(const std::string& text) {
    std::lock_guard lock(mu_);
    return std::find(received_.begin(), received_.end(), text) != received_.end();
  }

  std::unique_ptr<mesh::Endpoint> alice_;
  std::unique_ptr<mesh::Endpoint> seat_;
  std::map<std::string, mcp::ToolSpec> tools_;
  std::mutex mu_;
  std::vector<std::string> received_;
};

TEST_F(SeatToolsTest, EveryToolIsOfferedWithAClosedSchemaAndAllowedForClaude) {
  auto names = seatToolNamesForClaude();
  EXPECT_EQ(names.size(), tools_.size());
  for (const auto& [name, tool] : tools_) {
    EXPECT_EQ(tool.inputSchema.at("additionalProperties"), json::value(false)) << name;
    EXPECT_NE(std::find(names.begin(), names.end(), "mcp__shoal__" + name), names.end()) << name;
    EXPECT_FALSE(tool.inputSchema.at("properties").as_object().contains("from")) << name;
  }
}

TEST_F(SeatToolsTest, OrientationAndRosterSayWhoIsWho) {
  auto o = call("shoal_orientation");
  ASSERT_FALSE(o.isError) << o.text;
  EXPECT_NE(o.text.find("You are Reviewer (local.reviewer) in space main"), std::string::npos)
      << o.text;
  EXPECT_NE(o.text.find("Your role: reviewer"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("Alice (local.alice): idle"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("Deliveries waiting for you: 3"), std::string::npos) << o.text;
  auto r = call("shoal_roster");
  ASSERT_FALSE(r.isError) << r.text;
  EXPECT_NE(r.text.find("Alice (local.alice)"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("LAST KNOWN"), std::string::npos) << r.text;
}

TEST_F(SeatToolsTest, DmReachesThePeerWithAReceiptOfFacts) {
  auto sent = call("shoal_dm", R"({"to":"alice","text":"review done"})");
  ASSERT_FALSE(sent.isError) << sent.text;
  EXPECT_NE(sent.text.find("stored seq"), std::string::npos) << sent.text;
  EXPECT_EQ(sent.text.find("delivered"), std::string::npos) << sent.text;
  EXPECT_TRUE(sent.meta.at("shoal/receipt").as_object().contains("messageId"));
  ASSERT_TRUE(eventually([&] { return aliceGot("review done"); }));

  auto nobody = call("shoal_dm", R"({"to":"nobody","text":"hello?"})");
  EXPECT_TRUE(nobody.isError);
  EXPECT_NE(nobody.text.find("shoal_dm failed"), std::string::npos) << nobody.text;
  auto empty = call("shoal_dm", R"({"to":"alice","text":""})");
  EXPECT_TRUE(empty.isError);
}

TEST_F(SeatToolsTest, ChannelsJoinSendAndLeave) {
  auto noChannel = call("shoal_send", R"({"text":"hello all"})");
  EXPECT_TRUE(noChannel.isError);
  EXPECT_NE(noChannel.text.find("joined none"), std::string::npos) << noChannel.text;
  ASSERT_TRUE(alice_->join("ops").isOk());
  auto joined = call("shoal_join", R"({"channel":"ops"})");
  ASSERT_FALSE(joined.isError) << joined.text;
  EXPECT_EQ(call("shoal_channels").text, "joined: #ops");
  auto posted = call("shoal_send", R"({"text":"build is green","mentions":["alice"]})");
  ASSERT_FALSE(posted.isError) << posted.text;
  ASSERT_TRUE(eventually([&] { return aliceGot("build is green"); }));
  auto left = call("shoal_leave", R"({"channel":"ops"})");
  ASSERT_FALSE(left.isError) << left.text;
  EXPECT_EQ(call("shoal_channels").text, "you have joined no channel");
}

TEST_F(SeatToolsTest, StatusIsVisibleToPeersAndBadValuesAreRefused) {
  auto set = call("shoal_status", R"({"status":"working","activity":"reviewing PR 12"})");
  ASSERT_FALSE(set.isError) << set.text;
  ASSERT_TRUE(eventually([&] {
    auto row = alice_->findPeer("local.reviewer");
    return row.isOk() && row->presence.status == wire::PresenceStatus::kWorking &&
           row->presence.activity == std::optional<std::string>("reviewing PR 12");
  }));
  EXPECT_TRUE(call("shoal_status", R"({"status":"offline"})").isError);
  EXPECT_TRUE(call("shoal_status", R"({"status":"sleepy"})").isError);
  EXPECT_TRUE(call("shoal_status").isError);
  auto anycast = call("shoal_anycast", R"({"role":"reviewer","text":"take this"})");
  EXPECT_FALSE(anycast.isError) << anycast.text;
  EXPECT_FALSE(call("shoal_connection_status").isError);
}

// What a model could trip on is refused with the next step: wildcards where one channel is
// meant, empty texts, writing to itself, an unknown peer (pointing at shoal_roster).
TEST_F(SeatToolsTest, MistakesAreRefusedWithTheNextStep) {
  auto wildcard = call("shoal_join", R"({"channel":"team.>"})");
  EXPECT_TRUE(wildcard.isError);
  EXPECT_NE(wildcard.text.find("no wildcards"), std::string::npos) << wildcard.text;
  EXPECT_TRUE(seat_->channels().empty());
  auto modeWildcard = call("shoal_channel_mode", R"({"channel":"team.*","mode":"quiet"})");
  EXPECT_TRUE(modeWildcard.isError) << modeWildcard.text;

  EXPECT_TRUE(call("shoal_join", R"({"channel":"general"})").isError == false);
  auto emptyPost = call("shoal_send", R"({"text":""})");
  EXPECT_TRUE(emptyPost.isError);
  EXPECT_NE(emptyPost.text.find("nothing was sent"), std::string::npos) << emptyPost.text;
  auto emptyJob = call("shoal_anycast", R"({"role":"reviewer","text":""})");
  EXPECT_TRUE(emptyJob.isError) << emptyJob.text;

  auto self = call("shoal_dm", R"({"to":"local.reviewer","text":"hello me"})");
  EXPECT_TRUE(self.isError);
  EXPECT_NE(self.text.find("that is you"), std::string::npos) << self.text;
  auto unknown = call("shoal_dm", R"({"to":"nobody","text":"hi"})");
  EXPECT_TRUE(unknown.isError);
  EXPECT_NE(unknown.text.find("shoal_roster lists who is present"), std::string::npos)
      << unknown.text;
}

}  // namespace
}  // namespace shoal::daemon
