// The `shoal` binary's local-mesh lifecycle, run as a user would: real processes, a real
// nats-server, files under a private HOME. Each test owns its HOME, so tests never share a mesh.
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/process_info.h"
#include "base/subprocess.h"
#include "cli_fixture.h"
#include "supervisor/mesh_record.h"
#include "testing/eventually.h"
#include "testing/temp_dir.h"
#include "transport/connection.h"
#include "transport/jetstream.h"
#include "transport/kv.h"
#include "transport/pull_consumer.h"
#include "wire/inbound.h"
#include "wire/presence.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

namespace json = boost::json;
using testing::eventually;

class CliMeshTest : public CliTest {};

// `up` starts a broker with JetStream, `status --json` reports it, a second `up` changes
// nothing, and `down` stops every process it started.
TEST_F(CliMeshTest, UpStatusDownLifecycle) {
  CliRun first = up();
  ASSERT_EQ(first.code, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("✓ mesh `itest` up"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("✓ manager plane serving"), std::string::npos) << first.out;

  auto rec = record();
  ASSERT_TRUE(rec.isOk()) << rec.status().toString();
  EXPECT_TRUE(processExists(static_cast<pid_t>(rec->supervisorPid)));
  EXPECT_TRUE(processExists(static_cast<pid_t>(rec->brokerPid)));
  EXPECT_EQ(rec->storeDir, home_->join("data") + "/shoal/itest/broker");

  CliRun status = shoal({"status", "--json"});
  ASSERT_EQ(status.code, 0) << status.out << status.err;
  json::value v = json::parse(status.out);
  EXPECT_TRUE(v.at("ok").as_bool());
  EXPECT_TRUE(v.at("broker").at("reachable").as_bool());
  EXPECT_TRUE(v.at("broker").at("jetstream").as_bool());
  EXPECT_FALSE(v.at("broker").at("version").as_string().empty());
  EXPECT_EQ(v.at("mode").as_string(), "open");
  EXPECT_EQ(v.at("local").at("storeDir").as_string(), rec->storeDir);
  // The secret the broker requires is named by its file, never by its content.
  EXPECT_EQ(v.at("secretFile").as_string(), home_->join("state") + "/shoal/secrets/itest.nk");
  EXPECT_EQ(rec->secretFile, v.at("secretFile").as_string());
  auto seed = FileSystem::posix().readFile(rec->secretFile);
  ASSERT_TRUE(seed.isOk());
  EXPECT_EQ(status.out.find(seed->substr(0, 20)), std::string::npos);
  // `up` returns once the manager and delivery planes serve.
  ASSERT_EQ(v.at("planes").as_array().size(), 2u);
  EXPECT_EQ(v.at("planes").at(0).at("plane").as_string(), "manager");
  EXPECT_EQ(v.at("planes").at(0).at("responder").as_string(), "bound");
  EXPECT_EQ(v.at("planes").at(1).at("plane").as_string(), "delivery");
  EXPECT_EQ(v.at("planes").at(1).at("responder").as_string(), "bound");
  auto servePid = static_cast<pid_t>(v.at("local").at("servePid").as_int64());
  EXPECT_TRUE(processExists(servePid));

  CliRun human = shoal({"status"});
  EXPECT_EQ(human.code, 0);
  EXPECT_NE(human.out.find("JetStream ready"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("open mode"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("only holders of the mesh secret"), std::string::npos) << human.out;

  CliRun again = up();
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_NE(again.out.find("already up"), std::string::npos) << again.out;
  EXPECT_EQ(record()->supervisorPid, rec->supervisorPid);

  CliRun down = shoal({"down"});
  ASSERT_EQ(down.code, 0) << down.err;
  EXPECT_NE(down.out.find("stopped"), std::string::npos) << down.out;
  EXPECT_FALSE(processExists(static_cast<pid_t>(rec->supervisorPid)));
  EXPECT_FALSE(processExists(static_cast<pid_t>(rec->brokerPid)));
  EXPECT_FALSE(processExists(servePid));
  EXPECT_EQ(record().status().code(), StatusCode::kNotFound);

  CliRun after = shoal({"status", "--json"});
  EXPECT_EQ(after.code, 1);
  EXPECT_EQ(json::parse(after.out).at("error").at("reason").as_string(), "mesh-not-up");
}

// A broker that crashes is restarted by the supervisor on the same port and store.
TEST_F(CliMeshTest, SupervisorRestartsCrashedBroker) {
  ASSERT_EQ(up().code, 0);
  auto before = record();
  ASSERT_TRUE(before.isOk());
  ASSERT_TRUE(signalProcess(static_cast<pid_t>(before->brokerPid), SIGKILL).isOk());
  ASSERT_TRUE(eventually(
      [&] {
        auto now = record();
        return now.isOk() && now->brokerPid != before->brokerPid &&
               processExists(static_cast<pid_t>(now->brokerPid));
      },
      std::chrono::seconds(20)));
  EXPECT_EQ(record()->port, before->port);
  ASSERT_TRUE(eventually([&] { return shoal({"status"}).code == 0; }, std::chrono::seconds(20)));
}

// A supervisor killed outright leaves its broker and planes behind; `down` stops exactly those
// (their command lines prove they are this space's) and nothing else.
TEST_F(CliMeshTest, DownStopsOrphansOfAKilledSupervisor) {
  ASSERT_EQ(up().code, 0);
  auto rec = record();
  ASSERT_TRUE(rec.isOk());
  ASSERT_TRUE(eventually([&] { return record()->servePid > 0; }, std::chrono::seconds(20)));
  rec = record();
  ASSERT_TRUE(signalProcess(static_cast<pid_t>(rec->supervisorPid), SIGKILL).isOk());
  ASSERT_TRUE(eventually([&] { return !processExists(static_cast<pid_t>(rec->supervisorPid)); }));
  EXPECT_TRUE(processExists(static_cast<pid_t>(rec->brokerPid)));

  CliRun down = shoal({"down"});
  ASSERT_EQ(down.code, 0) << down.err;
  EXPECT_FALSE(processExists(static_cast<pid_t>(rec->brokerPid)));
  EXPECT_FALSE(processExists(static_cast<pid_t>(rec->servePid)));
  EXPECT_EQ(record().status().code(), StatusCode::kNotFound);
}

// `endpoints` lists what peers published in presence, with their status and activity, and
// leaves out a forged record whose card.id does not match its key.
TEST_F(CliMeshTest, EndpointsListsPresence) {
  ASSERT_NO_FATAL_FAILURE(upAndConnect());
  ASSERT_NO_FATAL_FAILURE(putPresence("local.alice", "alice", "reviewing the journal"));
  // Forged: the record under local.mallory carries card.id local.alice.
  ASSERT_NO_FATAL_FAILURE(
      putPresence("local.mallory", "alice", "reviewing the journal", "local.alice"));

  CliRun r = shoal({"endpoints", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  json::value v = json::parse(r.out);
  EXPECT_EQ(v.at("view").at("state").as_string(), "current");
  const json::array& rows = v.at("endpoints").as_array();
  ASSERT_EQ(rows.size(), 1u) << r.out;
  EXPECT_EQ(rows[0].at("id").as_string(), "local.alice");
  EXPECT_EQ(rows[0].at("status").as_string(), "working");
  EXPECT_EQ(rows[0].at("activity").as_string(), "reviewing the journal");

  CliRun human = shoal({"endpoints"});
  EXPECT_NE(human.out.find("alice"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("working"), std::string::npos) << human.out;
}

// A peer's name and activity are its own bytes: a bidi override, an invisible character or a
// terminal escape written into its presence record (a raw KV put, as any principal with a
// presence grant could) prints as a visible escape in `endpoints` and `watch`, never raw.
TEST_F(CliMeshTest, PeerControlledPresenceTextPrintsInert) {
  ASSERT_NO_FATAL_FAILURE(upAndConnect());
  Background* watch = spawnShoal({"watch", "--plain", "--for", "30"});
  ASSERT_NE(watch, nullptr);
  ASSERT_TRUE(outputShows(*watch, "watching space itest")) << watch->output();
  const std::string rlo = "\u202E", lri = "\u2066", esc = "\x1b";
  ASSERT_NO_FATAL_FAILURE(putPresence("local.eve", "eve" + rlo + "gpj.exe",
                                      "fixing" + lri + " the" + esc + "[2J build"));

  CliRun human = shoal({"endpoints"});
  ASSERT_EQ(human.code, 0) << human.err;
  EXPECT_NE(human.out.find("eve\\u{202E}gpj.exe"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("fixing\\u{2066} the\\x1B[2J build"), std::string::npos) << human.out;
  EXPECT_TRUE(outputShows(*watch, "eve\\u{202E}gpj.exe (local.eve) present: working"))
      << watch->output();
  EXPECT_TRUE(outputShows(*watch, "fixing\\u{2066} the\\x1B[2J build")) << watch->output();
  for (const std::string& raw : {rlo, lri, esc}) {
    EXPECT_EQ(human.out.find(raw), std::string::npos) << "raw bytes in endpoints";
    EXPECT_EQ(watch->output().find(raw), std::string::npos) << "raw bytes in watch";
  }
}

// `send dm` resolves a name through the roster, stores the DM on the recipient's inst subject
// (sender = the operator principal, Nats-Msg-Id = id), and its receipt states the stored
// sequence and the roster status at send — never "delivered". An unknown name is not sent.
TEST_F(CliMeshTest, SendDmStoresAndReportsFacts) {
  ASSERT_NO_FATAL_FAILURE(upAndConnect());
  ASSERT_NO_FATAL_FAILURE(putPresence("local.alice", "Alice", ""));

  CliRun sent = shoal({"send", "dm", "alice", "please", "review", "--json"});
  ASSERT_EQ(sent.code, 0) << sent.err;
  json::value receipt = json::parse(sent.out);
  EXPECT_EQ(receipt.at("stream").as_string(), "DM_itest");
  EXPECT_EQ(receipt.at("seq").as_int64(), 1);
  EXPECT_EQ(receipt.at("to").as_string(), "local.alice");
  EXPECT_EQ(receipt.at("recipientStatusAtSend").as_string(), "working");
  EXPECT_EQ(sent.out.find("delivered"), std::string::npos);

  transport::ConsumerConfig cc;
  cc.durable = "itest_reader";
  cc.filterSubject = "cotal.itest.inst.local.alice.>";
  ASSERT_TRUE(js_->addConsumer("DM_itest", cc).isOk());
  auto consumer = transport::PullConsumer::bind(*js_, "DM_itest", "itest_reader");
  ASSERT_TRUE(consumer.isOk()) << consumer.status().toString();
  auto msgs = consumer->fetch(1, std::chrono::seconds(5));
  ASSERT_TRUE(msgs.isOk());
  ASSERT_EQ(msgs->size(), 1u);
  const transport::JsMessage& m = msgs->front();
  auto delivery = wire::readDelivery(m.subject(), m.data());
  ASSERT_TRUE(delivery.isOk()) << delivery.status().toString();
  EXPECT_EQ(delivery->kind, wire::DeliveryKind::kDm);
  EXPECT_EQ(delivery->message.from.id, receipt.at("from").as_string());
  EXPECT_EQ(delivery->message.id, receipt.at("id").as_string());
  EXPECT_EQ(m.header("Nats-Msg-Id").value_or(""), delivery->message.id);
  ASSERT_EQ(delivery->message.parts.size(), 1u);
  EXPECT_EQ(std::get<wire::TextPart>(delivery->message.parts[0]).text, "please review");

  CliRun unknown = shoal({"send", "dm", "nobody", "hello"});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.err.find("not sent"), std::string::npos) << unknown.err;
  EXPECT_EQ(js_->streamInfo("DM_itest")->state.lastSeq, 1u);
}

// Without nats-server, `up` refuses, names scripts/bootstrap, and records nothing.
TEST_F(CliMeshTest, MissingNatsServerNamesBootstrap) {
  CliRun r = shoal({"up", "--nats-server", home_->join("no-such-nats-server")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("scripts/bootstrap"), std::string::npos) << r.err;
  EXPECT_EQ(record().status().code(), StatusCode::kNotFound);
}

// Open mode listens on loopback only: `up --host 0.0.0.0` refuses, names why, starts nothing
// and records nothing — in the foreground too.
TEST_F(CliMeshTest, UpRefusesAnAddressBeyondLoopback) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"up", "--host", "0.0.0.0", "--json"},
        std::vector<std::string>{"up", "--host", "0.0.0.0", "--foreground", "--json"}}) {
    CliRun r = shoal(args);
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find(R"("reason":"open-mode-off-loopback")"), std::string::npos) << r.out;
    EXPECT_EQ(record().status().code(), StatusCode::kNotFound);
  }
}

// `down` with nothing running says so and succeeds.
TEST_F(CliMeshTest, DownWithNothingRunningIsNoOp) {
  CliRun r = shoal({"down"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("nothing to stop"), std::string::npos) << r.out;
}

// `down` never signals a process it did not start, even if the record names its pid.
TEST_F(CliMeshTest, DownNeverSignalsForeignProcess) {
  SpawnOptions opts;
  opts.argv = {"sleep", "300"};
  opts.killOnDestroy = true;
  auto foreign = Subprocess::spawn(opts);
  ASSERT_TRUE(foreign.isOk());
  supervisor::MeshRecord fake;
  fake.space = "itest";
  fake.url = "nats://127.0.0.1:1";
  fake.host = "127.0.0.1";
  fake.port = 1;
  fake.storeDir = home_->join("store");
  fake.brokerPid = foreign->pid();
  fake.supervisorPid = foreign->pid();
  ASSERT_TRUE(supervisor::writeMeshRecord(FileSystem::posix(), recordPath(), fake).isOk());

  CliRun r = shoal({"down"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("stale record"), std::string::npos) << r.out;
  auto polled = foreign->poll();
  ASSERT_TRUE(polled.isOk());
  EXPECT_FALSE(polled->has_value()) << "down signalled a process it did not start";
}

// A damaged record is refused by `status` with the remedy, and `down --force` clears it.
TEST_F(CliMeshTest, DamagedRecordNeedsForce) {
  ASSERT_TRUE(FileSystem::posix().createDirs(home_->join("state") + "/shoal/meshes").isOk());
  ASSERT_TRUE(writeFileAtomically(FileSystem::posix(), recordPath(), "{not json").isOk());
  CliRun status = shoal({"status"});
  EXPECT_EQ(status.code, 1);
  EXPECT_NE(status.err.find("shoal down --force"), std::string::npos) << status.err;
  EXPECT_EQ(shoal({"down"}).code, 1);
  EXPECT_EQ(shoal({"down", "--force"}).code, 0);
  EXPECT_EQ(record().status().code(), StatusCode::kNotFound);
}

// `--version` names the binary and its version.
TEST_F(CliMeshTest, VersionFlag) {
  CliRun r = shoal({"--version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.rfind("shoal ", 0), 0u) << r.out;
}

}  // namespace
}  // namespace shoal
