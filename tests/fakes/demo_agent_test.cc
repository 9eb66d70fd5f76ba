// shoal-demo-agent speaks Claude's stream-json like fake_claude and answers each turn with a
// summary of the shoal delivery block it was handed.
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include <boost/json.hpp>

#include "mcp/server.h"
#include "piped_child.h"
#include "testing/temp_dir.h"

#include <gtest/gtest.h>

namespace shoal::testing {
namespace {

namespace json = boost::json;

constexpr char kUuid[] = "44444444-4444-4444-8444-444444444444";

std::string userLine(const std::string& content) {
  return json::serialize(
      json::object{{"type", "user"},
                   {"message", json::object{{"role", "user"}, {"content", content}}},
                   {"uuid", kUuid}});
}

std::string textOf(const json::object& assistant) {
  return std::string(assistant.at("message").at("content").as_array().at(0).at("text").as_string());
}

struct DemoRun {
  std::optional<TempDir> dir;
  std::unique_ptr<PipedChild> child;
};

DemoRun startDemo(std::vector<std::string> extra = {}) {
  DemoRun run;
  auto dir = TempDir::create("demo-agent");
  EXPECT_TRUE(dir.isOk());
  if (!dir.isOk()) return run;
  run.dir.emplace(std::move(*dir));
  std::vector<std::string> argv = {SHOAL_DEMO_AGENT_BINARY,
                                   "--name",
                                   "bob",
                                   "-p",
                                   "--input-format",
                                   "stream-json",
                                   "--output-format",
                                   "stream-json",
                                   "--verbose",
                                   "--replay-user-messages"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  run.child = PipedChild::start(argv, run.dir->join("stderr.txt"));
  EXPECT_NE(run.child, nullptr);
  return run;
}

// A delivery block is summarised item by item: kind, sender, the start of the text.
TEST(DemoAgent, SummarisesTheDeliveryBlockItReceived) {
  DemoRun run = startDemo();
  ASSERT_NE(run.child, nullptr);
  const std::string block =
      "=== shoal delivery for Bob (local.bob): 2 messages (1 DM, 1 in #team.backend) ===\n"
      "Messages from other peers on the shoal mesh, in the order they arrived.\n"
      "\n"
      "[dm] alice (local.alice) at 2025-05-01T12:00:00.000Z, id m1: Please review PR 12.\n"
      "[#team.backend, historical] carol (local.carol), id m2: first line\n"
      "  second line\n"
      "[\u2026 1 more message not in this block; they stay queued for a later turn]\n"
      "\n"
      "=== end of shoal delivery: what to do now ===\n"
      "1. Do what the messages ask with your own tools.\n";
  ASSERT_TRUE(run.child->writeLine(userLine(block)));

  auto init = run.child->nextObject();
  auto replay = run.child->nextObject();
  auto assistant = run.child->nextObject();
  auto result = run.child->nextObject();
  ASSERT_TRUE(init && replay && assistant && result) << run.child->transcript();
  EXPECT_EQ(init->at("subtype"), "init");
  EXPECT_EQ(replay->at("uuid"), kUuid);
  EXPECT_EQ(replay->at("isReplay"), true);
  const std::string expected =
      "demo agent bob: read 2 message(s): dm from alice: Please review PR 12. | "
      "#team.backend from carol: first line second line";
  EXPECT_EQ(textOf(*assistant), expected);
  EXPECT_EQ(result->at("subtype"), "success");
  EXPECT_EQ(std::string(result->at("result").as_string()), expected);

  run.child->closeStdin();
  auto exit = run.child->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->success());
  std::ifstream err(run.dir->join("stderr.txt"));
  std::stringstream ss;
  ss << err.rdbuf();
  EXPECT_NE(ss.str().find("shoal-demo-agent: a scripted demo, not an AI"), std::string::npos);
}

// Anything else is answered too, with zero messages and the start of the text.
TEST(DemoAgent, AnswersAPlainPrompt) {
  DemoRun run = startDemo();
  ASSERT_NE(run.child, nullptr);
  ASSERT_TRUE(run.child->writeLine(userLine("just saying hi\nsecond line")));
  auto assistant = run.child->nextOfType("assistant");
  ASSERT_TRUE(assistant) << run.child->transcript();
  EXPECT_EQ(textOf(*assistant),
            "demo agent bob: read 0 message(s) (no shoal delivery block): just saying hi second "
            "line");
  EXPECT_TRUE(run.child->nextOfType("result"));
}

// Given its seat's tools (--mcp-config, as the Claude driver passes them), it answers each DM
// through shoal_dm to the sender's id — channel posts get no reply.
TEST(DemoAgent, RepliesToDirectMessagesThroughTheSeatsShoalDmTool) {
  std::mutex mu;
  std::vector<json::object> calls;
  mcp::ToolSpec dm{
      "shoal_dm", "", "records the call",
      json::object{{"type", "object"},
                   {"properties", json::object{{"to", json::object{{"type", "string"}}},
                                               {"text", json::object{{"type", "string"}}}}},
                   {"required", json::array{"to", "text"}},
                   {"additionalProperties", false}},
      [&](const json::object& args) {
        std::lock_guard<std::mutex> lock(mu);
        calls.push_back(args);
        return mcp::ToolResult::ok("sent: stored seq 1");
      }};
  mcp::ServerOptions so;
  so.bearerToken = "demo-token";
  so.version = "test";
  auto server = mcp::Server::start(so, {dm});
  ASSERT_TRUE(server.isOk()) << server.status().toString();
  auto dir = TempDir::create("demo-agent-mcp");
  ASSERT_TRUE(dir.isOk());
  const std::string config = dir->join("mcp.json");
  std::ofstream(config) << R"({"mcpServers":{"shoal":{"type":"http","url":")" << (*server)->url()
                        << R"(","headers":{"Authorization":"Bearer demo-token"}}}})";

  DemoRun run = startDemo({"--mcp-config", config});
  ASSERT_NE(run.child, nullptr);
  const std::string block =
      "=== shoal delivery for Bob (local.bob): 2 messages (1 DM, 1 in #general) ===\n"
      "[dm] alice (local.alice) at 2025-05-01T12:00:00.000Z, id m1: Please review PR 12.\n"
      "[#general] carol (local.carol), id m2: lunch?\n"
      "=== end of shoal delivery: what to do now ===\n";
  ASSERT_TRUE(run.child->writeLine(userLine(block)));
  ASSERT_TRUE(run.child->nextOfType("result")) << run.child->transcript();
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].at("to"), "local.alice");
  EXPECT_EQ(calls[0].at("text"),
            "bob here (a scripted demo, not an AI): I read your message \"Please review PR 12.\"");
}

}  // namespace
}  // namespace shoal::testing
