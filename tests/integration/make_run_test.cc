// The README's first command, as a new user runs it (issue 17 item 1): `make run` twice, then
// `make down && make run`, in a private HOME — each exits 0 with both demo seats running — and
// the README's demo ends with `shoal inbox` showing Demo Ada's answer.
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "base/file_system.h"
#include "base/subprocess.h"
#include "cli_fixture.h"
#include "testing/eventually.h"
#include "testing/temp_dir.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

namespace json = boost::json;
using testing::eventually;

class MakeRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // `make run` builds and runs build/apps/shoal; from another build tree (asan, tsan) this
    // test would test another binary than its own.
    if (std::string(SHOAL_BINARY).rfind(std::string(SHOAL_SOURCE_DIR) + "/build/", 0) != 0) {
      GTEST_SKIP() << "make run runs build/apps/shoal, not this tree's " << SHOAL_BINARY;
    }
    auto dir = testing::TempDir::create("make-run");
    ASSERT_TRUE(dir.isOk());
    home_.emplace(std::move(dir).value());
    port_ = freePort();
  }
  void TearDown() override {
    if (home_) (void)run({SHOAL_BINARY, "down"});
  }

  CliRun run(std::vector<std::string> argv) {
    std::string out = home_->join("out" + std::to_string(runs_));
    std::string err = home_->join("err" + std::to_string(runs_++));
    SpawnOptions opts;
    opts.argv = std::move(argv);
    opts.env = {{"HOME", home_->path()},
                {"XDG_DATA_HOME", home_->join("data")},
                {"XDG_STATE_HOME", home_->join("state")},
                {"XDG_RUNTIME_DIR", home_->join("run")},
                {"SHOAL_UP_FLAGS", "--port " + std::to_string(port_)}};
    // A make started by ctest under another make must not join that make's job server.
    opts.unsetEnv = {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"};
    opts.stdoutTarget = StdioTarget::appendTo(out);
    opts.stderrTarget = StdioTarget::appendTo(err);
    return runToEnd(opts, out, err, std::chrono::seconds(240));
  }

  CliRun make(const std::string& target) { return run({"make", "-C", SHOAL_SOURCE_DIR, target}); }

  // Both demo seats report a running runtime.
  bool bothSeatsRunning() {
    CliRun status = run({SHOAL_BINARY, "daemon", "status", "--json"});
    if (status.code != 0) return false;
    boost::system::error_code ec;
    json::value v = json::parse(status.out, ec);
    if (ec) return false;
    int running = 0;
    for (const auto& seat : v.at("seats").as_array()) {
      const std::string name(seat.at("name").as_string());
      if ((name == "Demo Ada" || name == "Demo Grace") && seat.at("running").as_bool()) ++running;
    }
    return running == 2;
  }

  std::optional<testing::TempDir> home_;
  int port_ = 0;
  int runs_ = 0;
};

TEST_F(MakeRunTest, RunTwiceThenDownAndRunAgainLeavesBothDemoSeatsRunning) {
  CliRun first = make("run");
  ASSERT_EQ(first.code, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("added demo seat \"Demo Ada\""), std::string::npos) << first.out;
  ASSERT_TRUE(eventually([&] { return bothSeatsRunning(); }, std::chrono::seconds(30)));

  CliRun second = make("run");
  ASSERT_EQ(second.code, 0) << second.out << second.err;
  EXPECT_NE(second.out.find("already up"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("\"Demo Grace\" already registered"), std::string::npos) << second.out;
  EXPECT_TRUE(bothSeatsRunning());

  ASSERT_EQ(make("down").code, 0);
  CliRun third = make("run");
  ASSERT_EQ(third.code, 0) << third.out << third.err;
  ASSERT_TRUE(eventually([&] { return bothSeatsRunning(); }, std::chrono::seconds(30)))
      << run({SHOAL_BINARY, "daemon", "status"}).out;

  // The README's demo: a DM to Demo Ada, her answer printed, and then in the inbox.
  CliRun sent = run({SHOAL_BINARY, "send", "dm", "Demo Ada", "hello", "--wait", "replied"});
  ASSERT_EQ(sent.code, 0) << sent.out << sent.err;
  const std::string answer = "I read your message \"hello\"";
  EXPECT_NE(sent.out.find(answer), std::string::npos) << sent.out;
  CliRun inbox = run({SHOAL_BINARY, "inbox"});
  ASSERT_EQ(inbox.code, 0) << inbox.err;
  EXPECT_NE(inbox.out.find("Demo Ada (local.demo_ada)"), std::string::npos) << inbox.out;
  EXPECT_NE(inbox.out.find(answer), std::string::npos) << inbox.out;
  EXPECT_NE(inbox.out.find("1 unread"), std::string::npos) << inbox.out;
}

}  // namespace
}  // namespace shoal
