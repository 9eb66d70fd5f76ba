// `--json` is the parse contract in success and in failure (issue 17 item 4): every command of
// `shoal help --json`'s tree is run here both ways against a real mesh; every line it prints
// on stdout must parse as a JSON object; a success says `"ok":true` (stream lines name their
// `event`), a failure is exactly {"ok":false,"error":{"code","reason","message","remedy"}}
// with the documented exit code; and no number anywhere is a floating-point value (stamps are
// integer epoch ms, durations integer ms or µs). A command added to the CLI without a row here
// fails the coverage check.
#include <map>
#include <set>

#include <boost/json.hpp>

#include "cli_fixture.h"
#include "mesh/operator_identity.h"

namespace shoal {
namespace {

namespace json = boost::json;
using testing::eventually;

// Where a floating-point number appears in `v` ("" when none does).
std::string firstDouble(const json::value& v, const std::string& at = "$") {
  if (v.is_double()) return at;
  if (v.is_object()) {
    for (const auto& [k, x] : v.as_object()) {
      std::string found = firstDouble(x, at + "." + std::string(k));
      if (!found.empty()) return found;
    }
  }
  if (v.is_array()) {
    for (size_t i = 0; i < v.as_array().size(); ++i) {
      std::string found = firstDouble(v.as_array()[i], at + "[" + std::to_string(i) + "]");
      if (!found.empty()) return found;
    }
  }
  return "";
}

std::vector<std::string> linesOf(const std::string& out) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t end = out.find('\n', pos);
    if (end == std::string::npos) end = out.size();
    if (end > pos) lines.push_back(out.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

class CliJsonTest : public CliTest {
 protected:
  // Every stdout line is a JSON object without floating-point numbers; returns them.
  std::vector<json::object> objects(const CliRun& run, const std::string& what) {
    std::vector<json::object> out;
    for (const auto& line : linesOf(run.out)) {
      boost::system::error_code ec;
      json::value v = json::parse(line, ec);
      if (ec || !v.is_object()) {
        ADD_FAILURE() << what << ": not a JSON object: " << line;
        continue;
      }
      EXPECT_EQ(firstDouble(v), "") << what << ": a floating-point number in " << line;
      out.push_back(std::move(v.as_object()));
    }
    return out;
  }

  void expectSuccess(const std::vector<std::string>& args, const std::string& input = "") {
    std::vector<std::string> withJson = args;
    withJson.insert(std::find(withJson.begin(), withJson.end(), std::string("--")), "--json");
    CliRun run = input.empty() ? shoal(withJson) : shoalWithInput(withJson, input);
    const std::string what = "shoal " + joined(args);
    EXPECT_EQ(run.code, 0) << what << "\n" << run.out << run.err;
    auto lines = objects(run, what);
    ASSERT_FALSE(lines.empty()) << what << " printed nothing on stdout; stderr: " << run.err;
    for (const auto& o : lines) {
      const bool okTrue = o.contains("ok") && o.at("ok").is_bool() && o.at("ok").as_bool();
      EXPECT_TRUE(okTrue || o.contains("event")) << what << ": " << json::serialize(o);
    }
  }

  void expectFailure(const std::vector<std::string>& args, std::optional<int> code = std::nullopt) {
    std::vector<std::string> withJson = args;
    withJson.insert(std::find(withJson.begin(), withJson.end(), std::string("--")), "--json");
    CliRun run = shoal(withJson);
    const std::string what = "shoal " + joined(args);
    EXPECT_NE(run.code, 0) << what << "\n" << run.out;
    if (code) {
      EXPECT_EQ(run.code, *code) << what << "\n" << run.out;
    }
    auto lines = objects(run, what);
    ASSERT_EQ(lines.size(), 1u) << what << ": want one error object, got\n" << run.out << run.err;
    const json::object& o = lines[0];
    ASSERT_TRUE(o.contains("ok") && o.at("ok") == false) << what << ": " << run.out;
    ASSERT_TRUE(o.contains("error") && o.at("error").is_object()) << what << ": " << run.out;
    const json::object& e = o.at("error").as_object();
    for (const char* key : {"code", "reason", "message"}) {
      EXPECT_TRUE(e.contains(key) && e.at(key).is_string() && !e.at(key).as_string().empty())
          << what << ": error." << key << " in " << run.out;
    }
    EXPECT_TRUE(e.contains("remedy") && (e.at("remedy").is_string() || e.at("remedy").is_null()))
        << what << ": " << run.out;
  }

  static std::string joined(const std::vector<std::string>& args) {
    std::string s;
    for (const auto& a : args)
      s += (s.empty() ? "" : " ") + a;
    return s;
  }
};

TEST_F(CliJsonTest, EveryCommandSpeaksTheContractInSuccessAndFailure) {
  ASSERT_NO_FATAL_FAILURE(upAndConnect());
  ASSERT_EQ(shoal({"seat", "add", "echo", "--", "/bin/cat"}).code, 0);
  const std::string me = mesh::localOperator().principal.dotForm();
  ASSERT_EQ(shoal({"send", "dm", me, "a note to myself"}).code, 0);
  ASSERT_EQ(shoal({"send", "msg", "team.json", "a post"}).code, 0);
  CliRun inbox = shoal({"inbox", "--json"});
  ASSERT_EQ(inbox.code, 0) << inbox.out << inbox.err;
  const std::string id(json::parse(inbox.out).at("messages").at(0).at("id").as_string());
  const std::string unreachable = "nats://127.0.0.1:1";

  // Every command of the tree, the way each is exercised (or why one way is not).
  std::set<std::string> covered;
  auto both = [&](const std::string& command, std::vector<std::string> ok,
                  std::vector<std::string> fail, std::optional<int> failCode = std::nullopt) {
    covered.insert(command);
    SCOPED_TRACE(command);
    expectSuccess(ok);
    expectFailure(fail, failCode);
  };
  both("up", {"up", "--port", std::to_string(port_)}, {"up", "--port", "0"}, 2);
  both("status", {"status"}, {"status", "--server", unreachable}, 1);
  both("endpoints", {"endpoints"}, {"endpoints", "--server", unreachable}, 1);
  both("send dm", {"send", "dm", "echo", "hi"}, {"send", "dm", "nobody_here", "hi"}, 1);
  both("send msg", {"send", "msg", "team.json", "hi"}, {"send", "msg", "bad..channel", "hi"}, 1);
  both("send ask", {"send", "ask", "reviewer", "hi"}, {"send", "ask", "Bad Role!", "hi"}, 1);
  both("inbox", {"inbox", "--all"}, {"inbox", "--limit", "many"}, 2);
  both("read", {"read", id}, {"read", "nosuchid9"}, 1);
  both("reply", {"reply", id, "thanks"}, {"reply", "nosuchid9", "thanks"}, 1);
  both("deliver pending", {"deliver", "pending", "echo"}, {"deliver", "pending", "nobody_here"}, 1);
  expectSuccess({"deliver", "pending"});
  both("history", {"history", "team.json"}, {"history"}, 2);
  expectSuccess({"history", "--dm", "echo"});
  both("channels list", {"channels", "list"}, {"channels", "list", "--server", unreachable}, 1);
  expectSuccess({"channels"});
  both("channels set", {"channels", "set", "team.json", "--class", "live"},
       {"channels", "set", "team.json", "--class", "bogus"});
  both("channels default", {"channels", "default", "--replay", "on"},
       {"channels", "default", "--class", "bogus"});
  both("daemon status", {"daemon", "status"}, {"daemon", "status", "--timeout", "soon"}, 2);
  both("seat add", {"seat", "add", "json-seat", "--", "/bin/cat"},
       {"seat", "add", "echo", "--", "/bin/cat"}, 1);
  both("seat list", {"seat", "list"}, {"seat", "list", "--bogus"}, 2);
  both("seat show", {"seat", "show", "echo"}, {"seat", "show", "nobody"}, 1);
  both("seat sleep", {"seat", "sleep", "json-seat"}, {"seat", "sleep", "nobody"}, 1);
  both("seat start", {"seat", "start", "json-seat"}, {"seat", "start", "nobody"}, 1);
  both("seat stop", {"seat", "stop", "json-seat"}, {"seat", "stop", "nobody"}, 1);
  both("seat events", {"seat", "events", "echo"}, {"seat", "events", "--limit", "x", "echo"}, 2);
  both("seat trust", {"seat", "trust", "echo"}, {"seat", "trust", "nobody"}, 1);
  both("seat channels", {"seat", "channels", "json-seat", "--add", "ops"},
       {"seat", "channels", "json-seat", "--add", "team.*"}, 1);
  both("seat move", {"seat", "move", "json-seat", "--to", "elsewhere"},
       {"seat", "move", "nobody", "--to", "elsewhere"}, 1);
  both("seat rm", {"seat", "rm", "json-seat"}, {"seat", "rm", "nobody"}, 1);
  // A record kept by a machine that is gone (as a raw client: no daemon of ours writes there).
  auto seats = transport::KeyValue::openBucket(*js_, "shoal_seats_itest");
  ASSERT_TRUE(seats.isOk()) << seats.status().toString();
  ASSERT_TRUE(seats->put("gone.local.ghost", "{}").isOk());
  both("seat forget", {"seat", "forget", "local.ghost"}, {"seat", "forget", "local.ghost"}, 1);
  CliRun here = shoal({"seat", "forget", "echo", "--json"});
  EXPECT_EQ(here.code, 1);
  EXPECT_NE(here.out.find("seat-is-here"), std::string::npos) << here.out << here.err;
  both("ps", {"ps"}, {"ps", "--bogus"}, 2);
  both("probe", {"probe", "manager"}, {"probe", "nonsense"}, 2);
  both("help", {"help", "seat", "add"}, {"help", "nonsense"}, 2);
  expectSuccess({"help"});
  expectSuccess({"help", "refusals"});
  both("completion", {"completion", "bash"}, {"completion", "tcsh"}, 2);
  // Streams: one JSON object per line.
  covered.insert("join");
  expectSuccess({"join", "--name", "jsonpeer"}, "/who\n/dm echo hi\n/nonsense\n/quit\n");
  expectFailure({"join"}, 2);
  covered.insert("watch");
  {
    Background* watch = spawnShoal({"watch", "--json"});
    ASSERT_NE(watch, nullptr);
    ASSERT_TRUE(outputShows(*watch, "{"));
    ASSERT_EQ(shoal({"send", "msg", "team.json", "seen by watch"}).code, 0);
    ASSERT_TRUE(outputShows(*watch, "seen by watch")) << watch->output();
    CliRun lines;
    lines.out = watch->output();
    EXPECT_FALSE(objects(lines, "shoal watch --json").empty());
  }
  expectFailure({"watch", "--server", unreachable}, 1);
  // Failure only: their success is a long-running foreground process (daemon run, serve) or
  // the MCP stdio transport itself (mcp); compact and interrupt succeed only on runtimes with
  // turns (cli_daemon_test covers their success on a Codex seat).
  covered.insert("daemon run");
  expectFailure({"daemon", "run"}, 1);  // the mesh's daemon already serves the socket
  covered.insert("serve");
  expectFailure({"serve", "--planes", "bogus"}, 2);
  // Open mode has no credential authority (their successes: cli_auth_test.cc, --json).
  for (const char* c : {"creds mint", "creds list", "creds revoke"})
    covered.insert(c);
  expectFailure({"creds", "mint", "ada", "--out", "/nonexistent/ada.creds"}, 1);
  expectFailure({"creds", "list"}, 1);
  expectFailure({"creds", "revoke", "ada"}, 1);
  // Open mode has no invites (their successes: cli_join_test.cc, --json).
  covered.insert("invite");
  expectFailure({"invite"}, 1);
  // A space whose broker store holds open-mode data refuses an authority (`space-is-open`;
  // the success: cli_auth_test.cc, SpaceInitConfiguresAServerShoalDoesNotRun).
  covered.insert("space init");
  expectFailure({"space", "init"}, 1);
  covered.insert("daemon join");
  expectFailure({"daemon", "join", "cotal://127.0.0.1/itest?owner=x"}, 1);
  covered.insert("mcp");
  expectFailure({"mcp", "--seat", "nobody"});
  covered.insert("seat compact");
  expectFailure({"seat", "compact", "echo", "--no-wait"}, 1);
  covered.insert("seat interrupt");
  expectFailure({"seat", "interrupt", "echo", "--no-wait"}, 1);

  // `--version --json` names the commit, the protocol and the broker it finds (none here: the
  // test's mesh is in space itest, --version looks at main).
  CliRun version = shoal({"--version", "--json"});
  ASSERT_EQ(version.code, 0) << version.out << version.err;
  json::value v = json::parse(version.out);
  EXPECT_FALSE(v.at("commit").as_string().empty());
  EXPECT_EQ(v.at("protocol").at("name").as_string(), "cotal");
  EXPECT_TRUE(v.at("broker").is_null()) << version.out;

  // `down` last, then the coverage: every leaf of the tree was run here.
  covered.insert("down");
  expectSuccess({"down"});
  expectFailure({"down", "--bogus"}, 2);
  CliRun tree = shoal({"help", "--json"});
  ASSERT_EQ(tree.code, 0);
  std::vector<std::string> commands;
  const json::value treeJson = json::parse(tree.out);
  for (const auto& c : treeJson.at("commands").as_array())
    commands.emplace_back(c.at("command").as_string());
  for (const auto& c : commands) {
    const bool leaf = std::none_of(commands.begin(), commands.end(),
                                   [&](const std::string& o) { return o.rfind(c + " ", 0) == 0; });
    if (leaf) {
      EXPECT_EQ(covered.count(c), 1u) << "`shoal " << c << "` has no --json row here";
    }
  }
}

}  // namespace
}  // namespace shoal
