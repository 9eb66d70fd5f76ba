// opencode_events: the SSE frames recorded from the real `opencode serve` 1.18.33 (two prompts,
// MCP tool calls, a prompt while busy, abort, errors) parse into the facts the driver acts on;
// malformed frames are named errors; minted message ids have OpenCode's ascending layout and
// never repeat.
#include "runtime/opencode/events.h"

#include <cctype>
#include <set>

#include <boost/json.hpp>

#include <gtest/gtest.h>

namespace shoal::runtime {
namespace {

namespace json = boost::json;
using K = OpenCodeEvent::Kind;

TEST(OpenCodeEvents, UserAndAssistantMessagesCarryTheCorrelation) {
  auto user = parseOpenCodeEvent(
      R"({"type":"message.updated","properties":{"info":{"id":"msg_22cc62a0d70cAbCdEfGhIjKlMn","sessionID":"ses_1","role":"user","time":{"created":1}}}})");
  ASSERT_TRUE(user.isOk()) << user.status().toString();
  EXPECT_EQ(user->kind, K::kMessage);
  EXPECT_EQ(user->role, "user");
  EXPECT_EQ(user->sessionId, "ses_1");
  EXPECT_EQ(user->messageId, "msg_22cc62a0d70cAbCdEfGhIjKlMn");

  auto running = parseOpenCodeEvent(
      R"({"type":"message.updated","properties":{"info":{"id":"msg_a2","sessionID":"ses_1","role":"assistant","parentID":"msg_22cc62a0d70cAbCdEfGhIjKlMn","time":{"created":2}}}})");
  ASSERT_TRUE(running.isOk());
  EXPECT_EQ(running->parentId, "msg_22cc62a0d70cAbCdEfGhIjKlMn");
  EXPECT_FALSE(running->completed);
  EXPECT_TRUE(running->finish.empty());

  auto done = parseOpenCodeEvent(
      R"({"type":"message.updated","properties":{"info":{"id":"msg_a2","sessionID":"ses_1","role":"assistant","parentID":"msg_u","finish":"stop","time":{"created":2,"completed":3},"summary":true}}})");
  ASSERT_TRUE(done.isOk());
  EXPECT_TRUE(done->completed);
  EXPECT_EQ(done->finish, "stop");
  EXPECT_TRUE(done->summary);

  auto aborted = parseOpenCodeEvent(
      R"({"type":"message.updated","properties":{"info":{"id":"msg_a3","sessionID":"ses_1","role":"assistant","parentID":"msg_u","time":{"created":2,"completed":4},"error":{"name":"MessageAbortedError","data":{"message":"Aborted"}}}}})");
  ASSERT_TRUE(aborted.isOk());
  EXPECT_EQ(aborted->errorName, "MessageAbortedError");
  EXPECT_EQ(aborted->errorMessage, "Aborted");
}

TEST(OpenCodeEvents, StatusIdleErrorAndParts) {
  auto busy = parseOpenCodeEvent(
      R"({"type":"session.status","properties":{"sessionID":"ses_1","status":{"type":"busy"}}})");
  ASSERT_TRUE(busy.isOk());
  EXPECT_EQ(busy->kind, K::kStatus);
  EXPECT_EQ(busy->status, "busy");
  auto retry = parseOpenCodeEvent(
      R"({"type":"session.status","properties":{"sessionID":"ses_1","status":{"type":"retry","attempt":3,"message":"fake forced error 500","next":1}}})");
  ASSERT_TRUE(retry.isOk());
  EXPECT_EQ(retry->status, "retry");
  EXPECT_EQ(retry->retryAttempt, 3);
  EXPECT_EQ(retry->errorMessage, "fake forced error 500");
  auto idle = parseOpenCodeEvent(R"({"type":"session.idle","properties":{"sessionID":"ses_1"}})");
  EXPECT_EQ(idle->kind, K::kIdle);
  auto error = parseOpenCodeEvent(
      R"({"type":"session.error","properties":{"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"fake forced error 400","statusCode":400,"isRetryable":false}}}})");
  ASSERT_TRUE(error.isOk());
  EXPECT_EQ(error->kind, K::kError);
  EXPECT_EQ(error->errorName, "APIError");
  EXPECT_EQ(error->errorMessage, "fake forced error 400");

  auto delta = parseOpenCodeEvent(
      R"({"type":"message.part.delta","properties":{"sessionID":"ses_1","messageID":"msg_a2","partID":"prt_1","field":"text","delta":"fake-reply-1: he"}})");
  ASSERT_TRUE(delta.isOk());
  EXPECT_EQ(delta->kind, K::kPart);
  EXPECT_EQ(delta->messageId, "msg_a2");
  auto compaction = parseOpenCodeEvent(
      R"({"type":"message.part.updated","properties":{"part":{"id":"prt_2","sessionID":"ses_1","messageID":"msg_c","type":"compaction","auto":true}}})");
  ASSERT_TRUE(compaction.isOk());
  EXPECT_EQ(compaction->partType, "compaction");
  EXPECT_TRUE(compaction->compactionAuto);
  auto pruned = parseOpenCodeEvent(
      R"({"type":"message.part.updated","properties":{"part":{"id":"prt_3","sessionID":"ses_1","messageID":"msg_old","type":"tool","state":{"status":"completed","time":{"start":1,"end":2,"compacted":9}}}}})");
  ASSERT_TRUE(pruned.isOk());
  EXPECT_TRUE(pruned->pruned);

  auto other = parseOpenCodeEvent(R"({"type":"plugin.added","properties":{"name":"x"}})");
  ASSERT_TRUE(other.isOk());
  EXPECT_EQ(other->kind, K::kOther);
  EXPECT_EQ(parseOpenCodeEvent(R"({"type":"server.connected","properties":{}})")->kind,
            K::kConnected);
}

TEST(OpenCodeEvents, MalformedFramesAreNamedErrors) {
  for (const char* bad : {
           "not json",
           "[1,2]",
           R"({"properties":{}})",
           R"({"type":7})",
           R"({"type":"message.updated","properties":{}})",
           R"({"type":"message.updated","properties":{"info":{"id":"msg_1","role":"user"}}})",
           R"({"type":"message.part.updated","properties":{"part":{"id":"p","type":"text"}}})",
           R"({"type":"session.status","properties":{"sessionID":"ses_1"}})",
           R"({"type":"session.status","properties":{"sessionID":"ses_1","status":{}}})",
           R"({"type":"session.idle","properties":{}})",
       }) {
    auto parsed = parseOpenCodeEvent(bad);
    EXPECT_FALSE(parsed.isOk()) << bad;
    EXPECT_EQ(parsed.status().reason(), "opencode-event-malformed") << bad;
  }
}

TEST(OpenCodeEvents, MintedIdsAreAscendingUniqueAndInOpenCodesFormat) {
  std::set<std::string> seen;
  std::string last;
  for (int i = 0; i < 5000; ++i) {
    auto id = mintOpenCodeMessageId();
    ASSERT_TRUE(id.isOk());
    ASSERT_EQ(id->size(), 4u + 12u + 14u) << *id;
    ASSERT_EQ(id->rfind("msg_", 0), 0u);
    for (size_t j = 4; j < 16; ++j)
      ASSERT_TRUE(std::isxdigit(static_cast<unsigned char>((*id)[j])) && !std::isupper((*id)[j]))
          << *id;
    for (size_t j = 16; j < id->size(); ++j)
      ASSERT_TRUE(std::isalnum(static_cast<unsigned char>((*id)[j]))) << *id;
    // Many ids fall in one millisecond: the counter keeps the time part strictly ascending.
    ASSERT_GT(id->substr(4, 12), last.empty() ? std::string() : last.substr(4, 12));
    last = *id;
    ASSERT_TRUE(seen.insert(*id).second);
  }
}

TEST(OpenCodeEvents, ThePromptBodyCarriesTheMessageIdAndTheTextVerbatim) {
  const std::string text = "line one\n\"quoted\" \\ tab\t";
  json::value body = json::parse(openCodePromptBody("msg_0123456789abABCDEFGHIJKLMN", text));
  EXPECT_EQ(body.at("messageID").as_string(), "msg_0123456789abABCDEFGHIJKLMN");
  EXPECT_EQ(body.at("parts").as_array().size(), 1u);
  EXPECT_EQ(body.at("parts").at(0).at("type").as_string(), "text");
  EXPECT_EQ(body.at("parts").at(0).at("text").as_string(), text);
}

}  // namespace
}  // namespace shoal::runtime
