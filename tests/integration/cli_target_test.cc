// Which mesh a command reaches, and a seat that opens as soon as it can (issue 17 items 2, 3):
// there is no fallback broker URL, so a command in a home with no mesh refuses instead of
// storing into whatever listens on 4222; two private homes never read each other's mesh; a
// daemon started before the manager plane opens its seats once the manager serves.
#include <boost/json.hpp>

#include "cli_fixture.h"

namespace shoal {
namespace {

namespace json = boost::json;
using testing::eventually;

class CliTargetTest : public CliTest {
 protected:
  // `shoal <args>` in another private home (`other`), as a second user of the machine would.
  CliRun shoalIn(const testing::TempDir& other, std::vector<std::string> args) {
    std::vector<std::string> argv = {SHOAL_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(std::find(argv.begin(), argv.end(), std::string("--")), {"--space", "itest"});
    std::string out = other.join("out" + std::to_string(runs_));
    std::string err = other.join("err" + std::to_string(runs_++));
    SpawnOptions opts;
    opts.argv = argv;
    opts.env = {{"HOME", other.path()},
                {"XDG_DATA_HOME", other.join("data")},
                {"XDG_STATE_HOME", other.join("state")},
                {"XDG_RUNTIME_DIR", other.join("run")}};
    opts.stdoutTarget = StdioTarget::appendTo(out);
    opts.stderrTarget = StdioTarget::appendTo(err);
    return runToEnd(opts, out, err, std::chrono::seconds(60));
  }

  uint64_t dmCount() {
    auto info = js_->streamInfo("DM_itest");
    return info.isOk() ? info->state.msgs : 0;
  }

  static std::string reasonOf(const CliRun& run) {
    boost::system::error_code ec;
    json::value v = json::parse(run.out, ec);
    if (ec || !v.is_object() || !v.as_object().contains("error")) return "(no JSON error)";
    return std::string(v.at("error").at("reason").as_string());
  }
};

// A home with no mesh of its own refuses every broker command with the remedy (`no-mesh`), and
// nothing it sends lands in the other home's mesh; pointed at that mesh explicitly, it is
// refused by the broker; with a mesh of its own, its DMs are stored there and only there.
TEST_F(CliTargetTest, TwoPrivateHomesNeverReadOrWriteEachOthersMesh) {
  ASSERT_NO_FATAL_FAILURE(upAndConnect());
  auto mine = record();
  ASSERT_TRUE(mine.isOk());
  auto otherHome = testing::TempDir::create("other");
  ASSERT_TRUE(otherHome.isOk());
  const uint64_t before = dmCount();

  for (std::vector<std::string> command :
       {std::vector<std::string>{"send", "dm", "local.someone", "hi", "--json"},
        {"endpoints", "--json"},
        {"history", "team.backend", "--json"},
        {"channels", "--json"},
        {"inbox", "--json"},
        {"deliver", "pending", "--json"},
        {"watch", "--json"},
        {"probe", "manager", "--json"}}) {
    CliRun refused = shoalIn(*otherHome, command);
    EXPECT_NE(refused.code, 0) << command[0] << ": " << refused.out;
    if (command[0] == "probe") continue;  // a probe reports a verdict, not an error object
    EXPECT_EQ(reasonOf(refused), "no-mesh") << command[0] << ": " << refused.out << refused.err;
  }
  CliRun status = shoalIn(*otherHome, {"status", "--json"});
  EXPECT_EQ(status.code, 1);
  EXPECT_EQ(reasonOf(status), "mesh-not-up");

  // Naming the first home's broker does not help: it admits only its owner's secret.
  CliRun explicitSend =
      shoalIn(*otherHome, {"send", "dm", "local.someone", "hi", "--server", mine->url, "--json"});
  EXPECT_EQ(explicitSend.code, 1) << explicitSend.out;
  EXPECT_EQ(reasonOf(explicitSend), "broker-auth-refused") << explicitSend.out;
  EXPECT_EQ(dmCount(), before);

  // The second home's own mesh takes its DMs; the first home's stream never sees them.
  ASSERT_EQ(shoalIn(*otherHome, {"up", "--port", std::to_string(freePort())}).code, 0);
  CliRun sent = shoalIn(*otherHome, {"send", "dm", "local.someone", "hi", "--json"});
  EXPECT_EQ(sent.code, 0) << sent.out << sent.err;
  EXPECT_EQ(json::parse(sent.out).at("stream").as_string(), "DM_itest") << sent.out;
  EXPECT_EQ(dmCount(), before);
  (void)shoalIn(*otherHome, {"down"});

  // A stopped mesh is not replaced by a guess either: its commands refuse until `up`.
  ASSERT_EQ(shoal({"down"}).code, 0);
  CliRun afterDown = shoal({"send", "dm", "local.someone", "hi", "--json"});
  EXPECT_EQ(afterDown.code, 1);
  EXPECT_EQ(reasonOf(afterDown), "no-mesh") << afterDown.out;
}

// A daemon that starts before the manager plane cannot open its seats (nobody provisions their
// durables): it says so, names the reason and keeps trying, and the seat opens by itself once
// the manager serves — it never stays `stopped (desired running)`.
TEST_F(CliTargetTest, ADaemonStartedBeforeTheManagerOpensItsSeatsOnceTheManagerServes) {
  ASSERT_EQ(up().code, 0);
  ASSERT_EQ(shoal({"seat", "add", "echo", "--", "/bin/cat"}).code, 0);
  ASSERT_EQ(shoal({"down"}).code, 0);

  // The broker alone; then the daemon, before any manager.
  ASSERT_EQ(shoal({"up", "--port", std::to_string(port_), "--no-planes"}).code, 0);
  Background* daemon = spawnShoal({"daemon", "run"});
  ASSERT_NE(daemon, nullptr);
  ASSERT_TRUE(outputShows(*daemon, "daemon serving space")) << daemon->output();

  json::object row;
  ASSERT_TRUE(eventually(
      [&] {
        CliRun s = shoal({"daemon", "status", "--json"});
        if (s.code != 0) return false;
        row = json::parse(s.out).at("seats").as_array().at(0).as_object();
        return row.contains("openFailure");
      },
      std::chrono::seconds(15)));
  EXPECT_EQ(row.at("openFailure").at("reason").as_string(), "manager-not-serving")
      << json::serialize(row);
  EXPECT_FALSE(row.at("running").as_bool());
  CliRun human = shoal({"daemon", "status"});
  EXPECT_NE(human.out.find("! 1 seat not running:"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("retrying in"), std::string::npos) << human.out;

  // The manager comes; the seat opens without anyone asking.
  Background* planes = spawnShoal({"serve"});
  ASSERT_NE(planes, nullptr);
  ASSERT_TRUE(eventually(
      [&] {
        CliRun s = shoal({"daemon", "status", "--json"});
        return s.code == 0 &&
               json::parse(s.out).at("seats").as_array().at(0).at("running").as_bool();
      },
      std::chrono::seconds(40)))
      << shoal({"daemon", "status"}).out;
  CliRun healthy = shoal({"daemon", "status"});
  EXPECT_EQ(healthy.out.find("not running"), std::string::npos) << healthy.out;
}

}  // namespace
}  // namespace shoal
