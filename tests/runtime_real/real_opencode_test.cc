// The real `opencode serve` (pinned by scripts/install-test-runtimes --opencode) behind a seat on
// a real broker, run offline against the scripted fake model (tests/fakes/fake_model.py,
// `POST /v1/chat/completions`) on 127.0.0.1. What the OpenCode driver relies on
// (opencode_driver.h) checked on the real binary: OpenCode stores the daemon-minted messageID
// verbatim as the user message and answers it with an exact-parent assistant, a second prompt
// goes into the same session, a restarted seat resumes its saved session, and the seat's MCP
// server reaches the model as the `shoal_dm` tool. The driver's side of it is described in
// docs/daemon.md, Runtimes.
//
// The suite installs the runtimes once per test process (the script is idempotent and
// serialises parallel installs). Without node/npm the script exits 3 and every test skips,
// saying why.
//
// Each test runs its own fake model (`--port 0`, its `listening on` line read back) and gives
// OpenCode a private HOME and XDG directories, and an OPENCODE_CONFIG file (the fake model as
// the only provider, on that port). The seat passes only the names in profile.env
// (plus PATH and HOME) to the runtime, so the test sets them in its own environment and lists
// them there. OpenCode keeps its sessions in SQLite, $XDG_DATA_HOME/opencode/opencode.db
// (tables `session`, `message` with the id and a JSON `data` column, `part`); the tests read it
// with the sqlite3 CLI when it is installed, and otherwise look for the id in the files under
// that directory (the database and its WAL).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
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

// Bounds for waits that only a failure reaches (the server takes ~2 s to listen and its first
// prompt ~1.5 s more to load providers and plugins).
constexpr milliseconds kTurnWait = seconds(60);

// How the driver logs a prompt in the runtime log (runtime/opencode/server.cc).
constexpr std::string_view kPromptLine = "[shoal] prompt_async ";

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

// `program` as found on PATH, or empty.
std::string onPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    std::string candidate = dir;
    candidate += "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// What the install script said, shared by the suite's tests (SetUpTestSuite).
shoal::testing::InstalledRuntime& install() {
  static shoal::testing::InstalledRuntime outcome;
  return outcome;
}

// One model request the fake logged.
struct ModelRequest {
  std::string userText;  // the last user message's text, or the tool result after it
  int64_t messages = 0;  // the length of `messages` (the conversation so far)
  std::string lastRole;  // the role of the last message ("tool" after a tool call)
};

class RealOpenCodeTest : public shoal::testing::ManagedSpaceTest {
 protected:
  static void SetUpTestSuite() {
    ::signal(SIGPIPE, SIG_IGN);  // a runtime that died must fail a write, not kill the test
    install() = shoal::testing::installTestRuntime("--opencode", "OpenCode");
  }

  void SetUp() override {
    if (!install().skip.empty()) GTEST_SKIP() << install().skip;
    ASSERT_TRUE(install().error.empty()) << install().error;
    opencode_ = install().binary;
    std::printf("opencode: %s (install check %.1f s)\n", opencode_.c_str(), install().tookS);
    ManagedSpaceTest::SetUp();
    if (HasFatalFailure()) return;
    auto dir = shoal::testing::TempDir::create("real-opencode");
    ASSERT_TRUE(dir.isOk()) << dir.status().toString();
    dir_.emplace(std::move(dir).value());
    FileSystem& fs = FileSystem::posix();
    for (const char* sub : {"home", "xdg/data", "xdg/config", "xdg/cache", "xdg/state"}) {
      ASSERT_TRUE(fs.createDirs(dir_->join(sub)).isOk()) << sub;
    }
    startFakeModel();
    if (HasFatalFailure()) return;
    writeOpenCodeConfig();
    if (HasFatalFailure()) return;
    // The runtime's environment: the seat passes these (profile.env, plus HOME and PATH).
    setEnv("HOME", dir_->join("home"));
    setEnv("XDG_DATA_HOME", dir_->join("xdg/data"));
    setEnv("XDG_CONFIG_HOME", dir_->join("xdg/config"));
    setEnv("XDG_CACHE_HOME", dir_->join("xdg/cache"));
    setEnv("XDG_STATE_HOME", dir_->join("xdg/state"));
    setEnv("OPENCODE_CONFIG", dir_->join("opencode.json"));
    setEnv("OPENCODE_DISABLE_MODELS_FETCH", "1");
    setEnv("OPENCODE_DISABLE_SHARE", "1");
    setEnv("OPENCODE_DISABLE_LSP_DOWNLOAD", "1");
    setEnv("OPENCODE_DISABLE_CLAUDE_CODE", "1");
    // OpenCode npm-installs @opencode-ai/plugin into its config dir in the background; an
    // unreachable registry makes that fail quietly (seen on 1.18.33). A seat passes only
    // upper-case names (seat_profile.h), and npm reads npm_config_* case-insensitively.
    setEnv("NPM_CONFIG_REGISTRY", "http://127.0.0.1:9/");
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
    if (HasFailure() && dir_) {
      dir_->keep();  // OpenCode's own log and database explain more than the excerpts
      std::printf("kept %s\n", dir_->path().c_str());
    }
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

  // The offline recipe: the fake as the only provider and model (the small model too, so no
  // side request goes anywhere else), no autoupdate, no sharing. The seat's MCP server comes
  // from the driver (OPENCODE_CONFIG_CONTENT), not from here.
  void writeOpenCodeConfig() {
    json::object model{{"name", "Fake Model"},
                       {"tool_call", true},
                       {"limit", json::object{{"context", 100000}, {"output", 4096}}}};
    json::object fake{
        {"npm", "@ai-sdk/openai-compatible"},
        {"name", "Fake local model"},
        {"options",
         json::object{{"baseURL", "http://127.0.0.1:" + std::to_string(fakePort_) + "/v1"},
                      {"apiKey", "test"}}},
        {"models", json::object{{"fake-model", std::move(model)}}}};
    json::object config{{"$schema", "https://opencode.ai/config.json"},
                        {"provider", json::object{{"fake", std::move(fake)}}},
                        {"model", "fake/fake-model"},
                        {"small_model", "fake/fake-model"},
                        {"autoupdate", false},
                        {"share", "disabled"}};
    if (!autoCompaction_) config["compaction"] = json::object{{"auto", false}};
    Status wrote = writeFileAtomically(FileSystem::posix(), dir_->join("opencode.json"),
                                       json::serialize(config));
    ASSERT_TRUE(wrote.isOk()) << wrote.toString();
  }

  bool autoCompaction_ = true;  // opencode.json `compaction.auto` (rewrite the config to change)

  SeatProfile profile() {
    SeatProfile p;
    p.name = "Coder";
    p.principal = wire::Principal{"local", "coder"};
    p.runtime = RuntimeKind::kOpenCode;
    p.command = {opencode_, "serve"};
    p.cwd = dir_->join("coder");
    p.env = {"HOME",
             "XDG_DATA_HOME",
             "XDG_CONFIG_HOME",
             "XDG_CACHE_HOME",
             "XDG_STATE_HOME",
             "OPENCODE_CONFIG",
             "OPENCODE_DISABLE_MODELS_FETCH",
             "OPENCODE_DISABLE_SHARE",
             "OPENCODE_DISABLE_LSP_DOWNLOAD",
             "OPENCODE_DISABLE_CLAUDE_CODE",
             "NPM_CONFIG_REGISTRY"};
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
    for (auto& t : view->tombstones) {
      if (t.id == id) return t;
    }
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

  size_t wakesOf(const std::string& kind) {
    size_t n = 0;
    for (const auto& w : wakes()) {
      n += stringAt(w, "kind") == kind;
    }
    return n;
  }

  // The `detail` of the newest wake event of `kind` ("" when none has one).
  std::string lastWakeDetail(const std::string& kind) {
    std::string detail;
    for (const auto& w : wakes()) {
      if (stringAt(w, "kind") == kind) detail = stringAt(w, "detail");
    }
    return detail;
  }

  size_t turnsCompleted() { return wakesOf("turn-completed"); }

  // The message ids the turn-completed wakes named, in order.
  std::vector<std::string> completedMessages() {
    std::vector<std::string> out;
    for (const auto& w : wakes()) {
      if (stringAt(w, "kind") != "turn-completed") continue;
      if (const auto* ids = w.if_contains("messages"); ids != nullptr && ids->is_array()) {
        for (const auto& id : ids->as_array()) {
          out.push_back(id.is_string() ? std::string(id.as_string()) : "");
        }
      }
    }
    return out;
  }

  std::vector<ModelRequest> requestsWith(const std::string& mark) const {
    std::vector<ModelRequest> out;
    for (const auto& line : splitLines(readText(fakeLog_))) {
      auto o = parseObject(line);
      if (!o || stringAt(*o, "path") != "/v1/chat/completions") continue;
      ModelRequest r;
      r.userText = stringAt(*o, "user_text");
      if (r.userText.find(mark) == std::string::npos) continue;
      if (auto n = o->find("messages"); n != o->end() && n->value().is_int64()) {
        r.messages = n->value().as_int64();
      }
      if (auto roles = o->find("roles"); roles != o->end() && roles->value().is_array() &&
                                         !roles->value().as_array().empty() &&
                                         roles->value().as_array().back().is_string()) {
        r.lastRole = std::string(roles->value().as_array().back().as_string());
      }
      out.push_back(std::move(r));
    }
    return out;
  }

  // The seat's runtime log: the server's stdout and stderr, and the driver's `[shoal]` lines.
  std::string runtimeLog() const { return readText(dir_->join("coder/.shoal/runtime.log")); }

  // The messageIDs the driver minted, in order, from its `[shoal] prompt_async <id> for handoff
  // <handoff>` lines; with `handoff`, only that handoff's.
  std::vector<std::string> promptIds(const std::string& handoff = "") const {
    std::vector<std::string> out;
    for (const auto& line : splitLines(runtimeLog())) {
      if (line.rfind(kPromptLine, 0) != 0) continue;
      const std::string rest = line.substr(kPromptLine.size());
      const size_t space = rest.find(' ');
      if (space == std::string::npos) continue;
      if (!handoff.empty() && rest.substr(space) != " for handoff " + handoff) continue;
      out.push_back(rest.substr(0, space));
    }
    return out;
  }

  // The messageID of `handoff`'s one prompt, checked for OpenCode's format (msg_ + 12 hex +
  // 14 base62); empty (and a failure) otherwise.
  std::string promptIdFor(const std::string& handoff) const {
    auto ids = promptIds(handoff);
    EXPECT_EQ(ids.size(), 1u) << "prompts for handoff " << handoff << ":\n" << runtimeLog();
    if (ids.size() != 1) return "";
    EXPECT_EQ(ids[0].rfind("msg_", 0), 0u) << ids[0];
    EXPECT_EQ(ids[0].size(), 30u) << ids[0];
    return ids[0];
  }

  std::string dataDir() const { return dir_->join("xdg/data/opencode"); }

  // Rows of `sql` run read-only on OpenCode's database (columns split by '|'), or nullopt when
  // the sqlite3 CLI is not installed. A failed query is a test failure and no rows.
  std::optional<std::vector<std::string>> query(const std::string& sql) {
    static const std::string sqlite3 = onPath("sqlite3");
    if (sqlite3.empty()) return std::nullopt;
    const std::string outPath = dir_->join("sqlite3.out");
    const std::string errPath = dir_->join("sqlite3.err");
    (void)FileSystem::posix().remove(outPath);
    (void)FileSystem::posix().remove(errPath);
    SpawnOptions opts;
    // .timeout: the server may hold a write lock for a moment (readers do not block in WAL mode).
    opts.argv = {sqlite3,     "-readonly",     "-batch",
                 "-noheader", "-separator",    "|",
                 "-cmd",      ".timeout 5000", dataDir() + "/opencode.db",
                 sql};
    opts.stdoutTarget = StdioTarget::appendTo(outPath);
    opts.stderrTarget = StdioTarget::appendTo(errPath);
    opts.killOnDestroy = true;
    auto child = Subprocess::spawn(opts);
    EXPECT_TRUE(child.isOk()) << child.status().toString();
    if (!child.isOk()) return std::vector<std::string>{};
    auto exit = child->wait(seconds(20));
    EXPECT_TRUE(exit.isOk() && exit->success())
        << "sqlite3 " << sql << ": " << (exit.isOk() ? exit->toString() : exit.status().toString())
        << "\n"
        << readText(errPath);
    return splitLines(readText(outPath));
  }

  // The files under OpenCode's data dir holding `needle` (the database, its WAL, …).
  std::vector<std::string> filesHolding(const std::string& needle) const {
    std::vector<std::string> out;
    std::error_code ec;
    for (std::filesystem::recursive_directory_iterator it(dataDir(), ec), end; !ec && it != end;
         it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      if (readText(it->path().string()).find(needle) != std::string::npos) {
        out.push_back(it->path().filename().string());
      }
    }
    return out;
  }

  // OpenCode stored `messageId` — OUR id — as a user message of `session`, and an assistant
  // answering exactly it (parentID = that id). Without the sqlite3 CLI: the id is in its files.
  void expectStoredAsUserMessage(const std::string& messageId, const std::string& session) {
    auto rows = query("SELECT session_id, json_extract(data, '$.role') FROM message WHERE id = '" +
                      messageId + "'");
    if (!rows) {
      EXPECT_FALSE(filesHolding(messageId).empty())
          << messageId << " is in no file under " << dataDir();
      return;
    }
    EXPECT_EQ(*rows, std::vector<std::string>{session + "|user"})
        << "OpenCode's message row for " << messageId;
    auto answers = query(
        "SELECT count(*) FROM message WHERE json_extract(data, '$.role') = 'assistant' AND "
        "json_extract(data, '$.parentID') = '" +
        messageId + "'");
    EXPECT_NE(answers.value_or(std::vector<std::string>{}), std::vector<std::string>{"0"})
        << "no assistant answers " << messageId;
  }

  // Everything that explains a failure.
  std::string diagnostics(const Seat* seat) const {
    std::string s;
    if (seat) {
      auto snap = seat->snapshot();
      s += "seat: state " + snap.state + ", note: " + snap.note + "\n";
    }
    std::string own = readText(dataDir() + "/log/opencode.log");
    if (own.size() > 6000) own = "…" + own.substr(own.size() - 6000);
    return s + "runtime.log:\n" + runtimeLog() + "\nfake model log:\n" + readText(fakeLog_) +
           "\nopencode.log (tail):\n" + own;
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

  std::string opencode_;
  std::optional<shoal::testing::TempDir> dir_;
  std::string fakeLog_;
  int fakePort_ = 0;
  std::optional<Subprocess> fake_;
  std::vector<std::pair<std::string, std::optional<std::string>>> savedEnv_;
  std::unique_ptr<mesh::Endpoint> alice_;
};

// A DM goes out as one prompt_async under a daemon-minted messageID; the real OpenCode stores
// that exact id as the user message and answers it with an assistant whose parentID is that id,
// which surfaces the delivery; the DM's text reaches the model, and the idle after it closes
// the wake `turn-completed`.
TEST_F(RealOpenCodeTest, DmIsSurfacedUnderTheMessageIdTheSeatMinted) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  const std::string id = send("please look at the build REAL_OC_FIRST");
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 1; }, kTurnWait))
      << diagnostics(seat.get());
  auto t = tombstone(id);
  ASSERT_TRUE(t.has_value()) << diagnostics(seat.get());
  EXPECT_EQ(t->state, journal::OwnerState::kSurfaced) << t->reason;
  const std::string handoff = handoffOf(*t);
  ASSERT_FALSE(handoff.empty()) << "no receipt on the tombstone; reason: " << t->reason;
  const std::string messageId = promptIdFor(handoff);
  ASSERT_FALSE(messageId.empty()) << diagnostics(seat.get());
  ASSERT_EQ(t->runtime.sessionId.rfind("ses", 0), 0u) << t->runtime.sessionId;

  ASSERT_TRUE(eventually([&] { return turnsCompleted() == 1; }, kTurnWait))
      << diagnostics(seat.get());
  EXPECT_EQ(completedMessages(), std::vector<std::string>{id});
  EXPECT_EQ(seat->snapshot().counters.turns, 1u);
  EXPECT_EQ(seat->snapshot().counters.failed, 0u);
  expectStoredAsUserMessage(messageId, t->runtime.sessionId);
  // One model request (the session has a title, so no title request): the DM's text.
  auto requests = requestsWith("REAL_OC_FIRST");
  EXPECT_EQ(requests.size(), 1u) << readText(fakeLog_);
}

// A second DM, sent after the first turn completed, is a second prompt into the same session:
// a fresh, later messageID, stored in the session the first one is in, and the model sees the
// first exchange as history. One server serves both.
TEST_F(RealOpenCodeTest, ASecondDmIsASecondPromptInTheSameSession) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  auto first = deliver(*seat, "first one REAL_OC_ONE", "REAL_OC_ONE", 1);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(eventually([&] { return turnsCompleted() == 1; }, kTurnWait))
      << diagnostics(seat.get());

  auto second = deliver(*seat, "second one REAL_OC_TWO", "REAL_OC_TWO", 2);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(second.state, journal::OwnerState::kSurfaced) << second.reason;
  ASSERT_TRUE(eventually([&] { return turnsCompleted() == 2; }, kTurnWait))
      << diagnostics(seat.get());
  EXPECT_EQ(seat->snapshot().counters.turns, 2u);
  EXPECT_EQ(seat->snapshot().counters.launches, 1u);

  const std::string one = promptIdFor(handoffOf(first));
  const std::string two = promptIdFor(handoffOf(second));
  ASSERT_FALSE(one.empty() || two.empty()) << diagnostics(seat.get());
  EXPECT_NE(one, two);
  EXPECT_GT(two, one) << "OpenCode orders messages by id";
  EXPECT_FALSE(first.runtime.sessionId.empty());
  EXPECT_EQ(second.runtime.sessionId, first.runtime.sessionId);
  expectStoredAsUserMessage(one, first.runtime.sessionId);
  expectStoredAsUserMessage(two, first.runtime.sessionId);

  auto before = requestsWith("REAL_OC_ONE");
  auto after = requestsWith("REAL_OC_TWO");
  ASSERT_EQ(before.size(), 1u) << readText(fakeLog_);
  ASSERT_EQ(after.size(), 1u) << readText(fakeLog_);
  EXPECT_GT(after[0].messages, before[0].messages) << "the second request carries no history";
}

// A restarted seat (the Seat destroyed and opened again on the same cwd and HOME) starts a new
// server that finds the saved session (GET /session/:id) and prompts into it: no fresh-session
// fallback, the new DM is stored in the old session after the earlier ones, and the model sees
// the earlier exchanges as history.
TEST_F(RealOpenCodeTest, RestartResumesTheSavedSession) {
  std::string session;
  int64_t messagesBefore = 0;
  std::vector<std::string> earlier;
  {
    auto seat = open();
    ASSERT_NE(seat, nullptr);
    deliver(*seat, "before the restart REAL_OC_BEFORE_1", "REAL_OC_BEFORE_1", 1);
    ASSERT_FALSE(HasFailure());
    ASSERT_TRUE(eventually([&] { return turnsCompleted() == 1; }, kTurnWait))
        << diagnostics(seat.get());
    auto t = deliver(*seat, "still before REAL_OC_BEFORE_2", "REAL_OC_BEFORE_2", 2);
    ASSERT_FALSE(HasFailure());
    ASSERT_TRUE(eventually([&] { return turnsCompleted() == 2; }, kTurnWait))
        << diagnostics(seat.get());
    session = t.runtime.sessionId;
    ASSERT_EQ(session.rfind("ses", 0), 0u) << t.reason;
    messagesBefore = requestsWith("REAL_OC_BEFORE_2").at(0).messages;
    earlier = promptIds();
    ASSERT_EQ(earlier.size(), 2u) << runtimeLog();
  }
  const size_t logBefore = runtimeLog().size();

  auto seat = open();
  ASSERT_NE(seat, nullptr);
  // Counters continue across seat lives (seat_history.h): the third DM is the third surfaced.
  auto t = deliver(*seat, "after the restart REAL_OC_AFTER", "REAL_OC_AFTER", 3);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(t.state, journal::OwnerState::kSurfaced) << t.reason;
  EXPECT_EQ(t.runtime.sessionId, session) << diagnostics(seat.get());
  ASSERT_TRUE(eventually([&] { return turnsCompleted() == 3; }, kTurnWait))
      << diagnostics(seat.get());

  const std::string after = runtimeLog().substr(logBefore);
  EXPECT_EQ(after.find("provider_session_fresh_fallback"), std::string::npos) << after;
  EXPECT_EQ(after.find("[shoal] retiring"), std::string::npos) << after;
  EXPECT_EQ(wakesOf("runtime-error"), 0u) << after;
  const std::string third = promptIdFor(handoffOf(t));
  ASSERT_FALSE(third.empty()) << diagnostics(seat.get());
  EXPECT_GT(third, earlier.back());
  expectStoredAsUserMessage(third, session);
  if (auto users = query("SELECT id FROM message WHERE session_id = '" + session +
                         "' AND json_extract(data, '$.role') = 'user' ORDER BY id")) {
    EXPECT_EQ(*users, (std::vector<std::string>{earlier[0], earlier[1], third}))
        << "the user messages of " << session;
  }

  auto requests = requestsWith("REAL_OC_AFTER");
  ASSERT_EQ(requests.size(), 1u) << readText(fakeLog_);
  EXPECT_GT(requests[0].messages, messagesBefore) << "the resumed session lost its history";
}

// `shoal seat compact` on the real OpenCode: POST /session/:id/summarize with the session's
// model; the fence (HTTP `true`, the auto:false compaction part, its summary assistant,
// session.compacted, the idle after it) completes once, on the same server, and the next DM is
// answered normally — not swallowed by a compaction.
TEST_F(RealOpenCodeTest, SummarizeCompletesThroughTheFenceAndTheNextDmSurfaces) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  deliver(*seat, "before compaction REAL_OC_PRE", "REAL_OC_PRE", 1);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(eventually([&] { return turnsCompleted() == 1; }, kTurnWait))
      << diagnostics(seat.get());
  Status started = seat->compact();
  ASSERT_TRUE(started.isOk()) << started.toString();
  ASSERT_TRUE(
      eventually([&] { return seat->snapshot().compaction.state != "compacting"; }, kTurnWait))
      << diagnostics(seat.get());
  EXPECT_EQ(seat->snapshot().compaction.state, "compacted")
      << seat->snapshot().compaction.detail << "\n"
      << diagnostics(seat.get());
  EXPECT_NE(runtimeLog().find("[shoal] summarize session"), std::string::npos);
  EXPECT_EQ(wakesOf("compacted"), 1u);
  auto t = deliver(*seat, "after compaction REAL_OC_POST", "REAL_OC_POST", 2);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(t.state, journal::OwnerState::kSurfaced) << t.reason;
  ASSERT_TRUE(eventually([&] { return turnsCompleted() == 2; }, kTurnWait))
      << diagnostics(seat.get());
  EXPECT_EQ(seat->snapshot().counters.launches, 1u) << diagnostics(seat.get());
  EXPECT_EQ(runtimeLog().find("[shoal] retiring"), std::string::npos) << runtimeLog();
}

// After a restart the resumed session's model comes from GET /session/:id, so it can be
// compacted before any new prompt. A summary the model refuses (HTTP 400: the conversation it
// summarizes carries the fake model's error marker) fails the compaction as
// `context_compaction_failed` and retires the server; the next server takes the next DM.
TEST_F(RealOpenCodeTest, AResumedSessionCompactsAndARefusedSummaryRetiresTheServer) {
  {
    auto seat = open();
    ASSERT_NE(seat, nullptr);
    deliver(*seat, "first REAL_OC_FIRST", "REAL_OC_FIRST", 1);
    ASSERT_FALSE(HasFailure());
    ASSERT_TRUE(eventually([&] { return turnsCompleted() == 1; }, kTurnWait))
        << diagnostics(seat.get());
  }
  {
    auto seat = open();  // resumes the session; no prompt yet
    ASSERT_NE(seat, nullptr);
    ASSERT_TRUE(eventually([&] { return seat->snapshot().state == "running"; }, kTurnWait))
        << diagnostics(seat.get());
    Status started = seat->compact();
    ASSERT_TRUE(started.isOk()) << started.toString() << "\n" << diagnostics(seat.get());
    ASSERT_TRUE(
        eventually([&] { return seat->snapshot().compaction.state != "compacting"; }, kTurnWait))
        << diagnostics(seat.get());
    EXPECT_EQ(seat->snapshot().compaction.state, "compacted") << diagnostics(seat.get());
  }
  // A DM whose own turn the model refuses: it lands in the conversation the summary reads.
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  ASSERT_TRUE(eventually([&] { return seat->snapshot().state == "running"; }, kTurnWait))
      << diagnostics(seat.get());
  // Counters continue across seat lives (seat_history.h): count this life's launches.
  const uint64_t launchedBefore = seat->snapshot().counters.launches;
  send("poisoned FAKE_MODEL_400 REAL_OC_BAD");
  ASSERT_TRUE(eventually([&] { return wakesOf("wake-failed") == 1; }, kTurnWait))
      << diagnostics(seat.get());
  // That error retired the server; its successor resumes the session.
  ASSERT_TRUE(eventually(
      [&] {
        auto snap = seat->snapshot();
        return snap.counters.launches == launchedBefore + 1 && snap.state == "running";
      },
      kTurnWait))
      << diagnostics(seat.get());
  const uint64_t launches = seat->snapshot().counters.launches;
  Status started = seat->compact();
  ASSERT_TRUE(started.isOk()) << started.toString() << "\n" << diagnostics(seat.get());
  ASSERT_TRUE(
      eventually([&] { return seat->snapshot().compaction.state != "compacting"; }, kTurnWait))
      << diagnostics(seat.get());
  EXPECT_EQ(seat->snapshot().compaction.state, "failed") << diagnostics(seat.get());
  EXPECT_EQ(seat->snapshot().compaction.detail.rfind("context_compaction_failed: ", 0), 0u)
      << seat->snapshot().compaction.detail;
  EXPECT_EQ(wakesOf("compaction-failed"), 1u);
  ASSERT_TRUE(
      eventually([&] { return seat->snapshot().counters.launches == launches + 1; }, kTurnWait))
      << "the server was not replaced\n"
      << diagnostics(seat.get());
}

// With `compaction.auto=false` a provider's context-length refusal is OpenCode's
// ContextOverflowError with two idles (the processor's, then the Runner's after the errored
// assistant): the wake fails `context_overflow` at the second, the server stays, a summarize
// frees the session and the next DM is answered by the same server.
TEST_F(RealOpenCodeTest, AContextOverflowWithAutoCompactionOffKeepsTheServer) {
  autoCompaction_ = false;
  writeOpenCodeConfig();
  ASSERT_FALSE(HasFailure());
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  deliver(*seat, "first REAL_OC_FIRST", "REAL_OC_FIRST", 1);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(eventually([&] { return turnsCompleted() == 1; }, kTurnWait))
      << diagnostics(seat.get());
  send("too big FAKE_MODEL_CONTEXT REAL_OC_BIG");
  ASSERT_TRUE(eventually([&] { return wakesOf("wake-failed") == 1; }, kTurnWait))
      << diagnostics(seat.get());
  const std::string detail = lastWakeDetail("wake-failed");
  EXPECT_EQ(detail.rfind("context_overflow: ContextOverflowError", 0), 0u) << detail;
  EXPECT_EQ(runtimeLog().find("[shoal] retiring"), std::string::npos) << runtimeLog();
  ASSERT_TRUE(eventually([&] { return seat->snapshot().state == "running"; }, kTurnWait));
  ASSERT_TRUE(seat->compact().isOk());
  ASSERT_TRUE(
      eventually([&] { return seat->snapshot().compaction.state != "compacting"; }, kTurnWait))
      << diagnostics(seat.get());
  EXPECT_EQ(seat->snapshot().compaction.state, "compacted") << diagnostics(seat.get());
  deliver(*seat, "smaller now REAL_OC_SMALL", "REAL_OC_SMALL", 3);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(eventually([&] { return turnsCompleted() == 2; }, kTurnWait))
      << diagnostics(seat.get());
  EXPECT_EQ(seat->snapshot().counters.launches, 1u) << diagnostics(seat.get());
}

// The whole loop through the real binary: the scripted model tells OpenCode to call the seat's
// `shoal_dm` MCP tool (the driver adds the seat's MCP server as `mcp.shoal` in
// OPENCODE_CONFIG_CONTENT); the reply is stored on the mesh, and the wake closes `replied`
// because it went to the DM's sender.
TEST_F(RealOpenCodeTest, SeatRepliesThroughItsShoalDmTool) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  const std::string id = send(
      R"(please answer alice: CALL_TOOL shoal_dm {"to":"local.alice","text":"pong from opencode"})");
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
  EXPECT_NE(reply->data.find("pong from opencode"), std::string::npos) << reply->data;

  std::optional<json::object> result;
  ASSERT_TRUE(eventually(
      [&] {
        for (auto& w : wakes()) {
          if (stringAt(w, "kind") == "wake-result" && stringAt(w, "message") == id) result = w;
        }
        return result.has_value();
      },
      kTurnWait))
      << diagnostics(seat.get());
  EXPECT_EQ(stringAt(*result, "result"), "replied") << json::serialize(*result);
  EXPECT_EQ(stringAt(*result, "target"), "peer:local.alice") << json::serialize(*result);
  EXPECT_FALSE(stringAt(*result, "replyId").empty()) << json::serialize(*result);
  // The seat counts a result after storing its wake event.
  EXPECT_TRUE(eventually([&] { return seat->snapshot().counters.replied == 1; }, kTurnWait));
  EXPECT_EQ(seat->snapshot().counters.failed, 0u);
  // The tool's result went back to the model (OpenCode's follow-up request after the call ends
  // with a `tool` message), and that second step closed the turn.
  EXPECT_TRUE(eventually(
      [&] {
        auto all = requestsWith("");
        return std::any_of(all.begin(), all.end(),
                           [](const ModelRequest& r) { return r.lastRole == "tool"; });
      },
      kTurnWait))
      << readText(fakeLog_);
  EXPECT_TRUE(eventually([&] { return turnsCompleted() == 1; }, kTurnWait))
      << diagnostics(seat.get());
}

// The fake model answers 4 s late, so a run is still waiting on it when the seat interrupts.
class RealOpenCodeSlowModelTest : public RealOpenCodeTest {
 protected:
  std::vector<std::string> fakeModelArgs() const override { return {"--delay-s", "4"}; }
};

// `shoal seat interrupt` on the real OpenCode: once the run took the prompt (its exact-parent
// assistant exists), /abort; the turn ends failed `interrupted` at the idle after the aborted
// assistant, the server is replaced (1.18.33 also aborts a run started soon after an abort),
// and the next DM is answered in the same session.
TEST_F(RealOpenCodeSlowModelTest, InterruptAbortsTheRunThenReplacesTheServer) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  send("a long one REAL_OC_STOPME");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 1; }, kTurnWait))
      << diagnostics(seat.get());
  Status asked = seat->interrupt();
  ASSERT_TRUE(asked.isOk()) << asked.toString() << "\n" << diagnostics(seat.get());
  ASSERT_TRUE(eventually([&] { return wakesOf("wake-failed") == 1; }, kTurnWait))
      << diagnostics(seat.get());
  const std::string detail = lastWakeDetail("wake-failed");
  EXPECT_EQ(detail.rfind("interrupted by `shoal seat interrupt`", 0), 0u) << detail;
  ASSERT_TRUE(eventually(
      [&] {
        auto snap = seat->snapshot();
        return snap.counters.launches == 2 && snap.state == "running";
      },
      kTurnWait))
      << diagnostics(seat.get());
  auto t = deliver(*seat, "next one REAL_OC_NEXT", "REAL_OC_NEXT", 2);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(t.state, journal::OwnerState::kSurfaced) << t.reason;
  ASSERT_TRUE(eventually([&] { return turnsCompleted() == 1; }, kTurnWait))
      << diagnostics(seat.get());
  EXPECT_NE(runtimeLog().find("retiring this OpenCode server: interrupted"), std::string::npos)
      << runtimeLog();
}

}  // namespace
}  // namespace shoal::daemon
