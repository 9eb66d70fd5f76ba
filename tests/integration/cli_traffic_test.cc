// Traffic through the `shoal` binary: interactive peers (`join`), `send dm|msg|ask`,
// `deliver pending`, `history` and `watch`, on a real local mesh started by `shoal up`.
#include <csignal>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "cli_fixture.h"
#include "mesh/endpoint.h"
#include "transport/creds_file.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;
using testing::eventually;

class CliTrafficTest : public CliTest {
 protected:
  // `up`, then a running `shoal join` peer; waits until it announced itself.
  Background* upWithPeer(std::vector<std::string> joinArgs) {
    EXPECT_EQ(up().code, 0);
    std::vector<std::string> args = {"join", "--keep-running"};
    args.insert(args.end(), joinArgs.begin(), joinArgs.end());
    Background* peer = spawnShoal(args);
    if (peer == nullptr) return nullptr;
    EXPECT_TRUE(outputShows(*peer, "✓ joined space itest")) << peer->output();
    return peer;
  }

  json::object runJson(std::vector<std::string> args) {
    args.push_back("--json");
    CliRun run = shoal(args);
    EXPECT_EQ(run.code, 0) << run.out << run.err;
    json::value v = json::parse(run.out);
    return v.is_object() ? v.as_object() : json::object{};
  }

  // An in-test observer of the mesh's roster (no presence of its own).
  std::unique_ptr<mesh::Endpoint> observer() {
    auto rec = record();
    EXPECT_TRUE(rec.isOk());
    mesh::EndpointOptions o;
    o.servers = {rec->url};
    if (authMode()) {  // a read-only observer credential, as a dashboard would hold
      const std::string file = home_->join("observer-" + std::to_string(runs_) + ".creds");
      CliRun minted = shoal({"creds", "mint", "observer", "--profile", "observer", "--out", file});
      EXPECT_EQ(minted.code, 0) << minted.out << minted.err;
      auto info = transport::readCredsFile(FileSystem::posix(), file);
      EXPECT_TRUE(info.isOk()) << info.status().toString();
      o.credentialsFile = file;
      o.inboxPrefix = info.isOk() ? info->inboxPrefix : "";
    } else {
      o.nkeySeedFile = rec->secretFile;
    }
    o.space = "itest";
    o.principal = wire::Principal{owner(), "observer"};
    o.presence = false;
    o.receiveDirect = false;
    o.onWarning = [](const Status&) {};
    auto endpoint = mesh::Endpoint::open(o);
    EXPECT_TRUE(endpoint.isOk()) << endpoint.status().toString();
    return endpoint.isOk() ? std::move(endpoint).value() : nullptr;
  }

  static std::optional<mesh::RosterRow> rowOf(mesh::Endpoint& e, const std::string& id) {
    auto snapshot = e.roster();
    if (!snapshot.view.fresh) return std::nullopt;
    for (auto& row : snapshot.rows)
      if (row.id == id) return row;
    return std::nullopt;
  }
};

// A joined peer receives a DM, a channel post that mentions it, and work for its role; the
// receipts are facts; history and deliver pending report what the broker holds.
TEST_F(CliTrafficTest, JoinedPeerReceivesDmPostAndWork) {
  Background* bob =
      upWithPeer({"--name", "bob", "--role", "reviewer", "--channel", "team.backend"});
  ASSERT_NE(bob, nullptr);

  json::object dm = runJson({"send", "dm", "bob", "hello", "there"});
  EXPECT_EQ(dm.at("kind").as_string(), "dm");
  EXPECT_EQ(dm.at("to").as_string(), owner() + ".bob");
  EXPECT_EQ(dm.at("recipientStatusAtSend").as_string(), "idle");
  json::object post = runJson({"send", "msg", "team.backend", "hi", "team", "--mention", "bob"});
  EXPECT_EQ(post.at("stream").as_string(), "CHAT_itest");
  EXPECT_EQ(post.at("mentions").as_array().size(), 1u);
  json::object work = runJson({"send", "ask", "reviewer", "review", "PR", "7"});
  EXPECT_EQ(work.at("stream").as_string(), "TASK_itest");
  EXPECT_NE(work.at("note").as_string().find(owner() + ".bob"), json::string::npos);

  EXPECT_TRUE(outputShows(*bob, "dm ")) << bob->output();
  EXPECT_TRUE(outputShows(*bob, "→ " + owner() + ".bob: hello there")) << bob->output();
  EXPECT_TRUE(outputShows(*bob, "#team.backend ")) << bob->output();
  EXPECT_TRUE(outputShows(*bob, ": hi team @bob")) << bob->output();
  EXPECT_TRUE(outputShows(*bob, "ask reviewer ")) << bob->output();

  // An unknown mention aborts the post: nothing is stored.
  CliRun refused = shoal({"send", "msg", "team.backend", "x", "--mention", "nobody"});
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.err.find("not sent"), std::string::npos) << refused.err;

  json::object history = runJson({"history", "team.backend"});
  ASSERT_EQ(history.at("posts").as_array().size(), 1u);
  const json::object& first = history.at("posts").as_array()[0].as_object();
  EXPECT_EQ(first.at("text").as_string(), "hi team");
  EXPECT_EQ(first.at("id").as_string(), post.at("id").as_string());
  // Reading history consumed nothing: a second read sees the same post.
  EXPECT_EQ(runJson({"history", "team.backend"}).at("posts").as_array().size(), 1u);

  ASSERT_TRUE(eventually([&] {
    json::object pending = runJson({"deliver", "pending", "bob"});
    return pending.at("pending").as_int64() == 0 && pending.at("ackPending").as_int64() == 0 &&
           pending.at("ackFloor").as_object().at("streamSeq").as_int64() == 1;
  }));
  json::object pending = runJson({"deliver", "pending", "bob"});
  EXPECT_EQ(std::string(pending.at("durable").as_string()).substr(0, 8 + owner().size()),
            "dm_" + owner() + "-bob-");
  EXPECT_TRUE(pending.at("oldestPending").is_null());
}

// A peer frozen with SIGSTOP goes offline in an observer within the liveness window while its
// DMs wait in its durable (deliver pending shows them); thawed, it is back and receives them.
TEST_F(CliTrafficTest, FrozenPeerGoesOfflineAndCatchesUp) {
  Background* bob = upWithPeer({"--name", "bob"});
  ASSERT_NE(bob, nullptr);
  auto watcher = observer();
  ASSERT_NE(watcher, nullptr);
  ASSERT_TRUE(eventually([&] {
    auto row = rowOf(*watcher, owner() + ".bob");
    return row && row->online();
  }));

  ASSERT_TRUE(bob->child.signal(SIGSTOP).isOk());
  // Sent by id: a frozen peer's row may already be gone from a fresh reader's view.
  json::object first = runJson({"send", "dm", owner() + ".bob", "one"});
  json::object second = runJson({"send", "dm", owner() + ".bob", "two"});
  ASSERT_TRUE(eventually([&] {
    json::object p = runJson({"deliver", "pending", owner() + ".bob", "--uid",
                              *rowOf(*watcher, owner() + ".bob")->presence.lifecycleUid});
    return p.at("pending").as_int64() + p.at("ackPending").as_int64() == 2;
  }));
  auto frozenRow = rowOf(*watcher, owner() + ".bob");
  ASSERT_TRUE(frozenRow.has_value());
  std::string uid = *frozenRow->presence.lifecycleUid;
  json::object backlog = runJson({"deliver", "pending", owner() + ".bob", "--uid", uid});
  ASSERT_TRUE(backlog.at("oldestPending").is_object());
  EXPECT_EQ(backlog.at("oldestPending").as_object().at("seq").as_int64(),
            first.at("seq").as_int64());

  // Offline within the window (6 s TTL) plus the sweep, in an observer that hears the bucket.
  auto frozenAt = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually(
      [&] {
        auto row = rowOf(*watcher, owner() + ".bob");
        return row && !row->online();
      },
      milliseconds(15000)));
  auto tookMs =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - frozenAt).count();
  // TTL + a heartbeat (the last one may have just been written) + a sweep + slack.
  EXPECT_LE(tookMs, 6000 + 2000 + 2000 + 1000) << "offline later than the liveness window";
  EXPECT_EQ(watcher->roster().view.state, mesh::ViewState::kCurrent);

  ASSERT_TRUE(bob->child.signal(SIGCONT).isOk());
  EXPECT_TRUE(outputShows(*bob, "→ " + owner() + ".bob: one")) << bob->output();
  EXPECT_TRUE(outputShows(*bob, "→ " + owner() + ".bob: two")) << bob->output();
  ASSERT_TRUE(eventually([&] {
    auto row = rowOf(*watcher, owner() + ".bob");
    return row && row->online();
  }));
  ASSERT_TRUE(eventually([&] {
    json::object p = runJson({"deliver", "pending", owner() + ".bob", "--uid", uid});
    return p.at("pending").as_int64() == 0 && p.at("ackPending").as_int64() == 0;
  }));
  (void)second;
}

// `watch` streams presence changes and traffic as lines.
TEST_F(CliTrafficTest, WatchStreamsPresenceAndTraffic) {
  ASSERT_EQ(up().code, 0);
  Background* watch = spawnShoal({"watch", "--plain", "--for", "30"});
  ASSERT_NE(watch, nullptr);
  ASSERT_TRUE(outputShows(*watch, "watching space itest")) << watch->output();
  Background* carol = spawnShoal({"join", "--keep-running", "--name", "carol", "--channel", "ops"});
  ASSERT_NE(carol, nullptr);
  ASSERT_TRUE(outputShows(*carol, "✓ joined space itest")) << carol->output();
  EXPECT_TRUE(outputShows(*watch, "carol (" + owner() + ".carol) present: idle"))
      << watch->output();
  ASSERT_EQ(shoal({"send", "msg", "ops", "status", "update"}).code, 0);
  EXPECT_TRUE(outputShows(*watch, "#ops ")) << watch->output();
  EXPECT_TRUE(outputShows(*watch, ": status update")) << watch->output();
  ASSERT_TRUE(carol->child.signal(SIGTERM).isOk());
  EXPECT_TRUE(outputShows(*carol, "✓ left the space")) << carol->output();
  EXPECT_TRUE(outputShows(*watch, "carol (" + owner() + ".carol) idle → offline"))
      << watch->output();
}

// A durable channel end to end under `shoal up`: the join says it is durable, `channels list`
// shows the member, `watch` shows the membership and the post's class, `deliver pending`
// shows the plane's job and the member's copies, and the peer shows the post once (its live
// and durable copies are one delivery).
TEST_F(CliTrafficTest, DurableChannelMembershipIsVisibleEverywhere) {
  Background* bob = upWithPeer({"--name", "bob", "--channel", "team"});
  ASSERT_NE(bob, nullptr);
  EXPECT_TRUE(outputShows(*bob, "✓ joined #team (durable, member generation 1")) << bob->output();
  json::object channels = runJson({"channels", "list"});
  ASSERT_TRUE(channels.contains("members")) << json::serialize(channels);
  ASSERT_EQ(channels.at("members").at("team").as_array().size(), 1u);
  EXPECT_EQ(channels.at("members").at("team").at(0).at("member").as_string(), owner() + ".bob");

  Background* watch = spawnShoal({"watch", "--json", "--for", "30"});
  ASSERT_NE(watch, nullptr);
  ASSERT_TRUE(outputShows(*watch, R"("type":"watching")")) << watch->output();
  EXPECT_TRUE(outputShows(*watch, R"("type":"member")")) << watch->output();
  json::object post = runJson({"send", "msg", "team", "durable", "hello"});
  EXPECT_TRUE(outputShows(*watch, R"("class":"durable")")) << watch->output();
  EXPECT_TRUE(outputShows(*bob, ": durable hello")) << bob->output();

  ASSERT_TRUE(eventually([&] {
    json::object jobs = runJson({"deliver", "pending"});
    return jobs.at("reader").at("handedOver").as_int64() == 1;
  }));
  json::object jobs = runJson({"deliver", "pending"});
  EXPECT_EQ(jobs.at("totals").at("delivered").as_int64(), 1) << json::serialize(jobs);
  bool found = false;
  for (const auto& j : jobs.at("jobs").as_array()) {
    if (j.at("messageId") == post.at("id") && j.at("key").as_string().starts_with("chat:")) {
      found = true;
      EXPECT_EQ(j.at("copies").as_int64(), 1);
      EXPECT_EQ(j.at("state").as_string(), "delivered");
    }
  }
  EXPECT_TRUE(found) << json::serialize(jobs);
  CliRun text = shoal({"deliver", "pending"});
  EXPECT_NE(text.out.find("handed over 1"), std::string::npos) << text.out;
  json::object status = runJson({"status"});
  EXPECT_EQ(status.at("planes").at(1).at("jobs").at("delivered").as_int64(), 1)
      << json::serialize(status);
  CliRun human = shoal({"status"});
  EXPECT_NE(human.out.find("jobs: 1 delivered"), std::string::npos) << human.out;
  ASSERT_TRUE(eventually([&] {
    json::object peer = runJson({"deliver", "pending", "bob"});
    return peer.at("channelCopies").is_object() &&
           peer.at("channelCopies").at("pending").as_int64() == 0 &&
           peer.at("channelCopies").at("ackPending").as_int64() == 0;
  }));
  // The durable copy is acked only after bob handled it (printed, or dropped as a duplicate).
  const std::string out = bob->output();
  size_t shown = 0;
  for (size_t at = out.find(": durable hello"); at != std::string::npos;
       at = out.find(": durable hello", at + 1)) {
    ++shown;
  }
  EXPECT_EQ(shown, 1u) << out;
}

// `join` reads commands from stdin; a second `join` of the same name is refused.
TEST_F(CliTrafficTest, JoinRunsScriptedCommands) {
  Background* bob = upWithPeer({"--name", "bob"});
  ASSERT_NE(bob, nullptr);
  CliRun twice = shoal({"join", "--name", "bob"});
  EXPECT_EQ(twice.code, 1);
  EXPECT_NE(twice.err.find("already joined"), std::string::npos) << twice.err;

  // Under a credential a peer reads and posts only the channels it was minted for (its
  // --channel list): a /join beyond them is refused by name, with the command that widens it.
  std::string script = home_->join("script");
  ASSERT_TRUE(writeFileAtomically(FileSystem::posix(), script,
                                  "/join ops\n/dm bob hi bob\n#ops hello ops\nplain line\n"
                                  "/frobnicate\n" +
                                      std::string(authMode() ? "/join elsewhere\n" : "") +
                                      "/quit\n")
                  .isOk());
  std::string outPath = home_->join("alice.out");
  std::vector<std::string> joinArgs = {"join", "--name", "alice"};
  if (authMode()) joinArgs.insert(joinArgs.end(), {"--channel", "ops"});
  SpawnOptions opts = shoalSpawn(joinArgs, outPath, outPath);
  // stdin comes from the script: run through sh for the redirection.
  std::string command;
  for (const auto& a : opts.argv)
    command += "'" + a + "' ";
  opts.argv = {"/bin/sh", "-c", command + "< '" + script + "'"};
  auto child = Subprocess::spawn(opts);
  ASSERT_TRUE(child.isOk()) << child.status().toString();
  auto exit = child->wait(std::chrono::seconds(30));
  ASSERT_TRUE(exit.isOk());
  std::string out = FileSystem::posix().readFile(outPath).valueOr("");
  EXPECT_EQ(exit->code, 0) << out;
  EXPECT_NE(out.find("✓ joined #ops"), std::string::npos) << out;
  EXPECT_NE(out.find("✗ unknown command"), std::string::npos) << out;
  if (authMode()) {
    EXPECT_NE(out.find("(join-refused)"), std::string::npos) << out;
    EXPECT_NE(out.find("--channel ops --channel elsewhere`"), std::string::npos) << out;
  }
  EXPECT_NE(out.find("✓ left the space"), std::string::npos) << out;
  EXPECT_TRUE(outputShows(*bob, "→ " + owner() + ".bob: hi bob")) << bob->output();

  json::object history = runJson({"history", "ops"});
  ASSERT_EQ(history.at("posts").as_array().size(), 2u);
  EXPECT_EQ(history.at("posts").as_array()[0].as_object().at("text").as_string(), "hello ops");
  EXPECT_EQ(history.at("posts").as_array()[1].as_object().at("text").as_string(), "plain line");
}

}  // namespace
}  // namespace shoal
