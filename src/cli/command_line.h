// How a `shoal` command line is read before CLI11 parses it, and the lookups that help and
// completion share: the command tree as the user types it.
//
//   wantsJson(args)          `--json` anywhere before `--`: the run speaks the JSON contract,
//                            usage errors included (output.h).
//   hoistGlobalFlags(…)      the global flags `--space X` / `--space=X` and `--json`, given
//                            before the subcommand (`shoal --space dev status`), are moved
//                            behind it, where every command that takes them reads them.
//                            `--log-level` stays on the root, which every subcommand falls
//                            through to, so it works on either side.
//   commandPath(root, args)  the subcommands named from the start of `args` (`seat add`).
//   nearestName(names, typed) the closest name by edit distance, for "did you mean …?"
//                            (at most a third of the typed length away, and at most 3).
//
// Thread safety: pure functions over a CLI::App that is not being parsed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace shoal::cli {

bool wantsJson(const std::vector<std::string>& args);

std::vector<std::string> hoistGlobalFlags(const CLI::App& root, std::vector<std::string> args);

// The deepest subcommand named by a prefix of `args` (skipping options and their values), and
// where the walk stopped.
struct CommandPath {
  const CLI::App* leaf = nullptr;
  std::vector<std::string> names;  // e.g. {"seat", "add"}
  size_t end = 0;  // args[end]: the first word that is neither an option nor a subcommand
};
CommandPath commandPath(const CLI::App& root, const std::vector<std::string>& args);

// The visible subcommands of `app` (not hidden, not the root itself), by name.
std::vector<const CLI::App*> visibleSubcommands(const CLI::App& app);
const CLI::App* findSubcommand(const CLI::App& app, std::string_view name);

std::optional<std::string> nearestName(const std::vector<std::string>& names,
                                       std::string_view typed);

}  // namespace shoal::cli
