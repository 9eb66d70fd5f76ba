// `shoal help [command…|topic]` and `shoal --version`: the same text as `--help`, reachable by
// name, plus the topics that are not one command's help (refusals, json, exit-codes).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "cli/build_info.h"
#include "cli/command.h"
#include "cli/command_line.h"
#include "cli/mesh_target.h"
#include "cli/output.h"
#include "cli/refusals.h"
#include "supervisor/mesh_paths.h"
#include "transport/connection.h"
#include "wire/protocol_version.h"

#ifndef SHOAL_VERSION
#define SHOAL_VERSION "0.0.0-dev"
#endif

namespace shoal::cli {
namespace {

namespace json = boost::json;

constexpr std::string_view kJsonTopic =
    "With --json anywhere on the command line, a command prints JSON on stdout and nothing\n"
    "else: one object (or one per line for streams: watch, join, inbox --follow). A failure\n"
    "prints {\"ok\":false,\"error\":{\"code\",\"reason\",\"message\",\"remedy\"}}: `code` says "
    "what\n"
    "to do next (invalid-argument, not-found, unavailable, …), `reason` names the rule that\n"
    "refused (the same token a human `✗` line ends with), `remedy` is the fix or null.\n"
    "Stamps are integer epoch milliseconds; durations integer milliseconds (keys ending in Us\n"
    "are microseconds). Exit codes are the same with and without --json.\n";

constexpr std::string_view kExitCodesTopic =
    "0  done\n"
    "1  the operation failed or was refused (a `✗` line or a JSON error says why and what to "
    "do), or the thing inspected is unhealthy (status)\n"
    "2  bad usage (unknown command or option, missing argument)\n"
    "4  what --wait waited for did not happen: the DM was stored but not seen surfaced (or "
    "answered) in time, or its seat reported it failed (send); still compacting / the turn "
    "still running after --wait (seat compact, seat interrupt)\n"
    "5  the agent's turn ended without a visible reply (send dm --wait replied)\n";

void printRefusals() {
  if (jsonOutput()) {
    json::array rows;
    for (const Refusal& r : refusals()) {
      rows.push_back(json::object{{"reason", std::string(r.reason)},
                                  {"cause", std::string(r.cause)},
                                  {"remedy", std::string(r.remedy)}});
    }
    printJson(json::object{{"ok", true}, {"refusals", std::move(rows)}});
    return;
  }
  for (const Refusal& r : refusals()) {
    std::printf("%.*s\n  cause:  %.*s\n  remedy: %.*s\n", static_cast<int>(r.reason.size()),
                r.reason.data(), static_cast<int>(r.cause.size()), r.cause.data(),
                static_cast<int>(r.remedy.size()), r.remedy.data());
  }
}

json::array commandTree(const CLI::App& app, const std::string& prefix) {
  json::array out;
  for (const CLI::App* sub : visibleSubcommands(app)) {
    std::string name = prefix.empty() ? sub->get_name() : prefix + " " + sub->get_name();
    out.push_back(json::object{{"command", name}, {"description", sub->get_description()}});
    for (auto& nested : commandTree(*sub, name))
      out.push_back(std::move(nested));
  }
  return out;
}

// `app`'s own help (App::help() would show the subcommand being run: `help` itself).
std::string helpOf(const CLI::App& app, const std::vector<std::string>& path) {
  std::string name = "shoal";
  for (const auto& word : path)
    name += " " + word;
  return app.get_formatter()->make_help(&app, name, CLI::AppFormatMode::Normal);
}

int runHelp(const CLI::App& root, const std::vector<std::string>& words) {
  if (words.size() == 1 && (words[0] == "refusals" || words[0] == "troubleshooting")) {
    printRefusals();
    return 0;
  }
  std::string_view topic = words.size() == 1 ? std::string_view(words[0]) : "";
  if (topic == "json" || topic == "exit-codes") {
    std::string_view text = topic == "json" ? kJsonTopic : kExitCodesTopic;
    if (jsonOutput()) {
      printJson(json::object{{"ok", true}, {"topic", topic}, {"text", text}});
    } else {
      std::fputs(std::string(text).c_str(), stdout);
    }
    return 0;
  }
  CommandPath path = commandPath(root, words);
  if (path.end < words.size()) {
    std::vector<std::string> names;
    for (const CLI::App* s : visibleSubcommands(*path.leaf))
      names.push_back(s->get_name());
    for (std::string_view t : {"refusals", "json", "exit-codes"})
      if (path.names.empty()) names.emplace_back(t);
    auto near = nearestName(names, words[path.end]);
    return printFailure(
        "shoal help",
        invalidArgument("unknown-command",
                        "no command or topic `" + words[path.end] + "`" +
                            (near ? "; did you mean `" + *near + "`?" : std::string()) +
                            " (`shoal help` lists them)"),
        2);
  }
  if (jsonOutput()) {
    json::object out{{"ok", true}, {"help", helpOf(*path.leaf, path.names)}};
    if (path.names.empty()) out["commands"] = commandTree(root, "");
    printJson(out);
    return 0;
  }
  std::fputs(helpOf(*path.leaf, path.names).c_str(), stdout);
  return 0;
}

}  // namespace

int runVersion() {
  // The broker this user's default space would use, if there is one: never a guessed URL.
  json::value broker = nullptr;
  std::string brokerLine = "no local mesh for space `main` (`shoal up` starts one)";
  auto paths = supervisor::MeshPaths::resolve(supervisor::kDefaultSpace);
  if (paths.isOk()) {
    auto target = supervisor::resolveBrokerTarget(*paths, "");
    if (target.isOk()) {
      auto conn = openConnection(*target, "shoal --version", std::chrono::milliseconds(1000));
      json::object b{{"url", target->url}, {"reachable", conn.isOk()}};
      if (conn.isOk()) {
        auto info = (*conn)->serverInfo();
        if (info.isOk()) b["version"] = info->version;
        brokerLine = fmt::format("broker {} (nats-server {})", target->url,
                                 info.isOk() ? info->version : std::string("?"));
      } else {
        brokerLine =
            fmt::format("broker {} not answering ({})", target->url, conn.status().reason());
      }
      broker = std::move(b);
    }
  }
  if (jsonOutput()) {
    printJson(json::object{{"ok", true},
                           {"version", SHOAL_VERSION},
                           {"commit", std::string(buildCommit())},
                           {"protocol", json::object{{"name", wire::kProtocolName},
                                                     {"version", wire::kProtocolVersion},
                                                     {"binding", wire::kProtocolBinding}}},
                           {"broker", std::move(broker)}});
    return 0;
  }
  std::printf("shoal %s (commit %s) · %s %s over %s · %s\n", SHOAL_VERSION,
              std::string(buildCommit()).c_str(), std::string(wire::kProtocolName).c_str(),
              std::string(wire::kProtocolVersion).c_str(),
              std::string(wire::kProtocolBinding).c_str(), brokerLine.c_str());
  return 0;
}

void registerHelpCommands(CLI::App& app, CommandResult& result) {
  auto words = std::make_shared<std::vector<std::string>>();
  auto asJson = std::make_shared<bool>(false);
  CLI::App* help =
      app.add_subcommand("help", "show a command's help, or a topic (refusals, json, exit-codes)");
  help->add_option("words", *words, "a command (e.g. `seat add`) or a topic");
  help->add_flag("--json", *asJson, "machine-readable output");
  help->callback([&app, words, &result] { result.exitCode = runHelp(app, *words); });
  addCompletionCommands(app, result);
}

}  // namespace shoal::cli
