// CLI habits (issue 17 item 6): a mistyped command gets the nearest one, global flags work
// before or after the command, `help` and `completion` come from the same command tree (with
// live seat names), and `join` addresses a peer whose name has spaces.
#include <boost/json.hpp>

#include "cli_fixture.h"

namespace shoal {
namespace {

namespace json = boost::json;

class CliHabitsTest : public CliTest {};

TEST_F(CliHabitsTest, TyposGlobalFlagsHelpCompletionAndQuotedNames) {
  ASSERT_NO_FATAL_FAILURE(upAndConnect());
  ASSERT_EQ(shoal({"seat", "add", "echo", "--", "/bin/cat"}).code, 0);

  CliRun typo = raw({"stauts"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("did you mean `shoal status`?"), std::string::npos) << typo.err;
  EXPECT_NE(typo.err.find("(unknown-command)"), std::string::npos) << typo.err;
  CliRun nested = raw({"seat", "ad", "x"});
  EXPECT_NE(nested.err.find("did you mean `shoal seat add`?"), std::string::npos) << nested.err;

  // --space, --json and --log-level on either side of the command.
  for (const auto& args : {std::vector<std::string>{"--space", "itest", "--json", "status"},
                           std::vector<std::string>{"status", "--space", "itest", "--json"},
                           std::vector<std::string>{"--log-level", "info", "seat", "list",
                                                    "--space", "itest", "--json"},
                           std::vector<std::string>{"seat", "list", "--log-level", "info", "--json",
                                                    "--space", "itest"}}) {
    CliRun run = raw(args);
    EXPECT_EQ(run.code, 0) << run.out << run.err;
    boost::system::error_code ec;
    json::value v = json::parse(run.out, ec);
    EXPECT_FALSE(ec) << run.out;
    if (!ec) {
      EXPECT_TRUE(v.at("ok").as_bool()) << run.out;
    }
  }

  // `help seat add` is `seat add --help`.
  CliRun help = shoal({"help", "seat", "add"});
  CliRun dashHelp = shoal({"seat", "add", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("Usage: shoal seat add"), std::string::npos) << help.out;
  EXPECT_EQ(help.out, dashHelp.out);

  // Completion: the script, then what it asks for — subcommands, flags, live seat names.
  CliRun bash = shoal({"completion", "bash"});
  EXPECT_NE(bash.out.find("complete -o default -F _shoal shoal"), std::string::npos);
  CliRun verbs = raw({"__complete", "seat", "s"});
  for (const char* verb : {"show", "start", "sleep", "stop"})
    EXPECT_NE(verbs.out.find(std::string(verb) + "\n"), std::string::npos) << verbs.out;
  CliRun seats = raw({"__complete", "seat", "show", "--space", "itest", ""});
  EXPECT_NE(seats.out.find("echo\n"), std::string::npos) << seats.out << seats.err;
  CliRun flags = raw({"__complete", "seat", "add", "--ru"});
  EXPECT_EQ(flags.out, "--runtime\n");
  CliRun runtimes = raw({"__complete", "seat", "add", "--runtime", "c"});
  EXPECT_EQ(runtimes.out, "claude\ncodex\n");

  // A name with spaces, in quotes, in `join`.
  Background* spaced = spawnShoal(
      {"join", "--name", "Spaced Name", "--id", "local.spaced", "--keep-running", "--json"});
  ASSERT_NE(spaced, nullptr);
  ASSERT_TRUE(outputShows(*spaced, "\"event\":\"joined\"")) << spaced->output();
  CliRun bob =
      shoalWithInput({"join", "--name", "bob"}, "/dm \"Spaced Name\" hello spaced\n/help\n/quit\n");
  EXPECT_EQ(bob.code, 0) << bob.out << bob.err;
  EXPECT_NE(bob.out.find("✓ stored seq"), std::string::npos) << bob.out;
  EXPECT_NE(bob.out.find("/dm \"Demo Ada\" hi"), std::string::npos) << bob.out;  // /help
  EXPECT_TRUE(outputShows(*spaced, "hello spaced")) << spaced->output();
}

}  // namespace
}  // namespace shoal
