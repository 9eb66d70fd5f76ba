#include "cli/app.h"

#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "base/log.h"
#include "cli/command.h"

#ifndef SHOAL_VERSION
#define SHOAL_VERSION "0.0.0-dev"
#endif

namespace shoal::cli {

int run(int argc, char** argv) {
  CLI::App app{"shoal — an agent mesh on NATS JetStream", "shoal"};
  app.set_version_flag("--version", std::string("shoal ") + SHOAL_VERSION);
  app.require_subcommand(1);
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
  registerDeliverCommands(app, result);
  registerHistoryCommands(app, result);
  registerWatchCommands(app, result);
  registerJoinCommands(app, result);
  registerChannelsCommands(app, result);
  registerDaemonCommands(app, result);
  registerPsCommand(app, result);
  registerMcpCommands(app, result);
  registerPlaneCommands(app, result);

  try {
    app.parse(argc, argv);  // runs the chosen subcommand's callback
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help, the version, or the usage error
    return code == 0 ? 0 : 2;
  }
  return result.exitCode;
}

}  // namespace shoal::cli
