#include "cli/app.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/log.h"
#include "cli/command.h"
#include "cli/command_line.h"
#include "cli/output.h"

namespace shoal::cli {
namespace {

constexpr int kUsageExitCode = 2;

// A usage error as a Status: an unknown command (with the nearest one), or CLI11's message.
Status usageError(const CLI::App& root, const std::vector<std::string>& args,
                  const CLI::ParseError& error) {
  CommandPath path = commandPath(root, args);
  std::string command;  // "seat", "seat add", or "" for the root
  for (const auto& name : path.names)
    command += (command.empty() ? "" : " ") + name;
  const std::string where = command.empty() ? "shoal" : "shoal " + command;
  const std::string help = command.empty() ? "`shoal help`" : "`shoal help " + command + "`";
  const bool leafTakesWords =
      !path.leaf->get_options([](const CLI::Option* o) { return o->get_positional(); }).empty();
  const bool unknownWord = path.end < args.size() && !args[path.end].empty() &&
                           args[path.end][0] != '-' && !leafTakesWords;
  if (unknownWord && !visibleSubcommands(*path.leaf).empty()) {
    const std::string& typed = args[path.end];
    std::vector<std::string> names;
    for (const CLI::App* s : visibleSubcommands(*path.leaf))
      names.push_back(s->get_name());
    auto near = nearestName(names, typed);
    std::string message = "`" + typed + "` is not a command of `" + where + "`";
    if (near) message += "; did you mean `" + where + " " + *near + "`?";
    return invalidArgument("unknown-command", message + " (" + help + " lists them)");
  }
  return invalidArgument("usage", std::string(error.what()) + "; see " + help);
}

}  // namespace

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  setJsonOutput(wantsJson(args));

  CLI::App app{"shoal — an agent mesh on NATS JetStream", "shoal"};
  app.fallthrough();  // subcommands hand unknown options (--log-level) up to the root
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "every command's help");
  app.footer(
      "Every command takes --space NAME (default main) and --json (the parse contract, failures "
      "included: `shoal help json`), before or after the command's name.\n"
      "`shoal --version [--json]` · `shoal help COMMAND` · `shoal help refusals` · "
      "`shoal completion bash|zsh|fish`");
  std::string logLevel = "warn";
  app.add_option("--log-level", logLevel, "trace, debug, info, warn, error or off")
      ->capture_default_str()
      ->check([](const std::string& v) {
        log::Level level;
        return log::parseLevel(v, &level) ? std::string()
                                          : std::string(
                                                "use trace, debug, info, warn, error "
                                                "or off");
      });
  // Global flags every command takes: a command without its own --space or --json hands them
  // up to here (fallthrough). --json was read before parsing (wantsJson); a command that reads
  // no space ignores --space.
  std::string globalSpace;
  bool globalJson = false;
  app.add_option("--space", globalSpace, "space name (default main)");
  app.add_flag("--json", globalJson, "the parse contract: JSON on stdout, failures included");
  // Logging is set up before any subcommand callback runs.
  app.parse_complete_callback([&logLevel] {
    log::Level level = log::Level::kWarn;
    (void)log::parseLevel(logLevel, &level);
    log::initLogging(level);
  });

  CommandResult result;
  registerMeshCommands(app, result);
  registerEndpointsCommands(app, result);
  registerSendCommands(app, result);
  registerInboxCommands(app, result);
  registerDeliverCommands(app, result);
  registerHistoryCommands(app, result);
  registerWatchCommands(app, result);
  registerJoinCommands(app, result);
  registerChannelsCommands(app, result);
  registerDaemonCommands(app, result);
  registerInviteCommands(app, result);
  registerSpaceCommands(app, result);
  registerPsCommand(app, result);
  registerMcpCommands(app, result);
  registerPlaneCommands(app, result);
  registerCredsCommands(app, result);
  registerHelpCommands(app, result);

  if (!args.empty() && args[0] == "__complete") {
    return runCompletionQuery(app, std::vector<std::string>(args.begin() + 1, args.end()));
  }
  // `shoal --version [--json]` is answered before parsing: it needs no subcommand.
  if (!args.empty() &&
      std::all_of(args.begin(), args.end(),
                  [](const std::string& a) { return a == "--version" || a == "--json"; }) &&
      std::find(args.begin(), args.end(), "--version") != args.end()) {
    return runVersion();
  }

  args = hoistGlobalFlags(app, std::move(args));
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses from the back
  try {
    app.parse(reversed);  // runs the chosen subcommand's callback
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    if (args.empty() && !jsonOutput()) {
      std::fputs(app.help().c_str(), stderr);
      return kUsageExitCode;
    }
    return printFailure("shoal", usageError(app, args, e), kUsageExitCode);
  }
  return result.exitCode;
}

}  // namespace shoal::cli
