// codex_rpc: the lines of the recorded `codex app-server` 0.171 transcript (turns, tool calls
// and approvals, steers, interrupts, error paths) parse into the facts the driver acts on; the
// lines it writes are what the real binary accepted.
#include "runtime/codex/rpc.h"

#include <boost/json.hpp>

#include <gtest/gtest.h>

namespace shoal::runtime {
namespace {

namespace json = boost::json;

TEST(CodexRpc, ResponsesCarryTheThreadAndTurnIds) {
  auto thread = parseCodexLine(
      R"({"id":2,"result":{"thread":{"id":"01a22cba-a5ab","status":{"type":"idle"}},"model":"fake-model"}})");
  ASSERT_TRUE(thread.isOk());
  EXPECT_EQ(thread->kind, CodexLine::Kind::kResponse);
  EXPECT_EQ(thread->id, 2);
  EXPECT_EQ(thread->threadId, "01a22cba-a5ab");
  auto turn =
      parseCodexLine(R"({"id":3,"result":{"turn":{"id":"t9","status":"inProgress","items":[]}}})");
  ASSERT_TRUE(turn.isOk());
  EXPECT_EQ(turn->turnId, "t9");
  auto steer = parseCodexLine(R"({"id":4,"result":{"turnId":"t9"}})");
  EXPECT_EQ(steer->turnId, "t9");
  auto refused = parseCodexLine(
      R"({"id":5,"error":{"code":-32600,"message":"no rollout found for thread id abc"}})");
  ASSERT_TRUE(refused.isOk());
  EXPECT_EQ(refused->kind, CodexLine::Kind::kErrorResponse);
  EXPECT_TRUE(codexThreadLost(*refused));
}

TEST(CodexRpc, TurnBoundariesAndTheUserMessageEcho) {
  auto started = parseCodexLine(
      R"({"method":"turn/started","params":{"threadId":"T","turn":{"id":"t1","status":"inProgress"}}})");
  EXPECT_EQ(started->kind, CodexLine::Kind::kTurnStarted);
  EXPECT_EQ(started->turnId, "t1");
  auto user = parseCodexLine(
      R"({"method":"item/started","params":{"item":{"type":"userMessage","id":"u1","clientId":"client-msg-1","content":[]},"threadId":"T","turnId":"t1"}})");
  EXPECT_EQ(user->kind, CodexLine::Kind::kUserMessage);
  EXPECT_EQ(user->clientId, "client-msg-1");
  auto agent = parseCodexLine(
      R"({"method":"item/completed","params":{"item":{"type":"agentMessage","id":"m","text":"hi"},"threadId":"T","turnId":"t1"}})");
  EXPECT_EQ(agent->kind, CodexLine::Kind::kWork);
  EXPECT_EQ(agent->turnId, "t1");
  auto done = parseCodexLine(
      R"({"method":"turn/completed","params":{"threadId":"T","turn":{"id":"t1","status":"completed","error":null}}})");
  EXPECT_EQ(done->kind, CodexLine::Kind::kTurnCompleted);
  EXPECT_EQ(done->turnStatus, "completed");
  EXPECT_FALSE(done->condition.has_value());
}

TEST(CodexRpc, ErrorsSayWhetherTheTurnGoesOn) {
  auto retry = parseCodexLine(
      R"({"method":"error","params":{"error":{"message":"Reconnecting... waiting for network","codexErrorInfo":{"responseStreamDisconnected":{"httpStatusCode":null}}},"willRetry":true,"threadId":"T","turnId":"t1"}})");
  ASSERT_TRUE(retry.isOk());
  EXPECT_EQ(retry->kind, CodexLine::Kind::kError);
  EXPECT_TRUE(retry->willRetry);
  EXPECT_EQ(retry->condition->code, wire::ConditionCode::kServer);
  auto fatal = parseCodexLine(
      R"({"method":"error","params":{"error":{"message":"high demand","codexErrorInfo":"internalServerError"},"willRetry":false,"threadId":"T","turnId":"t1"}})");
  EXPECT_FALSE(fatal->willRetry);
  EXPECT_NE(fatal->detail.find("high demand"), std::string::npos);
  auto failed = parseCodexLine(
      R"({"method":"turn/completed","params":{"threadId":"T","turn":{"id":"t1","status":"failed","error":{"message":"bad request","codexErrorInfo":"other"}}}})");
  EXPECT_EQ(failed->turnStatus, "failed");
  EXPECT_NE(failed->detail.find("bad request"), std::string::npos);
  ASSERT_TRUE(failed->condition.has_value());
}

TEST(CodexRpc, ServerRequestsAreDeclinedNeverApproved) {
  auto approval = parseCodexLine(
      R"({"method":"item/commandExecution/requestApproval","id":0,"params":{"kind":"command"}})");
  ASSERT_TRUE(approval.isOk());
  EXPECT_EQ(approval->kind, CodexLine::Kind::kServerRequest);
  json::value answer = json::parse(codexDecline(approval->requestId, approval->method));
  EXPECT_EQ(answer.at("id").as_int64(), 0);
  EXPECT_EQ(answer.at("result").at("decision").as_string(), "decline");
  json::value other = json::parse(codexDecline("\"r7\"", "item/tool/call"));
  EXPECT_EQ(other.at("id").as_string(), "r7");
  EXPECT_EQ(other.at("error").at("code").as_int64(), -32601);
}

// Seed 004 §2 and decision 009: each error shape that authorises the one fresh thread, and
// each that must not (fail closed).
TEST(CodexRpc, OnlyTheTypedLostThreadErrorsAuthoriseAFreshThread) {
  struct Case {
    const char* error;  // the `error` member of the response
    bool lost;
  };
  const Case cases[] = {
      // allowed: the typed server error with a direct structured token
      {R"({"code":-32000,"message":"x","data":{"code":"thread_not_found"}})", true},
      {R"({"code":-32000,"message":"x","data":{"kind":"invalid_thread_id"}})", true},
      {R"({"code":-32000,"message":"x","data":{"type":"thread_not_found"}})", true},
      {R"({"code":-32000,"message":"x","data":{"kind":"other","type":"invalid_thread_id"}})", true},
      // allowed: the message forms, under -32000 or the pinned binary's -32600
      {R"({"code":-32000,"message":"thread not found: 019"})", true},
      {R"({"code":-32600,"message":"no rollout found for thread id 019"})", true},
      {R"({"code":-32600,"message":"thread not found: 019"})", true},
      // refused: tokens in other members, bare tokens, the wrong outer code
      {R"({"code":-32000,"message":"x","data":{"reason":"thread_not_found"}})", false},
      {R"({"code":-32000,"message":"x","data":{"status":"thread_not_found"}})", false},
      {R"({"code":-32000,"message":"x","data":{"error":"thread_not_found"}})", false},
      {R"({"code":-32000,"message":"x","data":{"message":"thread_not_found"}})", false},
      {R"({"code":-32000,"message":"x","data":{"code":"invalid"}})", false},
      {R"({"code":-32000,"message":"x","data":{"code":"not_found"}})", false},
      {R"({"code":-32000,"message":"x","data":{"code":{"kind":"thread_not_found"}}})", false},
      {R"({"code":-32600,"message":"x","data":{"code":"thread_not_found"}})", false},
      {R"({"code":-32603,"message":"x","data":{"code":"thread_not_found"}})", false},
      {R"({"code":-32603,"message":"no rollout found for thread id 019"})", false},
      {R"({"code":-32600,"message":"Server is draining"})", false},
      {R"({"code":-32001,"message":"Server overloaded; retry later."})", false},
      {R"({"code":-32600,"message":"expected active turn id `x` but found `y`"})", false},
      {R"({"code":-32000,"message":"transport closed"})", false},
      {R"({"message":"thread not found: 019"})", false},
  };
  for (const auto& c : cases) {
    auto line = parseCodexLine(std::string(R"({"id":9,"error":)") + c.error + "}");
    ASSERT_TRUE(line.isOk()) << c.error;
    EXPECT_EQ(codexThreadLost(*line), c.lost) << c.error;
  }
}

TEST(CodexRpc, WrittenLinesCarryTheClientIdAndNoJsonrpcMember) {
  json::value start = json::parse(codexTurnStart(3, "T", "h-1", "deliver: hi"));
  EXPECT_EQ(start.at("method").as_string(), "turn/start");
  EXPECT_EQ(start.at("params").at("clientUserMessageId").as_string(), "h-1");
  EXPECT_EQ(start.at("params").at("input").at(0).at("text").as_string(), "deliver: hi");
  EXPECT_FALSE(start.as_object().contains("jsonrpc"));
  json::value steer = json::parse(codexTurnSteer(4, "T", "t9", "h-2", "more"));
  EXPECT_EQ(steer.at("params").at("expectedTurnId").as_string(), "t9");
  EXPECT_EQ(steer.at("params").at("clientUserMessageId").as_string(), "h-2");
  EXPECT_EQ(codexInitialized(), "{\"method\":\"initialized\"}\n");
  EXPECT_FALSE(parseCodexLine("not json").isOk());
  EXPECT_FALSE(parseCodexLine("[1,2]").isOk());
}

TEST(CodexRpc, ThreadReadListsTheClientIdsOfEveryTurnAndTheThreadStatus) {
  auto read = parseCodexLine(
      R"({"id":9,"result":{"thread":{"id":"T","status":{"type":"idle"},"turns":[)"
      R"({"id":"t1","status":"completed","items":[{"type":"userMessage","clientId":"h-1"},{"type":"agentMessage","text":"x"}]},)"
      R"({"id":"t2","status":"completed","items":[{"type":"userMessage","clientId":"h-2"},{"type":"userMessage","clientId":"h-3"}]}]}}})");
  ASSERT_TRUE(read.isOk());
  EXPECT_EQ(read->threadId, "T");
  EXPECT_EQ(read->threadStatus, "idle");
  EXPECT_TRUE(read->hasTurns);
  EXPECT_EQ(read->clientIds, (std::vector<std::string>{"h-1", "h-2", "h-3"}));
  auto active = parseCodexLine(
      R"({"id":9,"result":{"thread":{"id":"T","status":{"type":"active","activeFlags":[]}}}})");
  EXPECT_EQ(active->threadStatus, "active");
  EXPECT_FALSE(active->hasTurns);  // no snapshot: nothing can be proved absent
  json::value req = json::parse(codexThreadRead(9, "T"));
  EXPECT_EQ(req.at("method").as_string(), "thread/read");
  EXPECT_TRUE(req.at("params").at("includeTurns").as_bool());
}

// Inbox receipt markers are collected from tool items only (mcpToolCall, dynamicToolCall), in
// full: a marker quoted in a user message or an agent message proves no page was received.
TEST(CodexRpc, ThreadReadListsInboxReceiptMarkersOfToolItemsOnly) {
  const std::string a = "shoal-rcpt-" + std::string(32, 'a');
  const std::string b = "shoal-rcpt-0123456789abcdef0123456789abcdef";
  const std::string quoted = "shoal-rcpt-" + std::string(32, 'e');
  auto read = parseCodexLine(
      R"({"id":9,"result":{"thread":{"id":"T","status":{"type":"idle"},"turns":[{"id":"t1","items":[)"
      R"({"type":"userMessage","clientId":"h-1","content":[{"type":"text","text":")" +
      quoted +
      R"("}]},)"
      R"({"type":"mcpToolCall","result":{"content":[{"type":"text","text":"shoal_inbox receipts [)" +
      a + " " + b +
      R"(]"}]}},)"
      R"({"type":"agentMessage","text":")" +
      quoted +
      R"("},)"
      R"({"type":"dynamicToolCall","contentItems":[{"type":"inputText","text":")" +
      a + R"("}]}]}]}}})");
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  EXPECT_EQ(read->toolMarkers, (std::vector<std::string>{a, b, a}));
  EXPECT_EQ(read->clientIds, (std::vector<std::string>{"h-1"}));
}

}  // namespace
}  // namespace shoal::runtime
