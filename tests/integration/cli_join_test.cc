// A second machine joins a space in auth mode (issue 19 item 6), through the real binary: two
// homes on one loopback stand in for two machines. Home A runs `shoal up --auth --tls` (a broker
// requiring TLS with the space's own CA) and `shoal invite`; home B runs `shoal daemon join
// <link>` and `shoal daemon run`, adds a seat, and a DM from A surfaces in it. Around that, the
// refusals a careless or hostile joiner meets: a link naming another CA, a second use, a
// revoked machine, an invite from a plaintext broker.
#include <cstdlib>

#include <boost/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "cli_fixture.h"
#include "mesh/credential_rail.h"
#include "transport/creds_file.h"
#include "transport/nkey.h"

namespace shoal {
namespace {

namespace json = boost::json;
using std::chrono::seconds;

class CliJoinTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    auto dir = testing::TempDir::create("cli-join-b");
    ASSERT_TRUE(dir.isOk());
    homeB_.emplace(std::move(dir).value());
  }

  template <class F>
  auto onB(F f) {
    std::swap(home_, homeB_);
    auto out = f();
    std::swap(home_, homeB_);
    return out;
  }

  std::string port() { return std::to_string(port_); }
  std::string joinedDirOfB() { return homeB_->join("state") + "/shoal/secrets/itest-joined"; }
  std::string logsOfA() {
    std::string all;
    for (const char* log : {"broker", "supervisor", "planes"}) {
      all += FileSystem::posix()
                 .readFile(home_->join("state") + "/shoal/logs/itest-" + log + ".log")
                 .valueOr("");
    }
    return all;
  }

  static mode_t modeOf(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 0777) : 0;
  }

  // `shoal invite --json` on A: the link.
  std::string invite(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"invite", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    CliRun run = shoal(args);
    EXPECT_EQ(run.code, 0) << run.out << run.err;
    boost::system::error_code ec;
    json::value v = json::parse(run.out, ec);
    return !ec && v.is_object() ? std::string(v.at("link").as_string()) : std::string();
  }

  // A raw client holding the daemon credential in `credsFile`, over TLS with `caFile`.
  std::unique_ptr<transport::Connection> asDaemon(const std::string& credsFile,
                                                  const std::string& caFile) {
    auto creds = transport::readCredsFile(FileSystem::posix(), credsFile);
    EXPECT_TRUE(creds.isOk()) << creds.status().toString();
    if (!creds.isOk()) return nullptr;
    transport::ConnectOptions options;
    options.servers = {"tls://127.0.0.1:" + port()};
    options.tlsCaFile = caFile;
    options.credentialsFile = creds->path;
    options.inboxPrefix = creds->inboxPrefix;
    options.allowReconnect = false;
    auto conn = transport::Connection::connect(options);
    EXPECT_TRUE(conn.isOk()) << conn.status().toString();
    return conn.isOk() ? std::move(conn).value() : nullptr;
  }

  std::optional<testing::TempDir> homeB_;
};

// In auth mode a machine's daemon credential writes only that machine's seat records
// (`<machine>.<owner>.<actor>`): from a raw client holding B's, a write under A's prefix is
// refused by the broker; and a record B writes under its own prefix claiming A's seat makes
// the manager refuse that seat's credential to both machines (`seat-on-two-machines`), so a
// machine cannot take over another's seat, nor run it twice.
TEST_F(CliJoinTest, AJoinedMachineWritesOnlyItsOwnSeatRecords) {
  CliRun up = shoal({"up", "--auth", "--tls", "--port", port(), "--json"});
  ASSERT_EQ(up.code, 0) << up.out << up.err;
  CliRun added = shoal({"seat", "add", "Ann", "--json", "--", "/bin/cat"});
  ASSERT_EQ(added.code, 0) << added.out << added.err;
  json::object ann = json::parse(added.out).at("profile").as_object();
  const std::string annId(ann.at("id").as_string());
  const std::string alpha(ann.at("machine").as_string());
  const std::string owner = annId.substr(0, annId.find('.'));
  const std::string link = invite({"--machine", "beta"});
  CliRun joined = onB([&] { return shoal({"daemon", "join", link, "--json"}); });
  ASSERT_EQ(joined.code, 0) << joined.out << joined.err << logsOfA();

  auto b = asDaemon(joinedDirOfB() + "/daemon.creds", joinedDirOfB() + "/ca.pem");
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(b->publish("$KV.shoal_seats_itest." + alpha + "." + annId, "{}").isOk());
  ASSERT_TRUE(b->flush(seconds(5)).isOk());
  EXPECT_TRUE(testing::eventually([&] { return b->stats().permissionViolations > 0; }, seconds(2)))
      << "B's daemon credential wrote a record under A's prefix";

  // Under its own prefix B may write: a copy of Ann's profile naming beta.
  auto js = transport::JetStream::create(*b);
  ASSERT_TRUE(js.isOk());
  auto kv = transport::KeyValue::openBucket(*js, "shoal_seats_itest");
  ASSERT_TRUE(kv.isOk()) << kv.status().toString();
  json::object claim = ann;
  claim["machine"] = "beta";
  ASSERT_TRUE(kv->put("beta." + annId, json::serialize(claim)).isOk());

  mesh::IssueRequest request;
  request.principal = wire::Principal{owner, "ann"};
  request.lifecycleUid = std::string(ann.at("lifecycleUid").as_string());
  request.connId = "ibxjointest0000000001";
  request.userKey = transport::generateNKey(transport::NKeyRole::kUser)->publicKey;
  auto toB = mesh::requestSeatCredential(*b, "itest", owner, "beta", request, seconds(5));
  ASSERT_FALSE(toB.isOk());
  EXPECT_EQ(toB.status().reason(), "seat-on-two-machines") << toB.status().toString();
  const std::string secrets = home_->join("state") + "/shoal/secrets";
  auto a = asDaemon(secrets + "/itest-daemon.creds", secrets + "/itest-tls/ca.pem");
  ASSERT_NE(a, nullptr);
  auto toA = mesh::requestSeatCredential(*a, "itest", owner, alpha, request, seconds(5));
  ASSERT_FALSE(toA.isOk());
  EXPECT_EQ(toA.status().reason(), "seat-on-two-machines") << toA.status().toString();
}

TEST_F(CliJoinTest, AMachineJoinsByInviteAndItsSeatAnswersTheSpace) {
  CliRun up = shoal({"up", "--auth", "--tls", "--port", port(), "--no-daemon", "--json"});
  ASSERT_EQ(up.code, 0) << up.out << up.err;
  EXPECT_NE(up.out.find("tls://127.0.0.1"), std::string::npos) << up.out;
  const std::string link = invite({"--machine", "beta"});
  ASSERT_EQ(link.rfind("cotals://127.0.0.1:" + port() + "/itest?", 0), 0u) << link;
  const std::string seed = link.substr(link.find("&seed=") + 6);

  // A link whose CA fingerprint is not the broker's CA is refused before anything is sent.
  std::string forged = link;
  const size_t ca = forged.find("&ca=") + 4;
  forged.replace(ca, 64, std::string(64, forged[ca] == '0' ? '1' : '0'));
  CliRun mismatch = onB([&] { return shoal({"daemon", "join", forged, "--json"}); });
  EXPECT_NE(mismatch.code, 0);
  EXPECT_NE(mismatch.out.find("ca-mismatch"), std::string::npos) << mismatch.out << mismatch.err;

  CliRun joined = onB([&] { return shoal({"daemon", "join", link, "--json"}); });
  ASSERT_EQ(joined.code, 0) << joined.out << joined.err << logsOfA();
  json::value j = json::parse(joined.out);
  EXPECT_EQ(j.at("machine").as_string(), "beta");
  EXPECT_EQ(modeOf(joinedDirOfB()), 0700u);
  EXPECT_EQ(modeOf(joinedDirOfB() + "/daemon.creds"), 0600u);
  EXPECT_FALSE(FileSystem::posix().exists(joinedDirOfB() + "/bootstrap.creds"))
      << "the bootstrap credential exists only for the exchange";

  // One use: the same link again, from another key, is refused by the manager.
  CliRun again = onB([&] { return shoal({"daemon", "join", link, "--json"}); });
  EXPECT_NE(again.code, 0);
  EXPECT_NE(again.out.find("invite-used"), std::string::npos) << again.out << again.err;

  Background* beta = onB([&] { return spawnShoal({"daemon", "run"}); });
  ASSERT_NE(beta, nullptr);
  ASSERT_TRUE(outputShows(*beta, "daemon serving")) << beta->output();
  EXPECT_NE(beta->output().find("tls://127.0.0.1"), std::string::npos) << beta->output();
  CliRun add = onB([&] { return shoal({"seat", "add", "Bea", "--json", "--", "/bin/cat"}); });
  ASSERT_EQ(add.code, 0) << add.out << add.err;
  json::value profile = json::parse(add.out).at("profile");
  EXPECT_EQ(profile.at("machine").as_string(), "beta");
  const std::string bea(profile.at("id").as_string());
  EXPECT_EQ(bea.substr(0, 2), "u_") << "B's seats belong to the owner who invited it";

  CliRun dm = shoal({"send", "dm", bea, "hello", "beta", "--wait", "surfaced=20"});
  EXPECT_EQ(dm.code, 0) << dm.out << dm.err << beta->output() << logsOfA();

  // The person on B sends too: B's daemon credential asks the manager for the person's own
  // command credential (the agent profile of the inviting owner's person, 15 minutes).
  CliRun fromB = onB([&] {
    return shoal({"send", "dm", bea, "hello", "from", "beta's", "person", "--wait", "surfaced=20"});
  });
  EXPECT_EQ(fromB.code, 0) << fromB.out << fromB.err << beta->output() << logsOfA();
  EXPECT_EQ(modeOf(joinedDirOfB() + "/cli.creds"), 0600u);
  auto personCreds = transport::readCredsFile(FileSystem::posix(), joinedDirOfB() + "/cli.creds");
  ASSERT_TRUE(personCreds.isOk()) << personCreds.status().toString();
  EXPECT_EQ(personCreds->name.substr(0, bea.find('.') + 1), bea.substr(0, bea.find('.') + 1))
      << personCreds->name << ": the inviting owner's person";

  // `shoal status` on B reports the joined broker, asked under the person's credential there.
  CliRun status = onB([&] { return shoal({"status", "--json"}); });
  EXPECT_EQ(status.code, 0) << status.out << status.err;
  json::value st = json::parse(status.out);
  EXPECT_EQ(st.at("mode").as_string(), "auth") << status.out;
  EXPECT_EQ(st.at("joined").at("machine").as_string(), "beta") << status.out;
  EXPECT_TRUE(st.at("local").is_null()) << status.out;
  EXPECT_EQ(st.at("principal").as_string(), personCreds->name) << status.out;
  EXPECT_EQ(st.at("credentialExpiresAt").as_int64(), personCreds->expiresAt) << status.out;
  EXPECT_EQ(st.at("planes").at(0).at("responder").as_string(), "bound") << status.out;
  EXPECT_TRUE(st.at("daemon").as_object().contains("seats"))
      << "B's daemon answers: " << status.out;

  // The person's own mail reads on B too: the manager issues their mail reader to B's daemon.
  const std::string person(st.at("principal").as_string());
  ASSERT_EQ(shoal({"send", "dm", person, "a", "note", "for", "beta"}).code, 0);
  CliRun inbox = onB([&] { return shoal({"inbox", "--json"}); });
  ASSERT_EQ(inbox.code, 0) << inbox.out << inbox.err << logsOfA();
  EXPECT_NE(inbox.out.find("a note for beta"), std::string::npos) << inbox.out;
  EXPECT_EQ(modeOf(joinedDirOfB() + "/mailbox.creds"), 0600u);

  // What only the authority's machine can mint is refused on B by name, not by a broker hang.
  const std::vector<std::vector<std::string>> privileged = {
      {"seat", "events", "Bea", "--json"},
      {"channels", "set", "ops", "--description", "from beta", "--json"},
      {"seat", "forget", "Bea", "--json"}};
  for (const auto& argv : privileged) {
    CliRun refused = onB([&] { return shoal(argv); });
    EXPECT_NE(refused.code, 0) << argv[0];
    EXPECT_NE(refused.out.find("needs-authority-machine"), std::string::npos)
        << argv[0] << ": " << refused.out << refused.err;
  }

  // An invite that leaves the machine name open cannot take over a machine in use: beta is
  // claimed and has a seat, whose credential its daemon could otherwise ask for.
  const std::string open = invite();
  EXPECT_NE(open.find("&invite=any"), std::string::npos) << open;
  CliRun takeover = onB([&] {
    return shoal({"daemon", "join", open, "--machine", "beta", "--json"});
  });
  EXPECT_NE(takeover.code, 0);
  EXPECT_NE(takeover.out.find("machine-in-use"), std::string::npos) << takeover.out << takeover.err;

  // The link's secret never reached a log.
  EXPECT_EQ(logsOfA().find(seed), std::string::npos);
  EXPECT_EQ(beta->output().find(seed), std::string::npos);

  // The machine is in the authority's ledger; revoked, the broker refuses it.
  CliRun listed = shoal({"creds", "list", "--json"});
  EXPECT_NE(listed.out.find("itest-daemon-beta"), std::string::npos) << listed.out;
  CliRun revoked = shoal({"creds", "revoke", "itest-daemon-beta", "--json"});
  ASSERT_EQ(revoked.code, 0) << revoked.out << revoked.err;
  (void)beta->child.terminate(seconds(5));
  CliRun refused = onB([&] { return shoal({"daemon", "run", "--json"}); });
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.out.find("daemon-credential-refused"), std::string::npos)
      << refused.out << refused.err;

  // B is gone for good: the space admin forgets its seat, which only B's daemon could remove.
  CliRun forgot = shoal({"seat", "forget", bea, "--json"});
  ASSERT_EQ(forgot.code, 0) << forgot.out << forgot.err;
  EXPECT_EQ(json::parse(forgot.out).at("removedRecords").at(0).as_string(), "beta." + bea)
      << forgot.out;
  CliRun again2 = shoal({"seat", "forget", bea, "--json"});
  EXPECT_NE(again2.out.find("unknown-seat"), std::string::npos) << again2.out << again2.err;
}

// 10 s credentials: B's daemon renews its own at half its life over the manager's rail (the
// same key, a new JWT), and its seat's through it, so B keeps answering past two lifetimes.
TEST_F(CliJoinTest, AJoinedMachineOutlivesItsCredential) {
  ASSERT_EQ(
      shoal({"up", "--auth", "--tls", "--plane-creds-ttl", "10", "--port", port(), "--no-daemon"})
          .code,
      0);
  const std::string link = invite();  // the joiner names its machine
  CliRun joined = onB([&] {
    return shoal({"daemon", "join", link, "--machine", "beta", "--json"});
  });
  ASSERT_EQ(joined.code, 0) << joined.out << joined.err;
  const int64_t firstExpiry = json::parse(joined.out).at("expiresAt").as_int64();
  Background* beta = onB([&] { return spawnShoal({"daemon", "run"}); });
  ASSERT_NE(beta, nullptr);
  ASSERT_TRUE(outputShows(*beta, "daemon serving")) << beta->output();
  CliRun add = onB([&] { return shoal({"seat", "add", "Bea", "--json", "--", "/bin/cat"}); });
  ASSERT_EQ(add.code, 0) << add.out << add.err;
  const std::string bea(json::parse(add.out).at("profile").at("id").as_string());
  // The daemon's file holds a later JWT for the same key.
  auto held = [&] {
    return transport::readCredsFile(FileSystem::posix(), joinedDirOfB() + "/daemon.creds");
  };
  const std::string key = held().isOk() ? held()->userKey : "";
  EXPECT_TRUE(testing::eventually(
      [&] {
        auto now = held();
        return now.isOk() && now->expiresAt > firstExpiry && now->userKey == key;
      },
      seconds(20)))
      << beta->output() << logsOfA();
  // Past the first credential's expiry: the broker has closed the connections it made, and
  // the daemon and the seat are back under the renewed ones.
  ASSERT_TRUE(testing::eventually([&] { return Clock::real().wallMs() / 1000 > firstExpiry + 2; },
                                  seconds(20)));
  CliRun dm = shoal({"send", "dm", bea, "still", "here", "--wait", "surfaced=20"});
  EXPECT_EQ(dm.code, 0) << dm.out << dm.err << beta->output();
  CliRun listed = shoal({"creds", "list", "--json"});
  EXPECT_NE(listed.out.find("itest-daemon-beta"), std::string::npos) << listed.out;
}

TEST_F(CliJoinTest, AnInviteNeedsABrokerThatRequiresTls) {
  CliRun open = shoal({"up", "--tls", "--port", port(), "--no-daemon", "--json"});
  EXPECT_NE(open.code, 0);
  EXPECT_NE(open.out.find("tls-needs-auth"), std::string::npos) << open.out << open.err;

  ASSERT_EQ(shoal({"up", "--auth", "--port", port(), "--no-daemon"}).code, 0);
  CliRun plain = shoal({"invite", "--json"});
  EXPECT_NE(plain.code, 0);
  EXPECT_NE(plain.out.find("invite-needs-tls"), std::string::npos) << plain.out << plain.err;

  CliRun notALink = onB([&] {
    return shoal({"daemon", "join", "cotal://127.0.0.1/itest?owner=x", "--json"});
  });
  EXPECT_NE(notALink.code, 0);
  EXPECT_NE(notALink.out.find("plaintext-link"), std::string::npos) << notALink.out;
}

// Two hosts: two network namespaces joined by a veth pair, each with its own loopback, so
// nothing can pass through 127.0.0.1 by accident. A's broker listens on A's address only, with
// TLS; B joins by invite and its seat answers A. Needs root and `ip` (CI has both); skipped
// elsewhere, where the loopback variant above stands in.
class CliTwoHostsTest : public CliJoinTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0 || !FileSystem::posix().exists("/usr/sbin/ip")) {
      GTEST_SKIP() << "needs root and /usr/sbin/ip to make network namespaces";
    }
    CliJoinTest::SetUp();
    const std::string tag = std::to_string(::getpid() % 100000);
    nsA_ = "shoal-a" + tag;
    nsB_ = "shoal-b" + tag;
    const std::string net = "10.231." + std::to_string(::getpid() % 250) + ".";
    addressA_ = net + "1";
    const std::string vethA = "sha" + tag, vethB = "shb" + tag;
    for (const std::string& step :
         {"ip netns add " + nsA_, "ip netns add " + nsB_,
          "ip link add " + vethA + " type veth peer name " + vethB,
          "ip link set " + vethA + " netns " + nsA_, "ip link set " + vethB + " netns " + nsB_,
          "ip -n " + nsA_ + " addr add " + addressA_ + "/30 dev " + vethA,
          "ip -n " + nsB_ + " addr add " + net + "2/30 dev " + vethB,
          "ip -n " + nsA_ + " link set " + vethA + " up",
          "ip -n " + nsB_ + " link set " + vethB + " up", "ip -n " + nsA_ + " link set lo up",
          "ip -n " + nsB_ + " link set lo up"}) {
      ASSERT_EQ(std::system((step + " 2>&1").c_str()), 0) << step;
    }
    namespaces_ = true;
    commandPrefix_ = {"/usr/sbin/ip", "netns", "exec", nsA_};
    prefixB_ = {"/usr/sbin/ip", "netns", "exec", nsB_};
  }

  void TearDown() override {
    if (!namespaces_) return;
    CliJoinTest::TearDown();  // stops the background runs and the mesh, inside A
    (void)std::system(("ip netns del " + nsA_ + " 2>/dev/null").c_str());
    (void)std::system(("ip netns del " + nsB_ + " 2>/dev/null").c_str());
  }

  template <class F>
  auto inB(F f) {
    std::swap(commandPrefix_, prefixB_);
    auto out = onB(f);
    std::swap(commandPrefix_, prefixB_);
    return out;
  }

  bool namespaces_ = false;
  std::string nsA_, nsB_, addressA_;
  std::vector<std::string> prefixB_;
};

TEST_F(CliTwoHostsTest, BJoinsABrokerOnAnotherHostAndAnswersIt) {
  CliRun up = shoal({"up", "--auth", "--host", addressA_, "--port", port(), "--no-daemon"});
  ASSERT_EQ(up.code, 0) << up.out << up.err << logsOfA();
  EXPECT_NE(up.out.find("tls://" + addressA_), std::string::npos) << up.out;
  // B cannot reach A's broker through its own loopback: there is none of A's there.
  CliRun viaLoopback = inB([&] {
    return shoal({"status", "--server", "tls://127.0.0.1:" + port(), "--json"});
  });
  EXPECT_NE(viaLoopback.code, 0) << viaLoopback.out;

  const std::string link = invite({"--machine", "beta"});
  ASSERT_EQ(link.rfind("cotals://" + addressA_ + ":" + port() + "/itest?", 0), 0u) << link;
  CliRun joined = inB([&] { return shoal({"daemon", "join", link, "--json"}); });
  ASSERT_EQ(joined.code, 0) << joined.out << joined.err << logsOfA();
  Background* beta = inB([&] { return spawnShoal({"daemon", "run"}); });
  ASSERT_NE(beta, nullptr);
  ASSERT_TRUE(outputShows(*beta, "daemon serving")) << beta->output();
  CliRun add = inB([&] { return shoal({"seat", "add", "Bea", "--json", "--", "/bin/cat"}); });
  ASSERT_EQ(add.code, 0) << add.out << add.err;
  const std::string bea(json::parse(add.out).at("profile").at("id").as_string());
  CliRun dm = shoal({"send", "dm", bea, "hello", "from", "A", "--wait", "surfaced=20"});
  EXPECT_EQ(dm.code, 0) << dm.out << dm.err << beta->output();
  CliRun reused = inB([&] { return shoal({"daemon", "join", link, "--json"}); });
  EXPECT_NE(reused.out.find("invite-used"), std::string::npos) << reused.out << reused.err;
}

}  // namespace
}  // namespace shoal
