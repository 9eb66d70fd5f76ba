// How a command line is read before parsing: global flags on either side of the command, the
// JSON mode, and the nearest command for a typo.
#include "cli/command_line.h"

#include <CLI/CLI.hpp>

#include <gtest/gtest.h>

namespace shoal::cli {
namespace {

// A small tree shaped like shoal's: `status` and `seat add|list` take --space and --json.
struct Tree {
  CLI::App root{"t", "shoal"};
  std::string space, level, name, cwd;
  bool json = false;
  Tree() {
    root.add_option("--log-level", level);
    CLI::App* status = root.add_subcommand("status", "s");
    status->add_option("--space", space);
    status->add_flag("--json", json);
    CLI::App* seat = root.add_subcommand("seat", "s");
    CLI::App* add = seat->add_subcommand("add", "a");
    add->add_option("name", name);
    add->add_option("--cwd", cwd);
    add->add_option("--space", space);
    seat->add_subcommand("list", "l");
    root.add_subcommand("__hidden", "")->group("");
  }
};

TEST(CommandLineTest, GlobalFlagsBeforeTheCommandMoveBehindIt) {
  Tree t;
  using V = std::vector<std::string>;
  EXPECT_EQ(hoistGlobalFlags(t.root, V{"--space", "dev", "status"}),
            (V{"status", "--space", "dev"}));
  EXPECT_EQ(hoistGlobalFlags(t.root, V{"--json", "--log-level", "info", "seat", "add", "x"}),
            (V{"--log-level", "info", "seat", "add", "--json", "x"}));
  EXPECT_EQ(hoistGlobalFlags(t.root, V{"--space=dev", "seat", "add", "--cwd", "/w", "x"}),
            (V{"seat", "add", "--space=dev", "--cwd", "/w", "x"}));
  // After the command, or with no command at all, the line stays as typed.
  EXPECT_EQ(hoistGlobalFlags(t.root, V{"status", "--space", "dev"}),
            (V{"status", "--space", "dev"}));
  EXPECT_EQ(hoistGlobalFlags(t.root, V{"--space", "dev"}), (V{"--space", "dev"}));
}

TEST(CommandLineTest, JsonModeIsAnyJsonBeforeTheRuntimesArguments) {
  EXPECT_TRUE(wantsJson({"status", "--json"}));
  EXPECT_TRUE(wantsJson({"--json", "seat", "add", "x", "--", "claude"}));
  EXPECT_FALSE(wantsJson({"seat", "add", "x", "--", "claude", "--json"}));
  EXPECT_FALSE(wantsJson({"status"}));
}

TEST(CommandLineTest, CommandPathSkipsOptionsAndTheirValues) {
  Tree t;
  CommandPath p = commandPath(t.root, {"--log-level", "info", "seat", "add", "--cwd", "/w", "x"});
  EXPECT_EQ(p.names, (std::vector<std::string>{"seat", "add"}));
  EXPECT_EQ(p.leaf->get_name(), "add");
  CommandPath typo = commandPath(t.root, {"seat", "ad"});
  EXPECT_EQ(typo.names, (std::vector<std::string>{"seat"}));
  EXPECT_EQ(typo.end, 1u);
  std::vector<std::string> visible;
  for (const CLI::App* s : visibleSubcommands(t.root))
    visible.push_back(s->get_name());
  EXPECT_EQ(visible, (std::vector<std::string>{"status", "seat"}));  // not the hidden one
}

TEST(CommandLineTest, NearestNameForATypoButNotForNonsense) {
  const std::vector<std::string> names = {"status", "seat", "send", "serve", "inbox"};
  EXPECT_EQ(nearestName(names, "stauts"), "status");
  EXPECT_EQ(nearestName(names, "inbx"), "inbox");
  EXPECT_EQ(nearestName(names, "sta"), "status");  // a prefix
  EXPECT_EQ(nearestName(names, "xyzzy"), std::nullopt);
}

}  // namespace
}  // namespace shoal::cli
