// The local mesh admits only its owner (issue 17 item 0): another local account — uid
// `nobody`, with no credential — is refused by the broker and can read none of the mesh's
// files; a seat profile written into the profile bucket any other way than through the owner's
// daemon is never executed. The attacks run as that account would run them: a raw NATS client
// over TCP and plain open() calls (tests/integration/intruder.cc), and a raw KV write.
#include <fstream>

#include <boost/json.hpp>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_fixture.h"

namespace shoal {
namespace {

namespace json = boost::json;
using testing::eventually;

class CliSecurityTest : public CliTest {
 protected:
  // Why the test cannot act as another account here, or empty.
  static std::string whyNoOtherAccount() {
    if (::geteuid() != 0) return "needs root to run commands as uid nobody (setpriv)";
    if (::access("/usr/bin/setpriv", X_OK) != 0) return "needs /usr/bin/setpriv (util-linux)";
    if (::getpwnam("nobody") == nullptr) return "needs a `nobody` account";
    return "";
  }

  // Runs `argv` as uid nobody (no groups) with the victim's HOME and XDG dirs in its
  // environment, as an intruder who knows where the files are would.
  CliRun asNobody(std::vector<std::string> argv) {
    std::vector<std::string> full = {"/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup",
                                     "--clear-groups", "--"};
    full.insert(full.end(), argv.begin(), argv.end());
    std::string out = home_->join("nobody-out" + std::to_string(runs_));
    std::string err = home_->join("nobody-err" + std::to_string(runs_++));
    SpawnOptions opts;
    opts.argv = full;
    opts.env = {{"HOME", home_->path()},
                {"XDG_DATA_HOME", home_->join("data")},
                {"XDG_STATE_HOME", home_->join("state")}};
    opts.stdoutTarget = StdioTarget::appendTo(out);
    opts.stderrTarget = StdioTarget::appendTo(err);
    return runToEnd(opts, out, err, std::chrono::seconds(30));
  }

  // The test's HOME as a real home often is (world-traversable), so only Shoal's own
  // directories can keep the intruder out; the output files nobody writes are its own.
  void openHome() {
    ASSERT_EQ(::chmod(home_->path().c_str(), 0755), 0);
    for (int i = 0; i < 8; ++i) {
      for (const char* kind : {"nobody-out", "nobody-err"}) {
        std::string path = home_->join(kind + std::to_string(i));
        std::ofstream(path).close();
        ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
      }
    }
  }
};

// Another account reaches the broker's port but the broker refuses it (no secret), through a
// raw client and through `shoal` itself; and none of the mesh's files opens for it.
TEST_F(CliSecurityTest, AnotherLocalAccountIsRefusedAndReadsNothing) {
  if (auto why = whyNoOtherAccount(); !why.empty()) GTEST_SKIP() << why;
  ASSERT_NO_FATAL_FAILURE(openHome());
  ASSERT_NO_FATAL_FAILURE(upAndConnect());  // the owner connects with the secret
  auto rec = record();
  ASSERT_TRUE(rec.isOk());
  ASSERT_EQ(shoal({"seat", "add", "echo", "--", "/bin/cat"}).code, 0);

  CliRun raw = asNobody({INTRUDER_BINARY, "nats", "127.0.0.1", std::to_string(rec->port)});
  EXPECT_EQ(raw.code, 3) << raw.out << raw.err;
  EXPECT_NE(raw.out.find("Authorization Violation"), std::string::npos) << raw.out;

  CliRun status =
      asNobody({SHOAL_BINARY, "status", "--space", "itest", "--server", rec->url, "--json"});
  EXPECT_EQ(status.code, 1) << status.out << status.err;
  json::value v = json::parse(status.out);
  EXPECT_EQ(v.at("error").at("reason").as_string(), "broker-auth-refused") << status.out;

  CliRun send = asNobody({SHOAL_BINARY, "send", "dm", "echo", "hi", "--space", "itest", "--json"});
  EXPECT_EQ(send.code, 1) << send.out << send.err;
  EXPECT_FALSE(json::parse(send.out).at("ok").as_bool()) << send.out;

  const std::string data = home_->join("data") + "/shoal";
  const std::string state = home_->join("state") + "/shoal";
  CliRun files = asNobody({INTRUDER_BINARY, "read", rec->secretFile, recordPath(), rec->storeDir,
                           state + "/logs", state + "/meshes", state + "/secrets", data,
                           data + "/itest/seats/local.echo"});
  EXPECT_EQ(files.code, 0) << files.out << files.err;
  EXPECT_EQ(files.out.find("readable"), std::string::npos) << files.out;
  EXPECT_NE(files.out.find("EACCES"), std::string::npos) << files.out;
}

// A profile put into the bucket by anything but the owner's daemon — bare (unsealed), or a
// sealed one whose command was changed (forged) — is refused with its reason at the daemon's
// next start and never executed; `seat start` cannot run it either. Only the owner's
// `seat trust`, after seeing the command, makes the daemon run it.
TEST_F(CliSecurityTest, AProfileWrittenBehindTheDaemonsBackIsNeverExecuted) {
  ASSERT_NO_FATAL_FAILURE(upAndConnect());
  ASSERT_EQ(shoal({"seat", "add", "echo", "--", "/bin/cat"}).code, 0);
  auto kv = transport::KeyValue::openBucket(*js_, "shoal_seats_itest");
  ASSERT_TRUE(kv.isOk()) << kv.status().toString();

  const std::string unsealedMark = home_->join("pwned-unsealed");
  const std::string forgedMark = home_->join("pwned-forged");
  json::object injected{
      {"name", "mallory"},    {"id", "local.mallory"},
      {"runtime", "exec"},    {"command", json::array{"/bin/sh", "-c", "touch " + unsealedMark}},
      {"cwd", home_->path()}, {"channels", json::array{}},
      {"env", json::array{}}, {"lifecycleUid", "abcdefghijklmnopqrstuvwxyz"},
      {"state", "running"}};
  // Written under this machine's prefix, where the daemon keeps its own records.
  CliRun daemon = shoal({"daemon", "status", "--json"});
  ASSERT_EQ(daemon.code, 0) << daemon.err;
  const std::string prefix = std::string(json::parse(daemon.out).at("machine").as_string()) + ".";
  ASSERT_TRUE(kv->put(prefix + "local.mallory", json::serialize(injected)).isOk());
  auto echo = kv->get(prefix + "local.echo");
  ASSERT_TRUE(echo.isOk());
  std::string forged = echo->value;
  const std::string cat = R"(["/bin/cat"])";
  ASSERT_NE(forged.find(cat), std::string::npos) << forged;
  forged.replace(forged.find(cat), cat.size(), R"(["/bin/sh","-c","touch )" + forgedMark + R"("])");
  ASSERT_TRUE(kv->put(prefix + "local.echo", forged).isOk());

  // The daemon's next start reads both.
  ASSERT_EQ(shoal({"down"}).code, 0);
  ASSERT_EQ(up().code, 0);
  CliRun list = shoal({"seat", "list", "--json"});
  ASSERT_EQ(list.code, 0) << list.err;
  std::map<std::string, std::string> seals;
  const json::value listed = json::parse(list.out);
  for (const auto& row : listed.at("seats").as_array())
    seals[std::string(row.at("profile").at("id").as_string())] =
        std::string(row.at("seal").as_string());
  EXPECT_EQ(seals["local.mallory"], "unsealed");
  EXPECT_EQ(seals["local.echo"], "forged");

  CliRun status = shoal({"daemon", "status", "--json"});
  ASSERT_EQ(status.code, 0) << status.err;
  std::map<std::string, std::string> notes;
  const json::value statusJson = json::parse(status.out);
  for (const auto& row : statusJson.at("seats").as_array()) {
    EXPECT_FALSE(row.at("running").as_bool()) << json::serialize(row);
    notes[std::string(row.at("id").as_string())] = std::string(row.at("note").as_string());
  }
  EXPECT_NE(notes["local.mallory"].find("unsealed-profile"), std::string::npos);
  EXPECT_NE(notes["local.echo"].find("forged-profile"), std::string::npos);
  CliRun human = shoal({"status"});
  EXPECT_NE(human.out.find("! 2 seats not running:"), std::string::npos) << human.out;

  CliRun start = shoal({"seat", "start", "mallory", "--json"});
  EXPECT_EQ(start.code, 1);
  EXPECT_EQ(json::parse(start.out).at("error").at("reason").as_string(), "unsealed-profile");
  CliRun show = shoal({"seat", "show", "mallory"});
  EXPECT_NE(show.out.find("touch " + unsealedMark), std::string::npos) << show.out;

  // Neither command ran.
  EXPECT_FALSE(eventually([&] { return FileSystem::posix().exists(unsealedMark); },
                          std::chrono::seconds(3)));
  EXPECT_FALSE(FileSystem::posix().exists(forgedMark));

  // The owner vouches for one after reading it: now, and only now, it runs.
  CliRun trust = shoal({"seat", "trust", "echo", "--json"});
  ASSERT_EQ(trust.code, 0) << trust.out << trust.err;
  EXPECT_EQ(json::parse(trust.out).at("seal").as_string(), "sealed");
  EXPECT_TRUE(
      eventually([&] { return FileSystem::posix().exists(forgedMark); }, std::chrono::seconds(10)));
  EXPECT_FALSE(FileSystem::posix().exists(unsealedMark));
}

}  // namespace
}  // namespace shoal
