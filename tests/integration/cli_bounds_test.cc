// Bounded inputs at the command line (issue 18 items 1 and 4): `shoal send` refuses before
// publishing what a receiving seat would refuse (a message over the size bound, an empty or
// whitespace-only text), each with a sentence that names the limit, and nothing is stored.
#include <boost/json.hpp>

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

}  // namespace
}  // namespace shoal
