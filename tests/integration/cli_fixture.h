// CliTest: a GoogleTest fixture that runs the real `shoal` binary as a user would — real
// processes, a real nats-server, files under a private HOME (so tests never share a mesh) —
// with `--space itest` appended to every subcommand. Background runs (`join`, `watch`) are
// terminated in TearDown, then the mesh is brought down.
//
// Header-only and gtest-dependent: include it only from test sources.
#pragma once

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/subprocess.h"
#include "supervisor/mesh_record.h"
#include "supervisor/user_identity.h"
#include "testing/eventually.h"
#include "testing/temp_dir.h"
#include "transport/connection.h"
#include "transport/jetstream.h"
#include "transport/kv.h"
#include "wire/presence.h"

#include <gtest/gtest.h>

namespace shoal {

// A port the kernel just handed out; `shoal up` treats it as preferred and moves on if taken.
inline int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs `opts` (whose stdout and stderr go to `outPath` / `errPath`) to its end, at most
// `bound`; a spawn failure or overrun is a test failure and code -1.
inline CliRun runToEnd(const SpawnOptions& opts, const std::string& outPath,
                       const std::string& errPath, std::chrono::milliseconds bound) {
  CliRun run;
  auto child = Subprocess::spawn(opts);
  if (!child.isOk()) {
    ADD_FAILURE() << child.status().toString();
    return run;
  }
  auto exit = child->wait(bound);
  if (!exit.isOk()) {
    ADD_FAILURE() << opts.argv.front() << " did not finish: " << exit.status().toString();
    (void)child->terminate(std::chrono::seconds(1));
    return run;
  }
  run.code = exit->exited ? exit->code : 128 + exit->signal;
  run.out = FileSystem::posix().readFile(outPath).valueOr("");
  run.err = FileSystem::posix().readFile(errPath).valueOr("");
  return run;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = testing::TempDir::create("cli");
    ASSERT_TRUE(dir.isOk());
    home_.emplace(std::move(dir).value());
    port_ = freePort();
  }

  void TearDown() override {
    for (auto& b : background_)
      (void)b.child.terminate(std::chrono::seconds(5));
    background_.clear();
    // Never leave a mesh behind, whatever the test did.
    (void)shoal({"down"});
  }

  // The argv and environment of one `shoal` run in this test's HOME.
  SpawnOptions shoalSpawn(std::vector<std::string> args, const std::string& outPath,
                          const std::string& errPath) {
    std::vector<std::string> argv = {SHOAL_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    if (args[0] != "--version") {
      // Every subcommand takes --space; it goes before a `--` that starts a runtime command.
      auto end = std::find(argv.begin(), argv.end(), std::string("--"));
      argv.insert(end, {"--space", "itest"});
    }
    argv.insert(argv.begin(), commandPrefix_.begin(), commandPrefix_.end());
    SpawnOptions opts;
    opts.argv = argv;
    opts.env = {{"HOME", home_->path()},
                {"XDG_DATA_HOME", home_->join("data")},
                {"XDG_STATE_HOME", home_->join("state")}};
    opts.unsetEnv = {"SHOAL_MCP_CONFIG"};  // a seat's endpoint is named by arguments only
    opts.stdoutTarget = StdioTarget::appendTo(outPath);
    opts.stderrTarget = StdioTarget::appendTo(errPath);
    return opts;
  }

  // A `shoal` process left running (join, watch); its stdout and stderr go to one file.
  struct Background {
    Subprocess child;
    std::string outPath;
    std::string output() const { return FileSystem::posix().readFile(outPath).valueOr(""); }
  };

  // Starts `shoal <args>` in the background; nullptr (and a test failure) if it cannot start.
  Background* spawnShoal(std::vector<std::string> args) {
    std::string outPath = home_->join("bg" + std::to_string(runs_++));
    auto child = Subprocess::spawn(shoalSpawn(std::move(args), outPath, outPath));
    if (!child.isOk()) {
      ADD_FAILURE() << child.status().toString();
      return nullptr;
    }
    background_.push_back(Background{std::move(child).value(), outPath});
    return &background_.back();
  }

  // Waits until `b`'s output contains `needle`.
  bool outputShows(const Background& b, const std::string& needle,
                   std::chrono::milliseconds timeout = std::chrono::milliseconds(15000)) {
    return testing::eventually([&] { return b.output().find(needle) != std::string::npos; },
                               timeout);
  }

  CliRun shoal(std::vector<std::string> args) {
    return runShoal(std::move(args), std::nullopt, std::chrono::seconds(60));
  }

  // `shoal <args>` with `input` on its stdin (through sh: Subprocess gives /dev/null).
  CliRun shoalWithInput(std::vector<std::string> args, const std::string& input) {
    return runShoal(std::move(args), input, std::chrono::seconds(60));
  }

  // Runs `shoal <args>` to its end (at most `bound`), with `input` on stdin when set.
  CliRun runShoal(std::vector<std::string> args, const std::optional<std::string>& input,
                  std::chrono::milliseconds bound) {
    std::string outPath = home_->join("out" + std::to_string(runs_));
    std::string errPath = home_->join("err" + std::to_string(runs_));
    std::string inPath = home_->join("in" + std::to_string(runs_++));
    SpawnOptions opts = shoalSpawn(std::move(args), outPath, errPath);
    if (input) {
      EXPECT_TRUE(writeFileAtomically(FileSystem::posix(), inPath, *input).isOk());
      std::vector<std::string> argv = {"/bin/sh", "-c",
                                       "exec \"$0\" \"$@\" < \"$SHOAL_TEST_STDIN\""};
      argv.insert(argv.end(), opts.argv.begin(), opts.argv.end());
      opts.argv = argv;
      opts.env.emplace_back("SHOAL_TEST_STDIN", inPath);
    }
    return runToEnd(opts, outPath, errPath, bound);
  }

  // `shoal <args>` exactly as given (no --space added), in this test's HOME.
  CliRun raw(std::vector<std::string> args) {
    std::string out = home_->join("raw-out" + std::to_string(runs_));
    std::string err = home_->join("raw-err" + std::to_string(runs_++));
    SpawnOptions opts = shoalSpawn({"--version"}, out, err);  // env and outputs only
    opts.argv = {SHOAL_BINARY};
    opts.argv.insert(opts.argv.end(), args.begin(), args.end());
    return runToEnd(opts, out, err, std::chrono::seconds(30));
  }

  // A suite registered for both modes (shoal_test_in_both_modes) runs its `.auth` copy with
  // SHOAL_TEST_MODE=auth: the mesh comes up with `--auth` and everyone runs under credentials.
  static bool authMode() {
    const char* mode = std::getenv("SHOAL_TEST_MODE");
    return mode != nullptr && std::string_view(mode) == "auth";
  }
  std::vector<std::string> upArgs() const {
    std::vector<std::string> args = {"up", "--port", std::to_string(port_)};
    if (authMode()) args.push_back("--auth");
    return args;
  }
  CliRun up() { return shoal(upArgs()); }
  // The owner token of this test's person: `local` in open mode, their `u_…` in auth mode.
  std::string owner() const {
    if (!authMode()) return "local";
    auto me = supervisor::ensureUserIdentity(home_->join("state") + "/shoal/secrets");
    EXPECT_TRUE(me.isOk()) << me.status().toString();
    return me.isOk() ? me->owner : "local";
  }
  // For tests that run their own `shoal daemon run` in the foreground.
  CliRun upWithoutDaemon() {
    std::vector<std::string> args = upArgs();
    args.push_back("--no-daemon");
    return shoal(std::move(args));
  }

  std::string recordPath() const { return home_->join("state") + "/shoal/meshes/itest.json"; }

  Result<supervisor::MeshRecord> record() {
    return supervisor::readMeshRecord(FileSystem::posix(), recordPath());
  }

  // `up`, then a connection, JetStream context and the space's presence bucket.
  void upAndConnect() {
    ASSERT_EQ(up().code, 0);
    auto rec = record();
    ASSERT_TRUE(rec.isOk());
    transport::ConnectOptions options;
    options.servers = {rec->url};
    options.nkeySeedFile = rec->secretFile;  // the mesh admits only its owner's secret
    auto conn = transport::Connection::connect(options);
    ASSERT_TRUE(conn.isOk()) << conn.status().toString();
    conn_ = std::move(conn).value();
    auto js = transport::JetStream::create(*conn_);
    ASSERT_TRUE(js.isOk());
    js_.emplace(std::move(js).value());
    auto kv = transport::KeyValue::openBucket(*js_, "cotal_presence_itest");
    ASSERT_TRUE(kv.isOk()) << kv.status().toString();
    presence_.emplace(std::move(kv).value());
  }

  // A peer's presence record under `key`, status working; `cardId` forges a mismatched id.
  void putPresence(const std::string& key, const std::string& name, const std::string& activity,
                   const std::string& cardId = "") {
    wire::Presence p;
    p.card.id = cardId.empty() ? key : cardId;
    p.card.name = name;
    p.status = wire::PresenceStatus::kWorking;
    p.ts = static_cast<double>(Clock::real().wallMs());
    if (!activity.empty()) p.activity = activity;
    auto bytes = wire::encodePresence(p);
    ASSERT_TRUE(bytes.isOk()) << bytes.status().toString();
    ASSERT_TRUE(presence_->put(key, *bytes).isOk());
  }

  std::unique_ptr<transport::Connection> conn_;
  std::optional<transport::JetStream> js_;
  std::optional<transport::KeyValue> presence_;
  std::optional<testing::TempDir> home_;
  // Runs every `shoal` under this command (e.g. `ip netns exec NS`: another host's network).
  std::vector<std::string> commandPrefix_;
  int port_ = 0;
  int runs_ = 0;
  std::deque<Background> background_;  // deque: pointers handed out stay valid
};

}  // namespace shoal
