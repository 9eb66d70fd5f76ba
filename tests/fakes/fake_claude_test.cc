// fake_claude behaves like the Claude Code CLI in headless stream-json mode
// (as the real 2.1.197 / 2.1.332 binaries were seen doing): these tests run the built binary
// with pipes and read its stdout lines, never sleeping to synchronise.
#include <csignal>
#include <fstream>
#include <sstream>

#include <boost/json.hpp>

#include "piped_child.h"
#include "testing/temp_dir.h"

#include <gtest/gtest.h>

namespace shoal::testing {
namespace {

namespace json = boost::json;

constexpr char kU1[] = "11111111-1111-4111-8111-111111111111";
constexpr char kU2[] = "22222222-2222-4222-8222-222222222222";
constexpr char kSession[] = "33333333-3333-4333-8333-333333333333";

std::string userLine(const std::string& content, const std::string& uuid = "") {
  json::object line{{"type", "user"},
                    {"message", json::object{{"role", "user"}, {"content", content}}},
                    {"parent_tool_use_id", nullptr},
                    {"session_id", ""}};
  if (!uuid.empty()) line["uuid"] = uuid;
  return json::serialize(line);
}

std::string controlLine(const std::string& requestId, const std::string& subtype) {
  return json::serialize(json::object{{"type", "control_request"},
                                      {"request_id", requestId},
                                      {"request", json::object{{"subtype", subtype}}}});
}

// `object[key]` as a string ("" when absent or not a string).
std::string str(const json::object& object, const char* key) {
  const json::value* v = object.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : "";
}

std::string typeOf(const json::object& object) {
  std::string type = str(object, "type");
  std::string subtype = str(object, "subtype");
  return subtype.empty() ? type : type + "/" + subtype;
}

std::string assistantText(const json::object& assistant) {
  return std::string(assistant.at("message")
                         .as_object()
                         .at("content")
                         .as_array()
                         .at(0)
                         .as_object()
                         .at("text")
                         .as_string());
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class FakeClaudeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::create("fake-claude");
    ASSERT_TRUE(dir.isOk());
    dir_.emplace(std::move(*dir));
  }

  std::string logPath() const { return dir_->join("fake.log"); }
  std::string stderrPath() const { return dir_->join("stderr.txt"); }

  // The daemon's command line plus `extra`, logging to logPath().
  std::unique_ptr<PipedChild> start(const std::vector<std::string>& extra = {},
                                    bool headlessFlags = true) {
    std::vector<std::string> argv{FAKE_CLAUDE_BINARY};
    if (headlessFlags) {
      argv.insert(argv.end(), {"-p", "--input-format", "stream-json", "--output-format",
                               "stream-json", "--verbose", "--replay-user-messages"});
    }
    argv.insert(argv.end(), {"--fake-log", logPath()});
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto child = PipedChild::start(argv, stderrPath());
    EXPECT_NE(child, nullptr);
    return child;
  }

  // Stdout objects up to and including the next result (empty if output ends first).
  std::vector<json::object> turn(PipedChild& child) {
    std::vector<json::object> lines;
    for (;;) {
      auto object = child.nextObject();
      if (!object) {
        ADD_FAILURE() << "no result; stdout so far:\n" << child.transcript();
        return {};
      }
      lines.push_back(*object);
      if (str(*object, "type") == "result") return lines;
    }
  }

  std::vector<json::object> logLines() const {
    std::vector<json::object> out;
    std::istringstream in(readFile(logPath()));
    std::string line;
    while (std::getline(in, line)) {
      json::value v = json::parse(line);
      out.push_back(v.as_object());
    }
    return out;
  }

  std::optional<TempDir> dir_;
};

std::vector<std::string> types(const std::vector<json::object>& lines) {
  std::vector<std::string> out;
  out.reserve(lines.size());
  for (const json::object& line : lines) {
    out.push_back(typeOf(line));
  }
  return out;
}

// The lines of a plain turn, by type.
std::vector<std::string> plainTurn() {
  return {"system/init", "user", "assistant", "result/success"};
}

// Two user lines give two turns, each init → replay (client uuid kept) → assistant → result,
// all in one session; EOF then exits 0.
TEST_F(FakeClaudeTest, TwoUserLinesGiveTwoTurnsInOrderWithTheClientUuids) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->writeLine(userLine("hello one", kU1)));
  ASSERT_TRUE(child->writeLine(userLine("hello two", kU2)));
  child->closeStdin();

  auto first = turn(*child);
  auto second = turn(*child);
  ASSERT_EQ(types(first), plainTurn());
  ASSERT_EQ(types(second), plainTurn());

  const std::string session = str(first[0], "session_id");
  EXPECT_EQ(first[0].at("claude_code_version"), "2.1.197-fake");
  for (const auto& lines : {first, second}) {
    for (const json::object& line : lines) {
      EXPECT_EQ(str(line, "session_id"), session);
    }
  }
  EXPECT_EQ(str(first[1], "uuid"), kU1);
  EXPECT_EQ(first[1].at("isReplay"), true);
  EXPECT_EQ(first[1].at("parent_tool_use_id"), nullptr);
  EXPECT_EQ(first[1].at("message"), json::parse(R"({"role":"user","content":"hello one"})"));
  EXPECT_EQ(assistantText(first[2]), "fake-reply-1: hello one");
  EXPECT_TRUE(str(first[2].at("message").as_object(), "id").starts_with("msg_fake_"));
  EXPECT_EQ(first[2].at("message").as_object().at("stop_reason"), nullptr);
  EXPECT_EQ(first[3].at("is_error"), false);
  EXPECT_EQ(first[3].at("num_turns"), 1);
  EXPECT_EQ(str(first[3], "result"), "fake-reply-1: hello one");
  EXPECT_EQ(str(first[3], "stop_reason"), "end_turn");
  EXPECT_EQ(str(second[1], "uuid"), kU2);
  EXPECT_EQ(assistantText(second[2]), "fake-reply-2: hello two");
  EXPECT_NE(str(first[0], "uuid"), str(second[0], "uuid"));

  EXPECT_TRUE(child->outputEnds());
  auto exit = child->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->success()) << exit->toString();
}

// --fake-no-uuid: the replay carries a fresh uuid, not the client's.
TEST_F(FakeClaudeTest, NoUuidSwitchReplaysAFreshUuid) {
  auto child = start({"--fake-no-uuid"});
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->writeLine(userLine("hello", kU1)));
  auto replay = child->nextOfType("user");
  ASSERT_TRUE(replay) << child->transcript();
  EXPECT_NE(str(*replay, "uuid"), kU1);
  EXPECT_EQ(str(*replay, "uuid").size(), 36u);
}

// FAKE_API_ERROR: the turn ends with subtype success but is_error, the process keeps serving,
// and exits 1 at EOF.
TEST_F(FakeClaudeTest, ApiErrorTriggerGivesAnErrorResultAndExitOneAtEof) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->writeLine(userLine("please FAKE_API_ERROR", kU1)));
  auto failed = turn(*child);
  ASSERT_EQ(types(failed), plainTurn());
  EXPECT_EQ(assistantText(failed[2]), "API Error: 500 fake forced error");
  EXPECT_EQ(failed[3].at("is_error"), true);
  EXPECT_EQ(failed[3].at("api_error_status"), 500);
  EXPECT_EQ(str(failed[3], "result"), "API Error: 500 fake forced error");

  ASSERT_TRUE(child->writeLine(userLine("still there?", kU2)));
  auto next = turn(*child);
  ASSERT_EQ(types(next), plainTurn());
  EXPECT_EQ(next[3].at("is_error"), false);

  child->closeStdin();
  auto exit = child->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->exited);
  EXPECT_EQ(exit->code, 1);
}

// FAKE_CRASH: init and replay, then exit 3 with no assistant and no result.
TEST_F(FakeClaudeTest, CrashTriggerExitsThreeWithoutAResult) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->writeLine(userLine("FAKE_CRASH now", kU1)));
  auto init = child->nextObject();
  ASSERT_TRUE(init);
  EXPECT_EQ(typeOf(*init), "system/init");
  auto replay = child->nextObject();
  ASSERT_TRUE(replay);
  EXPECT_EQ(str(*replay, "uuid"), kU1);
  EXPECT_TRUE(child->outputEnds()) << child->transcript();
  auto exit = child->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->exited);
  EXPECT_EQ(exit->code, 3);
  auto log = logLines();
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(str(log.back(), "event"), "exit");
  EXPECT_EQ(log.back().at("code"), 3);
}

// An interrupt ends a hanging turn with error_during_execution; the line queued behind it then
// gets its own turn.
TEST_F(FakeClaudeTest, InterruptEndsAHangingTurnAndTheQueuedLineRunsNext) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->writeLine(userLine("FAKE_HANG please", kU1)));
  auto replay = child->nextOfType("user");
  ASSERT_TRUE(replay);
  EXPECT_EQ(str(*replay, "uuid"), kU1);
  ASSERT_TRUE(child->writeLine(userLine("after the hang", kU2)));
  ASSERT_TRUE(child->writeLine(controlLine("int_1", "interrupt")));

  auto ended = turn(*child);
  ASSERT_EQ(types(ended), (std::vector<std::string>{"control_response", "user",
                                                    "result/error_during_execution"}));
  const json::object& response = ended[0].at("response").as_object();
  EXPECT_EQ(str(response, "subtype"), "success");
  EXPECT_EQ(str(response, "request_id"), "int_1");
  EXPECT_EQ(json::serialize(ended[1].at("message").at("content")),
            R"([{"type":"text","text":"[Request interrupted by user]"}])");
  EXPECT_EQ(ended[2].at("is_error"), true);

  auto next = turn(*child);
  ASSERT_EQ(types(next), plainTurn());
  EXPECT_EQ(str(next[1], "uuid"), kU2);
  child->closeStdin();
  auto exit = child->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->success()) << exit->toString();
}

// --fake-fold: a line arriving while a turn runs joins it: its replay and answer come before
// the one result.
TEST_F(FakeClaudeTest, FoldJoinsALineArrivingMidTurnIntoOneResult) {
  auto child = start({"--fake-fold", "--fake-turn-ms", "2000"});
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->writeLine(userLine("first", kU1)));
  auto replay = child->nextOfType("user");
  ASSERT_TRUE(replay);
  ASSERT_TRUE(child->writeLine(userLine("second", kU2)));
  child->closeStdin();

  auto lines = turn(*child);
  ASSERT_EQ(types(lines),
            (std::vector<std::string>{"assistant", "user", "assistant", "result/success"}))
      << child->transcript();
  EXPECT_EQ(str(lines[1], "uuid"), kU2);
  EXPECT_EQ(lines[3].at("num_turns"), 2);
  EXPECT_TRUE(child->outputEnds()) << child->transcript();
  auto exit = child->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->success());
  auto log = logLines();
  ASSERT_GE(log.size(), 2u);
  const json::object& result = log[log.size() - 2];
  EXPECT_EQ(str(result, "event"), "result");
  EXPECT_EQ(result.at("uuid_list"), (json::array{kU1, kU2}));
}

// --fake-fold into a hanging turn: the interrupt replays the folded line, then one result.
TEST_F(FakeClaudeTest, FoldIntoAHangingTurnEndsWithOneInterruptResult) {
  auto child = start({"--fake-fold"});
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->writeLine(userLine("FAKE_HANG", kU1)));
  ASSERT_TRUE(child->nextOfType("user"));
  ASSERT_TRUE(child->writeLine(userLine("folded", kU2)));
  ASSERT_TRUE(child->writeLine(controlLine("int_2", "interrupt")));
  auto lines = turn(*child);
  ASSERT_EQ(types(lines), (std::vector<std::string>{"control_response", "user", "user",
                                                    "result/error_during_execution"}));
  EXPECT_EQ(str(lines[1], "uuid"), kU2);
  child->closeStdin();
  EXPECT_TRUE(child->outputEnds()) << child->transcript();
}

// --fake-lifecycle: queued when read (even mid-turn), started at the turn start, completed
// after the result; command_uuid is the client's uuid.
TEST_F(FakeClaudeTest, LifecycleLinesAckEveryLine) {
  auto child = start({"--fake-lifecycle"});
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->writeLine(userLine("FAKE_HANG", kU1)));
  ASSERT_TRUE(child->nextOfType("user"));
  ASSERT_TRUE(child->writeLine(userLine("second", kU2)));
  ASSERT_TRUE(child->writeLine(controlLine("int_3", "interrupt")));
  child->closeStdin();

  std::vector<std::string> seen;
  for (;;) {
    auto object = child->nextObject();
    if (!object) break;
    std::string entry = typeOf(*object);
    if (entry == "command_lifecycle") {
      entry += ":" + str(*object, "state") + ":" + str(*object, "command_uuid").substr(0, 1);
    }
    seen.push_back(entry);
  }
  const std::vector<std::string> expected{
      // (command_lifecycle queued/started for 1 and the first init/replay came before the
      // first nextOfType returned)
      "command_lifecycle:queued:2",
      "control_response",
      "user",
      "result/error_during_execution",
      "command_lifecycle:completed:1",
      "command_lifecycle:started:2",
      "system/init",
      "user",
      "assistant",
      "result/success",
      "command_lifecycle:completed:2",
  };
  EXPECT_EQ(seen, expected) << child->transcript();
  EXPECT_NE(
      child->transcript().find(R"("command_uuid":")" + std::string(kU1) + R"(","state":"queued")"),
      std::string::npos)
      << child->transcript();
}

// A malformed stdin line kills the process with exit 1 and a message on stderr.
TEST_F(FakeClaudeTest, MalformedLineExitsOne) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->writeLine("{not json"));
  auto exit = child->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->exited);
  EXPECT_EQ(exit->code, 1);
  EXPECT_NE(readFile(stderrPath()).find("invalid JSON"), std::string::npos);
  EXPECT_TRUE(child->outputEnds());
}

// Blank lines are ignored and a last line without its line feed is still a turn.
TEST_F(FakeClaudeTest, BlankLinesAreIgnoredAndAPartialLastLineIsProcessed) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->write("\n   \n" + userLine("no newline", kU1)));
  child->closeStdin();
  auto lines = turn(*child);
  ASSERT_EQ(types(lines), plainTurn());
  EXPECT_EQ(str(lines[1], "uuid"), kU1);
  auto exit = child->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->success());
}

// The combinations the real CLI refuses end the process with exit 1 and stderr, no stdout.
TEST_F(FakeClaudeTest, RefusesWhatTheRealCliRefuses) {
  const std::vector<std::vector<std::string>> refused{
      {"--input-format", "stream-json", "--output-format", "stream-json", "--verbose"},
      {"-p", "--input-format", "stream-json", "--output-format", "text", "--verbose"},
      {"-p", "--input-format", "stream-json", "--output-format", "stream-json"},
      {"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
       "--session-id", "not-a-uuid"},
      {"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
       "--mcp-config", "/nonexistent/mcp.json"},
  };
  for (const auto& argv : refused) {
    auto child = start(argv, /*headlessFlags=*/false);
    ASSERT_NE(child, nullptr);
    auto exit = child->waitExit();
    ASSERT_TRUE(exit);
    EXPECT_TRUE(exit->exited);
    EXPECT_EQ(exit->code, 1) << argv[0];
    EXPECT_TRUE(child->outputEnds());
    EXPECT_EQ(child->transcript(), "");
  }
  EXPECT_NE(readFile(stderrPath()).find("requires output-format=stream-json"), std::string::npos);
  EXPECT_NE(readFile(stderrPath()).find("Invalid session ID"), std::string::npos);
}

// --session-id is the session; MCP servers from --mcp-config show in init; unknown flags are
// ignored with a note; --fake-init once sends one init per process.
TEST_F(FakeClaudeTest, SessionIdMcpServersAndInitOnce) {
  auto child = start({"--session-id", kSession, "--mcp-config",
                      R"({"mcpServers":{"shoal":{"type":"stdio","command":"x"}}})",
                      "--strict-mcp-config", "--allowedTools", "mcp__shoal__shoal_dm",
                      "--some-new-flag", "--model=claude-test", "--fake-init=once"});
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->writeLine(userLine("one", kU1)));
  ASSERT_TRUE(child->writeLine(userLine("two", kU2)));
  child->closeStdin();
  auto first = turn(*child);
  auto second = turn(*child);
  ASSERT_EQ(types(first), plainTurn());
  ASSERT_EQ(types(second), (std::vector<std::string>{"user", "assistant", "result/success"}));
  EXPECT_EQ(str(first[0], "session_id"), kSession);
  EXPECT_EQ(str(second[2], "session_id"), kSession);
  EXPECT_EQ(first[0].at("mcp_servers"), json::parse(R"([{"name":"shoal","status":"connected"}])"));
  EXPECT_EQ(str(first[0], "model"), "claude-test");
  const json::array& tools = first[0].at("tools").as_array();
  EXPECT_NE(std::find(tools.begin(), tools.end(), json::value("mcp__shoal__shoal_dm")),
            tools.end());
  auto exit = child->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->success());
  EXPECT_NE(readFile(stderrPath()).find("--some-new-flag"), std::string::npos);
}

// --resume keeps the resumed session id; with --fork-session a new one is minted.
TEST_F(FakeClaudeTest, ResumeKeepsTheSessionUnlessForked) {
  for (bool fork : {false, true}) {
    std::vector<std::string> extra{"--resume=" + std::string(kSession)};
    if (fork) extra.push_back("--fork-session");
    auto child = start(extra);
    ASSERT_NE(child, nullptr);
    ASSERT_TRUE(child->writeLine(userLine("hi", kU1)));
    auto init = child->nextOfType("system", "init");
    ASSERT_TRUE(init);
    EXPECT_EQ(str(*init, "session_id") == kSession, !fork);
  }
}

// FAKE_RATE_LIMIT: an api_retry line before the assistant, then a normal success.
TEST_F(FakeClaudeTest, RateLimitTriggerRetriesThenSucceeds) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->writeLine(userLine("FAKE_RATE_LIMIT", kU1)));
  auto lines = turn(*child);
  ASSERT_EQ(types(lines), (std::vector<std::string>{"system/init", "user", "system/api_retry",
                                                    "assistant", "result/success"}));
  EXPECT_EQ(lines[2].at("error_status"), 429);
  EXPECT_EQ(lines[4].at("is_error"), false);
}

// initialize gets a success with a response object; an unknown subtype an error; interrupt
// while idle just a success.
TEST_F(FakeClaudeTest, ControlRequestsAreAnswered) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->writeLine(controlLine("c1", "initialize")));
  ASSERT_TRUE(child->writeLine(controlLine("c2", "rewind_the_universe")));
  ASSERT_TRUE(child->writeLine(controlLine("c3", "interrupt")));
  auto init = child->nextObject();
  auto unknown = child->nextObject();
  auto interrupt = child->nextObject();
  ASSERT_TRUE(init && unknown && interrupt) << child->transcript();
  const json::object& r1 = init->at("response").as_object();
  EXPECT_EQ(str(r1, "subtype"), "success");
  EXPECT_EQ(str(r1, "request_id"), "c1");
  EXPECT_TRUE(r1.at("response").is_object());
  const json::object& r2 = unknown->at("response").as_object();
  EXPECT_EQ(str(r2, "subtype"), "error");
  EXPECT_EQ(str(r2, "error"), "unknown control subtype");
  const json::object& r3 = interrupt->at("response").as_object();
  EXPECT_EQ(str(r3, "subtype"), "success");
  EXPECT_EQ(str(r3, "request_id"), "c3");
}

// The log holds one JSON object per line: start, input, replay, result, exit, with the pid.
TEST_F(FakeClaudeTest, LogRecordsStartInputReplayResultAndExit) {
  auto child = start({"--session-id", kSession});
  ASSERT_NE(child, nullptr);
  json::object blocks{
      {"type", "user"},
      {"message",
       json::parse(
           R"({"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]})")},
      {"uuid", kU1}};
  ASSERT_TRUE(child->writeLine(json::serialize(blocks)));
  child->closeStdin();
  auto exit = child->waitExit();
  ASSERT_TRUE(exit);
  ASSERT_TRUE(exit->success());

  auto log = logLines();
  std::vector<std::string> events;
  for (const json::object& line : log) {
    events.push_back(str(line, "event"));
    EXPECT_EQ(line.at("pid"), child->pid());
  }
  ASSERT_EQ(events, (std::vector<std::string>{"start", "input", "replay", "result", "exit"}));
  EXPECT_EQ(str(log[0], "session_id"), kSession);
  EXPECT_EQ(str(log[1], "uuid"), kU1);
  EXPECT_EQ(str(log[1], "content"), "a\nb");
  EXPECT_EQ(str(log[2], "uuid"), kU1);
  EXPECT_EQ(log[3].at("uuid_list"), (json::array{kU1}));
  EXPECT_EQ(log[3].at("is_error"), false);
  EXPECT_EQ(str(log[3], "subtype"), "success");
  EXPECT_EQ(log[4].at("code"), 0);
}

// SIGTERM: the exit is logged and the code is 143.
TEST_F(FakeClaudeTest, SigtermExits143) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->writeLine(userLine("FAKE_HANG", kU1)));
  ASSERT_TRUE(child->nextOfType("user"));
  child->signal(SIGTERM);
  auto exit = child->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->exited) << exit->toString();
  EXPECT_EQ(exit->code, 143);
  auto log = logLines();
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.back().at("code"), 143);
}

}  // namespace
}  // namespace shoal::testing
