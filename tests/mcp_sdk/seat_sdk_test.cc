// The official MCP TypeScript SDK as the client of a REAL seat (issue 6 acceptance): `shoal up`
// runs the mesh and the daemon, `shoal seat add` an exec seat, `shoal join` a peer bob; then
// sdk_seat_client.mjs calls every shoal_* tool of the seat, first over Streamable HTTP (the
// url and bearer token of the seat's <cwd>/.shoal/mcp.json), then over stdio through
// `shoal mcp --seat` (the bridge). Both runs pass the same checks and end with the same
// outcomes; what the tools claim to have sent is checked where it lands (bob's output, the
// stream sequences, the seat's presence and channel modes).
//
// The SDK is installed once per test process (sdk_harness.h); without node/npm the test skips.
#include <algorithm>
#include <map>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "integration/cli_fixture.h"
#include "mcp_sdk/sdk_harness.h"
#include "testing/eventually.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace shoal {
namespace {

namespace json = boost::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kSeat = "Sdk Seat";
constexpr const char* kSeatId = "local.sdk_seat";

std::string textOf(const json::object& calls, std::string_view label) {
  const json::value* call = calls.if_contains(label);
  if (call == nullptr || !call->is_object()) return "<no call " + std::string(label) + ">";
  const json::value* text = call->as_object().if_contains("text");
  return text != nullptr && text->is_string() ? std::string(text->as_string()) : "<no text>";
}

bool isErrorOf(const json::object& calls, std::string_view label) {
  const json::value* call = calls.if_contains(label);
  if (call == nullptr || !call->is_object()) return false;
  const json::value* e = call->as_object().if_contains("isError");
  return e != nullptr && e->is_bool() && e->as_bool();
}

// The call's `_meta["shoal/receipt"]`, or an empty object.
json::object receiptOf(const json::object& calls, std::string_view label) {
  const json::value* call = calls.if_contains(label);
  if (call == nullptr || !call->is_object()) return {};
  const json::value* meta = call->as_object().if_contains("meta");
  if (meta == nullptr || !meta->is_object()) return {};
  const json::value* receipt = meta->as_object().if_contains("shoal/receipt");
  return receipt != nullptr && receipt->is_object() ? receipt->as_object() : json::object{};
}

int64_t seqOf(const json::object& calls, std::string_view label) {
  json::object receipt = receiptOf(calls, label);
  const json::value* seq = receipt.if_contains("seq");
  return seq != nullptr && seq->is_int64() ? seq->as_int64() : -1;
}

// Each call's outcome ("ok", "error" or "protocol <code>") and its text with what differs
// between two runs by design replaced: the transport named in sent texts, sequence numbers and
// message ids. The roster is left out: it shows the seat's own status, which the first run sets.
std::map<std::string, std::string> comparable(const json::object& calls) {
  static const std::regex transport(" over (http|stdio)");
  static const std::regex seq("seq [0-9]+");
  static const std::regex id("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  std::map<std::string, std::string> out;
  for (const auto& [label, call] : calls) {
    if (label == "roster") continue;
    if (!call.is_object()) continue;
    if (const json::value* p = call.as_object().if_contains("protocolError")) {
      out[std::string(label)] = "protocol " + json::serialize(p->at("code"));
      continue;
    }
    std::string text = textOf(calls, label);
    text = std::regex_replace(text, transport, " over X");
    text = std::regex_replace(text, seq, "seq N");
    text = std::regex_replace(text, id, "ID");
    out[std::string(label)] = (isErrorOf(calls, label) ? "error: " : "ok: ") + text;
  }
  return out;
}

class SeatSdkTest : public CliTest {
 protected:
  static void SetUpTestSuite() { (void)mcp_sdk::SdkInstall::once(); }

  void SetUp() override {
    CliTest::SetUp();
    const mcp_sdk::SdkInstall& sdk = mcp_sdk::SdkInstall::once();
    if (sdk.skipReason) GTEST_SKIP() << *sdk.skipReason;
    ASSERT_TRUE(sdk.installed) << "the SDK install failed: " << sdk.error;
  }

  // The environment `shoal` runs get in this test (HOME, XDG_*), for the script and the bridge.
  std::vector<std::pair<std::string, std::string>> cliEnv() {
    return shoalSpawn({"--version"}, home_->join("unused"), home_->join("unused")).env;
  }

  // sdk_seat_client.mjs over Streamable HTTP, with the endpoint of the seat's mcp.json.
  json::object runHttp(const std::string& mcpConfigPath) {
    auto text = FileSystem::posix().readFile(mcpConfigPath);
    EXPECT_TRUE(text.isOk()) << text.status().toString();
    if (!text.isOk()) return {};
    json::value config = json::parse(*text);
    const json::object& server = config.at("mcpServers").at("shoal").as_object();
    const std::string url(server.at("url").as_string());
    const std::string auth(server.at("headers").at("Authorization").as_string());
    EXPECT_EQ(auth.rfind("Bearer ", 0), 0u) << auth;
    return mcp_sdk::runSdkScript(
        {mcp_sdk::sdkScript("sdk_seat_client.mjs"), "http", url, auth.substr(7)}, cliEnv());
  }

  // sdk_seat_client.mjs over stdio, spawning `shoal mcp --seat <seat> --space itest`.
  json::object runStdio() {
    return mcp_sdk::runSdkScript({mcp_sdk::sdkScript("sdk_seat_client.mjs"), "stdio", SHOAL_BINARY,
                                  "mcp", "--seat", kSeat, "--space", "itest"},
                                 cliEnv());
  }

  // What every run must show, over either transport (`transport` is "http" or "stdio"; the
  // script ends the texts it sends with " over <transport>").
  static void checkSeatRun(const json::object& out, const std::string& transport) {
    ASSERT_FALSE(out.empty());
    SCOPED_TRACE("transport " + transport);
    const std::string over = " over " + transport;
    EXPECT_EQ(out.at("transport"), json::value(transport));
    EXPECT_EQ(out.at("protocolVersion"), json::value("2025-11-25"));
    EXPECT_EQ(out.at("serverInfo").at("name"), json::value("shoal"));
    EXPECT_EQ(out.at("serverInfo").at("version"), json::value(std::string("seat ") + kSeatId));
    EXPECT_THAT(std::string(out.at("instructions").as_string()),
                HasSubstr("you are Sdk Seat (local.sdk_seat)"));
    std::vector<std::string> tools;
    for (const auto& t : out.at("tools").as_array())
      tools.emplace_back(t.as_string());
    std::sort(tools.begin(), tools.end());
    EXPECT_THAT(tools,
                ::testing::ElementsAre("shoal_anycast", "shoal_channel_mode", "shoal_channels",
                                       "shoal_connection_status", "shoal_dm", "shoal_inbox",
                                       "shoal_join", "shoal_leave", "shoal_orientation",
                                       "shoal_roster", "shoal_send", "shoal_status"));

    const json::object& calls = out.at("calls").as_object();
    auto text = [&](const char* label) { return textOf(calls, label); };
    auto okCall = [&](const char* label) {
      EXPECT_FALSE(isErrorOf(calls, label)) << label << ": " << text(label);
    };
    auto errorCall = [&](const char* label) {
      EXPECT_TRUE(isErrorOf(calls, label)) << label << ": " << text(label);
    };

    // Who, where, and the peers present.
    okCall("orientation");
    EXPECT_THAT(text("orientation"), HasSubstr("You are Sdk Seat (local.sdk_seat) in space itest"));
    EXPECT_THAT(text("orientation"), HasSubstr("Your role: tester."));
    EXPECT_THAT(text("orientation"), HasSubstr("Joined channels: #team.backend."));
    EXPECT_THAT(text("orientation"),
                HasSubstr("1 other peer(s) present:\n- bob (local.bob): idle"));
    EXPECT_THAT(text("orientation"), HasSubstr("Deliveries waiting for you: 0."));
    okCall("roster");
    EXPECT_THAT(text("roster"), HasSubstr("- bob (local.bob): idle, role reviewer\n"));
    EXPECT_THAT(text("roster"), HasSubstr("- Sdk Seat (local.sdk_seat): "));
    const json::value& roster = calls.at("roster").at("meta").at("shoal/roster");
    EXPECT_EQ(roster.at("current"), json::value(true));
    EXPECT_EQ(roster.at("rows").as_array().size(), 2u) << json::serialize(roster);
    okCall("connectionStatus");
    EXPECT_EQ(text("connectionStatus"), "connected; the roster view is current");
    EXPECT_EQ(calls.at("connectionStatus").at("meta").at("shoal/connection").at("rosterCurrent"),
              json::value(true));
    okCall("channels");
    EXPECT_EQ(text("channels"), "joined: #team.backend");

    // A DM by name and by id: stored, with the receipt in the text and in _meta.
    for (const char* label : {"dm", "dmById"}) {
      okCall(label);
      json::object receipt = receiptOf(calls, label);
      ASSERT_TRUE(receipt.contains("seq")) << label << ": " << json::serialize(calls.at(label));
      EXPECT_THAT(text(label), HasSubstr("sent: stored seq " + std::to_string(seqOf(calls, label)) +
                                         " in DM_itest (message id " +
                                         std::string(receipt.at("messageId").as_string()) + ")"));
      EXPECT_THAT(text(label), HasSubstr("bob (local.bob) was idle at send"));
      EXPECT_THAT(text(label), HasSubstr("Stored is not read"));
      EXPECT_EQ(receipt.at("stream"), json::value("DM_itest"));
      EXPECT_EQ(receipt.at("target"), json::value("local.bob"));
      EXPECT_EQ(receipt.at("duplicate"), json::value(false));
    }
    EXPECT_EQ(seqOf(calls, "dmById"), seqOf(calls, "dm") + 1);
    errorCall("dmEmptyText");
    EXPECT_EQ(text("dmEmptyText"), "text is empty: nothing was sent");
    errorCall("dmMissingText");
    EXPECT_EQ(text("dmMissingText"), "missing required argument `text` (string)");
    errorCall("dmUnknownPeer");
    EXPECT_THAT(text("dmUnknownPeer"), HasSubstr("no peer with id or name 'nobody_here'"));
    errorCall("dmWithFrom");
    EXPECT_EQ(text("dmWithFrom"), "identity comes from the seat; `from` is not an argument");

    // Channel posts: named, to the only joined channel, and a mention that resolves to nobody.
    okCall("send");
    EXPECT_THAT(text("send"), HasSubstr("in CHAT_itest"));
    EXPECT_THAT(text("send"),
                HasSubstr("posted to #team.backend; mentions @bob (local.bob, idle)"));
    EXPECT_EQ(receiptOf(calls, "send").at("target"), json::value("team.backend"));
    okCall("sendToOnlyChannel");
    EXPECT_THAT(text("sendToOnlyChannel"), HasSubstr("posted to #team.backend"));
    EXPECT_EQ(seqOf(calls, "sendToOnlyChannel"), seqOf(calls, "send") + 1);
    errorCall("sendUnknownMention");
    EXPECT_THAT(text("sendUnknownMention"), HasSubstr("mention @nobody_here (not sent)"));

    // Join, a second channel, modes, leave: back to #team.backend alone.
    okCall("join");
    EXPECT_EQ(text("join"), "joined #team.sdk");
    okCall("joinAgain");
    EXPECT_EQ(text("joinAgain"), "already joined #team.sdk");
    errorCall("joinBadName");
    EXPECT_THAT(text("joinBadName"), HasSubstr("`Team Backend` is not a channel you can use here"));
    errorCall("sendSeveralJoined");
    EXPECT_EQ(text("sendSeveralJoined"),
              "no channel given and you have joined several: pass `channel`");
    okCall("channelsTwo");
    EXPECT_EQ(text("channelsTwo"), "joined: #team.backend #team.sdk");
    okCall("modeQuiet");
    EXPECT_EQ(text("modeQuiet"), "#team.sdk is now quiet: its posts wait for shoal_inbox");
    okCall("channelsQuiet");
    EXPECT_EQ(text("channelsQuiet"), "joined: #team.backend #team.sdk (quiet)");
    okCall("modeNormal");
    EXPECT_EQ(text("modeNormal"), "#team.sdk is now normal");
    // Outside the schema's enum: the server's argument check refuses it as a tool error.
    errorCall("modeBad");
    EXPECT_EQ(text("modeBad"),
              "argument `mode` must be one of `normal`, `quiet`, `muted`, got `loud`");
    okCall("leave");
    EXPECT_EQ(text("leave"), "left #team.sdk");
    errorCall("leaveAgain");
    EXPECT_THAT(text("leaveAgain"), HasSubstr("not joined to channel 'team.sdk'"));
    okCall("leaveBackend");
    EXPECT_EQ(text("leaveBackend"), "left #team.backend");
    errorCall("sendNoneJoined");
    EXPECT_EQ(text("sendNoneJoined"), "no channel given and you have joined none: pass `channel`");
    okCall("channelsNone");
    EXPECT_EQ(text("channelsNone"), "you have joined no channel");
    okCall("rejoinBackend");
    EXPECT_EQ(text("rejoinBackend"), "joined #team.backend");

    // Work for a role: one present holder (bob), and a role nobody holds (stored, waiting).
    okCall("anycast");
    EXPECT_THAT(text("anycast"), HasSubstr("in TASK_itest"));
    EXPECT_THAT(text("anycast"),
                HasSubstr("1 present holder(s) of role reviewer at send: local.bob"));
    EXPECT_EQ(receiptOf(calls, "anycast").at("target"), json::value("reviewer"));
    okCall("anycastNoHolder");
    EXPECT_THAT(text("anycastNoHolder"), HasSubstr("no present holder of role nobody_holds"));
    EXPECT_EQ(seqOf(calls, "anycastNoHolder"), seqOf(calls, "anycast") + 1);

    okCall("inbox");
    EXPECT_EQ(text("inbox"), "shoal_inbox: no new messages.");
    errorCall("inboxBadLimit");
    EXPECT_EQ(text("inboxBadLimit"), "limit is 1 to 50");

    okCall("statusWorking");
    EXPECT_EQ(text("statusWorking"),
              "set: status working, activity \"testing the tools" + over + "\"");
    errorCall("statusOffline");
    EXPECT_THAT(text("statusOffline"), HasSubstr("offline is not yours to set"));
    errorCall("statusNothing");
    EXPECT_THAT(text("statusNothing"), HasSubstr("pass status"));

    // An unknown tool is a JSON-RPC error, not a tool result.
    const json::value* unknown = calls.at("unknownTool").as_object().if_contains("protocolError");
    ASSERT_NE(unknown, nullptr) << json::serialize(calls.at("unknownTool"));
    EXPECT_EQ(unknown->at("code"), json::value(-32602));
    EXPECT_THAT(std::string(unknown->at("message").as_string()), HasSubstr("shoal_no_such_tool"));
  }

  // Waits until bob's output shows what the run of `transport` sent him; nothing it refused.
  void checkBobReceived(const Background& bob, const std::string& transport) {
    const std::string from = "Sdk Seat (local.sdk_seat)";
    const std::string over = " over " + transport;
    EXPECT_TRUE(outputShows(bob, "dm " + from + " → local.bob: hello bob" + over)) << bob.output();
    EXPECT_TRUE(outputShows(bob, "dm " + from + " → local.bob: by id" + over)) << bob.output();
    EXPECT_TRUE(outputShows(bob, "#team.backend " + from + ": a post" + over + " @bob"))
        << bob.output();
    EXPECT_TRUE(outputShows(bob, "#team.backend " + from + ": to my only channel" + over))
        << bob.output();
    EXPECT_TRUE(outputShows(bob, "ask reviewer " + from + ": review this" + over)) << bob.output();
    for (const char* refused : {"forged", "never stored", "which channel?", "nowhere to go"})
      EXPECT_THAT(bob.output(), Not(HasSubstr(refused)));
  }
};

// Every shoal_* tool of a running seat, called by the official SDK over Streamable HTTP and over
// the stdio bridge: the same results and errors both ways, and what was sent arrives.
TEST_F(SeatSdkTest, SdkCallsEveryToolOfARealSeatOverHttpAndOverTheStdioBridge) {
  ASSERT_EQ(up().code, 0);
  Background* bob = spawnShoal({"join", "--keep-running", "--name", "bob", "--role", "reviewer",
                                "--channel", "team.backend"});
  ASSERT_NE(bob, nullptr);
  ASSERT_TRUE(outputShows(*bob, "✓ joined space itest")) << bob->output();
  CliRun added = shoal(
      {"seat", "add", kSeat, "--role", "tester", "--channel", "team.backend", "--", "/bin/cat"});
  ASSERT_EQ(added.code, 0) << added.out << added.err;
  CliRun shown = shoal({"seat", "show", kSeat, "--json"});
  ASSERT_EQ(shown.code, 0) << shown.err;
  const std::string cwd(json::parse(shown.out).at("profile").at("cwd").as_string());
  const std::string mcpConfig = cwd + "/.shoal/mcp.json";
  ASSERT_TRUE(testing::eventually([&] { return FileSystem::posix().readFile(mcpConfig).isOk(); }))
      << mcpConfig;

  json::object http = runHttp(mcpConfig);
  checkSeatRun(http, "http");
  checkBobReceived(*bob, "http");

  json::object stdio = runStdio();
  checkSeatRun(stdio, "stdio");
  checkBobReceived(*bob, "stdio");

  // The same outcomes and texts both ways; each run stored exactly its two DMs, two posts and
  // two jobs (the refused calls stored nothing).
  ASSERT_FALSE(http.empty());
  ASSERT_FALSE(stdio.empty());
  const json::object& httpCalls = http.at("calls").as_object();
  const json::object& stdioCalls = stdio.at("calls").as_object();
  EXPECT_EQ(comparable(httpCalls), comparable(stdioCalls));
  EXPECT_EQ(seqOf(stdioCalls, "dm"), seqOf(httpCalls, "dm") + 2);
  EXPECT_EQ(seqOf(stdioCalls, "send"), seqOf(httpCalls, "send") + 2);
  EXPECT_EQ(seqOf(stdioCalls, "anycast"), seqOf(httpCalls, "anycast") + 2);

  // shoal_status reached the mesh: peers see the seat working on the stdio run's activity.
  EXPECT_TRUE(testing::eventually([&] {
    CliRun endpoints = shoal({"endpoints", "--json"});
    if (endpoints.code != 0) return false;
    const json::value parsed = json::parse(endpoints.out);
    for (const auto& e : parsed.at("endpoints").as_array()) {
      if (e.at("id") == json::value(kSeatId)) {
        return e.at("status") == json::value("working") &&
               e.at("activity") == json::value("testing the tools over stdio");
      }
    }
    return false;
  })) << shoal({"endpoints"}).out;
  // The channel modes ended where they started: none set.
  CliRun after = shoal({"seat", "show", kSeat, "--json"});
  ASSERT_EQ(after.code, 0) << after.err;
  EXPECT_EQ(json::serialize(json::parse(after.out).at("seat").at("channelModes")), "{}")
      << after.out;
}

}  // namespace
}  // namespace shoal
