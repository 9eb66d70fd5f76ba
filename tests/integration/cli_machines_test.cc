// Seats belong to one machine (issue 19 item 5), through the real binary: two homes on one
// broker stand in for two machines, each with its own seat daemon (`--machine alpha`, `--machine
// beta`), its own profile-sealing key and its own control socket. Each daemon runs only the
// seats of its machine and lists the others as elsewhere; a DM from one home reaches the other
// home's seat; `shoal seat move` hands a seat to the other machine, whose daemon runs it once
// its owner there trusts the profile.
#include <csignal>

#include <boost/json.hpp>

#include "cli_fixture.h"

namespace shoal {
namespace {

namespace json = boost::json;
using std::chrono::seconds;

class CliMachinesTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    auto dir = testing::TempDir::create("cli-b");
    ASSERT_TRUE(dir.isOk());
    homeB_.emplace(std::move(dir).value());
    auto dirC = testing::TempDir::create("cli-c");
    ASSERT_TRUE(dirC.isOk());
    homeC_.emplace(std::move(dirC).value());
  }

  // Runs `f` with machine B's home in place of A's.
  template <class F>
  auto onB(F f) {
    std::swap(home_, homeB_);
    auto out = f();
    std::swap(home_, homeB_);
    return out;
  }

  // The broker URL and the mesh secret, for commands from B's home.
  std::vector<std::string> brokerOfA() {
    auto rec = record();
    EXPECT_TRUE(rec.isOk());
    return {"--server", rec.isOk() ? rec->url : "", "--nkey", rec.isOk() ? rec->secretFile : ""};
  }

  // `seat show <seat> --json` in the current home.
  json::object seatShown(const std::string& seat) {
    CliRun run = shoal({"seat", "show", seat, "--json"});
    boost::system::error_code ec;
    json::value v = json::parse(run.out, ec);
    if (ec || !v.is_object()) return {};
    return v.as_object();
  }

  // The daemon's view of the seat (`seat` in `seat show`): its note and whether it runs here.
  static std::string noteOf(const json::object& shown) {
    const json::value* seat = shown.if_contains("seat");
    const json::value* note =
        seat != nullptr && seat->is_object() ? seat->as_object().if_contains("note") : nullptr;
    return note != nullptr && note->is_string() ? std::string(note->as_string()) : "";
  }
  static bool runningHere(const json::object& shown) {
    const json::value* seat = shown.if_contains("seat");
    return seat != nullptr && seat->is_object() && seat->as_object().at("running").as_bool();
  }

  // The keys of the seat-profile bucket, read as a raw client holding the mesh secret.
  std::vector<std::string> seatKeys() {
    auto rec = record();
    if (!rec.isOk()) return {"no mesh record"};
    transport::ConnectOptions options;
    options.servers = {rec->url};
    options.nkeySeedFile = rec->secretFile;
    auto conn = transport::Connection::connect(options);
    if (!conn.isOk()) return {conn.status().toString()};
    auto js = transport::JetStream::create(**conn);
    auto kv = js.isOk() ? transport::KeyValue::openBucket(*js, "shoal_seats_itest")
                        : Result<transport::KeyValue>(js.status());
    auto keys = kv.isOk() ? kv->keys() : Result<std::vector<std::string>>(kv.status());
    if (!keys.isOk()) return {keys.status().toString()};
    std::sort(keys->begin(), keys->end());
    return *keys;
  }

  std::optional<testing::TempDir> homeB_;
  std::optional<testing::TempDir> homeC_;
};

TEST_F(CliMachinesTest, EachDaemonRunsOnlyItsOwnMachinesSeats) {
  ASSERT_EQ(upWithoutDaemon().code, 0);
  Background* alpha = spawnShoal({"daemon", "run", "--machine", "alpha"});
  ASSERT_NE(alpha, nullptr);
  ASSERT_TRUE(outputShows(*alpha, "daemon serving")) << alpha->output();
  std::vector<std::string> runB = {"daemon", "run", "--machine", "beta"};
  for (auto& a : brokerOfA())
    runB.push_back(a);
  Background* beta = onB([&] { return spawnShoal(runB); });
  ASSERT_NE(beta, nullptr);
  ASSERT_TRUE(outputShows(*beta, "daemon serving")) << beta->output();

  CliRun addA = shoal({"seat", "add", "Ann", "--json", "--", "/bin/cat"});
  ASSERT_EQ(addA.code, 0) << addA.out << addA.err;
  EXPECT_EQ(json::parse(addA.out).at("profile").at("machine").as_string(), "alpha");
  CliRun addB = onB([&] { return shoal({"seat", "add", "Bea", "--json", "--", "/bin/cat"}); });
  ASSERT_EQ(addB.code, 0) << addB.out << addB.err;
  EXPECT_EQ(json::parse(addB.out).at("profile").at("machine").as_string(), "beta");
  // Each daemon writes its records under its own machine's prefix.
  EXPECT_EQ(seatKeys(), (std::vector<std::string>{"alpha.local.ann", "beta.local.bea"}));
  // B cannot add a seat that A keeps, nor change it.
  CliRun twice = onB([&] { return shoal({"seat", "add", "Ann", "--json", "--", "/bin/cat"}); });
  EXPECT_NE(twice.out.find("seat-exists"), std::string::npos) << twice.out << twice.err;
  CliRun stopA = onB([&] { return shoal({"seat", "stop", "Ann", "--json"}); });
  EXPECT_NE(stopA.code, 0);

  // Each daemon sees the other's seat and leaves it alone.
  EXPECT_TRUE(testing::eventually(
      [&] { return noteOf(seatShown("Bea")).find("elsewhere") != std::string::npos; }, seconds(10)))
      << json::serialize(seatShown("Bea"));
  EXPECT_TRUE(testing::eventually(
      [&] {
        return onB([&] { return noteOf(seatShown("Ann")); }).find("elsewhere") != std::string::npos;
      },
      seconds(10)));
  EXPECT_FALSE(runningHere(seatShown("Bea")));

  // A DM from A's home reaches B's seat, run by B's daemon.
  CliRun toBea = shoal({"send", "dm", "Bea", "hello", "beta", "--wait", "surfaced=20"});
  EXPECT_EQ(toBea.code, 0) << toBea.out << toBea.err << beta->output();

  // Moving Ann to beta: alpha lets go at once and hands the profile over unsealed; beta runs it
  // once its owner vouches for it (a profile is code a daemon runs: each machine seals its own).
  CliRun moved = shoal({"seat", "move", "Ann", "--to", "beta", "--json"});
  ASSERT_EQ(moved.code, 0) << moved.out << moved.err;
  EXPECT_NE(moved.out.find("moved to machine beta"), std::string::npos) << moved.out;
  EXPECT_FALSE(runningHere(seatShown("Ann")));
  EXPECT_TRUE(testing::eventually(
      [&] {
        return onB([&] { return noteOf(seatShown("Ann")); }).find("seat trust") !=
               std::string::npos;
      },
      seconds(10)))
      << onB([&] { return json::serialize(seatShown("Ann")); });
  CliRun trusted = onB([&] { return shoal({"seat", "trust", "Ann"}); });
  ASSERT_EQ(trusted.code, 0) << trusted.out << trusted.err;
  CliRun toAnn = shoal({"send", "dm", "Ann", "hello", "on", "beta", "--wait", "surfaced=20"});
  EXPECT_EQ(toAnn.code, 0) << toAnn.out << toAnn.err << beta->output();
  EXPECT_TRUE(runningHere(onB([&] { return seatShown("Ann"); })));
  // beta now keeps Ann under its own prefix, and alpha has removed its offer.
  EXPECT_TRUE(testing::eventually(
      [&] {
        return seatKeys() == std::vector<std::string>{"beta.local.ann", "beta.local.bea"};
      },
      seconds(10)))
      << [&] {
           std::string all;
           for (const auto& k : seatKeys())
             all += k + " ";
           return all;
         }();
  EXPECT_EQ(seatShown("Ann").at("keptBy").as_string(), "beta");

  // A third daemon (another home) under a name already held is refused, naming the holder;
  // the holder's own restart is not (it takes its claim over).
  std::vector<std::string> twin = {"daemon", "run", "--machine", "alpha", "--json"};
  for (auto& a : brokerOfA())
    twin.push_back(a);
  std::swap(home_, homeC_);  // a home of its own: its own socket and sealing key
  CliRun refused = shoal(twin);
  std::swap(home_, homeC_);
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.out.find("machine-in-use"), std::string::npos) << refused.out << refused.err;
  // alpha killed without a chance to release its claim: its own restart takes the name over
  // at once (a crashed daemon's supervisor must not wait out the claim's 30 s).
  ASSERT_TRUE(alpha->child.signal(SIGKILL).isOk());
  (void)alpha->child.terminate(std::chrono::seconds(5));
  Background* alphaAgain = spawnShoal({"daemon", "run", "--machine", "alpha"});
  ASSERT_NE(alphaAgain, nullptr);
  EXPECT_TRUE(outputShows(*alphaAgain, "daemon serving")) << alphaAgain->output();

  // A move from a machine that does not run the seat is refused by name.
  CliRun wrong = shoal({"seat", "move", "Bea", "--to", "alpha", "--json"});
  EXPECT_NE(wrong.code, 0);
  EXPECT_NE(wrong.out.find("seat-elsewhere"), std::string::npos) << wrong.out;
}

}  // namespace
}  // namespace shoal
