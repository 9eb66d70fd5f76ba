// The facts the Claude driver takes from stream-json lines, on lines shaped like the real
// binary's (recorded from the real CLI; tests/runtime_real/), and the stdin line it writes.
#include "runtime/claude/stream.h"

#include <boost/json.hpp>

#include <gtest/gtest.h>

namespace shoal::runtime {
namespace {

namespace json = boost::json;

TEST(ClaudeStream, InitStartsATurnAndCarriesTheSession) {
  auto line = parseClaudeLine(
      R"({"type":"system","subtype":"init","cwd":"/w","session_id":"f94c7d7f","tools":[]})");
  ASSERT_TRUE(line.isOk());
  EXPECT_EQ(line->kind, ClaudeLine::Kind::kInit);
  EXPECT_EQ(line->sessionId, "f94c7d7f");
}

TEST(ClaudeStream, ReplayAndLifecycleStartedAreAcksButQueuedIsNot) {
  auto replay = parseClaudeLine(
      R"({"type":"user","message":{"role":"user","content":"hi"},"session_id":"s",)"
      R"("parent_tool_use_id":null,"uuid":"590a8f2a","timestamp":"t","isReplay":true})");
  ASSERT_TRUE(replay.isOk());
  EXPECT_EQ(replay->kind, ClaudeLine::Kind::kReplay);
  EXPECT_EQ(replay->uuid, "590a8f2a");
  auto started = parseClaudeLine(
      R"({"type":"command_lifecycle","command_uuid":"590a8f2a","state":"started","uuid":"x"})");
  ASSERT_TRUE(started.isOk());
  EXPECT_EQ(started->kind, ClaudeLine::Kind::kAckStarted);
  EXPECT_EQ(started->uuid, "590a8f2a");
  auto queued = parseClaudeLine(
      R"({"type":"command_lifecycle","command_uuid":"590a8f2a","state":"queued","uuid":"x"})");
  ASSERT_TRUE(queued.isOk());
  EXPECT_EQ(queued->kind, ClaudeLine::Kind::kOther);
  // A tool result is a user line too, but not a replay: work, never an ack.
  auto toolResult = parseClaudeLine(
      R"({"type":"user","message":{"role":"user","content":[{"type":"tool_result"}]},"uuid":"u"})");
  ASSERT_TRUE(toolResult.isOk());
  EXPECT_EQ(toolResult->kind, ClaudeLine::Kind::kWork);
}

TEST(ClaudeStream, ResultEndsTheTurnAndAnErrorResultNamesTheTrouble) {
  auto ok = parseClaudeLine(
      R"({"type":"result","subtype":"success","is_error":false,"result":"fine","session_id":"s"})");
  ASSERT_TRUE(ok.isOk());
  EXPECT_EQ(ok->kind, ClaudeLine::Kind::kResult);
  EXPECT_FALSE(ok->isError);
  EXPECT_FALSE(ok->condition.has_value());

  auto api = parseClaudeLine(
      R"({"type":"result","subtype":"success","is_error":true,"api_error_status":500,)"
      R"("result":"API Error: 500 fake forced error 500"})");
  ASSERT_TRUE(api.isOk());
  EXPECT_TRUE(api->isError);
  EXPECT_NE(api->detail.find("API Error: 500"), std::string::npos) << api->detail;
  ASSERT_TRUE(api->condition.has_value());
  EXPECT_EQ(api->condition->code, wire::ConditionCode::kServer);
  EXPECT_EQ(api->condition->source, "500");

  auto interrupted =
      parseClaudeLine(R"({"type":"result","subtype":"error_during_execution","is_error":true,)"
                      R"("errors":["Request interrupted by user"]})");
  ASSERT_TRUE(interrupted.isOk());
  EXPECT_TRUE(interrupted->isError);
  EXPECT_EQ(interrupted->detail, "error_during_execution: Request interrupted by user");
}

TEST(ClaudeStream, RetryIsAConditionThatDoesNotEndTheTurn) {
  auto limited =
      parseClaudeLine(R"({"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,)"
                      R"("error_status":429,"error":"rate_limit"})");
  ASSERT_TRUE(limited.isOk());
  EXPECT_EQ(limited->kind, ClaudeLine::Kind::kRetry);
  ASSERT_TRUE(limited->condition.has_value());
  EXPECT_EQ(limited->condition->code, wire::ConditionCode::kRateLimit);
  auto server =
      parseClaudeLine(R"({"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,)"
                      R"("error_status":500,"error":"server_error"})");
  ASSERT_TRUE(server.isOk());
  EXPECT_EQ(server->condition->code, wire::ConditionCode::kRetrying);
  EXPECT_NE(server->detail.find("retry 2 of 10"), std::string::npos) << server->detail;
}

TEST(ClaudeStream, MalformedLinesAreNamedFrameErrors) {
  for (const char* bad : {"not json", "[1,2]", R"({"no":"type"})", R"({"type":7})", "{"}) {
    auto line = parseClaudeLine(bad);
    ASSERT_FALSE(line.isOk()) << bad;
    EXPECT_EQ(line.status().reason(), "malformed-frame") << bad;
  }
  // Unknown types are tolerated (newer CLIs add lines).
  auto unknown = parseClaudeLine(R"({"type":"rate_limit_event","x":1})");
  ASSERT_TRUE(unknown.isOk());
  EXPECT_EQ(unknown->kind, ClaudeLine::Kind::kOther);
}

TEST(ClaudeStream, UserLineCarriesOurUuidAndEscapesTheBlock) {
  std::string line = claudeUserLine("01a2-uuid", "line one\nline \"two\"");
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one stdin line";
  json::value v = json::parse(line);
  EXPECT_EQ(v.at("type").as_string(), "user");
  EXPECT_EQ(v.at("uuid").as_string(), "01a2-uuid");
  EXPECT_EQ(v.at("message").at("role").as_string(), "user");
  EXPECT_EQ(v.at("message").at("content").as_string(), "line one\nline \"two\"");
  EXPECT_TRUE(v.at("parent_tool_use_id").is_null());
}

}  // namespace
}  // namespace shoal::runtime
