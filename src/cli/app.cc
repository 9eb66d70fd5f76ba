#include "cli/app.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "base/log.h"
#include "cli/mesh_commands.h"

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
      ->capture_default_str();

  MeshCommandArgs up;
  MeshCommandArgs status;
  MeshCommandArgs down;
  registerMeshCommands(app, up, status, down);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help, the version, or the usage error
    return code == 0 ? 0 : 2;
  }
  log::Level level = log::Level::kWarn;
  if (!log::parseLevel(logLevel, &level)) {
    std::fprintf(stderr, "✗ --log-level %s: use trace, debug, info, warn, error or off\n",
                 logLevel.c_str());
    return 2;
  }
  log::initLogging(level);
  return runMeshCommand(app, up, status, down);
}

}  // namespace shoal::cli
