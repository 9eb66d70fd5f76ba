// fake_codex behaves like `codex app-server` on stdio (as the real 0.171.0 was seen doing):
// these tests run the built binary with pipes and read its stdout lines, never sleeping to
// synchronise.
#include <chrono>
#include <fstream>
#include <sstream>

#include <boost/json.hpp>

#include "piped_child.h"
#include "testing/temp_dir.h"

#include <gtest/gtest.h>

namespace shoal::testing {
namespace {

namespace json = boost::json;

// `object[key]` as a string ("" when absent or not a string).
std::string str(const json::object& object, const char* key) {
  const json::value* v = object.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : "";
}

const json::object& params(const json::object& notification) {
  return notification.at("params").as_object();
}

const json::object& itemOf(const json::object& notification) {
  return params(notification).at("item").as_object();
}

// A line's name for order checks: "response" / "error" for responses, else the method, with the
// item type (item/*) or the status type (thread/status/changed) after a colon.
std::string label(const json::object& line) {
  if (line.contains("id")) return line.contains("error") ? "error" : "response";
  std::string method = str(line, "method");
  if (method == "item/started" || method == "item/completed") {
    return method + ":" + str(itemOf(line), "type");
  }
  if (method == "thread/status/changed") {
    return method + ":" + str(params(line).at("status").as_object(), "type");
  }
  return method;
}

// The labels of `lines`, a run of agent message deltas counted once.
std::vector<std::string> labels(const std::vector<json::object>& lines) {
  std::vector<std::string> out;
  for (const json::object& line : lines) {
    std::string l = label(line);
    if (l == "item/agentMessage/delta" && !out.empty() && out.back() == l) continue;
    out.push_back(l);
  }
  return out;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

json::object turnParams(const std::string& threadId, const std::string& text,
                        const std::string& clientId = "") {
  json::object p{
      {"threadId", threadId},
      {"input", json::array{json::object{{"type", "text"}, {"text", text}}}},
  };
  if (!clientId.empty()) p["clientUserMessageId"] = clientId;
  return p;
}

// The notifications of a whole plain turn after its response, deltas counted once.
std::vector<std::string> plainTurn() {
  return {"thread/status/changed:active",
          "turn/started",
          "item/started:userMessage",
          "item/completed:userMessage",
          "item/started:agentMessage",
          "item/agentMessage/delta",
          "item/completed:agentMessage",
          "thread/status/changed:idle",
          "turn/completed"};
}

// The notifications of a whole compaction after its {} response: idle before turn/completed.
std::vector<std::string> compactionTurn() {
  return {"thread/status/changed:active",   "turn/started",
          "item/started:contextCompaction", "item/completed:contextCompaction",
          "thread/status/changed:idle",     "turn/completed"};
}

class FakeCodexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::create("fake-codex");
    ASSERT_TRUE(dir.isOk());
    dir_.emplace(std::move(*dir));
  }

  std::string logPath() const { return dir_->join("fake.log"); }
  std::string statePath() const { return dir_->join("state.json"); }

  std::unique_ptr<PipedChild> start(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv{FAKE_CODEX_BINARY, "app-server", "--fake-log", logPath()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto child = PipedChild::start(argv, dir_->join("stderr.txt"));
    EXPECT_NE(child, nullptr);
    return child;
  }

  // Writes a request; returns its id.
  int64_t send(PipedChild& child, const std::string& method, json::object p = {}) {
    int64_t id = nextId_++;
    EXPECT_TRUE(child.writeLine(
        json::serialize(json::object{{"id", id}, {"method", method}, {"params", std::move(p)}})));
    return id;
  }

  // Stdout objects up to and including the first that `done` accepts (empty if output ends
  // or stalls first).
  template <typename Done>
  std::vector<json::object> until(PipedChild& child, Done done) {
    std::vector<json::object> lines;
    for (;;) {
      auto object = child.nextObject();
      if (!object) {
        ADD_FAILURE() << "stdout ended or stalled; so far:\n" << child.transcript();
        return {};
      }
      lines.push_back(*object);
      if (done(*object)) return lines;
    }
  }

  // The response to request `id` (notifications before it go to `before`); {} on failure.
  json::object responseTo(PipedChild& child, int64_t id,
                          std::vector<json::object>* before = nullptr) {
    auto lines = until(child, [id](const json::object& o) {
      const json::value* v = o.if_contains("id");
      return v != nullptr && *v == id && !o.contains("method");
    });
    if (lines.empty()) return {};
    json::object response = lines.back();
    lines.pop_back();
    if (before != nullptr) *before = std::move(lines);
    return response;
  }

  json::object call(PipedChild& child, const std::string& method, json::object p = {}) {
    return responseTo(child, send(child, method, std::move(p)));
  }

  // Lines up to and including turn/completed.
  std::vector<json::object> untilTurnCompleted(PipedChild& child) {
    return until(child, [](const json::object& o) { return str(o, "method") == "turn/completed"; });
  }

  void initialize(PipedChild& child, json::object capabilities = {}) {
    json::object response =
        call(child, "initialize",
             {{"clientInfo", {{"name", "shoal-test"}, {"title", "t"}, {"version", "0.1"}}},
              {"capabilities", std::move(capabilities)}});
    EXPECT_TRUE(response.contains("result")) << json::serialize(response);
    EXPECT_TRUE(child.writeLine(R"({"method":"initialized"})"));
  }

  // thread/start; checks the response and thread/started, returns the thread id.
  std::string startThread(PipedChild& child) {
    json::object response = call(child, "thread/start", {{"cwd", dir_->path()}});
    const json::value* result = response.if_contains("result");
    if (result == nullptr) {
      ADD_FAILURE() << json::serialize(response);
      return "";
    }
    const json::object& thread = result->at("thread").as_object();
    std::string id = str(thread, "id");
    EXPECT_EQ(id.size(), 36u);
    EXPECT_EQ(thread.at("status"), json::parse(R"({"type":"idle"})"));
    EXPECT_EQ(result->at("model"), "fake-model");
    EXPECT_EQ(result->at("cwd"), dir_->path().c_str());
    auto started = child.nextObject();
    EXPECT_TRUE(started && label(*started) == "thread/started") << child.transcript();
    if (started) {
      EXPECT_EQ(str(params(*started).at("thread").as_object(), "id"), id);
    }
    return id;
  }

  // The error of a response ({} when it is not one).
  static json::object errorOf(const json::object& response) {
    const json::value* e = response.if_contains("error");
    return e != nullptr && e->is_object() ? e->as_object() : json::object{};
  }

  std::vector<json::object> logLines(const std::string& event) const {
    std::vector<json::object> out;
    std::istringstream in(readFile(logPath()));
    std::string line;
    while (std::getline(in, line)) {
      json::object o = json::parse(line).as_object();
      if (str(o, "event") == event) out.push_back(o);
    }
    return out;
  }

  std::optional<TempDir> dir_;
  int64_t nextId_ = 1;
};

// Before initialize every request is refused with "Not initialized" (the id echoed as sent);
// initialize answers once and a second one gets "Already initialized".
TEST_F(FakeCodexTest, RequestsBeforeInitializeAreRefusedAndInitializeAnswersOnce) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->writeLine(R"({"id":"early","method":"thread/start","params":{}})"));
  auto refused = child->nextObject();
  ASSERT_TRUE(refused) << child->transcript();
  EXPECT_EQ(refused->at("id"), "early");
  EXPECT_EQ(json::serialize(refused->at("error")),
            R"({"code":-32600,"message":"Not initialized"})");

  json::object response = call(*child, "initialize", {{"clientInfo", {{"name", "relayd"}}}});
  const json::object& result = response.at("result").as_object();
  EXPECT_TRUE(str(result, "userAgent").starts_with("relayd/")) << json::serialize(result);
  EXPECT_FALSE(str(result, "codexHome").empty());
  EXPECT_EQ(result.at("platformFamily"), "unix");
  EXPECT_EQ(result.at("platformOs"), "linux");
  EXPECT_FALSE(response.contains("jsonrpc"));

  json::object again = call(*child, "initialize");
  EXPECT_EQ(str(errorOf(again), "message"), "Already initialized");
  EXPECT_EQ(errorOf(again).at("code"), -32600);
}

// A turn: the response first, then the real 0.171 order (idle just before turn/completed),
// the clientId echoed on the userMessage item, "fake-reply-N: <text>" streamed in deltas.
TEST_F(FakeCodexTest, ATurnFollowsTheRealOrderAndEchoesTheClientId) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);

  for (int n = 1; n <= 2; ++n) {
    const std::string clientId = "client-msg-" + std::to_string(n);
    const std::string text = "hello codex " + std::to_string(n);
    json::object response = call(*child, "turn/start", turnParams(thread, text, clientId));
    const json::object& turn = response.at("result").at("turn").as_object();
    EXPECT_EQ(json::serialize(turn.at("items")), "[]");
    EXPECT_EQ(turn.at("status"), "inProgress");
    EXPECT_EQ(turn.at("error"), nullptr);
    const std::string turnId = str(turn, "id");

    auto lines = untilTurnCompleted(*child);
    ASSERT_EQ(labels(lines), plainTurn()) << child->transcript();
    std::string delta;
    for (const json::object& line : lines) {
      EXPECT_FALSE(line.contains("jsonrpc"));
      if (line.contains("params") && params(line).contains("turnId")) {
        EXPECT_EQ(str(params(line), "turnId"), turnId) << json::serialize(line);
      }
      if (label(line) == "item/agentMessage/delta") delta += str(params(line), "delta");
    }
    EXPECT_EQ(str(params(lines[1]).at("turn").as_object(), "id"), turnId);
    const json::object& user = itemOf(lines[3]);
    EXPECT_EQ(str(user, "clientId"), clientId);
    EXPECT_EQ(json::serialize(user.at("content")),
              R"([{"type":"text","text":")" + text + R"(","text_elements":[]}])");
    EXPECT_EQ(itemOf(lines[2]), user);
    const std::string reply = "fake-reply-" + std::to_string(n) + ": " + text;
    EXPECT_EQ(str(itemOf(lines[4]), "text"), "");
    EXPECT_EQ(str(itemOf(lines.end()[-3]), "text"), reply);
    EXPECT_EQ(delta, reply);
    EXPECT_EQ(json::serialize(params(lines.back())),
              R"({"threadId":")" + thread + R"(","turn":{"id":")" + turnId +
                  R"(","status":"completed","items":[],"error":null}})");
  }

  auto inputs = logLines("input");
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(str(inputs[0], "clientId"), "client-msg-1");
  EXPECT_EQ(str(inputs[0], "text"), "hello codex 1");
  auto turns = logLines("turn");
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(str(turns[1], "status"), "completed");
}

// A steer while FAKE_SLOW_500 holds the answer joins the same turn: two userMessage items with
// their clientIds, one agent message answering both, one turn/completed.
TEST_F(FakeCodexTest, ASteerMidTurnJoinsTheActiveTurn) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);
  json::object started =
      call(*child, "turn/start", turnParams(thread, "first FAKE_SLOW_500", "c1"));
  const std::string turnId = str(started.at("result").at("turn").as_object(), "id");
  auto head =
      until(*child, [](const json::object& o) { return label(o) == "item/completed:userMessage"; });
  ASSERT_EQ(labels(head),
            (std::vector<std::string>{"thread/status/changed:active", "turn/started",
                                      "item/started:userMessage", "item/completed:userMessage"}));

  json::object p = turnParams(thread, "second", "c2");
  p["expectedTurnId"] = turnId;
  json::object steered = call(*child, "turn/steer", p);
  ASSERT_TRUE(steered.contains("result")) << json::serialize(steered);
  EXPECT_EQ(json::serialize(steered.at("result")), R"({"turnId":")" + turnId + R"("})");

  auto rest = untilTurnCompleted(*child);
  ASSERT_EQ(labels(rest),
            (std::vector<std::string>{"item/started:userMessage", "item/completed:userMessage",
                                      "item/started:agentMessage", "item/agentMessage/delta",
                                      "item/completed:agentMessage", "thread/status/changed:idle",
                                      "turn/completed"}));
  EXPECT_EQ(str(itemOf(rest[1]), "clientId"), "c2");
  EXPECT_EQ(str(itemOf(rest.end()[-3]), "text"), "fake-reply-1: first FAKE_SLOW_500\nsecond");

  // Nothing else comes for that turn: the next line is thread/read's response.
  std::vector<json::object> before;
  json::object read = responseTo(
      *child, send(*child, "thread/read", {{"threadId", thread}, {"includeTurns", true}}), &before);
  EXPECT_TRUE(before.empty()) << child->transcript();
  const json::array& turns = read.at("result").at("thread").at("turns").as_array();
  ASSERT_EQ(turns.size(), 1u);
  const json::array& items = turns[0].at("items").as_array();
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(str(items[0].as_object(), "clientId"), "c1");
  EXPECT_EQ(str(items[1].as_object(), "clientId"), "c2");
  EXPECT_EQ(str(items[2].as_object(), "type"), "agentMessage");

  auto turnLog = logLines("turn");
  ASSERT_EQ(turnLog.size(), 1u);
  EXPECT_EQ(turnLog[0].at("inputs"), 2);
  EXPECT_EQ(logLines("input").size(), 2u);
}

// turn/steer needs the active turn's id: none active, or another id, is -32600 with the real
// message.
TEST_F(FakeCodexTest, ASteerWithoutTheActiveTurnIdIsRefused) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);
  json::object p = turnParams(thread, "late", "c9");
  p["expectedTurnId"] = "wrong-turn-id";
  json::object idle = call(*child, "turn/steer", p);
  EXPECT_EQ(errorOf(idle).at("code"), -32600);
  EXPECT_EQ(str(errorOf(idle), "message"), "no active turn to steer");

  json::object started = call(*child, "turn/start", turnParams(thread, "FAKE_HANG", "c1"));
  const std::string turnId = str(started.at("result").at("turn").as_object(), "id");
  json::object wrong = call(*child, "turn/steer", p);
  EXPECT_EQ(errorOf(wrong).at("code"), -32600);
  EXPECT_EQ(str(errorOf(wrong), "message"),
            "expected active turn id `wrong-turn-id` but found `" + turnId + "`");
  EXPECT_EQ(logLines("input").size(), 1u);
}

// turn/start while a turn runs is accepted like a steer (real 0.171): same turn id, its
// userMessage joins the turn, and one turn/completed ends both.
TEST_F(FakeCodexTest, TurnStartWhileBusyJoinsTheActiveTurn) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);
  json::object first = call(*child, "turn/start", turnParams(thread, "FAKE_HANG", "c1"));
  const std::string turnId = str(first.at("result").at("turn").as_object(), "id");
  std::vector<json::object> before;
  json::object second =
      responseTo(*child, send(*child, "turn/start", turnParams(thread, "more", "c2")), &before);
  EXPECT_EQ(str(second.at("result").at("turn").as_object(), "id"), turnId);
  auto joined = until(*child, [](const json::object& o) {
    return label(o) == "item/completed:userMessage" && str(itemOf(o), "clientId") == "c2";
  });
  EXPECT_EQ(labels(joined),
            (std::vector<std::string>{"item/started:userMessage", "item/completed:userMessage"}));

  call(*child, "turn/interrupt", {{"threadId", thread}, {"turnId", turnId}});
  auto end = untilTurnCompleted(*child);
  EXPECT_EQ(str(params(end.back()).at("turn").as_object(), "status"), "interrupted");
  auto turns = logLines("turn");
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].at("inputs"), 2);
}

// Threads this process never loaded are refused with the real messages: turn/start "thread
// not found", thread/read "thread not loaded", thread/resume "no rollout found".
TEST_F(FakeCodexTest, UnknownThreadsAreRefusedWithTheRealMessages) {
  auto child = start({"--state", statePath()});
  ASSERT_NE(child, nullptr);
  initialize(*child);
  const std::string ghost = "0badc0de-0000-4000-8000-000000000000";
  json::object turn = call(*child, "turn/start", turnParams(ghost, "hello", "c1"));
  EXPECT_EQ(errorOf(turn).at("code"), -32600);
  EXPECT_EQ(str(errorOf(turn), "message"), "thread not found: " + ghost);
  json::object read = call(*child, "thread/read", {{"threadId", ghost}, {"includeTurns", true}});
  EXPECT_EQ(errorOf(read).at("code"), -32600);
  EXPECT_EQ(str(errorOf(read), "message"), "thread not loaded: " + ghost);
  json::object resume = call(*child, "thread/resume", {{"threadId", ghost}});
  EXPECT_EQ(errorOf(resume).at("code"), -32600);
  EXPECT_EQ(str(errorOf(resume), "message"), "no rollout found for thread id " + ghost);
  EXPECT_TRUE(logLines("input").empty());
}

// FAKE_HANG never answers; turn/interrupt answers {} then idle and turn/completed
// "interrupted", and the thread takes the next turn.
TEST_F(FakeCodexTest, InterruptEndsAHangingTurn) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);
  json::object started = call(*child, "turn/start", turnParams(thread, "FAKE_HANG now", "c1"));
  const std::string turnId = str(started.at("result").at("turn").as_object(), "id");
  until(*child, [](const json::object& o) { return label(o) == "item/completed:userMessage"; });

  std::vector<json::object> before;
  json::object response = responseTo(
      *child, send(*child, "turn/interrupt", {{"threadId", thread}, {"turnId", turnId}}), &before);
  EXPECT_TRUE(before.empty()) << child->transcript();
  EXPECT_EQ(json::serialize(response.at("result")), "{}");
  auto end = untilTurnCompleted(*child);
  ASSERT_EQ(labels(end),
            (std::vector<std::string>{"thread/status/changed:idle", "turn/completed"}));
  const json::object& turn = params(end.back()).at("turn").as_object();
  EXPECT_EQ(str(turn, "id"), turnId);
  EXPECT_EQ(str(turn, "status"), "interrupted");
  EXPECT_EQ(turn.at("error"), nullptr);

  call(*child, "turn/start", turnParams(thread, "after", "c2"));
  auto next = untilTurnCompleted(*child);
  ASSERT_EQ(labels(next), plainTurn());
  EXPECT_EQ(str(itemOf(next.end()[-3]), "text"), "fake-reply-1: after");
  auto turns = logLines("turn");
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(str(turns[0], "status"), "interrupted");
}

// FAKE_ERROR_FATAL: an `error` notification (willRetry false, internalServerError), then idle
// and turn/completed "failed" carrying the same error; no agent message.
TEST_F(FakeCodexTest, FatalErrorFailsTheTurn) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);
  json::object started = call(*child, "turn/start", turnParams(thread, "FAKE_ERROR_FATAL", "c1"));
  const std::string turnId = str(started.at("result").at("turn").as_object(), "id");
  auto lines = untilTurnCompleted(*child);
  ASSERT_EQ(labels(lines),
            (std::vector<std::string>{"thread/status/changed:active", "turn/started",
                                      "item/started:userMessage", "item/completed:userMessage",
                                      "error", "thread/status/changed:idle", "turn/completed"}));
  const json::object& error = params(lines[4]);
  EXPECT_EQ(error.at("willRetry"), false);
  EXPECT_EQ(str(error, "threadId"), thread);
  EXPECT_EQ(str(error, "turnId"), turnId);
  EXPECT_EQ(error.at("error").at("codexErrorInfo"), "internalServerError");
  EXPECT_FALSE(str(error.at("error").as_object(), "message").empty());
  const json::object& turn = params(lines.back()).at("turn").as_object();
  EXPECT_EQ(str(turn, "status"), "failed");
  EXPECT_EQ(turn.at("error"), error.at("error"));
  auto turns = logLines("turn");
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(str(turns[0], "status"), "failed");
}

// FAKE_ERROR_RETRY: an `error` with willRetry true, then the turn completes normally.
TEST_F(FakeCodexTest, RetryErrorLeavesTheTurnToComplete) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);
  call(*child, "turn/start", turnParams(thread, "FAKE_ERROR_RETRY", "c1"));
  auto lines = untilTurnCompleted(*child);
  std::vector<std::string> expected = plainTurn();
  expected.insert(expected.begin() + 4, "error");
  ASSERT_EQ(labels(lines), expected);
  EXPECT_EQ(params(lines[4]).at("willRetry"), true);
  EXPECT_EQ(str(params(lines.back()).at("turn").as_object(), "status"), "completed");
}

// FAKE_MCP_CALL: MCP startup after turn/started, then an mcpToolCall item before the agent
// message.
TEST_F(FakeCodexTest, McpCallMarkerAddsAToolItemBeforeTheAgentMessage) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);
  call(*child, "turn/start", turnParams(thread, "banana FAKE_MCP_CALL", "c1"));
  auto lines = untilTurnCompleted(*child);
  ASSERT_EQ(
      labels(lines),
      (std::vector<std::string>{
          "thread/status/changed:active", "turn/started", "mcpServer/startupStatus/updated",
          "mcpServer/startupStatus/updated", "item/started:userMessage",
          "item/completed:userMessage", "item/started:mcpToolCall", "item/completed:mcpToolCall",
          "item/started:agentMessage", "item/agentMessage/delta", "item/completed:agentMessage",
          "thread/status/changed:idle", "turn/completed"}));
  const json::object& tool = itemOf(lines[7]);
  EXPECT_EQ(str(tool, "status"), "completed");
  EXPECT_EQ(str(tool, "server"), "fake");
  EXPECT_EQ(str(tool, "tool"), "echo");
  EXPECT_EQ(str(itemOf(lines[6]), "status"), "inProgress");
}

// FAKE_DELAY_STARTED_<ms>: turn/started comes after the response, late enough that a steer
// lands first; both userMessage items then follow turn/started.
TEST_F(FakeCodexTest, DelayedTurnStartedLetsASteerLandBeforeIt) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);
  json::object started =
      call(*child, "turn/start", turnParams(thread, "FAKE_DELAY_STARTED_1000", "c1"));
  const std::string turnId = str(started.at("result").at("turn").as_object(), "id");
  json::object p = turnParams(thread, "early steer", "c2");
  p["expectedTurnId"] = turnId;
  std::vector<json::object> before;
  json::object steered = responseTo(*child, send(*child, "turn/steer", p), &before);
  EXPECT_TRUE(before.empty()) << child->transcript();
  EXPECT_TRUE(steered.contains("result")) << json::serialize(steered);
  auto lines = untilTurnCompleted(*child);
  std::vector<std::string> expected = plainTurn();
  expected.insert(expected.begin() + 4, {"item/started:userMessage", "item/completed:userMessage"});
  ASSERT_EQ(labels(lines), expected);
  EXPECT_EQ(str(itemOf(lines[3]), "clientId"), "c1");
  EXPECT_EQ(str(itemOf(lines[5]), "clientId"), "c2");
}

// FAKE_CRASH: exit 3 after turn/started and the userMessage item; no turn/completed.
TEST_F(FakeCodexTest, CrashMarkerExitsThreeMidTurn) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);
  call(*child, "turn/start", turnParams(thread, "FAKE_CRASH", "c1"));
  auto lines =
      until(*child, [](const json::object& o) { return label(o) == "item/completed:userMessage"; });
  EXPECT_EQ(labels(lines),
            (std::vector<std::string>{"thread/status/changed:active", "turn/started",
                                      "item/started:userMessage", "item/completed:userMessage"}));
  EXPECT_TRUE(child->outputEnds()) << child->transcript();
  auto exit = child->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->exited);
  EXPECT_EQ(exit->code, 3);
  auto exits = logLines("exit");
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].at("code"), 3);
}

// A restarted fake resumes a thread from --state: thread/read shows it notLoaded before the
// resume and turn/start is refused until then; the turns come back with their clientIds. A
// thread with no finished turn was never persisted: "no rollout found".
TEST_F(FakeCodexTest, ResumeAfterARestartRebuildsTheThreadWithClientIds) {
  std::string thread;
  std::string empty;
  {
    auto child = start({"--state", statePath()});
    ASSERT_NE(child, nullptr);
    initialize(*child);
    thread = startThread(*child);
    empty = startThread(*child);
    call(*child, "turn/start", turnParams(thread, "remember me", "client-msg-1"));
    untilTurnCompleted(*child);
    child->closeStdin();
    auto exit = child->waitExit();
    ASSERT_TRUE(exit);
    EXPECT_TRUE(exit->success()) << exit->toString();
  }

  auto child = start({"--state", statePath()});
  ASSERT_NE(child, nullptr);
  initialize(*child);
  json::object cold = call(*child, "thread/read", {{"threadId", thread}, {"includeTurns", true}});
  EXPECT_EQ(json::serialize(cold.at("result").at("thread").at("status")),
            R"({"type":"notLoaded"})");
  json::object early = call(*child, "turn/start", turnParams(thread, "too early", "c0"));
  EXPECT_EQ(str(errorOf(early), "message"), "thread not found: " + thread);
  json::object lost = call(*child, "thread/resume", {{"threadId", empty}});
  EXPECT_EQ(str(errorOf(lost), "message"), "no rollout found for thread id " + empty);

  json::object resumed = call(*child, "thread/resume", {{"threadId", thread}});
  ASSERT_TRUE(resumed.contains("result")) << json::serialize(resumed);
  EXPECT_EQ(str(resumed.at("result").at("thread").as_object(), "id"), thread);
  EXPECT_EQ(resumed.at("result").at("model"), "fake-model");

  json::object read = call(*child, "thread/read", {{"threadId", thread}, {"includeTurns", true}});
  const json::object& t = read.at("result").at("thread").as_object();
  EXPECT_EQ(json::serialize(t.at("status")), R"({"type":"idle"})");
  const json::array& turns = t.at("turns").as_array();
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].at("status"), "completed");
  const json::array& items = turns[0].at("items").as_array();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(str(items[0].as_object(), "type"), "userMessage");
  EXPECT_EQ(str(items[0].as_object(), "clientId"), "client-msg-1");
  EXPECT_EQ(str(items[1].as_object(), "text"), "fake-reply-1: remember me");

  json::object bare = call(*child, "thread/read", {{"threadId", thread}});
  EXPECT_TRUE(bare.at("result").at("thread").at("turns").as_array().empty());

  call(*child, "turn/start", turnParams(thread, "again", "client-msg-2"));
  ASSERT_EQ(labels(untilTurnCompleted(*child)), plainTurn());
}

// --no-client-id (old Codex): clientUserMessageId is accepted but no item carries clientId,
// live or in thread/read; the log still shows what was sent.
TEST_F(FakeCodexTest, NoClientIdSwitchNeverEchoesTheClientId) {
  auto child = start({"--no-client-id"});
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);
  call(*child, "turn/start", turnParams(thread, "hello", "c1"));
  auto lines = untilTurnCompleted(*child);
  ASSERT_EQ(labels(lines), plainTurn());
  EXPECT_FALSE(itemOf(lines[2]).contains("clientId"));
  EXPECT_FALSE(itemOf(lines[3]).contains("clientId"));
  json::object read = call(*child, "thread/read", {{"threadId", thread}, {"includeTurns", true}});
  const json::value& item = read.at("result").at("thread").at("turns").at(0).at("items").at(0);
  EXPECT_EQ(str(item.as_object(), "type"), "userMessage");
  EXPECT_FALSE(item.as_object().contains("clientId"));
  auto inputs = logLines("input");
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(str(inputs[0], "clientId"), "c1");
}

// Without a clientUserMessageId the item's clientId is null.
TEST_F(FakeCodexTest, AMessageWithoutAClientIdEchoesNull) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);
  call(*child, "turn/start", turnParams(thread, "anonymous"));
  auto lines = untilTurnCompleted(*child);
  ASSERT_EQ(labels(lines), plainTurn());
  EXPECT_EQ(itemOf(lines[3]).at("clientId"), nullptr);
}

// capabilities.optOutNotificationMethods suppresses exactly the methods it names.
TEST_F(FakeCodexTest, OptedOutNotificationsAreNeverSent) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  initialize(*child, {{"optOutNotificationMethods",
                       json::array{"item/agentMessage/delta", "thread/status/changed"}}});
  std::string thread = startThread(*child);
  call(*child, "turn/start", turnParams(thread, "quiet", "c1"));
  auto lines = untilTurnCompleted(*child);
  EXPECT_EQ(labels(lines),
            (std::vector<std::string>{"turn/started", "item/started:userMessage",
                                      "item/completed:userMessage", "item/started:agentMessage",
                                      "item/completed:agentMessage", "turn/completed"}));
}

// stdin EOF ends the process at once with exit 0, even with a turn hanging.
TEST_F(FakeCodexTest, StdinEofExitsZeroEvenMidTurn) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);
  call(*child, "turn/start", turnParams(thread, "FAKE_HANG", "c1"));
  until(*child, [](const json::object& o) { return label(o) == "item/completed:userMessage"; });
  child->closeStdin();
  EXPECT_TRUE(child->outputEnds()) << child->transcript();
  auto exit = child->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->success()) << exit->toString();
}

// thread/compact/start (real 0.171): {} at once, then a turn of its own with a new id whose
// only item is contextCompaction, idle before turn/completed; it is kept in thread/read and
// --state, logged as kind "compact", and its summary uses up a reply number.
TEST_F(FakeCodexTest, CompactionRunsAsATurnOfItsOwnWithIdleBeforeTurnCompleted) {
  auto child = start({"--state", statePath()});
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);
  json::object first = call(*child, "turn/start", turnParams(thread, "hello codex", "c1"));
  const std::string firstId = str(first.at("result").at("turn").as_object(), "id");
  untilTurnCompleted(*child);

  std::vector<json::object> before;
  json::object response =
      responseTo(*child, send(*child, "thread/compact/start", {{"threadId", thread}}), &before);
  EXPECT_TRUE(before.empty()) << child->transcript();
  EXPECT_EQ(json::serialize(response.at("result")), "{}");
  auto lines = untilTurnCompleted(*child);
  ASSERT_EQ(labels(lines), compactionTurn()) << child->transcript();
  const std::string turnId = str(params(lines[1]).at("turn").as_object(), "id");
  EXPECT_EQ(turnId.size(), 36u);
  EXPECT_NE(turnId, firstId);
  EXPECT_EQ(json::serialize(params(lines[1])),
            R"({"threadId":")" + thread + R"(","turn":{"id":")" + turnId +
                R"(","status":"inProgress","items":[],"error":null}})");
  const json::object& item = itemOf(lines[2]);
  const std::string itemId = str(item, "id");
  EXPECT_EQ(json::serialize(item), R"({"type":"contextCompaction","id":")" + itemId + R"("})");
  EXPECT_EQ(itemOf(lines[3]), item);
  for (size_t i = 2; i < 4; ++i) {
    EXPECT_EQ(str(params(lines[i]), "turnId"), turnId);
    EXPECT_EQ(str(params(lines[i]), "threadId"), thread);
  }
  EXPECT_EQ(json::serialize(params(lines.back())),
            R"({"threadId":")" + thread + R"(","turn":{"id":")" + turnId +
                R"(","status":"completed","items":[],"error":null}})");

  json::object read = call(*child, "thread/read", {{"threadId", thread}, {"includeTurns", true}});
  const json::object& t = read.at("result").at("thread").as_object();
  EXPECT_EQ(json::serialize(t.at("status")), R"({"type":"idle"})");
  const json::array& turns = t.at("turns").as_array();
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(str(turns[0].as_object(), "id"), firstId);
  EXPECT_EQ(json::serialize(turns[1]), R"({"id":")" + turnId +
                                           R"(","status":"completed","items":[)" +
                                           json::serialize(item) + R"(],"error":null})");
  json::value state = json::parse(readFile(statePath()));
  EXPECT_EQ(state.at("threads").at(thread).at("turns").at(1), turns[1]);

  auto turnLog = logLines("turn");
  ASSERT_EQ(turnLog.size(), 2u);
  EXPECT_FALSE(turnLog[0].contains("kind"));
  EXPECT_EQ(str(turnLog[1], "kind"), "compact");
  EXPECT_EQ(str(turnLog[1], "turnId"), turnId);
  EXPECT_EQ(str(turnLog[1], "status"), "completed");
  EXPECT_EQ(turnLog[1].at("inputs"), 0);
  EXPECT_EQ(logLines("input").size(), 1u);

  call(*child, "turn/start", turnParams(thread, "after compaction", "c2"));
  auto next = untilTurnCompleted(*child);
  ASSERT_EQ(labels(next), plainTurn());
  EXPECT_EQ(str(itemOf(next.end()[-3]), "text"), "fake-reply-3: after compaction");
}

// During a compaction (real 0.171) turn/steer, whatever its expectedTurnId, gets -32600
// "cannot steer a compact turn" with codexErrorInfo activeTurnNotSteerable, and turn/start
// -32603; both inputs are dropped. turn/interrupt still ends it.
TEST_F(FakeCodexTest, SteerAndTurnStartAreRefusedDuringACompaction) {
  auto child = start({"--compact-hang"});
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);
  call(*child, "thread/compact/start", {{"threadId", thread}});
  auto head = until(
      *child, [](const json::object& o) { return label(o) == "item/started:contextCompaction"; });
  ASSERT_FALSE(head.empty());
  const std::string turnId = str(params(head.back()), "turnId");

  for (const std::string& expected : {turnId, std::string("some-other-turn")}) {
    json::object p = turnParams(thread, "steer me", "c1");
    p["expectedTurnId"] = expected;
    std::vector<json::object> before;
    json::object steer = responseTo(*child, send(*child, "turn/steer", p), &before);
    EXPECT_TRUE(before.empty()) << child->transcript();
    EXPECT_EQ(json::serialize(steer.at("error")),
              R"({"code":-32600,"message":"cannot steer a compact turn","data":{"message":)"
              R"("cannot steer a compact turn","codexErrorInfo":{"activeTurnNotSteerable":)"
              R"({"turnKind":"compact"}},"additionalDetails":null,"misalignment":null}})");
  }
  std::vector<json::object> before;
  json::object turn =
      responseTo(*child, send(*child, "turn/start", turnParams(thread, "start me", "c2")), &before);
  EXPECT_TRUE(before.empty()) << child->transcript();
  EXPECT_EQ(json::serialize(turn.at("error")),
            R"({"code":-32603,"message":"failed to submit turn input: )"
            R"(ActiveTurnNotSteerable { turn_kind: Compact }"})");

  json::object read = call(*child, "thread/read", {{"threadId", thread}, {"includeTurns", true}});
  const json::object& t = read.at("result").at("thread").as_object();
  EXPECT_EQ(json::serialize(t.at("status")), R"({"type":"active","activeFlags":[]})");
  EXPECT_EQ(json::serialize(t.at("turns")),
            R"([{"id":")" + turnId + R"(","status":"inProgress","items":[],"error":null}])");

  call(*child, "turn/interrupt", {{"threadId", thread}, {"turnId", turnId}});
  auto end = untilTurnCompleted(*child);
  ASSERT_EQ(labels(end),
            (std::vector<std::string>{"thread/status/changed:idle", "turn/completed"}));
  EXPECT_EQ(str(params(end.back()).at("turn").as_object(), "status"), "interrupted");
  EXPECT_TRUE(logLines("input").empty());
  auto turnLog = logLines("turn");
  ASSERT_EQ(turnLog.size(), 1u);
  EXPECT_EQ(str(turnLog[0], "kind"), "compact");
  EXPECT_EQ(turnLog[0].at("inputs"), 0);

  call(*child, "turn/start", turnParams(thread, "after", "c3"));
  auto next = untilTurnCompleted(*child);
  ASSERT_EQ(labels(next), plainTurn());
  EXPECT_EQ(str(itemOf(next.end()[-3]), "text"), "fake-reply-1: after");
}

// --compact-fail (a model HTTP 500, real 0.171): systemError, `error`, turn/completed
// "failed" with that error; no item/completed and no idle. The failed turn keeps no item and
// thread/read says systemError until the next turn starts.
TEST_F(FakeCodexTest, FailedCompactionLeavesTheThreadInSystemError) {
  auto child = start({"--compact-fail", "--compact-ms", "0"});
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);
  call(*child, "thread/compact/start", {{"threadId", thread}});
  auto lines = untilTurnCompleted(*child);
  ASSERT_EQ(labels(lines),
            (std::vector<std::string>{
                "thread/status/changed:active", "turn/started", "item/started:contextCompaction",
                "thread/status/changed:systemError", "error", "turn/completed"}))
      << child->transcript();
  const std::string turnId = str(params(lines[1]).at("turn").as_object(), "id");
  const json::object& error = params(lines[4]);
  EXPECT_EQ(error.at("willRetry"), false);
  EXPECT_EQ(str(error, "threadId"), thread);
  EXPECT_EQ(str(error, "turnId"), turnId);
  EXPECT_EQ(error.at("error").at("codexErrorInfo"), "internalServerError");
  EXPECT_EQ(error.at("error").at("additionalDetails"), nullptr);
  EXPECT_FALSE(str(error.at("error").as_object(), "message").empty());
  const json::object& turn = params(lines.back()).at("turn").as_object();
  EXPECT_EQ(str(turn, "id"), turnId);
  EXPECT_EQ(str(turn, "status"), "failed");
  EXPECT_EQ(turn.at("error"), error.at("error"));

  json::object read = call(*child, "thread/read", {{"threadId", thread}, {"includeTurns", true}});
  const json::object& t = read.at("result").at("thread").as_object();
  EXPECT_EQ(json::serialize(t.at("status")), R"({"type":"systemError"})");
  const json::array& turns = t.at("turns").as_array();
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].at("status"), "failed");
  EXPECT_TRUE(turns[0].at("items").as_array().empty());
  EXPECT_EQ(turns[0].at("error"), error.at("error"));
  auto turnLog = logLines("turn");
  ASSERT_EQ(turnLog.size(), 1u);
  EXPECT_EQ(str(turnLog[0], "status"), "failed");
  EXPECT_EQ(str(turnLog[0], "kind"), "compact");

  call(*child, "turn/start", turnParams(thread, "recover", "c1"));
  ASSERT_EQ(labels(untilTurnCompleted(*child)), plainTurn());
  json::object after = call(*child, "thread/read", {{"threadId", thread}});
  EXPECT_EQ(json::serialize(after.at("result").at("thread").at("status")), R"({"type":"idle"})");
}

// --compact-duplicate: the compaction's turn/completed comes twice, line for line, and
// nothing else follows.
TEST_F(FakeCodexTest, DuplicateSwitchSendsTheCompactionCompletionTwice) {
  auto child = start({"--compact-duplicate", "--compact-ms=0"});
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);
  call(*child, "thread/compact/start", {{"threadId", thread}});
  auto lines = untilTurnCompleted(*child);
  ASSERT_EQ(labels(lines), compactionTurn()) << child->transcript();
  auto again = child->nextObject();
  ASSERT_TRUE(again) << child->transcript();
  EXPECT_EQ(*again, lines.back());
  EXPECT_EQ(str(params(*again).at("turn").as_object(), "status"), "completed");

  std::vector<json::object> before;
  responseTo(*child, send(*child, "thread/read", {{"threadId", thread}}), &before);
  EXPECT_TRUE(before.empty()) << child->transcript();
  EXPECT_EQ(logLines("turn").size(), 1u);
}

// thread/compact/start is refused while a turn runs (-32600), with -32602 for a missing
// threadId and "thread not found" for a thread not loaded; the running turn goes on.
TEST_F(FakeCodexTest, CompactionIsRefusedWhileATurnRuns) {
  auto child = start();
  ASSERT_NE(child, nullptr);
  initialize(*child);
  std::string thread = startThread(*child);
  json::object missing = call(*child, "thread/compact/start", {{"threadId", 7}});
  EXPECT_EQ(errorOf(missing).at("code"), -32602);
  const std::string ghost = "0badc0de-0000-4000-8000-000000000000";
  json::object unknown = call(*child, "thread/compact/start", {{"threadId", ghost}});
  EXPECT_EQ(json::serialize(errorOf(unknown)),
            R"({"code":-32600,"message":"thread not found: )" + ghost + R"("})");

  json::object started = call(*child, "turn/start", turnParams(thread, "FAKE_HANG", "c1"));
  const std::string turnId = str(started.at("result").at("turn").as_object(), "id");
  until(*child, [](const json::object& o) { return label(o) == "item/completed:userMessage"; });
  std::vector<json::object> before;
  json::object busy =
      responseTo(*child, send(*child, "thread/compact/start", {{"threadId", thread}}), &before);
  EXPECT_TRUE(before.empty()) << child->transcript();
  EXPECT_EQ(json::serialize(errorOf(busy)),
            R"({"code":-32600,"message":"a turn is already running"})");

  call(*child, "turn/interrupt", {{"threadId", thread}, {"turnId", turnId}});
  auto end = untilTurnCompleted(*child);
  EXPECT_EQ(str(params(end.back()).at("turn").as_object(), "id"), turnId);
  auto turnLog = logLines("turn");
  ASSERT_EQ(turnLog.size(), 1u);
  EXPECT_FALSE(turnLog[0].contains("kind"));
}

// --compact-ms needs a number of milliseconds: anything else is refused at start (exit 1).
TEST_F(FakeCodexTest, CompactMsNeedsMilliseconds) {
  auto child = start({"--compact-ms", "soon"});
  ASSERT_NE(child, nullptr);
  auto exit = child->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->exited);
  EXPECT_EQ(exit->code, 1);
  auto exits = logLines("exit");
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_NE(str(exits[0], "error").find("--compact-ms"), std::string::npos);
}

}  // namespace
}  // namespace shoal::testing
