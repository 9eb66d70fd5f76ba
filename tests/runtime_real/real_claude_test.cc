// The real Claude Code CLI (pinned by scripts/install-test-runtimes), run offline against the
// scripted fake model (tests/fakes/fake_model.py) on 127.0.0.1. The observed behaviour these tests
// pin down is described in docs/daemon.md, Runtimes.
//
// The suite installs the CLI once per test process (the script is idempotent and serialises
// parallel installs). Without node/npm the script exits 3 and every test skips, saying why.
//
// Each test runs its own fake model (`--port 0`, its `listening on` line read back) and gives
// the runtime a private HOME (the CLI writes ~/.claude*) and the quiet environment, so nothing
// tries to reach the internet.
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <boost/json.hpp>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/ids.h"
#include "base/subprocess.h"
#include "integration/cli_fixture.h"
#include "test_runtimes.h"
#include "testing/eventually.h"
#include "testing/temp_dir.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

namespace json = boost::json;
using shoal::testing::readText;
using shoal::testing::splitLines;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Bounds for waits that only a failure reaches (a cold 245 MB binary can take seconds to load).
constexpr milliseconds kTurnWait = seconds(120);
constexpr milliseconds kExitWait = seconds(60);

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

// A string field of the JSON object a `--json` command printed ("" when absent).
std::string jsonField(const std::string& out, const char* key) {
  boost::system::error_code ec;
  json::value v = json::parse(out, ec);
  return !ec && v.is_object() ? stringAt(v.as_object(), key) : std::string();
}

bool boolAt(const json::object& o, const char* key, bool otherwise) {
  auto it = o.find(key);
  return it != o.end() && it->value().is_bool() ? it->value().as_bool() : otherwise;
}

// The quiet environment (telemetry, updates and other traffic off): only the fake model is ever
// contacted.
std::vector<std::pair<std::string, std::string>> quietEnv(int fakePort) {
  return {{"ANTHROPIC_BASE_URL", "http://127.0.0.1:" + std::to_string(fakePort)},
          {"ANTHROPIC_API_KEY", "test"},
          {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"},
          {"DISABLE_TELEMETRY", "1"},
          {"DISABLE_AUTOUPDATER", "1"},
          {"DISABLE_ERROR_REPORTING", "1"},
          {"ENABLE_TOOL_SEARCH", "false"},
          {"CLAUDE_CODE_MAX_RETRIES", "1"}};
}

// Credentials that must never reach a runtime under test.
std::vector<std::string> unsetCredentials() {
  return {"ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"};
}

// A child with a pipe on its stdin and its stdout read line by line on a thread; stderr is
// appended to a file. It leads its own process group, which the destructor SIGKILLs.
class PipedChild {
 public:
  struct Options {
    std::vector<std::string> argv;
    std::vector<std::string> env;  // the complete environment, "NAME=value"
    std::string cwd;
    std::string stderrPath;
  };

  // nullptr and `*error` set when the child cannot be started.
  static std::unique_ptr<PipedChild> start(const Options& o, std::string* error) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0) {
      *error = "pipe2: " + std::generic_category().message(errno);
      return nullptr;
    }
    if (::pipe2(out, O_CLOEXEC) != 0) {
      *error = "pipe2: " + std::generic_category().message(errno);
      ::close(in[0]);
      ::close(in[1]);
      return nullptr;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, o.stderrPath.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_addchdir_np(&actions, o.cwd.c_str());
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);  // SIGPIPE is ignored in this test process
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(
        &attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    std::vector<char*> argv, envp;
    for (const auto& a : o.argv) {
      argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    for (const auto& e : o.env) {
      envp.push_back(const_cast<char*>(e.c_str()));
    }
    envp.push_back(nullptr);
    pid_t pid = -1;
    int rc = ::posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(in[0]);
    ::close(out[1]);
    if (rc != 0) {
      ::close(in[1]);
      ::close(out[0]);
      *error = "posix_spawn " + o.argv[0] + ": " + std::generic_category().message(rc);
      return nullptr;
    }
    return std::unique_ptr<PipedChild>(new PipedChild(pid, in[1], out[0]));
  }

  ~PipedChild() {
    if (!exit_) {
      ::kill(-pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    } else {
      ::kill(-pid_, SIGKILL);  // stragglers of a leader that already exited
    }
    stop_ = true;
    reader_.join();
    closeStdin();
    ::close(stdout_);
  }

  pid_t pid() const { return pid_; }

  bool writeLine(const std::string& line) {
    std::string bytes = line + "\n";
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(stdin_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  void closeStdin() {
    if (stdin_ >= 0) ::close(stdin_);
    stdin_ = -1;
  }

  // The next stdout line, or nullopt at end of output or after `timeout`.
  std::optional<std::string> nextLine(milliseconds timeout) {
    auto line = lines_.pop(timeout);
    if (!line || *line == kEof) {
      if (line) lines_.push(kEof);  // stays at the end for later calls
      return std::nullopt;
    }
    return line;
  }

  // The exit status once the child exited within `timeout`.
  std::optional<ExitStatus> waitExit(milliseconds timeout) {
    testing::eventually(
        [&] {
          int status = 0;
          if (exit_ || ::waitpid(pid_, &status, WNOHANG) != pid_) return exit_.has_value();
          ExitStatus e;
          e.exited = WIFEXITED(status);
          e.code = e.exited ? WEXITSTATUS(status) : 0;
          e.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
          exit_ = e;
          return true;
        },
        timeout, milliseconds(20));
    return exit_;
  }

  // Peak resident set size so far (VmHWM), in KiB; 0 if unknown.
  long peakRssKib() const {
    std::string status = readText("/proc/" + std::to_string(pid_) + "/status");
    size_t at = status.find("VmHWM:");
    return at == std::string::npos ? 0 : std::atol(status.c_str() + at + 6);
  }

  // Everything the child printed on stdout so far, for failure messages.
  std::string transcript() const {
    std::lock_guard lock(mu_);
    return transcript_;
  }

 private:
  static constexpr const char* kEof = "\x01<eof>";

  PipedChild(pid_t pid, int stdinFd, int stdoutFd)
      : pid_(pid), stdin_(stdinFd), stdout_(stdoutFd), reader_([this] { readLoop(); }) {}

  void readLoop() {
    std::string pending;
    char buf[65536];
    while (!stop_) {
      pollfd p{stdout_, POLLIN, 0};
      int ready = ::poll(&p, 1, 100);
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) continue;
      ssize_t n = ::read(stdout_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      pending.append(buf, static_cast<size_t>(n));
      {
        std::lock_guard lock(mu_);
        transcript_.append(buf, static_cast<size_t>(n));
      }
      for (size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
        lines_.push(pending.substr(0, nl));
        pending.erase(0, nl + 1);
      }
    }
    if (!pending.empty()) lines_.push(pending);
    lines_.push(kEof);
  }

  const pid_t pid_;
  int stdin_;
  const int stdout_;
  std::optional<ExitStatus> exit_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::string transcript_;
  testing::EventQueue<std::string> lines_;
  std::thread reader_;  // last: started after everything it uses
};

// Reads stdout lines until a `type:result` line; every parsed line (the result included) is
// appended to `seen`. nullopt if the output ended or `timeout` passed first.
std::optional<json::object> awaitResult(PipedChild& child, std::vector<json::object>& seen,
                                        milliseconds timeout = kTurnWait) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left =
        std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    auto line = child.nextLine(left);
    if (!line) return std::nullopt;
    auto obj = parseObject(*line);
    if (!obj) continue;  // not JSON: kept in the transcript only
    seen.push_back(*obj);
    if (stringAt(*obj, "type") == "result") return obj;
  }
}

// The stream-json input line for one user message carrying our own uuid.
std::string userLine(const std::string& text, const std::string& uuid) {
  json::object o;
  o["type"] = "user";
  o["message"] = json::object{{"role", "user"}, {"content", text}};
  o["uuid"] = uuid;
  o["session_id"] = "";
  o["parent_tool_use_id"] = nullptr;
  return json::serialize(o);
}

// Position in `seen` of the replay (`type:user`, `isReplay:true`) carrying exactly `uuid`.
std::optional<size_t> replayIndex(const std::vector<json::object>& seen, const std::string& uuid) {
  for (size_t i = 0; i < seen.size(); ++i) {
    if (stringAt(seen[i], "type") == "user" && boolAt(seen[i], "isReplay", false) &&
        stringAt(seen[i], "uuid") == uuid) {
      return i;
    }
  }
  return std::nullopt;
}

// What the install script said, shared by the suite's tests (SetUpTestSuite).
shoal::testing::InstalledRuntime& install() {
  static shoal::testing::InstalledRuntime outcome;
  return outcome;
}

class RealClaudeTest : public CliTest {
 protected:
  static void SetUpTestSuite() {
    ::signal(SIGPIPE, SIG_IGN);  // a runtime that died must fail a write, not kill the test
    install() = shoal::testing::installTestRuntime("--claude", "Claude CLI");
  }

  void SetUp() override {
    CliTest::SetUp();
    if (HasFatalFailure()) return;
    if (!install().skip.empty()) GTEST_SKIP() << install().skip;
    ASSERT_TRUE(install().error.empty()) << install().error;
    claude_ = install().binary;
    std::printf("claude: %s (install check %.1f s)\n", claude_.c_str(), install().tookS);
    FileSystem& fs = FileSystem::posix();
    ASSERT_TRUE(fs.createDirs(home_->join("work")).isOk());
    ASSERT_TRUE(fs.createDirs(home_->join("rt-home")).isOk());
    startFakeModel();
  }

  // Starts the fake model on a free port and reads its port back from the `listening on` line.
  void startFakeModel() {
    fakeLog_ = home_->join("fake-model.log");
    std::string outPath = home_->join("fake-model.out");
    std::string errPath = home_->join("fake-model.err");
    SpawnOptions opts;
    opts.argv = {"python3", std::string(SHOAL_SOURCE_DIR) + "/tests/fakes/fake_model.py",
                 "--port",  "0",
                 "--log",   fakeLog_};
    opts.stdoutTarget = StdioTarget::appendTo(outPath);
    opts.stderrTarget = StdioTarget::appendTo(errPath);
    opts.killOnDestroy = true;
    auto child = Subprocess::spawn(opts);
    ASSERT_TRUE(child.isOk()) << child.status().toString();
    fake_.emplace(std::move(child).value());
    const std::string prefix = "listening on 127.0.0.1:";
    bool listening = testing::eventually(
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

  // The user texts the fake model answered (one per model request, in order).
  std::vector<std::string> fakeModelTexts() const {
    std::vector<std::string> texts;
    for (const auto& line : splitLines(readText(fakeLog_))) {
      auto o = parseObject(line);
      if (o) texts.push_back(stringAt(*o, "user_text"));
    }
    return texts;
  }

  // `shoal daemon run` in the background with the quiet env (the seat's runtime inherits the
  // names it passes with --env); nullptr if it did not come up.
  Background* startQuietDaemon() {
    std::string daemonOut = home_->join("daemon.out");
    SpawnOptions opts = shoalSpawn({"daemon", "run"}, daemonOut, daemonOut);
    for (const auto& kv : quietEnv(fakePort_)) {
      opts.env.push_back(kv);
    }
    opts.unsetEnv = unsetCredentials();
    auto child = Subprocess::spawn(opts);
    if (!child.isOk()) {
      ADD_FAILURE() << child.status().toString();
      return nullptr;
    }
    background_.push_back(Background{std::move(child).value(), daemonOut});
    Background& daemon = background_.back();
    if (!outputShows(daemon, "✓ daemon serving space itest")) {
      ADD_FAILURE() << daemon.output();
      return nullptr;
    }
    return &daemon;
  }

  // `shoal seat add "Claude Real" --runtime claude` running the real CLI in `workdir` (the
  // driver appends the stream-json and MCP flags itself).
  CliRun addClaudeSeat(const std::string& workdir) {
    std::vector<std::string> add = {"seat",   "add",   "Claude Real", "--runtime",
                                    "claude", "--cwd", workdir};
    for (const auto& kv : quietEnv(fakePort_)) {
      add.push_back("--env");
      add.push_back(kv.first);
    }
    add.push_back("--");
    add.push_back(claude_);
    return shoal(add);
  }

  bool fakeModelSaw(const std::string& text) const {
    for (const auto& t : fakeModelTexts()) {
      if (t.find(text) != std::string::npos) return true;
    }
    return false;
  }

  // The real binary in headless stream-json mode, with a private HOME and the quiet env only.
  std::unique_ptr<PipedChild> startClaude() {
    PipedChild::Options o;
    o.argv = {claude_,           "-p",          "--input-format", "stream-json",
              "--output-format", "stream-json", "--verbose",      "--replay-user-messages"};
    const char* path = std::getenv("PATH");
    o.env = {std::string("PATH=") + (path ? path : "/usr/bin:/bin"),
             "HOME=" + home_->join("rt-home")};
    for (const auto& [name, value] : quietEnv(fakePort_)) {
      o.env.push_back(std::string(name).append("=").append(value));
    }
    o.cwd = home_->join("work");
    o.stderrPath = home_->join("claude.stderr");
    std::string error;
    auto child = PipedChild::start(o, &error);
    EXPECT_NE(child, nullptr) << error;
    return child;
  }

  // Runs `shoal <args>` like CliTest::shoal, with a longer bound (`--wait surfaced=90`).
  CliRun shoalLong(std::vector<std::string> args, milliseconds bound) {
    return runShoal(std::move(args), std::nullopt, bound);
  }

  std::string newUuid() {
    auto id = newUuidV7(Clock::real());
    EXPECT_TRUE(id.isOk()) << id.status().toString();
    return id.valueOr("");
  }

  std::string claude_;
  std::string fakeLog_;
  int fakePort_ = 0;
  std::optional<Subprocess> fake_;
};

TEST_F(RealClaudeTest, StreamJsonReplaysOurUuidAndEndsTurnWithResult) {
  const auto started = std::chrono::steady_clock::now();
  auto claude = startClaude();
  ASSERT_NE(claude, nullptr);
  const std::string firstText = "hello one from the stream-json test";
  const std::string secondText = "hello two from the stream-json test";
  const std::string firstUuid = newUuid();
  const std::string secondUuid = newUuid();

  std::vector<json::object> firstTurn;
  ASSERT_TRUE(claude->writeLine(userLine(firstText, firstUuid)));
  auto first = awaitResult(*claude, firstTurn);
  ASSERT_TRUE(first) << "no result for the first message. stdout:\n"
                     << claude->transcript() << "\nstderr:\n"
                     << readText(home_->join("claude.stderr"));
  const double firstResultS =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  auto firstReplay = replayIndex(firstTurn, firstUuid);
  ASSERT_TRUE(firstReplay) << "no replay carrying " << firstUuid << ":\n" << claude->transcript();
  EXPECT_EQ(firstTurn[*firstReplay].at("message").at("content"), json::value(firstText));
  EXPECT_FALSE(boolAt(*first, "is_error", true)) << json::serialize(*first);
  EXPECT_EQ(stringAt(*first, "subtype"), "success");
  EXPECT_NE(stringAt(*first, "result").find(firstText), std::string::npos)
      << json::serialize(*first);

  // The second message is written only after the first turn's result.
  std::vector<json::object> secondTurn;
  ASSERT_TRUE(claude->writeLine(userLine(secondText, secondUuid)));
  auto second = awaitResult(*claude, secondTurn);
  ASSERT_TRUE(second) << "no result for the second message:\n" << claude->transcript();
  auto secondReplay = replayIndex(secondTurn, secondUuid);
  ASSERT_TRUE(secondReplay) << "no replay carrying " << secondUuid << ":\n" << claude->transcript();
  EXPECT_EQ(secondTurn[*secondReplay].at("message").at("content"), json::value(secondText));
  EXPECT_FALSE(replayIndex(secondTurn, firstUuid)) << "the first message was replayed twice";
  EXPECT_FALSE(boolAt(*second, "is_error", true)) << json::serialize(*second);
  EXPECT_NE(stringAt(*second, "result").find(secondText), std::string::npos)
      << json::serialize(*second);

  const long peakRss = claude->peakRssKib();
  claude->closeStdin();
  auto exit = claude->waitExit(kExitWait);
  ASSERT_TRUE(exit) << "the CLI did not exit after stdin closed";
  EXPECT_TRUE(exit->success()) << exit->toString() << "\n"
                               << readText(home_->join("claude.stderr"));
  std::printf("first result after %.2f s; two turns and exit in %.2f s; peak RSS %ld MiB\n",
              firstResultS,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
              peakRss / 1024);

  EXPECT_TRUE(fakeModelSaw(firstText)) << readText(fakeLog_);
  EXPECT_TRUE(fakeModelSaw(secondText)) << readText(fakeLog_);
}

TEST_F(RealClaudeTest, ApiErrorEndsTurnWithIsError) {
  auto claude = startClaude();
  ASSERT_NE(claude, nullptr);
  const std::string uuid = newUuid();
  std::vector<json::object> turn;
  ASSERT_TRUE(claude->writeLine(userLine("FAKE_MODEL_400 please refuse this one", uuid)));
  auto result = awaitResult(*claude, turn);
  ASSERT_TRUE(result) << "no result:\n"
                      << claude->transcript() << "\nstderr:\n"
                      << readText(home_->join("claude.stderr"));
  EXPECT_TRUE(boolAt(*result, "is_error", false)) << json::serialize(*result);
  auto status = result->find("api_error_status");
  ASSERT_NE(status, result->end()) << json::serialize(*result);
  EXPECT_EQ(status->value(), json::value(400)) << json::serialize(*result);
  EXPECT_TRUE(replayIndex(turn, uuid)) << claude->transcript();

  claude->closeStdin();
  auto exit = claude->waitExit(kExitWait);
  ASSERT_TRUE(exit) << "the CLI did not exit after stdin closed";
  EXPECT_TRUE(exit->exited && exit->code != 0) << exit->toString();
  EXPECT_TRUE(fakeModelSaw("FAKE_MODEL_400")) << readText(fakeLog_);
}

TEST_F(RealClaudeTest, SeatSurfacesADmThroughTheRealBinary) {
  ASSERT_EQ(upWithoutDaemon().code, 0);

  // The daemon runs with the quiet env; the seat passes exactly these names to its runtime.
  Background* started = startQuietDaemon();
  ASSERT_NE(started, nullptr);
  Background& daemon = *started;

  const std::string workdir = home_->join("work");
  CliRun added = addClaudeSeat(workdir);
  ASSERT_EQ(added.code, 0) << added.out << added.err << "\ndaemon:\n" << daemon.output();

  const std::string text = "hello from the real test";
  CliRun sent =
      shoalLong({"send", "dm", "Claude Real", text, "--wait", "surfaced=90"}, seconds(120));
  const std::string runtimeLog = workdir + "/.shoal/runtime.log";
  ASSERT_EQ(sent.code, 0) << sent.out << sent.err << "\ndaemon:\n"
                          << daemon.output() << "\nruntime.log:\n"
                          << readText(runtimeLog);
  EXPECT_NE(sent.out.find("surfaced at"), std::string::npos) << sent.out;

  bool answered = testing::eventually(
      [&] {
        return readText(runtimeLog).find("\"type\":\"result\"") != std::string::npos &&
               fakeModelSaw(text);
      },
      seconds(90), milliseconds(50));
  EXPECT_TRUE(answered) << "runtime.log:\n"
                        << readText(runtimeLog) << "\nfake model log:\n"
                        << readText(fakeLog_) << "\ndaemon:\n"
                        << daemon.output();

  // A restarted seat resumes the same Claude session (the agent keeps its context): the next
  // Process is launched with `--resume <id>`, its init carries the same session_id, and the
  // request the model sees holds the earlier turn.
  ASSERT_EQ(shoal({"seat", "stop", "Claude Real"}).code, 0);
  ASSERT_EQ(shoal({"seat", "start", "Claude Real"}).code, 0);
  const std::string again = "second message after a restart";
  CliRun resent =
      shoalLong({"send", "dm", "Claude Real", again, "--wait", "surfaced=90"}, seconds(120));
  ASSERT_EQ(resent.code, 0) << resent.out << resent.err << "\ndaemon:\n"
                            << daemon.output() << "\nruntime.log:\n"
                            << readText(runtimeLog);
  CliRun events = shoal({"seat", "events", "Claude Real"});
  EXPECT_NE(events.out.find("resuming session"), std::string::npos) << events.out;
  EXPECT_EQ(events.out.find("starting a fresh session"), std::string::npos)
      << "the real CLI refused the resume:\n"
      << events.out;
  EXPECT_TRUE(testing::eventually([&] { return fakeModelSaw(again); }, seconds(90)));
}

// The whole loop through the real CLI: a peer DMs the seat; the scripted model tells Claude to
// call the seat's `shoal_dm` MCP tool; the reply reaches the peer through the mesh.
TEST_F(RealClaudeTest, SeatRepliesThroughItsShoalDmTool) {
  ASSERT_EQ(upWithoutDaemon().code, 0);
  Background* started = startQuietDaemon();
  ASSERT_NE(started, nullptr);
  Background& daemon = *started;

  // The peer that will get the reply: an interactive `shoal join` printing what it receives.
  Background* tester = spawnShoal({"join", "--keep-running", "--name", "tester"});
  ASSERT_NE(tester, nullptr);
  ASSERT_TRUE(outputShows(*tester, "✓ joined space itest")) << tester->output();

  const std::string workdir = home_->join("work");
  CliRun added = addClaudeSeat(workdir);
  ASSERT_EQ(added.code, 0) << added.out << added.err << "\ndaemon:\n" << daemon.output();

  const std::string ask =
      R"(please answer tester: CALL_TOOL shoal_dm {"to":"local.tester","text":"pong from claude"})";
  CliRun sent = shoalLong({"send", "dm", "Claude Real", ask, "--wait", "surfaced=90", "--json"},
                          seconds(120));
  const std::string runtimeLog = workdir + "/.shoal/runtime.log";
  ASSERT_EQ(sent.code, 0) << sent.out << sent.err << "\nruntime.log:\n" << readText(runtimeLog);
  EXPECT_TRUE(outputShows(*tester, "pong from claude", seconds(90)))
      << "tester:\n"
      << tester->output() << "\nruntime.log:\n"
      << readText(runtimeLog) << "\nfake model log:\n"
      << readText(fakeLog_) << "\ndaemon:\n"
      << daemon.output();
  // The tool's receipt went back to the model (its next request carried the tool result).
  EXPECT_TRUE(testing::eventually([&] { return fakeModelSaw("sent: stored seq"); }, seconds(60)))
      << readText(fakeLog_);

  // Visible-reply settlement: that DM came from the person at the CLI, and the answer went to
  // tester — so its wake closes without a visible reply. A second DM answered to its sender
  // closes `replied`, naming the reply.
  auto wakeResult = [&](const std::string& messageId) -> std::optional<boost::json::object> {
    CliRun events = shoal({"seat", "events", "Claude Real", "--json", "--limit", "200"});
    boost::system::error_code ec;
    auto v = boost::json::parse(events.out, ec);
    if (ec || !v.is_object() || !v.as_object().contains("events")) return std::nullopt;
    for (const auto& e : v.at("events").as_array()) {
      if (e.at("kind") == "wake-result" && e.at("message") == messageId.c_str())
        return e.as_object();
    }
    return std::nullopt;
  };
  const std::string firstId = jsonField(sent.out, "id");
  const std::string me = jsonField(sent.out, "from");
  ASSERT_FALSE(firstId.empty()) << sent.out;
  std::optional<boost::json::object> first;
  ASSERT_TRUE(
      testing::eventually([&] { return (first = wakeResult(firstId)).has_value(); }, seconds(60)));
  EXPECT_EQ(first->at("result"), "completed_without_visible_reply");

  const std::string answerMe =
      R"(please answer me: CALL_TOOL shoal_dm {"to":")" + me + R"(","text":"pong to you"})";
  CliRun second = shoalLong(
      {"send", "dm", "Claude Real", answerMe, "--wait", "surfaced=90", "--json"}, seconds(120));
  ASSERT_EQ(second.code, 0) << second.out << second.err;
  const std::string secondId = jsonField(second.out, "id");
  std::optional<boost::json::object> replied;
  ASSERT_TRUE(testing::eventually([&] { return (replied = wakeResult(secondId)).has_value(); },
                                  seconds(90)))
      << "runtime.log:\n"
      << readText(runtimeLog) << "\nfake model log:\n"
      << readText(fakeLog_);
  EXPECT_EQ(replied->at("result"), "replied");
  EXPECT_EQ(replied->at("target"), ("peer:" + me).c_str());
  EXPECT_FALSE(replied->at("replyId").as_string().empty());
}

}  // namespace
}  // namespace shoal
