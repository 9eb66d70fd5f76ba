// `shoal daemon run|status` and `shoal seat add|list|show|rm` through the real binary.
#include <algorithm>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "cli_fixture.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

namespace json = boost::json;

class CliDaemonTest : public CliTest {};

TEST_F(CliDaemonTest, SeatRegistryThroughTheDaemon) {
  ASSERT_EQ(upWithoutDaemon().code, 0);
  CliRun none = shoal({"seat", "list"});
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.err.find("shoal daemon run"), std::string::npos) << none.err;

  Background* daemon = spawnShoal({"daemon", "run"});
  ASSERT_NE(daemon, nullptr);
  ASSERT_TRUE(outputShows(*daemon, "✓ daemon serving space itest")) << daemon->output();

  CliRun added = shoal({"seat", "add", "Code Reviewer", "--role", "reviewer", "--channel",
                        "team.backend", "--json", "--", "/bin/cat", "-u"});
  ASSERT_EQ(added.code, 0) << added.err;
  json::object snap = json::parse(added.out).as_object();
  EXPECT_EQ(snap.at("profile").at("id").as_string(), owner() + ".code_reviewer");
  EXPECT_EQ(snap.at("profile").at("command").as_array().size(), 2u);
  std::string cwd(snap.at("profile").at("cwd").as_string());
  const std::string seatDir = "/seats/" + owner() + ".code_reviewer";
  EXPECT_EQ(cwd.substr(cwd.size() - seatDir.size()), seatDir);

  CliRun dup = shoal({"seat", "add", "Code Reviewer", "--", "/bin/cat"});
  EXPECT_EQ(dup.code, 1);
  EXPECT_NE(dup.err.find("already exists"), std::string::npos) << dup.err;
  CliRun bad = shoal({"seat", "add", "x", "--channel", "team.*", "--", "/bin/cat"});
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("concrete channel"), std::string::npos) << bad.err;

  CliRun list = shoal({"seat", "list", "--json"});
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_EQ(json::parse(list.out).at("seats").as_array().size(), 1u);
  CliRun shown = shoal({"seat", "show", "Code Reviewer"});
  EXPECT_EQ(shown.code, 0) << shown.err;
  EXPECT_NE(shown.out.find("command: /bin/cat -u"), std::string::npos) << shown.out;
  CliRun status = shoal({"daemon", "status", "--json"});
  ASSERT_EQ(status.code, 0) << status.err;
  ASSERT_EQ(json::parse(status.out).at("seats").as_array().size(), 1u);
  EXPECT_TRUE(json::parse(status.out).at("seats").as_array()[0].at("running").as_bool())
      << status.out;

  // The seat is on the mesh: a DM reaches its runtime's stdin (cat echoes it to the log).
  CliRun dm = shoal({"send", "dm", owner() + ".code_reviewer", "please", "look"});
  ASSERT_EQ(dm.code, 0) << dm.err;
  EXPECT_TRUE(testing::eventually([&] {
    return FileSystem::posix()
               .readFile(cwd + "/.shoal/runtime.log")
               .valueOr("")
               .find("please look") != std::string::npos;
  })) << FileSystem::posix().readFile(cwd + "/.shoal/runtime.log").valueOr("");

  // --wait surfaced: the seat's receipt reaches the sender.
  CliRun waited = shoal({"send", "dm", owner() + ".code_reviewer", "are", "you", "there", "--wait",
                         "surfaced=20", "--json"});
  ASSERT_EQ(waited.code, 0) << waited.out << waited.err;
  json::object w = json::parse(waited.out).as_object();
  ASSERT_TRUE(w.at("surfacedAt").is_int64()) << waited.out;
  EXPECT_GE(w.at("surfacedAfterMs").as_int64(), 0);
  CliRun human =
      shoal({"send", "dm", owner() + ".code_reviewer", "again", "--wait", "surfaced=20"});
  ASSERT_EQ(human.code, 0) << human.err;
  EXPECT_NE(human.out.find("✓ surfaced at"), std::string::npos) << human.out;
  // `shoal ps` says what proved each one: cat read all three from its stdin.
  json::object execRow;
  EXPECT_TRUE(testing::eventually([&] {
    CliRun ps = shoal({"ps", "--json"});
    if (ps.code != 0) return false;
    execRow = json::parse(ps.out).at("seats").as_array()[0].as_object();
    return execRow.at("surfaced").as_int64() == 3;
  })) << json::serialize(execRow);
  EXPECT_EQ(execRow.at("surfacedBy").at("stdin-read").as_int64(), 3) << json::serialize(execRow);
  EXPECT_EQ(execRow.at("surfacedBy").at("runtime-ack").as_int64(), 0);
  // Nobody runs <owner>.nobody: stored, not confirmed — exit 4, saying what it did not see.
  CliRun unconfirmed = shoal({"send", "dm", owner() + ".nobody", "hello", "--wait", "surfaced=1"});
  EXPECT_EQ(unconfirmed.code, 4) << unconfirmed.err;
  EXPECT_NE(unconfirmed.out.find("not seen surfaced within 1s"), std::string::npos)
      << unconfirmed.out;

  int64_t rev = snap.at("revision").as_int64();
  CliRun stale =
      shoal({"seat", "rm", owner() + ".code_reviewer", "--revision", std::to_string(rev + 50)});
  EXPECT_EQ(stale.code, 1);
  EXPECT_NE(stale.err.find("no longer at revision"), std::string::npos) << stale.err;
  CliRun removed = shoal({"seat", "rm", "Code Reviewer"});
  EXPECT_EQ(removed.code, 0) << removed.err;
  EXPECT_EQ(json::parse(shoal({"seat", "list", "--json"}).out).at("seats").as_array().size(), 0u);

  // A second daemon for the same space is refused while the first runs.
  CliRun second = shoal({"daemon", "run"});
  EXPECT_EQ(second.code, 1);
  EXPECT_NE(second.err.find("a daemon already serves"), std::string::npos) << second.err;
}

// The durable members of `channel` as `shoal channels list` reports them.
std::vector<std::string> membersOf(const CliRun& listed, const std::string& channel) {
  std::vector<std::string> out;
  boost::system::error_code ec;
  json::value v = json::parse(listed.out, ec);
  if (ec || !v.is_object()) return out;
  const json::value* members = v.as_object().if_contains("members");
  if (members == nullptr || !members->is_object()) return out;
  const json::value* rows = members->as_object().if_contains(channel);
  if (rows == nullptr) return out;
  for (const auto& r : rows->as_array())
    out.emplace_back(r.at("member").as_string());
  return out;
}

// `shoal seat channels`: the person changes what a seat reads. In auth mode the seat's own
// shoal_join of a channel its profile does not declare is refused by the broker, naming the
// command; with the channel added the seat reopens and a post there reaches its runtime; removed,
// its durable membership ends at the delivery plane.
TEST_F(CliDaemonTest, SeatChannelsChangeWhatASeatReads) {
  ASSERT_EQ(up().code, 0);
  CliRun added =
      shoal({"seat", "add", "Lookout", "--channel", "team", "--json", "--", "/bin/cat", "-u"});
  ASSERT_EQ(added.code, 0) << added.err;
  const std::string cwd(json::parse(added.out).at("profile").at("cwd").as_string());
  const std::string me = owner() + ".lookout";

  const std::string input =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
      R"("capabilities":{},"clientInfo":{"name":"cli-test","version":"1"}}})"
      "\n"
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
      "\n"
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shoal_join",)"
      R"("arguments":{"channel":"ops"}}})"
      "\n";
  CliRun join = shoalWithInput({"mcp", "--seat", "Lookout"}, input);
  ASSERT_EQ(join.code, 0) << join.out << join.err;
  const size_t second = join.out.find('\n');
  ASSERT_NE(second, std::string::npos) << join.out;
  json::value called = json::parse(join.out.substr(second + 1));
  const json::object& result = called.at("result").as_object();
  const std::string text(result.at("content").at(0).at("text").as_string());
  if (authMode()) {
    EXPECT_TRUE(result.at("isError").as_bool()) << text;
    EXPECT_NE(text.find("join-refused"), std::string::npos) << text;
    EXPECT_NE(text.find("only the channels its profile declares (#team)"), std::string::npos)
        << text;
    EXPECT_NE(text.find("`shoal seat channels \"Lookout\" --add ops`"), std::string::npos) << text;
  } else {
    EXPECT_FALSE(result.contains("isError") && result.at("isError").as_bool()) << text;
    EXPECT_NE(text.find("joined #ops"), std::string::npos) << text;
  }

  CliRun widened = shoal({"seat", "channels", "Lookout", "--add", "ops", "--json"});
  ASSERT_EQ(widened.code, 0) << widened.out << widened.err;
  json::object w = json::parse(widened.out).as_object();
  EXPECT_EQ(w.at("profile").at("channels"), (json::array{"team", "ops"})) << widened.out;
  EXPECT_NE(w.at("note").as_string().find("reopened"), std::string::npos) << widened.out;
  ASSERT_EQ(shoal({"send", "msg", "ops", "hello", "ops"}).code, 0);
  EXPECT_TRUE(testing::eventually([&] {
    return FileSystem::posix()
               .readFile(cwd + "/.shoal/runtime.log")
               .valueOr("")
               .find("hello ops") != std::string::npos;
  })) << FileSystem::posix().readFile(cwd + "/.shoal/runtime.log").valueOr("");
  std::vector<std::string> ops = membersOf(shoal({"channels", "list", "--json"}), "ops");
  EXPECT_NE(std::find(ops.begin(), ops.end(), me), ops.end());

  // Removed: the reopened seat ends its durable membership; `seat channels` shows the rest.
  CliRun narrowed = shoal({"seat", "channels", me, "--remove", "ops", "--json"});
  ASSERT_EQ(narrowed.code, 0) << narrowed.out << narrowed.err;
  EXPECT_EQ(json::parse(narrowed.out).at("profile").at("channels"), (json::array{"team"}));
  EXPECT_TRUE(testing::eventually([&] {
    ops = membersOf(shoal({"channels", "list", "--json"}), "ops");
    return std::find(ops.begin(), ops.end(), me) == ops.end();
  }));
  CliRun shown = shoal({"seat", "channels", "Lookout"});
  EXPECT_EQ(shown.code, 0) << shown.err;
  EXPECT_NE(shown.out.find("seat " + me + " joins #team"), std::string::npos) << shown.out;

  // Refused, nothing changed: a wildcard, an unknown seat.
  CliRun wildcard = shoal({"seat", "channels", "Lookout", "--add", "team.*"});
  EXPECT_EQ(wildcard.code, 1);
  EXPECT_NE(wildcard.err.find("concrete channel"), std::string::npos) << wildcard.err;
  CliRun unknown = shoal({"seat", "channels", "Nobody", "--add", "ops"});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.err.find("unknown-seat"), std::string::npos) << unknown.err;
}

// `shoal up` runs the daemon: a Claude seat (the fake CLI) surfaces a DM, sleeps, cold-starts on
// the next DM, tells its lifecycle through `seat events`, and `shoal down` ends its runtime.
TEST_F(CliDaemonTest, UpRunsTheDaemonAndAClaudeSeatSleepsAndWakes) {
  ASSERT_EQ(up().code, 0);
  const std::string fakeLog = home_->join("fake.log");
  CliRun added = shoal({"seat", "add", "Claude Fake", "--runtime", "claude", "--",
                        FAKE_CLAUDE_BINARY, "--fake-log", fakeLog});
  ASSERT_EQ(added.code, 0) << added.out << added.err;
  CliRun mesh = shoal({"status"});
  EXPECT_NE(mesh.out.find("✓ seat daemon pid"), std::string::npos) << mesh.out;
  CliRun meshJson = shoal({"status", "--json"});
  json::value meshParsed = json::parse(meshJson.out);
  EXPECT_EQ(meshParsed.at("daemon").at("seats").as_array().size(), 1u) << meshJson.out;
  CliRun first = shoal({"send", "dm", "Claude Fake", "first", "task", "--wait", "surfaced=20"});
  ASSERT_EQ(first.code, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("✓ surfaced at"), std::string::npos) << first.out;

  // The fake answers no one: at its turn end the DM closes completed_without_visible_reply,
  // exactly once, and `shoal ps` shows it.
  json::object psRow;
  ASSERT_TRUE(testing::eventually([&] {
    CliRun ps = shoal({"ps", "--json"});
    if (ps.code != 0) return false;
    psRow = json::parse(ps.out).at("seats").as_array()[0].as_object();
    return !psRow.at("recentResults").as_array().empty();
  }));
  ASSERT_EQ(psRow.at("recentResults").as_array().size(), 1u);
  EXPECT_EQ(psRow.at("recentResults").at(0).at("result"), "completed_without_visible_reply");
  EXPECT_EQ(psRow.at("noVisibleReply").as_int64(), 1);
  EXPECT_EQ(psRow.at("awaitingReply").as_int64(), 0);
  // What proved it: the runtime echoed the handoff; the broker stored its receipt.
  EXPECT_EQ(psRow.at("surfaced").as_int64(), 1);
  EXPECT_EQ(psRow.at("surfacedBy").at("runtime-ack").as_int64(), 1) << json::serialize(psRow);
  EXPECT_EQ(psRow.at("surfacedBy").at("stdin-write").as_int64(), 0);
  EXPECT_EQ(psRow.at("receiptsOwed").as_int64(), 0);
  // --wait replied: the fake never answers, so its turn ends without a visible reply (exit 5).
  CliRun unanswered =
      shoal({"send", "dm", "Claude Fake", "anyone", "there?", "--wait", "replied=20"});
  EXPECT_EQ(unanswered.code, 5) << unanswered.out << unanswered.err;
  EXPECT_NE(unanswered.out.find("without a visible reply"), std::string::npos) << unanswered.out;
  // The demo agent answers through its seat's shoal_dm: replied, naming the reply (exit 0).
  CliRun demo = shoal({"seat", "add", "Demo", "--runtime", "claude", "--", SHOAL_DEMO_AGENT_BINARY,
                       "--name", "demo"});
  ASSERT_EQ(demo.code, 0) << demo.out << demo.err;
  CliRun answered = shoal({"send", "dm", "Demo", "hello", "--wait", "replied=20", "--json"});
  ASSERT_EQ(answered.code, 0) << answered.out << answered.err;
  json::value answeredJson = json::parse(answered.out);
  EXPECT_EQ(answeredJson.at("wakeResult"), "replied");
  EXPECT_FALSE(answeredJson.at("replyId").as_string().empty());
  CliRun psText = shoal({"ps"});
  ASSERT_EQ(psText.code, 0) << psText.err;
  EXPECT_NE(psText.out.find("Claude Fake"), std::string::npos) << psText.out;
  EXPECT_NE(psText.out.find("completed_without_visible_reply"), std::string::npos) << psText.out;
  EXPECT_NE(psText.out.find("  surfaced 2 (2 runtime-ack)"), std::string::npos) << psText.out;

  CliRun slept = shoal({"seat", "sleep", "Claude Fake"});
  ASSERT_EQ(slept.code, 0) << slept.err;
  EXPECT_NE(slept.out.find("sleeping"), std::string::npos) << slept.out;
  CliRun status = shoal({"daemon", "status", "--json"});
  ASSERT_EQ(status.code, 0) << status.err;
  json::value parsedStatus = json::parse(status.out);
  json::object row = parsedStatus.at("seats").as_array()[0].as_object();
  EXPECT_EQ(row.at("state").as_string(), "sleeping") << status.out;
  EXPECT_EQ(row.at("desired").as_string(), "sleeping") << status.out;
  EXPECT_FALSE(row.at("running").as_bool());

  // A fresh DM wakes it: the runtime starts with that DM.
  CliRun second = shoal({"send", "dm", "Claude Fake", "wake", "up", "--wait", "surfaced=20"});
  ASSERT_EQ(second.code, 0) << second.out << second.err;
  status = shoal({"daemon", "status", "--json"});
  parsedStatus = json::parse(status.out);
  row = parsedStatus.at("seats").as_array()[0].as_object();
  EXPECT_EQ(row.at("coldStarts").as_int64(), 1) << status.out;

  CliRun events = shoal({"seat", "events", "Claude Fake", "--json"});
  ASSERT_EQ(events.code, 0) << events.out << events.err;
  std::string kinds;
  json::value parsedEvents = json::parse(events.out);
  for (const auto& e : parsedEvents.at("events").as_array()) {
    kinds += std::string(e.at("kind").as_string()) + " ";
    EXPECT_EQ(e.at("seat").at("name").as_string(), "Claude Fake");
  }
  EXPECT_NE(kinds.find("started turn-completed wake-result turn-completed wake-result stopped "
                       "started turn-completed wake-result"),
            std::string::npos)
      << kinds;
  CliRun readable = shoal({"seat", "events", "Claude Fake"});
  EXPECT_NE(readable.out.find("turn-completed"), std::string::npos) << readable.out;

  // Down stops the daemon first: the seat's runtime ends with it.
  ASSERT_EQ(shoal({"down"}).code, 0);
  EXPECT_TRUE(testing::eventually([&] {
    return FileSystem::posix().readFile(fakeLog).valueOr("").find("\"event\":\"exit\"") !=
           std::string::npos;
  }));
}

// `shoal seat compact` and `seat interrupt`: a Codex seat (the fake app-server) compacts when
// idle and says so; the seat's row shows the compaction and whether its session is safe to
// resume; a hung turn is interrupted and the seat goes on; a runtime that cannot compact on
// request is refused with the reason.
TEST_F(CliDaemonTest, SeatCompactAndInterruptOnACodexSeat) {
  ASSERT_EQ(up().code, 0);
  CliRun added = shoal({"seat", "add", "Coder", "--runtime", "codex", "--", FAKE_CODEX_BINARY,
                        "app-server", "--compact-ms", "300"});
  ASSERT_EQ(added.code, 0) << added.out << added.err;
  CliRun first = shoal({"send", "dm", "Coder", "first", "task", "--wait", "surfaced=20"});
  ASSERT_EQ(first.code, 0) << first.out << first.err;
  // Refused while its turn may still run, accepted once idle: retry until it starts.
  CliRun compacted;
  ASSERT_TRUE(testing::eventually([&] {
    compacted = shoal({"seat", "compact", "Coder"});
    return compacted.code == 0 || compacted.err.find("in a turn") == std::string::npos;
  })) << compacted.err;
  ASSERT_EQ(compacted.code, 0) << compacted.out << compacted.err;
  EXPECT_NE(compacted.out.find("✓ seat " + owner() + ".coder compacted in"), std::string::npos)
      << compacted.out;
  CliRun shown = shoal({"seat", "show", "Coder"});
  ASSERT_EQ(shown.code, 0) << shown.err;
  EXPECT_NE(shown.out.find("last compaction: compacted"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("(safe to resume)"), std::string::npos) << shown.out;
  CliRun row = shoal({"seat", "show", "Coder", "--json"});
  ASSERT_EQ(row.code, 0) << row.err;
  json::value seat = json::parse(row.out).at("seat");
  EXPECT_EQ(seat.at("compaction").at("state"), "compacted") << row.out;
  EXPECT_FALSE(seat.at("session").at("id").as_string().empty()) << row.out;
  // The next DM still surfaces.
  CliRun after = shoal({"send", "dm", "Coder", "after", "compaction", "--wait", "surfaced=20"});
  EXPECT_EQ(after.code, 0) << after.out << after.err;

  // `seat interrupt`: nothing to stop when idle; a hung turn stops, the seat goes on.
  CliRun idle;
  ASSERT_TRUE(testing::eventually([&] {
    idle = shoal({"seat", "interrupt", "Coder"});
    return idle.err.find("no turn to interrupt") != std::string::npos;
  })) << idle.out
      << idle.err;
  EXPECT_EQ(idle.code, 1);
  CliRun hung = shoal({"send", "dm", "Coder", "FAKE_HANG", "--wait", "surfaced=20"});
  ASSERT_EQ(hung.code, 0) << hung.out << hung.err;
  CliRun stopped = shoal({"seat", "interrupt", "Coder"});
  EXPECT_EQ(stopped.code, 0) << stopped.out << stopped.err;
  EXPECT_NE(stopped.out.find("✓ seat " + owner() + ".coder: the turn was interrupted"),
            std::string::npos)
      << stopped.out;
  CliRun again = shoal({"send", "dm", "Coder", "and", "on", "--wait", "surfaced=20"});
  EXPECT_EQ(again.code, 0) << again.out << again.err;

  CliRun exec = shoal({"seat", "add", "Plain", "--", "/bin/cat", "-u"});
  ASSERT_EQ(exec.code, 0) << exec.err;
  CliRun refused = shoal({"seat", "compact", "Plain"});
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.err.find("exec seats cannot be compacted on request"), std::string::npos)
      << refused.err;
  CliRun unknown = shoal({"seat", "compact", "Nobody"});
  EXPECT_EQ(unknown.code, 1);
}

}  // namespace
}  // namespace shoal
