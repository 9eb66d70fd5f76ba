// Bounded inputs at the command line (issue 18 items 1 and 4): `shoal send` refuses before
// publishing what a receiving seat would refuse (a message over the size bound, an empty or
// whitespace-only text), each with a sentence that names the limit, and nothing is stored;
// timeouts out of range, a space name that is not one, a missing or shared seat cwd are refused
// with their reason before anything happens.
#include <boost/json.hpp>

#include "base/file_system.h"
#include "cli_fixture.h"
#include "wire/message_limits.h"

namespace shoal {
namespace {

namespace json = boost::json;

class CliBoundsTest : public CliTest {
 protected:
  // The error object of a failed `--json` run.
  json::object errorOf(const CliRun& run) {
    boost::system::error_code ec;
    json::value v = json::parse(run.out, ec);
    if (ec || !v.is_object() || !v.as_object().contains("error")) {
      ADD_FAILURE() << "no error object: " << run.out << run.err;
      return {};
    }
    return v.as_object().at("error").as_object();
  }
  std::string reasonOf(const CliRun& run) {
    json::object e = errorOf(run);
    return e.contains("reason") ? std::string(e.at("reason").as_string()) : "";
  }
};

TEST_F(CliBoundsTest, SendRefusesWhatASeatWouldRefuseBeforePublishing) {
  ASSERT_NO_FATAL_FAILURE(upAndConnect());
  ASSERT_EQ(shoal({"seat", "add", "echo", "--", "/bin/cat"}).code, 0);
  // One argument may be at most 128 KiB: a long text comes in several words.
  const std::string word(100 * 1024, 'w');
  CliRun big = shoal({"send", "dm", "echo", word, word, word, "--json"});
  EXPECT_EQ(big.code, 1) << big.out << big.err;
  EXPECT_EQ(reasonOf(big), "message-too-large");
  json::object e = errorOf(big);
  EXPECT_NE(std::string(e["message"].as_string()).find("240 KiB"), std::string::npos) << big.out;
  EXPECT_TRUE(e["remedy"].is_string()) << big.out;
  CliRun human = shoal({"send", "dm", "echo", word, word, word});
  EXPECT_NE(human.err.find("at most 240 KiB"), std::string::npos) << human.err;

  for (const std::string& blank : {std::string(""), std::string("   "), std::string("\t\n ")}) {
    CliRun empty = shoal({"send", "dm", "echo", blank, "--json"});
    EXPECT_NE(empty.code, 0) << "[" << blank << "] " << empty.out;
    EXPECT_EQ(reasonOf(empty), "empty-text") << "[" << blank << "]";
  }
  CliRun emptyPost = shoal({"send", "msg", "team", "  ", "--json"});
  EXPECT_EQ(reasonOf(emptyPost), "empty-text");

  // Nothing of it was stored: the seat's DM history holds only what is sent next.
  ASSERT_EQ(shoal({"send", "dm", "echo", "just under the bound"}).code, 0);
  CliRun history = shoal({"history", "--dm", "echo", "--json"});
  ASSERT_EQ(history.code, 0) << history.out << history.err;
  EXPECT_EQ(json::parse(history.out).at("messages").as_array().size(), 1u) << history.out;
}

TEST_F(CliBoundsTest, RangesNamesAndPathsAreRefusedWithTheirRule) {
  ASSERT_NO_FATAL_FAILURE(upAndConnect());
  for (const char* t : {"0", "-1", "1e308", "nan", "soon"}) {
    CliRun run = shoal({"status", "--timeout", t});
    EXPECT_EQ(run.code, 2) << t << ": " << run.out << run.err;
    EXPECT_NE(run.err.find("not a number of seconds more than 0 and at most 3600"),
              std::string::npos)
        << t << ": " << run.err;
  }
  EXPECT_EQ(shoal({"status", "--timeout", "2.5"}).code, 0);

  // A space name is never rewritten into another one.
  for (const char* bad : {"../../etc", "a b", "caf\u00e9"}) {
    CliRun run = raw({"up", "--space", bad, "--json"});
    EXPECT_EQ(reasonOf(run), "bad-space") << bad << ": " << run.out;
  }
  EXPECT_EQ(reasonOf(raw({"status", "--space", std::string(65, 's'), "--json"})), "bad-space");
  EXPECT_FALSE(FileSystem::posix().exists(home_->join("data/shoal/______etc")));

  // A seat's cwd must exist, or be made on request; two seats never share one.
  const std::string missing = home_->join("work/not-yet");
  CliRun noDir = shoal({"seat", "add", "w1", "--cwd", missing, "--json", "--", "/bin/cat"});
  EXPECT_EQ(reasonOf(noDir), "bad-cwd") << noDir.out;
  EXPECT_FALSE(FileSystem::posix().exists(missing));
  CliRun made = shoal({"seat", "add", "w1", "--cwd", missing, "--create-cwd", "--", "/bin/cat"});
  EXPECT_EQ(made.code, 0) << made.out << made.err;
  EXPECT_TRUE(FileSystem::posix().exists(missing));
  CliRun shared = shoal({"seat", "add", "w2", "--cwd", missing, "--json", "--", "/bin/cat"});
  EXPECT_EQ(reasonOf(shared), "cwd-in-use") << shared.out;
  CliRun list = shoal({"seat", "list", "--json"});
  // By name: a bare "w2" also turns up inside random ids (a lifecycle uid once held it).
  EXPECT_EQ(list.out.find(R"("name":"w2")"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find(R"("name":"w1")"), std::string::npos) << list.out;
}

}  // namespace
}  // namespace shoal
