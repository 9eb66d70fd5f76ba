// Auth mode through the real `shoal` binary (issue 19). CliAuthTest: a nats-server in operator
// mode trusting a real CredentialAuthority (its own serverConfig), and `shoal serve` running
// each plane under its own minted credential — as it runs against an existing NATS
// deployment; tested from outside as a peer would see it: both planes answer liveness probes
// sent under an agent credential, and the serve process is refused nothing. CliUpAuthTest:
// `shoal up --auth`, the embedded broker in operator mode with the planes and the person's
// commands each under their own credential.
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <thread>

#include <boost/json.hpp>
#include <sys/stat.h>

#include "base/clock.h"
#include "base/file_system.h"
#include "cli_fixture.h"
#include "mesh/credential_rail.h"
#include "mesh/liveness_probe.h"
#include "planes/credential_authority.h"
#include "planes/grants.h"
#include "testing/nats_server.h"
#include "transport/creds_file.h"
#include "transport/local_broker.h"
#include "transport/nkey.h"

namespace shoal {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kOwner = "u_aaaaaaaaaaaaaaaaaaaaaaaaaa";

class CliAuthTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    auto authority = planes::CredentialAuthority::openOrCreate(
        FileSystem::posix(), home_->join("authority"), "itest", Clock::real());
    ASSERT_TRUE(authority.isOk()) << authority.status().toString();
    authority_.emplace(std::move(authority).value());
    testing::TestNatsServerOptions options;
    options.extraConfig = authority_->serverConfig(home_->join("resolver"));
    auto server = testing::TestNatsServer::start(options);
    ASSERT_TRUE(server.isOk()) << server.status().toString();
    server_ = std::move(server).value();
    // The port opens a moment before the preloaded account admits users.
    const std::string probe = agentCreds("ready");
    ASSERT_TRUE(testing::eventually([&] { return connectAs(probe) != nullptr; }, seconds(5)))
        << server_->logTail();
  }

  void TearDown() override {
    CliTest::TearDown();
    server_.reset();
  }

  std::string writeCreds(const std::string& name, const std::vector<planes::GrantRow>& rows) {
    auto minted = authority_->mint(name, rows, std::chrono::hours(1));
    EXPECT_TRUE(minted.isOk()) << minted.status().toString();
    const std::string path = home_->join(name + ".creds");
    EXPECT_TRUE(writeFileAtomically(FileSystem::posix(), path, minted->creds).isOk());
    return path;
  }

  std::string planeCreds(const std::string& plane) {
    const std::string connId = "ibx" + plane + "plane0000000000000000";
    auto rows = plane == "manager" ? planes::managerGrants({"itest", connId})
                                   : planes::deliveryGrants({"itest", connId});
    EXPECT_TRUE(rows.isOk()) << rows.status().toString();
    return writeCreds(plane, *rows);
  }

  std::string agentCreds(const std::string& actor) {
    planes::AgentScope scope;
    scope.space = "itest";
    scope.principal = wire::Principal{kOwner, actor};
    scope.lifecycleUid = "0123456789abcdef0123456789abcdef";
    scope.connId = connIdOf(actor);
    auto rows = planes::agentGrants(scope);
    EXPECT_TRUE(rows.isOk()) << rows.status().toString();
    return writeCreds(actor, *rows);
  }

  static std::string connIdOf(const std::string& actor) { return "ibx" + actor + "00000000000"; }

  std::unique_ptr<transport::Connection> connectAs(const std::string& creds) {
    transport::ConnectOptions options;
    options.servers = {server_->url()};
    options.credentialsFile = creds;
    auto info = transport::readCredsFile(FileSystem::posix(), creds);
    if (info.isOk()) options.inboxPrefix = info->inboxPrefix;
    options.allowReconnect = false;
    auto conn = transport::Connection::connect(options);
    return conn.isOk() ? std::move(conn).value() : nullptr;
  }

  // The plane's liveness as the agent `actor` probes it.
  wire::Responder probe(transport::Connection& conn, const std::string& actor,
                        const std::string& plane) {
    auto verdict = mesh::probeLiveness(conn, "itest", wire::Principal{kOwner, actor}, plane,
                                       milliseconds(1000));
    return verdict.isOk() ? verdict->responder : wire::Responder::kUnknown;
  }

  std::optional<planes::CredentialAuthority> authority_;
  std::unique_ptr<testing::TestNatsServer> server_;
};

TEST_F(CliAuthTest, ServeRunsEachPlaneUnderItsOwnCredentialAndIsRefusedNothing) {
  Background* serve =
      spawnShoal({"serve", "--server", server_->url(), "--manager-creds", planeCreds("manager"),
                  "--delivery-creds", planeCreds("delivery")});
  ASSERT_NE(serve, nullptr);
  ASSERT_TRUE(outputShows(*serve, "delivery plane serving")) << serve->output();
  EXPECT_NE(serve->output().find("created"), std::string::npos) << serve->output();
  EXPECT_NE(serve->output().find("auth mode"), std::string::npos) << serve->output();

  auto agent = connectAs(agentCreds("tester"));
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(probe(*agent, "tester", "manager"), wire::Responder::kBound);
  EXPECT_EQ(probe(*agent, "tester", "delivery"), wire::Responder::kBound);
  EXPECT_EQ(agent->stats().permissionViolations, 0u) << agent->lastAsyncError().toString();
  EXPECT_EQ(serve->output().find("ermission"), std::string::npos) << serve->output();
}

TEST_F(CliAuthTest, ServeRefusesToRunAPlaneWithoutItsOwnCredential) {
  CliRun run = shoal(
      {"serve", "--server", server_->url(), "--manager-creds", planeCreds("manager"), "--json"});
  EXPECT_EQ(run.code, 2) << run.out << run.err;
  EXPECT_NE((run.out + run.err).find("plane-creds-missing"), std::string::npos)
      << run.out << run.err;
}

TEST_F(CliAuthTest, TheDeliveryCredentialCannotStandInForTheManager) {
  // The delivery plane's grants cannot create the space's streams: a named refusal, not a hang.
  CliRun run = runShoal({"serve", "--server", server_->url(), "--planes", "manager",
                         "--manager-creds", planeCreds("delivery")},
                        std::nullopt, seconds(30));
  EXPECT_EQ(run.code, 1) << run.out << run.err;
  EXPECT_NE((run.out + run.err).find("ermission"), std::string::npos) << run.out << run.err;
}

TEST_F(CliAuthTest, ACredentialOthersCanReadIsRefusedBeforeConnecting) {
  const std::string creds = planeCreds("manager");
  ASSERT_EQ(::chmod(creds.c_str(), 0644), 0);
  CliRun run =
      shoal({"serve", "--server", server_->url(), "--planes", "manager", "--manager-creds", creds});
  EXPECT_EQ(run.code, 1) << run.out << run.err;
  EXPECT_NE((run.out + run.err).find("secret-exposed"), std::string::npos) << run.out << run.err;
}

class CliUpAuthTest : public CliTest {
 protected:
  std::string port() { return std::to_string(port_); }
  std::string secretsDir() { return home_->join("state") + "/shoal/secrets"; }
  std::string logsDir() { return home_->join("state") + "/shoal/logs"; }

  json::value status() {
    CliRun run = shoal({"status", "--json"});
    boost::system::error_code ec;
    json::value v = json::parse(run.out, ec);
    EXPECT_FALSE(ec) << run.out << run.err;
    return ec ? json::value() : v;
  }

  static std::string responderOf(const json::value& status, std::string_view plane) {
    if (!status.is_object()) return "no status";
    for (const auto& p : status.at("planes").as_array()) {
      if (p.at("plane").as_string() == plane) return std::string(p.at("responder").as_string());
    }
    return "absent";
  }

  std::string ownerOfMe() {
    json::value s = status();
    if (!s.is_object()) return "no-status";
    const std::string me(s.at("principal").as_string());
    return me.substr(0, me.find('.'));
  }

  static mode_t modeOf(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 0777) : 0;
  }
};

TEST_F(CliUpAuthTest, UpAuthRunsTheBrokerInOperatorModeAndEveryoneUnderTheirOwnCredential) {
  CliRun up = shoal({"up", "--auth", "--port", port(), "--no-daemon"});
  ASSERT_EQ(up.code, 0) << up.out << up.err;
  EXPECT_NE(up.out.find("auth mode"), std::string::npos) << up.out;
  EXPECT_NE(up.out.find("manager plane serving"), std::string::npos)
      << up.out << FileSystem::posix().readFile(logsDir() + "/itest-planes.log").valueOr("")
      << FileSystem::posix().readFile(logsDir() + "/itest-supervisor.log").valueOr("");

  json::value s = status();
  ASSERT_TRUE(s.is_object());
  EXPECT_EQ(s.at("mode").as_string(), "auth");
  EXPECT_TRUE(s.at("ok").as_bool()) << json::serialize(s);
  const std::string me(s.at("principal").as_string());
  EXPECT_TRUE(std::regex_match(me, std::regex("u_[a-z2-7]{26}\\.[a-z0-9_-]+"))) << me;
  EXPECT_EQ(responderOf(s, "manager"), "bound") << json::serialize(s);
  EXPECT_EQ(responderOf(s, "delivery"), "bound") << json::serialize(s);

  // The broker admits no one without a credential of the space.
  transport::ConnectOptions bare;
  bare.servers = {std::string(s.at("broker").at("url").as_string())};
  bare.allowReconnect = false;
  EXPECT_FALSE(transport::Connection::connect(bare).isOk());

  // The person's own commands work under the person's own principal.
  CliRun sent = shoal({"send", "dm", me, "hello from auth mode", "--json"});
  EXPECT_EQ(sent.code, 0) << sent.out << sent.err;
  EXPECT_NE(sent.out.find("DM_itest"), std::string::npos) << sent.out;

  // Secrets are owner-only, and none is ever written to a log.
  const std::string authority = secretsDir() + "/itest-authority";
  EXPECT_EQ(modeOf(authority), 0700u);
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(authority)) {
    EXPECT_EQ(modeOf(e.path()), 0600u) << e.path();
    ++files;
  }
  EXPECT_GE(files, 4u);
  for (const char* creds : {"itest-manager.creds", "itest-delivery.creds", "itest-cli.creds"})
    EXPECT_EQ(modeOf(secretsDir() + "/" + creds), 0600u) << creds;
  const std::regex seed("S[OAU][A-Z2-7]{50,}");
  for (const auto& e : std::filesystem::directory_iterator(logsDir())) {
    std::string text = FileSystem::posix().readFile(e.path()).valueOr("");
    EXPECT_FALSE(std::regex_search(text, seed)) << "a seed in " << e.path();
  }
}

TEST_F(CliUpAuthTest, TheModeIsTheSpacesOwnOnceChosen) {
  ASSERT_EQ(shoal({"up", "--auth", "--port", port(), "--no-daemon"}).code, 0);
  ASSERT_EQ(shoal({"down"}).code, 0);
  CliRun again = shoal({"up", "--port", port(), "--no-daemon"});
  ASSERT_EQ(again.code, 0) << again.out << again.err;
  EXPECT_NE((again.out + again.err).find("keeps it"), std::string::npos) << again.out;
  json::value s = status();
  ASSERT_TRUE(s.is_object());
  EXPECT_EQ(s.at("mode").as_string(), "auth");
  EXPECT_EQ(responderOf(s, "manager"), "bound") << json::serialize(s);
}

TEST_F(CliUpAuthTest, AnOpenSpaceIsNotSilentlyEmptiedByAuthMode) {
  ASSERT_EQ(shoal({"up", "--port", port(), "--no-daemon"}).code, 0);
  ASSERT_EQ(shoal({"down"}).code, 0);
  CliRun up = shoal({"up", "--auth", "--port", port(), "--no-daemon", "--json"});
  EXPECT_EQ(up.code, 1) << up.out << up.err;
  EXPECT_NE(up.out.find("space-is-open"), std::string::npos) << up.out << up.err;
}

// Beyond loopback auth mode always runs with TLS, under a CA made for the space whose key
// only its owner can read; a wildcard address names nothing to invite others to.
TEST_F(CliUpAuthTest, AuthModeBeyondLoopbackRunsWithTls) {
  CliRun up = shoal({"up", "--auth", "--host", "0.0.0.0", "--port", port(), "--no-daemon"});
  ASSERT_EQ(up.code, 0) << up.out << up.err;
  auto rec = record();
  ASSERT_TRUE(rec.isOk());
  EXPECT_EQ(rec->url.rfind("tls://", 0), 0u) << rec->url;
  EXPECT_EQ(modeOf(secretsDir() + "/itest-tls/ca-key.pem"), 0600u);
  EXPECT_EQ(modeOf(secretsDir() + "/itest-tls/server-key.pem"), 0600u);
  EXPECT_EQ(modeOf(secretsDir() + "/itest-tls"), 0700u);
  json::value s = status();
  ASSERT_TRUE(s.is_object());
  EXPECT_EQ(responderOf(s, "manager"), "bound") << json::serialize(s);
  CliRun invite = shoal({"invite", "--json"});
  EXPECT_NE(invite.code, 0);
  EXPECT_NE(invite.out.find("invite-needs-address"), std::string::npos) << invite.out;
}

TEST_F(CliUpAuthTest, ThePlanesOutliveTheirCredentials) {
  // 10 s credentials, renewed at 5 s: the broker closes each plane's connection when the
  // credential it connected with expires, and the plane reconnects with the renewed file.
  ASSERT_EQ(
      shoal({"up", "--auth", "--plane-creds-ttl", "10", "--port", port(), "--no-daemon"}).code, 0);
  json::value before = status();
  ASSERT_TRUE(before.is_object());
  const int64_t servePid = before.at("local").at("servePid").to_number<int64_t>();
  const std::string planesLog = logsDir() + "/itest-planes.log";
  auto reconnects = [&] {
    std::string text = FileSystem::posix().readFile(planesLog).valueOr("");
    size_t n = 0;
    for (size_t at = text.find("delivery itest: reconnected"); at != std::string::npos;
         at = text.find("delivery itest: reconnected", at + 1))
      ++n;
    return n;
  };
  ASSERT_TRUE(testing::eventually([&] { return reconnects() >= 2; }, seconds(40)))
      << FileSystem::posix().readFile(planesLog).valueOr("");
  ASSERT_TRUE(testing::eventually(
      [&] {
        json::value s = status();
        return responderOf(s, "manager") == "bound" && responderOf(s, "delivery") == "bound";
      },
      seconds(10)));
  EXPECT_EQ(status().at("local").at("servePid").to_number<int64_t>(), servePid)
      << "the planes were restarted instead of renewed";
}

TEST_F(CliUpAuthTest, AMintedCredentialWorksUntilRevokedAndStaysRevokedAcrossABrokerCrash) {
  ASSERT_EQ(shoal({"up", "--auth", "--port", port(), "--no-daemon"}).code, 0);
  const std::string file = home_->join("ada.creds");
  CliRun minted = shoal({"creds", "mint", "ada", "--post", "team.x", "--out", file, "--json"});
  ASSERT_EQ(minted.code, 0) << minted.out << minted.err;
  json::value m = json::parse(minted.out);
  const std::string userKey(m.at("userKey").as_string());
  EXPECT_EQ(modeOf(file), 0600u);
  // Never over an existing file: a credential is not silently replaced.
  CliRun again = shoal({"creds", "mint", "ada", "--out", file, "--json"});
  EXPECT_NE(again.code, 0);
  EXPECT_NE(again.out.find("file-exists"), std::string::npos) << again.out;

  json::value s = status();
  ASSERT_TRUE(s.is_object());
  transport::ConnectOptions options;
  options.servers = {std::string(s.at("broker").at("url").as_string())};
  options.credentialsFile = file;
  options.inboxPrefix = std::string(m.at("inboxPrefix").as_string());
  options.allowReconnect = false;
  auto held = transport::Connection::connect(options);
  ASSERT_TRUE(held.isOk()) << held.status().toString();

  CliRun listed = shoal({"creds", "list", "--json"});
  ASSERT_EQ(listed.code, 0) << listed.out << listed.err;
  EXPECT_NE(listed.out.find(userKey), std::string::npos);
  EXPECT_NE(listed.out.find("\"state\":\"valid\""), std::string::npos) << listed.out;

  CliRun revoked = shoal({"creds", "revoke", "ada", "--json"});
  ASSERT_EQ(revoked.code, 0) << revoked.out << revoked.err;
  EXPECT_NE(revoked.out.find("\"pushed\":true"), std::string::npos) << revoked.out;
  EXPECT_NE(revoked.out.find(userKey), std::string::npos) << revoked.out;
  // The open connection is closed by the broker, and a new one refused.
  EXPECT_TRUE(testing::eventually(
      [&] { return (*held)->state() != transport::ConnectionState::kConnected; }, seconds(5)));
  auto refused = transport::Connection::connect(options);
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied) << refused.status().toString();
  EXPECT_NE(shoal({"creds", "list", "--json"}).out.find("\"state\":\"revoked\""),
            std::string::npos);

  // A broker crash: the supervisor restarts it, and the revocation holds.
  const auto brokerPid = static_cast<pid_t>(s.at("local").at("brokerPid").to_number<int64_t>());
  ASSERT_EQ(::kill(brokerPid, SIGKILL), 0);
  ASSERT_TRUE(testing::eventually(
      [&] {
        json::value after = status();
        return after.is_object() && after.at("ok").as_bool() &&
               after.at("local").at("brokerPid").to_number<int64_t>() != brokerPid;
      },
      seconds(20)));
  auto afterCrash = transport::Connection::connect(options);
  EXPECT_FALSE(afterCrash.isOk()) << "a revoked credential was admitted after a broker restart";
}

// A seat in auth mode: the daemon runs under its own daemon credential, asks the manager for
// the seat's, and the seat answers a DM with a surfaced receipt — no process holding more
// than its profile grants, and every credential owner-only, outside the seat's cwd.
TEST_F(CliUpAuthTest, ASeatRunsUnderTheCredentialTheManagerIssuedItsDaemon) {
  ASSERT_EQ(shoal({"up", "--auth", "--port", port()}).code, 0);
  json::value s = status();
  ASSERT_TRUE(s.is_object());
  const std::string me(s.at("principal").as_string());
  const std::string owner = me.substr(0, me.find('.'));

  CliRun added = shoal({"seat", "add", "Echo", "--channel", "general", "--json", "--", "/bin/cat"});
  ASSERT_EQ(added.code, 0) << added.out << added.err;
  const std::string seat = owner + ".echo";
  EXPECT_NE(added.out.find(seat), std::string::npos) << "the default id is the person's own";
  CliRun foreign =
      shoal({"seat", "add", "Other", "--id", "local.other", "--json", "--", "/bin/cat"});
  EXPECT_NE(foreign.code, 0);
  EXPECT_NE(foreign.out.find("not-this-owner"), std::string::npos) << foreign.out << foreign.err;

  CliRun waited =
      shoal({"send", "dm", "Echo", "hello", "in", "auth", "--wait", "surfaced=20", "--json"});
  ASSERT_EQ(waited.code, 0)
      << waited.out << waited.err
      << FileSystem::posix().readFile(logsDir() + "/itest-daemon.log").valueOr("");
  EXPECT_TRUE(json::parse(waited.out).at("surfacedAt").is_int64()) << waited.out;

  // A post from the person reaches the seat through the channel its credential was issued for.
  CliRun posted = shoal({"send", "msg", "general", "hello", "channel", "--json"});
  ASSERT_EQ(posted.code, 0) << posted.out << posted.err;
  const std::string runtimeLog =
      std::string(json::parse(added.out).at("profile").at("cwd").as_string()) +
      "/.shoal/runtime.log";
  EXPECT_TRUE(testing::eventually(
      [&] {
        return FileSystem::posix().readFile(runtimeLog).valueOr("").find("hello channel") !=
               std::string::npos;
      },
      seconds(15)))
      << FileSystem::posix().readFile(runtimeLog).valueOr("");

  const std::string seatCreds = secretsDir() + "/itest-seat-creds";
  EXPECT_EQ(modeOf(seatCreds), 0700u);
  EXPECT_EQ(modeOf(seatCreds + "/" + seat + ".creds"), 0600u);
  EXPECT_EQ(modeOf(secretsDir() + "/itest-daemon.creds"), 0600u);
  const std::string cwd(json::parse(added.out).at("profile").at("cwd").as_string());
  for (const auto& e : std::filesystem::recursive_directory_iterator(cwd))
    EXPECT_NE(e.path().extension(), ".creds") << "a credential inside the seat's cwd: " << e.path();

  // As the daemon's own credential, from a raw client: it cannot send application traffic,
  // and the manager refuses it any principal of another owner.
  auto daemonCreds =
      transport::readCredsFile(FileSystem::posix(), secretsDir() + "/itest-daemon.creds");
  ASSERT_TRUE(daemonCreds.isOk()) << daemonCreds.status().toString();
  transport::ConnectOptions options;
  options.servers = {std::string(s.at("broker").at("url").as_string())};
  options.credentialsFile = daemonCreds->path;
  options.inboxPrefix = daemonCreds->inboxPrefix;
  options.allowReconnect = false;
  auto conn = transport::Connection::connect(options);
  ASSERT_TRUE(conn.isOk()) << conn.status().toString();
  ASSERT_TRUE((*conn)->publish("cotal.itest.inst." + seat + "." + me, "forged").isOk());
  ASSERT_TRUE((*conn)->flush(seconds(5)).isOk());
  EXPECT_TRUE(
      testing::eventually([&] { return (*conn)->stats().permissionViolations > 0; }, seconds(2)))
      << "the daemon credential published a DM";
  ASSERT_EQ(daemonCreds->name.rfind("itest-daemon-", 0), 0u) << daemonCreds->name;
  const std::string machine = daemonCreds->name.substr(std::string("itest-daemon-").size());
  mesh::IssueRequest request;
  request.principal = wire::Principal{kOwner, "mallory"};
  request.lifecycleUid = "abcdefghijklmnopqrstuvwxyz";
  request.connId = "ibxmallory00000000";
  request.userKey = transport::generateNKey(transport::NKeyRole::kUser)->publicKey;
  auto stolen = mesh::requestSeatCredential(**conn, "itest", owner, machine, request, seconds(5));
  ASSERT_FALSE(stolen.isOk());
  EXPECT_EQ(stolen.status().reason(), "not-this-owner") << stolen.status().toString();
  // Nor a seat of its own owner that runs on another machine, nor one with no profile.
  ASSERT_EQ(shoal({"seat", "add", "Far", "--machine", "far", "--", "/bin/cat"}).code, 0);
  request.principal = wire::Principal{owner, "far"};
  auto far = mesh::requestSeatCredential(**conn, "itest", owner, machine, request, seconds(5));
  ASSERT_FALSE(far.isOk());
  EXPECT_EQ(far.status().reason(), "not-this-machine") << far.status().toString();
  request.principal = wire::Principal{owner, "ghost"};
  auto ghost = mesh::requestSeatCredential(**conn, "itest", owner, machine, request, seconds(5));
  ASSERT_FALSE(ghost.isOk());
  EXPECT_EQ(ghost.status().reason(), "unknown-seat") << ghost.status().toString();
  // Nor a daemon credential for a key of its choosing: a renewal is only for the key a join
  // recorded (this machine's daemon never joined; its supervisor re-mints it).
  mesh::DaemonRenewal renewal{transport::generateNKey(transport::NKeyRole::kUser)->publicKey,
                              "ibxdmnmallory00000"};
  auto extra = mesh::requestDaemonRenewal(**conn, "itest", owner, machine, renewal, seconds(5));
  ASSERT_FALSE(extra.isOk());
  EXPECT_EQ(extra.status().reason(), "not-this-machine") << extra.status().toString();

  // As the seat's credential: it can never write a seat profile (code a daemon would run).
  auto seatInfo = transport::readCredsFile(FileSystem::posix(), seatCreds + "/" + seat + ".creds");
  ASSERT_TRUE(seatInfo.isOk()) << seatInfo.status().toString();
  options.credentialsFile = seatInfo->path;
  options.inboxPrefix = seatInfo->inboxPrefix;
  auto asSeat = transport::Connection::connect(options);
  ASSERT_TRUE(asSeat.isOk()) << asSeat.status().toString();
  ASSERT_TRUE((*asSeat)->publish("$KV.shoal_seats_itest." + owner + ".evil", "{}").isOk());
  ASSERT_TRUE((*asSeat)->flush(seconds(5)).isOk());
  EXPECT_TRUE(
      testing::eventually([&] { return (*asSeat)->stats().permissionViolations > 0; }, seconds(2)))
      << "a seat's credential wrote a seat profile";
}

TEST_F(CliUpAuthTest, ASeatOutlivesItsCredential) {
  // 10 s credentials for the daemon and the seat, renewed at 5 s: the seat still answers after
  // the first one it connected with has expired.
  ASSERT_EQ(shoal({"up", "--auth", "--plane-creds-ttl", "10", "--port", port()}).code, 0);
  ASSERT_EQ(shoal({"seat", "add", "Echo", "--", "/bin/cat"}).code, 0);
  const std::string daemonLog = logsDir() + "/itest-daemon.log";
  const std::string file = secretsDir() + "/itest-seat-creds/" + ownerOfMe() + ".echo.creds";
  std::set<std::string> issued;
  ASSERT_TRUE(testing::eventually(
      [&] {
        if (auto text = FileSystem::posix().readFile(file); text.isOk()) issued.insert(*text);
        return issued.size() >= 4;  // the first and three renewals: past two expiries
      },
      seconds(40)))
      << issued.size() << " credentials seen\n"
      << FileSystem::posix().readFile(daemonLog).valueOr("");
  // By id: the seat may be reconnecting at this very moment, and a DM waits for it.
  CliRun waited =
      shoal({"send", "dm", ownerOfMe() + ".echo", "still", "there", "--wait", "surfaced=20"});
  EXPECT_EQ(waited.code, 0) << waited.out << waited.err
                            << FileSystem::posix().readFile(daemonLog).valueOr("");
}

// `shoal join` in auth mode: the peer is the person's own principal under a credential of its
// own, reachable by DM and on its declared channel; another owner's id is refused.
TEST_F(CliUpAuthTest, AJoinedPeerSpeaksAsThePersonsOwnPrincipal) {
  ASSERT_EQ(shoal({"up", "--auth", "--port", port(), "--no-daemon"}).code, 0);
  const std::string owner = ownerOfMe();
  CliRun foreign =
      shoalWithInput({"join", "--name", "eve", "--id", "local.eve", "--json"}, "/quit\n");
  EXPECT_NE(foreign.code, 0);
  EXPECT_NE(foreign.out.find("not-this-owner"), std::string::npos) << foreign.out << foreign.err;

  Background* ada =
      spawnShoal({"join", "--name", "ada", "--channel", "team", "--keep-running", "--json"});
  ASSERT_NE(ada, nullptr);
  ASSERT_TRUE(outputShows(*ada, "\"event\":\"joined\"")) << ada->output();
  EXPECT_TRUE(outputShows(*ada, "\"id\":\"" + owner + ".ada\"")) << ada->output();
  CliRun dm = shoal({"send", "dm", "ada", "hello", "peer"});
  EXPECT_EQ(dm.code, 0) << dm.out << dm.err;
  EXPECT_TRUE(outputShows(*ada, "hello peer")) << ada->output();
  CliRun post = shoal({"send", "msg", "team", "hello", "team"});
  EXPECT_EQ(post.code, 0) << post.out << post.err;
  EXPECT_TRUE(outputShows(*ada, "hello team")) << ada->output();
  EXPECT_EQ(modeOf(secretsDir() + "/itest-peer-" + owner + ".ada.creds"), 0600u);
}

// A sleeping seat in auth mode: DMs stored while its daemon was down are backlog — they wait
// and do not start the runtime — and a DM sent once the daemon is back is a current event
// that wakes it. The seat's grants do not reach DM_<space>'s info, so its own durable's says
// which is which (daemon/backlog_mark.h); before, every backlog DM woke it.
TEST_F(CliUpAuthTest, ASleepingSeatsBacklogDoesNotWakeIt) {
  ASSERT_EQ(shoal({"up", "--auth", "--port", port(), "--no-daemon"}).code, 0);
  Background* daemon = spawnShoal({"daemon", "run"});
  ASSERT_NE(daemon, nullptr);
  ASSERT_TRUE(outputShows(*daemon, "daemon serving")) << daemon->output();
  ASSERT_EQ(shoal({"seat", "add", "Echo", "--", "/bin/cat"}).code, 0);
  const std::string echo = ownerOfMe() + ".echo";
  CliRun first = shoal({"send", "dm", echo, "first", "--wait", "surfaced=20"});
  ASSERT_EQ(first.code, 0) << first.out << first.err << daemon->output();
  ASSERT_EQ(shoal({"seat", "sleep", "Echo"}).code, 0);
  ASSERT_TRUE(daemon->child.terminate(seconds(10)).isOk());
  for (const char* text : {"backlog one", "backlog two"})
    ASSERT_EQ(shoal({"send", "dm", echo, text}).code, 0);

  daemon = spawnShoal({"daemon", "run"});
  ASSERT_NE(daemon, nullptr);
  ASSERT_TRUE(outputShows(*daemon, "daemon serving")) << daemon->output();
  auto row = [&] {
    CliRun ps = shoal({"ps", "--json"});
    if (ps.code != 0) return json::object{};
    return json::parse(ps.out).at("seats").as_array()[0].as_object();
  };
  json::object echoRow;
  ASSERT_TRUE(testing::eventually([&] {
    echoRow = row();
    return echoRow.contains("queued") && echoRow.at("queued").as_int64() == 2;
  })) << json::serialize(echoRow)
      << daemon->output();
  EXPECT_EQ(echoRow.at("state").as_string(), "sleeping") << json::serialize(echoRow);
  EXPECT_FALSE(echoRow.at("running").as_bool()) << "backlog must never start a sleeping seat";

  CliRun fresh = shoal({"send", "dm", echo, "fresh", "--wait", "surfaced=20"});
  EXPECT_EQ(fresh.code, 0) << fresh.out << fresh.err << daemon->output();
  EXPECT_TRUE(row().at("running").as_bool()) << "a current DM wakes it";
}

// A `shoal join` peer renews its own credential past half its life (10 s here), keeping its
// connection's inbox, so it still receives DMs and posts after two lifetimes: the broker ends
// the connection at each expiry and the peer reconnects under the renewed file.
TEST_F(CliUpAuthTest, AJoinedPeerOutlivesItsCredential) {
  ASSERT_EQ(shoal({"up", "--auth", "--port", port(), "--no-daemon"}).code, 0);
  Background* ada = spawnShoal({"join", "--name", "ada", "--channel", "team", "--creds-ttl", "10",
                                "--keep-running", "--json"});
  ASSERT_NE(ada, nullptr);
  ASSERT_TRUE(outputShows(*ada, "\"event\":\"joined\"")) << ada->output();
  const std::string file = secretsDir() + "/itest-peer-" + ownerOfMe() + ".ada.creds";
  auto first = transport::readCredsFile(FileSystem::posix(), file);
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  // Past two expiries of the first credential: renewed at least three times, each a new JWT
  // for the same connection inbox.
  ASSERT_TRUE(testing::eventually(
      [&] {
        auto now = transport::readCredsFile(FileSystem::posix(), file);
        return now.isOk() && now->expiresAt >= first->expiresAt + 15 &&
               Clock::real().wallMs() / 1000 > first->expiresAt + 10;
      },
      seconds(40)))
      << ada->output();
  auto last = transport::readCredsFile(FileSystem::posix(), file);
  ASSERT_TRUE(last.isOk());
  EXPECT_EQ(last->inboxPrefix, first->inboxPrefix) << "the renewal keeps the connection's inbox";
  EXPECT_EQ(modeOf(file), 0600u);
  CliRun dm = shoal({"send", "dm", "ada", "after", "renewals"});
  EXPECT_EQ(dm.code, 0) << dm.out << dm.err;
  EXPECT_TRUE(outputShows(*ada, "after renewals")) << ada->output();
  CliRun post = shoal({"send", "msg", "team", "team", "after", "renewals"});
  EXPECT_EQ(post.code, 0) << post.out << post.err;
  EXPECT_TRUE(outputShows(*ada, "team after renewals")) << ada->output();
  EXPECT_TRUE(outputShows(*ada, "\"event\":\"credential-renewed\"")) << ada->output();
}

// Commands the person starts together each connect under a credential that matches their own
// connection: a shared credential file is minted by one of them while the others wait their
// turn (a file replaced between another command's mint and its connect pairs that command's
// inbox with this one's credential: every request then times out), a posting command's
// credential is its own file (removed when it exits), and mail reads take turns on the
// person's one mail reader (the first to finish would delete it under the others).
TEST_F(CliUpAuthTest, CommandsStartedTogetherEachKeepTheirOwnCredentialAndReader) {
  ASSERT_EQ(shoal({"up", "--auth", "--port", port(), "--no-daemon"}).code, 0);
  for (int round = 0; round < 3; ++round) {
    // Nothing held: every command of the round needs a fresh credential at once.
    for (const char* kind : {"cli", "mailbox"})
      (void)FileSystem::posix().remove(secretsDir() + "/itest-" + kind + ".creds");
    std::vector<Background*> runs;
    for (int k = 0; k < 3; ++k) {
      runs.push_back(spawnShoal({"inbox", "--json"}));
      runs.push_back(spawnShoal({"send", "msg", "team" + std::to_string(k), "hello", "--json"}));
      runs.push_back(spawnShoal({"send", "dm", "nobody-" + std::to_string(k), "hi", "--json"}));
    }
    for (Background* run : runs) {
      ASSERT_NE(run, nullptr);
      auto exit = run->child.wait(seconds(30));
      ASSERT_TRUE(exit.isOk());
      // A DM to a name nobody holds is refused by name; anything else must succeed.
      if (run->output().find("unknown-peer") != std::string::npos) continue;
      EXPECT_EQ(exit->code, 0) << "round " << round << ": " << run->output();
    }
  }
  for (const auto& entry : std::filesystem::directory_iterator(secretsDir())) {
    const std::string name = entry.path().filename().string();
    EXPECT_FALSE(name != "itest-cli.creds" && name.starts_with("itest-cli.") &&
                 name.ends_with(".creds"))
        << name << ": a command's own credential outlived it";
  }
}

// What agents answer the person is readable in auth mode: `shoal inbox`, `read`, `reply` (a DM
// and a channel post) and `history --dm` run under the person's mail reader, which the broker
// lets read only the person's own DMs (GrantsTest.TheMailboxReadsOnlyItsOwnMail).
TEST_F(CliUpAuthTest, ThePersonReadsAndAnswersTheirMailUnderTheirOwnMailReader) {
  ASSERT_EQ(shoal({"up", "--auth", "--port", port(), "--no-daemon"}).code, 0);
  const std::string me(status().at("principal").as_string());
  const std::string owner = ownerOfMe();
  CliRun ada =
      shoalWithInput({"join", "--name", "ada", "--channel", "team"},
                     "/dm " + me + " the review is done\n/msg team ready to merge\n/quit\n");
  ASSERT_EQ(ada.code, 0) << ada.out << ada.err;

  CliRun inbox = shoal({"inbox", "--json"});
  ASSERT_EQ(inbox.code, 0) << inbox.out << inbox.err;
  json::value mail = json::parse(inbox.out);
  ASSERT_EQ(mail.at("messages").as_array().size(), 1u) << inbox.out;
  const json::object& dm = mail.at("messages").as_array()[0].as_object();
  EXPECT_EQ(dm.at("text").as_string(), "the review is done") << inbox.out;
  const std::string id(dm.at("id").as_string());
  EXPECT_EQ(modeOf(secretsDir() + "/itest-mailbox.creds"), 0600u);

  CliRun read = shoal({"read", id, "--json"});
  EXPECT_EQ(read.code, 0) << read.out << read.err;
  CliRun reply = shoal({"reply", id, "thanks", "ada"});
  EXPECT_EQ(reply.code, 0) << reply.out << reply.err;
  CliRun conversation = shoal({"history", "--dm", owner + ".ada", "--json"});
  ASSERT_EQ(conversation.code, 0) << conversation.out << conversation.err;
  EXPECT_NE(conversation.out.find("thanks ada"), std::string::npos) << conversation.out;
  EXPECT_NE(conversation.out.find("the review is done"), std::string::npos) << conversation.out;

  CliRun posts = shoal({"history", "team", "--json"});
  ASSERT_EQ(posts.code, 0) << posts.out << posts.err;
  json::value page = json::parse(posts.out);
  ASSERT_EQ(page.at("posts").as_array().size(), 1u) << posts.out;
  const std::string postId(page.at("posts").as_array()[0].at("id").as_string());
  CliRun answer = shoal({"reply", postId, "merging", "now"});
  EXPECT_EQ(answer.code, 0) << answer.out << answer.err;
  CliRun after = shoal({"history", "team", "--json"});
  EXPECT_NE(after.out.find("merging now"), std::string::npos) << after.out;
}

}  // namespace
}  // namespace shoal

namespace shoal {
namespace {

// An existing NATS deployment: `shoal space init` prints the configuration that makes a server
// trust the space's authority; a nats-server started with it admits the planes' credentials,
// `shoal serve` runs against it, and the account's claims can be pushed to it.
TEST_F(CliUpAuthTest, SpaceInitConfiguresAServerShoalDoesNotRun) {
  const std::string resolver = home_->join("server-resolver");
  ASSERT_TRUE(FileSystem::posix().createDirs(resolver).isOk());
  CliRun init = shoal({"space", "init", "--resolver-dir", resolver, "--json"});
  ASSERT_EQ(init.code, 0) << init.out << init.err;
  json::value out = json::parse(init.out);
  const std::string config(out.at("serverConfig").as_string());
  EXPECT_NE(config.find("operator:"), std::string::npos) << config;
  EXPECT_NE(config.find(std::string(out.at("accountKey").as_string())), std::string::npos);
  const std::string managerCreds(out.at("managerCreds").as_string());
  EXPECT_EQ(modeOf(managerCreds), 0600u);

  auto store = testing::TempDir::create("foreign-server");
  ASSERT_TRUE(store.isOk());
  auto server =
      transport::LocalBroker::start({.storeDir = store->join("store"), .extraConfig = config});
  ASSERT_TRUE(server.isOk()) << server.status().toString();
  const std::string url = (*server)->url();

  auto creds = transport::readCredsFile(FileSystem::posix(), managerCreds);
  ASSERT_TRUE(creds.isOk()) << creds.status().toString();
  transport::ConnectOptions options;
  options.servers = {url};
  options.credentialsFile = managerCreds;
  options.inboxPrefix = creds->inboxPrefix;
  options.allowReconnect = false;
  auto conn = transport::Connection::connect(options);
  // An operator-mode server admits users a moment after it listens.
  for (int i = 0; i < 40 && !conn.isOk(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    conn = transport::Connection::connect(options);
  }
  ASSERT_TRUE(conn.isOk()) << conn.status().toString();

  Background* serve =
      spawnShoal({"serve", "--server", url, "--manager-creds", managerCreds, "--delivery-creds",
                  std::string(out.at("deliveryCreds").as_string()), "--authority",
                  std::string(out.at("authorityDir").as_string())});
  ASSERT_NE(serve, nullptr);
  EXPECT_TRUE(outputShows(*serve, "manager serving")) << serve->output();

  CliRun pushed = shoal({"space", "init", "--resolver-dir", resolver, "--server", url, "--json"});
  ASSERT_EQ(pushed.code, 0) << pushed.out << pushed.err;
  EXPECT_TRUE(json::parse(pushed.out).at("pushed").as_bool()) << pushed.out;
}

}  // namespace
}  // namespace shoal
