// The real `codex app-server` (pinned by scripts/install-test-runtimes --codex) behind a seat on
// a real broker, run offline against the scripted fake model (tests/fakes/fake_model.py,
// `POST /v1/responses`) on 127.0.0.1. What the Codex driver relies on (codex_driver.h) checked
// on the real binary: surfacing on the echoed `clientId`, a second turn on the same thread, a DM
// steered into a running turn (turn/steer), and a restarted seat resuming its saved thread.
// The driver's side of it is described in docs/daemon.md, Runtimes.
//
// The suite installs the runtimes once per test process (the script is idempotent and
// serialises parallel installs). Without node/npm the script exits 3 and every test skips,
// saying why.
//
// Each test runs its own fake model (`--port 0`, its `listening on` line read back) and gives
// Codex a private CODEX_HOME (a config.toml naming the fake model, on that port, as the only
// provider) and HOME. The seat passes only the names in profile.env (plus PATH and HOME) to the
// runtime, so the test sets them in its own environment and lists them there.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <signal.h>
#include <unistd.h>

#include "base/file_system.h"
#include "base/subprocess.h"
#include "daemon/seat.h"
#include "daemon/seat_files.h"
#include "journal/ownership_journal.h"
#include "mesh/endpoint.h"
#include "test_runtimes.h"
#include "testing/eventually.h"
#include "testing/managed_space.h"
#include "testing/occurrences.h"
#include "testing/temp_dir.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

namespace json = boost::json;
using shoal::testing::eventually;
using shoal::testing::readText;
using shoal::testing::splitLines;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Bounds for waits that only a failure reaches (a cold 315 MB binary can take seconds to load).
constexpr milliseconds kTurnWait = seconds(120);

std::optional<json::object> parseObject(const std::string& line) {
  boost::system::error_code ec;
  json::value v = json::parse(line, ec);
  if (ec || !v.is_object()) return std::nullopt;
  return v.as_object();
}

std::string stringAt(const json::object& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->value().is_string() ? std::string(it->value().as_string()) : "";
}

using shoal::testing::occurrences;

// What the install script said, shared by the suite's tests (SetUpTestSuite).
shoal::testing::InstalledRuntime& install() {
  static shoal::testing::InstalledRuntime outcome;
  return outcome;
}

// One model request the fake logged.
struct ModelRequest {
  std::string userText;
  std::string threadId;  // the `thread-id` header Codex sends
  int64_t items = 0;     // the length of `input` (the conversation so far)
};

class RealCodexTest : public shoal::testing::ManagedSpaceTest {
 protected:
  static void SetUpTestSuite() {
    ::signal(SIGPIPE, SIG_IGN);  // a runtime that died must fail a write, not kill the test
    install() = shoal::testing::installTestRuntime("--codex", "Codex CLI");
  }

  void SetUp() override {
    if (!install().skip.empty()) GTEST_SKIP() << install().skip;
    ASSERT_TRUE(install().error.empty()) << install().error;
    codex_ = install().binary;
    std::printf("codex: %s (install check %.1f s)\n", codex_.c_str(), install().tookS);
    ManagedSpaceTest::SetUp();
    if (HasFatalFailure()) return;
    auto dir = shoal::testing::TempDir::create("real-codex");
    ASSERT_TRUE(dir.isOk()) << dir.status().toString();
    dir_.emplace(std::move(dir).value());
    FileSystem& fs = FileSystem::posix();
    ASSERT_TRUE(fs.createDirs(dir_->join("home")).isOk());
    ASSERT_TRUE(fs.createDirs(dir_->join("codex-home")).isOk());
    startFakeModel();
    if (HasFatalFailure()) return;
    writeCodexConfig();
    if (HasFatalFailure()) return;
    // The runtime's environment: the seat passes these (profile.env, plus HOME and PATH).
    setEnv("HOME", dir_->join("home"));
    setEnv("CODEX_HOME", dir_->join("codex-home"));
    setEnv("FAKE_API_KEY", "test");
    alice_ = openSender("alice");
    ASSERT_NE(alice_, nullptr);
  }

  void TearDown() override {
    alice_.reset();
    ManagedSpaceTest::TearDown();
    for (auto it = savedEnv_.rbegin(); it != savedEnv_.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
    fake_.reset();  // killOnDestroy
  }

  void setEnv(const std::string& name, const std::string& value) {
    const char* old = std::getenv(name.c_str());
    savedEnv_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    ::setenv(name.c_str(), value.c_str(), 1);
  }

  // Extra options for fake_model.py (a fixture that needs a slow model adds `--delay-s`).
  virtual std::vector<std::string> fakeModelArgs() const { return {}; }

  // Starts the fake model on a free port and reads its port back from the `listening on` line.
  void startFakeModel() {
    fakeLog_ = dir_->join("fake-model.log");
    std::string outPath = dir_->join("fake-model.out");
    std::string errPath = dir_->join("fake-model.err");
    SpawnOptions opts;
    opts.argv = {"python3", std::string(SHOAL_SOURCE_DIR) + "/tests/fakes/fake_model.py",
                 "--port",  "0",
                 "--log",   fakeLog_};
    const std::vector<std::string> extra = fakeModelArgs();
    opts.argv.insert(opts.argv.end(), extra.begin(), extra.end());
    opts.stdoutTarget = StdioTarget::appendTo(outPath);
    opts.stderrTarget = StdioTarget::appendTo(errPath);
    opts.killOnDestroy = true;
    auto child = Subprocess::spawn(opts);
    ASSERT_TRUE(child.isOk()) << child.status().toString();
    fake_.emplace(std::move(child).value());
    const std::string prefix = "listening on 127.0.0.1:";
    bool listening = eventually(
        [&] {
          std::string out = readText(outPath);
          return out.rfind(prefix, 0) == 0 && out.find('\n') != std::string::npos;
        },
        seconds(30), milliseconds(10));
    ASSERT_TRUE(listening) << "the fake model did not start: " << readText(outPath)
                           << readText(errPath);
    fakePort_ = std::atoi(readText(outPath).c_str() + prefix.size());
    ASSERT_GT(fakePort_, 0) << readText(outPath);
  }

  // The offline recipe: the fake as the only provider, no retries (a failure shows at
  // once), no approvals asked, a read-only sandbox, analytics off.
  void writeCodexConfig() {
    const std::string toml =
        "model = \"fake-model\"\n"
        "model_provider = \"fake\"\n"
        "approval_policy = \"never\"\n"
        "sandbox_mode = \"read-only\"\n"
        "check_for_update_on_startup = false\n" +
        (compactPrompt_.empty() ? std::string() : "compact_prompt = \"" + compactPrompt_ + "\"\n") +
        "\n"
        "[model_providers.fake]\n"
        "name = \"Fake local model\"\n"
        "base_url = \"http://127.0.0.1:" +
        std::to_string(fakePort_) +
        "/v1\"\n"
        "wire_api = \"responses\"\n"
        "env_key = \"FAKE_API_KEY\"\n"
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
        "stream_idle_timeout_ms = 15000\n"
        "\n"
        "[analytics]\n"
        "enabled = false\n";
    Status wrote =
        writeFileAtomically(FileSystem::posix(), dir_->join("codex-home/config.toml"), toml);
    ASSERT_TRUE(wrote.isOk()) << wrote.toString();
  }

  SeatProfile profile() {
    SeatProfile p;
    p.name = "Coder";
    p.principal = wire::Principal{"local", "coder"};
    p.runtime = RuntimeKind::kCodex;
    p.command = {codex_, "app-server"};
    p.cwd = dir_->join("coder");
    p.env = {"CODEX_HOME", "FAKE_API_KEY", "HOME"};
    p.lifecycleUid = "abcdefghijklmnopqrstuvwxyz";
    return p;
  }

  std::unique_ptr<Seat> open() {
    SeatOptions so;
    so.url = server_->url();
    so.space = "main";
    so.restartBackoff = milliseconds(200);
    so.stopGrace = milliseconds(5000);
    auto seat = Seat::open(profile(), so);
    EXPECT_TRUE(seat.isOk()) << seat.status().toString();
    return seat.isOk() ? std::move(seat).value() : nullptr;
  }

  std::string send(const std::string& text) {
    auto sent = alice_->sendDirect("local.coder", text);
    EXPECT_TRUE(sent.isOk()) << sent.status().toString();
    return sent.isOk() ? sent->stored.messageId : std::string();
  }

  std::optional<journal::OwnershipRecord> tombstone(const std::string& id) {
    auto view = journal::OwnershipJournal::inspect(FileSystem::posix(),
                                                   daemon::seatFilesDir(profile().cwd));
    if (!view.isOk()) return std::nullopt;
    for (auto& t : view->tombstones)
      if (t.id == id) return t;
    return std::nullopt;
  }

  // The handoff id a surfaced delivery went out under (its receipt is `<handoff id>/<index>`).
  static std::string handoffOf(const journal::OwnershipRecord& r) {
    return r.runtime.receipt.substr(0, r.runtime.receipt.find('/'));
  }

  // The seat's wake events, in order.
  std::vector<json::object> wakes() {
    std::vector<json::object> out;
    for (uint64_t seq = 1;;) {
      auto m = js_->findMessage("WAKE_main", seq, "cotal.main.wake.local.coder");
      if (!m.isOk()) break;
      if (auto o = parseObject(m->data)) out.push_back(std::move(*o));
      seq = m->seq + 1;
    }
    return out;
  }

  std::vector<std::string> wakeKinds() {
    std::vector<std::string> out;
    for (const auto& w : wakes()) {
      out.push_back(stringAt(w, "kind"));
    }
    return out;
  }

  size_t turnsCompleted() {
    auto kinds = wakeKinds();
    return static_cast<size_t>(std::count(kinds.begin(), kinds.end(), "turn-completed"));
  }

  std::vector<ModelRequest> modelRequests() const {
    std::vector<ModelRequest> out;
    for (const auto& line : splitLines(readText(fakeLog_))) {
      auto o = parseObject(line);
      if (!o || stringAt(*o, "path") != "/v1/responses") continue;
      ModelRequest r;
      r.userText = stringAt(*o, "user_text");
      if (auto h = o->find("headers"); h != o->end() && h->value().is_object()) {
        r.threadId = stringAt(h->value().as_object(), "thread-id");
      }
      if (auto n = o->find("items"); n != o->end() && n->value().is_int64()) {
        r.items = n->value().as_int64();
      }
      out.push_back(std::move(r));
    }
    return out;
  }

  // The model requests whose user text holds `mark`.
  std::vector<ModelRequest> requestsWith(const std::string& mark) const {
    std::vector<ModelRequest> out;
    for (auto& r : modelRequests()) {
      if (r.userText.find(mark) != std::string::npos) out.push_back(r);
    }
    return out;
  }

  // The seat's runtime log: codex's stdout transcript and stderr (Seat::runtimeLogPath).
  std::string runtimeLog() const { return readText(dir_->join("coder/.shoal/runtime.log")); }

  // Everything that explains a failure.
  std::string diagnostics(const Seat* seat) const {
    std::string s;
    if (seat) {
      auto snap = seat->snapshot();
      s += "seat: state " + snap.state + ", note: " + snap.note + "\n";
    }
    return s + "runtime.log:\n" + runtimeLog() + "\nfake model log:\n" + readText(fakeLog_);
  }

  // Sends `text`, waits until the seat surfaced `surfacedAfter` deliveries and the fake model
  // answered a request carrying `mark`; returns the delivery's tombstone.
  journal::OwnershipRecord deliver(Seat& seat, const std::string& text, const std::string& mark,
                                   uint64_t surfacedAfter) {
    const std::string id = send(text);
    EXPECT_FALSE(id.empty());
    EXPECT_TRUE(
        eventually([&] { return seat.snapshot().counters.surfaced == surfacedAfter; }, kTurnWait))
        << diagnostics(&seat);
    EXPECT_TRUE(eventually([&] { return !requestsWith(mark).empty(); }, kTurnWait))
        << diagnostics(&seat);
    auto t = tombstone(id);
    EXPECT_TRUE(t.has_value()) << "no tombstone for " << id << "\n" << diagnostics(&seat);
    return t.value_or(journal::OwnershipRecord{});
  }

  std::string codex_;
  std::string compactPrompt_;  // config.toml `compact_prompt` (set before SetUp writes it)
  std::optional<shoal::testing::TempDir> dir_;
  std::string fakeLog_;
  int fakePort_ = 0;
  std::optional<Subprocess> fake_;
  std::vector<std::pair<std::string, std::optional<std::string>>> savedEnv_;
  std::unique_ptr<mesh::Endpoint> alice_;
};

// A DM goes out as turn/start with clientUserMessageId = the handoff id; the real Codex echoes
// it as the userMessage item's clientId, which surfaces the delivery; the DM's text reaches the
// model.
TEST_F(RealCodexTest, DmIsSurfacedOnTheClientIdTheRealCodexEchoes) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  auto t = deliver(*seat, "please look at the build REAL_CODEX_FIRST", "REAL_CODEX_FIRST", 1);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(t.state, journal::OwnerState::kSurfaced) << t.reason;
  const std::string handoff = handoffOf(t);
  ASSERT_FALSE(handoff.empty()) << "no receipt on the tombstone; reason: " << t.reason;
  EXPECT_NE(t.reason.find(handoff), std::string::npos) << t.reason;
  // The runtime log holds codex's stdout: the userMessage item carries our id, on
  // item/started and item/completed.
  EXPECT_GE(occurrences(runtimeLog(), "\"clientId\":\"" + handoff + "\""), 1u)
      << diagnostics(seat.get());
  ASSERT_TRUE(eventually([&] { return turnsCompleted() == 1; }, kTurnWait))
      << diagnostics(seat.get());
  EXPECT_EQ(seat->snapshot().counters.turns, 1u);
  EXPECT_EQ(seat->snapshot().counters.failed, 0u);
  auto requests = requestsWith("REAL_CODEX_FIRST");
  ASSERT_EQ(requests.size(), 1u) << readText(fakeLog_);
  EXPECT_FALSE(requests[0].threadId.empty()) << readText(fakeLog_);
  EXPECT_EQ(requests[0].threadId, t.runtime.sessionId) << "the seat's thread is not Codex's";
}

// A second DM, sent after the first turn completed, is a second turn on the same thread: it is
// surfaced on its own clientId and the model sees the first exchange as history.
TEST_F(RealCodexTest, ASecondDmIsASecondTurnOnTheSameThread) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  auto first = deliver(*seat, "first one REAL_CODEX_ONE", "REAL_CODEX_ONE", 1);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(eventually([&] { return turnsCompleted() == 1; }, kTurnWait))
      << diagnostics(seat.get());

  auto second = deliver(*seat, "second one REAL_CODEX_TWO", "REAL_CODEX_TWO", 2);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(second.state, journal::OwnerState::kSurfaced) << second.reason;
  const std::string handoff = handoffOf(second);
  ASSERT_FALSE(handoff.empty()) << second.reason;
  EXPECT_NE(handoff, handoffOf(first));
  EXPECT_GE(occurrences(runtimeLog(), "\"clientId\":\"" + handoff + "\""), 1u)
      << diagnostics(seat.get());
  ASSERT_TRUE(eventually([&] { return turnsCompleted() == 2; }, kTurnWait))
      << diagnostics(seat.get());
  EXPECT_EQ(seat->snapshot().counters.turns, 2u);

  EXPECT_FALSE(first.runtime.sessionId.empty());
  EXPECT_EQ(second.runtime.sessionId, first.runtime.sessionId);
  auto one = requestsWith("REAL_CODEX_ONE");
  auto two = requestsWith("REAL_CODEX_TWO");
  ASSERT_EQ(one.size(), 1u) << readText(fakeLog_);
  ASSERT_EQ(two.size(), 1u) << readText(fakeLog_);
  EXPECT_EQ(two[0].threadId, one[0].threadId);
  EXPECT_GT(two[0].items, one[0].items) << "the second request carries no history";
  // One Codex process served both turns.
  EXPECT_EQ(seat->snapshot().counters.launches, 1u);
}

// A restarted seat (the Seat destroyed and opened again) resumes its saved thread: the new
// process's turn runs on the same thread id, with the earlier exchange as history, and Codex
// did not refuse the resume.
TEST_F(RealCodexTest, RestartResumesTheSameThread) {
  std::string thread;
  int64_t itemsBefore = 0;
  {
    auto seat = open();
    ASSERT_NE(seat, nullptr);
    auto t = deliver(*seat, "before the restart REAL_CODEX_BEFORE", "REAL_CODEX_BEFORE", 1);
    ASSERT_FALSE(HasFailure());
    ASSERT_TRUE(eventually([&] { return turnsCompleted() == 1; }, kTurnWait))
        << diagnostics(seat.get());
    thread = t.runtime.sessionId;
    ASSERT_FALSE(thread.empty()) << t.reason;
    itemsBefore = requestsWith("REAL_CODEX_BEFORE").at(0).items;
  }
  const size_t logBefore = runtimeLog().size();

  auto seat = open();
  ASSERT_NE(seat, nullptr);
  // Counters continue across seat lives (seat_history.h): the second DM is the second surfaced.
  auto t = deliver(*seat, "after the restart REAL_CODEX_AFTER", "REAL_CODEX_AFTER", 2);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(t.state, journal::OwnerState::kSurfaced) << t.reason;
  EXPECT_EQ(t.runtime.sessionId, thread) << diagnostics(seat.get());
  ASSERT_TRUE(eventually([&] { return turnsCompleted() == 2; }, kTurnWait))
      << diagnostics(seat.get());

  const std::string after = runtimeLog().substr(logBefore);
  // The second process answered thread/resume with the saved thread and ran the turn on it.
  EXPECT_NE(after.find("\"thread\":{\"id\":\"" + thread + "\""), std::string::npos) << after;
  EXPECT_NE(after.find("\"clientId\":\"" + handoffOf(t) + "\""), std::string::npos) << after;
  EXPECT_EQ(after.find("no rollout found"), std::string::npos) << after;
  EXPECT_EQ(after.find("thread not found"), std::string::npos) << after;
  auto kinds = wakeKinds();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "runtime-error"), 0) << after;

  auto requests = requestsWith("REAL_CODEX_AFTER");
  ASSERT_EQ(requests.size(), 1u) << readText(fakeLog_);
  EXPECT_EQ(requests[0].threadId, thread) << readText(fakeLog_);
  EXPECT_GT(requests[0].items, itemsBefore) << "the resumed thread lost its history";
}

// The whole loop through the real binary: the scripted model tells Codex to call the seat's
// `shoal seat compact` on the real Codex: thread/compact/start runs a compact turn (its early
// thread/status/changed idle precedes turn/completed); the seat reports it compacted once, and
// the next DM is a new turn on the same thread whose request carries the compacted history.
TEST_F(RealCodexTest, CompactionCompletesOnceAndTheNextDmSurfaces) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  auto first = deliver(*seat, "before compaction REAL_CODEX_PRE", "REAL_CODEX_PRE", 1);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(eventually([&] { return turnsCompleted() == 1; }, kTurnWait))
      << diagnostics(seat.get());
  ASSERT_TRUE(eventually([&] { return seat->snapshot().state == "running"; }, kTurnWait));
  Status started = seat->compact();
  ASSERT_TRUE(started.isOk()) << started.toString();
  ASSERT_TRUE(
      eventually([&] { return seat->snapshot().compaction.state != "compacting"; }, kTurnWait))
      << diagnostics(seat.get());
  EXPECT_EQ(seat->snapshot().compaction.state, "compacted")
      << seat->snapshot().compaction.detail << "\n"
      << diagnostics(seat.get());
  EXPECT_GE(occurrences(runtimeLog(), "\"type\":\"contextCompaction\""), 1u);
  auto kinds = wakeKinds();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "compacted"), 1);
  auto second = deliver(*seat, "after compaction REAL_CODEX_POST", "REAL_CODEX_POST", 2);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(second.state, journal::OwnerState::kSurfaced) << second.reason;
  EXPECT_EQ(second.runtime.sessionId, first.runtime.sessionId);
  ASSERT_TRUE(eventually([&] { return turnsCompleted() == 2; }, kTurnWait))
      << diagnostics(seat.get());
  EXPECT_EQ(seat->snapshot().counters.launches, 1u);
}

// A compaction the model refuses (HTTP 500 on the compaction prompt): the real Codex reports
// systemError, a terminal error and a failed turn; the seat reports one
// `context_compaction_failed` and the next DM still surfaces on the same process.
TEST_F(RealCodexTest, AFailedCompactionIsReportedAndTheSeatKeepsWorking) {
  compactPrompt_ = "FAKE_MODEL_500 summarize the conversation";
  writeCodexConfig();
  ASSERT_FALSE(HasFailure());
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  deliver(*seat, "before compaction REAL_CODEX_PRE", "REAL_CODEX_PRE", 1);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(eventually([&] { return seat->snapshot().state == "running"; }, kTurnWait));
  ASSERT_TRUE(seat->compact().isOk());
  ASSERT_TRUE(
      eventually([&] { return seat->snapshot().compaction.state != "compacting"; }, kTurnWait))
      << diagnostics(seat.get());
  EXPECT_EQ(seat->snapshot().compaction.state, "failed") << diagnostics(seat.get());
  EXPECT_EQ(seat->snapshot().compaction.detail.rfind("context_compaction_failed: ", 0), 0u)
      << seat->snapshot().compaction.detail;
  auto second = deliver(*seat, "after the failure REAL_CODEX_POST", "REAL_CODEX_POST", 2);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(second.state, journal::OwnerState::kSurfaced) << second.reason;
  auto kinds = wakeKinds();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "compaction-failed"), 1);
  EXPECT_EQ(seat->snapshot().counters.launches, 1u);
}

// `shoal_dm` MCP tool (the driver gives Codex the seat's MCP server with `-c` overrides and the
// bearer token in its environment); the reply is stored on the mesh, and the wake closes
// `replied` because it went to the DM's sender.
TEST_F(RealCodexTest, SeatRepliesThroughItsShoalDmTool) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  const std::string id = send(
      R"(please answer alice: CALL_TOOL shoal_dm {"to":"local.alice","text":"pong from codex"})");
  ASSERT_FALSE(id.empty());
  std::optional<transport::StoredMessage> reply;
  ASSERT_TRUE(eventually(
      [&] {
        auto m = js_->findMessage("DM_main", 1, "cotal.main.inst.local.alice.local.coder");
        if (m.isOk()) reply = *m;
        return reply.has_value();
      },
      kTurnWait))
      << diagnostics(seat.get());
  EXPECT_NE(reply->data.find("pong from codex"), std::string::npos) << reply->data;
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.replied == 1; }, kTurnWait))
      << diagnostics(seat.get());
  EXPECT_EQ(seat->snapshot().counters.failed, 0u);
}

// The fake model answers every request 3 s late (`--delay-s`; fake_model.py has no per-request
// delay for `/v1/responses`), so a turn is still running when a second DM arrives.
class RealCodexSlowModelTest : public RealCodexTest {
 protected:
  std::vector<std::string> fakeModelArgs() const override { return {"--delay-s", "3"}; }

  // The turn Codex ran the userMessage with clientId `handoff` in (its item/started
  // notification); empty if none.
  std::string turnOfUserMessage(const std::string& handoff) const {
    for (const auto& line : splitLines(runtimeLog())) {
      auto o = parseObject(line);
      if (!o || stringAt(*o, "method") != "item/started") continue;
      const auto* params = o->if_contains("params");
      if (params == nullptr || !params->is_object()) continue;
      const auto* item = params->as_object().if_contains("item");
      if (item == nullptr || !item->is_object()) continue;
      if (stringAt(item->as_object(), "clientId") == handoff) {
        return stringAt(params->as_object(), "turnId");
      }
    }
    return "";
  }
};

// A steer mid-turn surfaces (seed 004 §3, busy-turn continuation): a DM arriving while a turn
// runs, after that turn's own handoff was acknowledged, goes into it as turn/steer; the real
// Codex answers with the running turn's id and echoes the DM as a second userMessage of that
// turn; both deliveries are surfaced and the one turn-completed wake names both messages.
TEST_F(RealCodexSlowModelTest, ADmArrivingMidTurnIsSteeredIntoTheRunningTurn) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  const std::string first = send("a long one REAL_CODEX_LONG");
  ASSERT_FALSE(first.empty());
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 1; }, kTurnWait))
      << diagnostics(seat.get());
  // Acknowledged, and the model has not answered yet (it waits 3 s): the turn is running.
  ASSERT_EQ(turnsCompleted(), 0u) << diagnostics(seat.get());
  const std::string second = send("and also REAL_CODEX_STEER");
  ASSERT_FALSE(second.empty());
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 2; }, kTurnWait))
      << diagnostics(seat.get());
  ASSERT_TRUE(eventually([&] { return turnsCompleted() == 1; }, kTurnWait))
      << diagnostics(seat.get());

  auto one = tombstone(first);
  auto two = tombstone(second);
  ASSERT_TRUE(one.has_value() && two.has_value()) << diagnostics(seat.get());
  EXPECT_EQ(one->state, journal::OwnerState::kSurfaced) << one->reason;
  EXPECT_EQ(two->state, journal::OwnerState::kSurfaced) << two->reason;
  const std::string started = handoffOf(*one);
  const std::string steered = handoffOf(*two);
  ASSERT_FALSE(started.empty()) << one->reason;
  ASSERT_FALSE(steered.empty()) << two->reason;
  EXPECT_NE(started, steered);

  // Codex's side: the steered DM is a userMessage of the first DM's turn, and the turn/steer
  // response (`result.turnId`, where turn/start answers `result.turn`) named that turn.
  const std::string turn = turnOfUserMessage(started);
  ASSERT_FALSE(turn.empty()) << diagnostics(seat.get());
  EXPECT_EQ(turnOfUserMessage(steered), turn) << diagnostics(seat.get());
  EXPECT_NE(runtimeLog().find("\"result\":{\"turnId\":\"" + turn + "\"}"), std::string::npos)
      << diagnostics(seat.get());
  EXPECT_EQ(occurrences(runtimeLog(), "\"method\":\"turn/completed\""), 1u)
      << diagnostics(seat.get());
  // The model was asked again with the steered DM as the latest user message.
  EXPECT_FALSE(requestsWith("REAL_CODEX_STEER").empty()) << readText(fakeLog_);

  // One turn, one wake, naming both messages in arrival order.
  std::vector<std::string> named;
  for (const auto& w : wakes()) {
    if (stringAt(w, "kind") != "turn-completed") continue;
    if (const auto* ids = w.if_contains("messages"); ids != nullptr && ids->is_array()) {
      for (const auto& id : ids->as_array()) {
        named.push_back(id.is_string() ? std::string(id.as_string()) : "");
      }
    }
  }
  EXPECT_EQ(named, (std::vector<std::string>{first, second}));
  EXPECT_EQ(seat->snapshot().counters.turns, 1u);
  EXPECT_EQ(seat->snapshot().counters.failed, 0u);
}

// `shoal seat interrupt` on the real Codex: turn/interrupt while the (slow) model has not
// answered; the turn ends `interrupted` at once, the wake fails saying so, and the next DM is a
// new turn on the same thread and process.
TEST_F(RealCodexSlowModelTest, InterruptStopsTheRunningTurn) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  const std::string first = send("a long one REAL_CODEX_STOPME");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 1; }, kTurnWait))
      << diagnostics(seat.get());
  Status asked = seat->interrupt();
  ASSERT_TRUE(asked.isOk()) << asked.toString() << "\n" << diagnostics(seat.get());
  ASSERT_TRUE(eventually(
      [&] {
        auto kinds = wakeKinds();
        return std::count(kinds.begin(), kinds.end(), "wake-failed") == 1;
      },
      kTurnWait))
      << diagnostics(seat.get());
  EXPECT_NE(runtimeLog().find("\"status\":\"interrupted\""), std::string::npos)
      << diagnostics(seat.get());
  EXPECT_EQ(turnsCompleted(), 0u);
  auto t = deliver(*seat, "next one REAL_CODEX_NEXT", "REAL_CODEX_NEXT", 2);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(t.state, journal::OwnerState::kSurfaced) << t.reason;
  ASSERT_TRUE(eventually([&] { return turnsCompleted() == 1; }, kTurnWait))
      << diagnostics(seat.get());
  EXPECT_EQ(t.runtime.sessionId, tombstone(first)->runtime.sessionId);
  EXPECT_EQ(seat->snapshot().counters.launches, 1u);
}

}  // namespace
}  // namespace shoal::daemon
