// `shoal completion bash|zsh|fish` prints a completion script; the script calls the hidden
// `shoal __complete WORD…` (the words typed so far, the last one partial) for the candidates:
// subcommands and flags from the same command tree as `--help`, and the live names of seats
// (the daemon's control socket), peers (the roster) and channels (the registry) where a
// command takes one. A lookup that cannot answer quickly offers nothing rather than block.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>

#include "cli/command.h"
#include "cli/command_line.h"
#include "cli/mesh_target.h"
#include "cli/output.h"
#include "daemon/control_socket.h"
#include "mesh/roster_read.h"
#include "supervisor/mesh_paths.h"
#include "transport/jetstream.h"
#include "transport/kv.h"
#include "wire/channel_config.h"
#include "wire/names.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

constexpr milliseconds kLookupBudget{400};

constexpr std::string_view kBash =
    R"SH(# shoal completion for bash: source it, or put it in ~/.local/share/bash-completion/completions/shoal
_shoal() {
  local cur=${COMP_WORDS[COMP_CWORD]} IFS=$'\n' c
  local candidates
  candidates=$(shoal __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
  COMPREPLY=()
  for c in $candidates; do
    [[ $c == "$cur"* ]] && COMPREPLY+=("$(printf '%q' "$c")")
  done
}
complete -o default -F _shoal shoal
)SH";

constexpr std::string_view kZsh = R"SH(#compdef shoal
# shoal completion for zsh: put it on $fpath as _shoal, or `source <(shoal completion zsh)`
_shoal() {
  local -a candidates
  candidates=("${(@f)$(shoal __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
  (( ${#candidates} )) && compadd -a candidates || _files
}
compdef _shoal shoal
)SH";

constexpr std::string_view kFish =
    R"SH(# shoal completion for fish: put it in ~/.config/fish/completions/shoal.fish
function __shoal_complete
    set -l tokens (commandline -opc) (commandline -ct)
    shoal __complete $tokens[2..-1] 2>/dev/null
end
complete -c shoal -f -a '(__shoal_complete)'
)SH";

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names)
    out += (out.empty() ? "" : " ") + n;
  return out;
}

// The `--space` the words name, else the default.
std::string spaceOf(const std::vector<std::string>& words) {
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == "--space") return words[i + 1];
    if (words[i].rfind("--space=", 0) == 0) return words[i].substr(8);
  }
  return std::string(supervisor::kDefaultSpace);
}

std::vector<std::string> seatNames(const std::string& space) {
  std::vector<std::string> out;
  auto path = daemon::controlSocketPath(space);
  if (!path.isOk()) return out;
  auto reply =
      daemon::controlRequest(*path, daemon::ControlRequest{"seat.list", "{}"}, kLookupBudget);
  if (!reply.isOk()) return out;
  boost::system::error_code ec;
  json::value v = json::parse(*reply, ec);
  if (ec || !v.is_array()) return out;
  for (const auto& row : v.as_array()) {
    const auto* profile = row.as_object().if_contains("profile");
    if (profile == nullptr || !profile->is_object()) continue;
    if (const auto* name = profile->as_object().if_contains("name"); name && name->is_string())
      out.emplace_back(name->as_string());
  }
  return out;
}

std::unique_ptr<transport::Connection> quickConnection(const std::string& space) {
  MeshTargetArgs args;
  args.space = space;
  auto target = resolveMeshTarget(args);
  if (!target.isOk()) return nullptr;
  auto conn = openConnection(*target, "shoal completion", kLookupBudget);
  return conn.isOk() ? std::move(conn).value() : nullptr;
}

std::vector<std::string> peerNames(const std::string& space) {
  std::vector<std::string> out;
  auto conn = quickConnection(space);
  if (!conn) return out;
  auto snap = mesh::readRosterOnce(*conn, space, kLookupBudget);
  if (!snap.isOk()) return out;
  for (const auto& row : snap->rows)
    out.push_back(row.presence.card.name.empty() ? row.id : row.presence.card.name);
  return out;
}

std::vector<std::string> channelNames(const std::string& space) {
  std::vector<std::string> out;
  auto conn = quickConnection(space);
  if (!conn) return out;
  auto js = transport::JetStream::create(*conn);
  auto bucket = wire::bucketName(wire::Bucket::kChannels, space);
  if (!js.isOk() || !bucket.isOk()) return out;
  auto kv = transport::KeyValue::openBucket(*js, *bucket);
  if (!kv.isOk()) return out;
  auto keys = kv->keys();
  if (!keys.isOk()) return out;
  for (const auto& k : *keys)
    if (k != wire::kChannelDefaultsKey) out.push_back(k);
  return out;
}

std::vector<std::string> spaceNames() {
  std::vector<std::string> out{std::string(supervisor::kDefaultSpace)};
  auto paths = supervisor::MeshPaths::resolve(supervisor::kDefaultSpace);
  if (!paths.isOk()) return out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(paths->stateDir + "/meshes", ec)) {
    std::string f = entry.path().filename().string();
    if (f.ends_with(".json") && f != "main.json") out.push_back(f.substr(0, f.size() - 5));
  }
  return out;
}

// Names a command's positional (or option value) takes, by the command's path.
std::vector<std::string> namesFor(const std::string& command, const std::string& option,
                                  const std::string& space) {
  static const std::set<std::string> seatCommands = {
      "seat show",   "seat start",   "seat sleep",     "seat stop", "seat rm",
      "seat events", "seat compact", "seat interrupt", "seat trust"};
  if (option == "--runtime") return {"exec", "claude", "codex", "opencode"};
  if (option == "--log-level") return {"trace", "debug", "info", "warn", "error", "off"};
  if (option == "--space") return spaceNames();
  if (option == "--channel") return channelNames(space);
  if (option == "--seat") return seatNames(space);
  if (option == "--dm" || option == "--mention") return peerNames(space);
  if (!option.empty()) return {};
  if (seatCommands.count(command) != 0) return seatNames(space);
  if (command == "send dm" || command == "deliver pending") return peerNames(space);
  if (command == "send msg" || command == "history" || command == "channels set")
    return channelNames(space);
  if (command == "completion") return {"bash", "zsh", "fish"};
  return {};
}

}  // namespace

int runCompletionQuery(const CLI::App& root, std::vector<std::string> words) {
  if (words.empty()) words.emplace_back();
  const std::string current = words.back();
  words.pop_back();
  CommandPath path = commandPath(root, words);
  const std::string command = joined(path.names);
  const std::string space = spaceOf(words);
  std::vector<std::string> out;
  const std::string previous = words.empty() ? "" : words.back();
  const CLI::Option* valueOf =
      previous.rfind("--", 0) == 0 ? path.leaf->get_option_no_throw(previous) : nullptr;
  if (valueOf == nullptr && previous == "--log-level") valueOf = root.get_option_no_throw(previous);
  if (valueOf != nullptr && valueOf->get_expected_min() > 0) {
    out = namesFor(command, previous, space);
  } else if (current.rfind("-", 0) == 0) {
    for (const CLI::Option* o : path.leaf->get_options()) {
      for (const auto& name : o->get_lnames())
        out.push_back("--" + name);
    }
    out.emplace_back("--log-level");
  } else {
    for (const CLI::App* sub : visibleSubcommands(*path.leaf))
      out.push_back(sub->get_name());
    if (command == "help") {
      out.clear();
      for (const CLI::App* sub : visibleSubcommands(root))
        out.push_back(sub->get_name());
      for (const char* topic : {"refusals", "json", "exit-codes"})
        out.emplace_back(topic);
    }
    for (auto& name : namesFor(command, "", space))
      out.push_back(std::move(name));
  }
  for (const auto& c : out) {
    if (c.rfind(current, 0) == 0) std::printf("%s\n", c.c_str());
  }
  return 0;
}

void addCompletionCommands(CLI::App& app, CommandResult& result) {
  auto shell = std::make_shared<std::string>();
  auto asJson = std::make_shared<bool>(false);
  CLI::App* completion =
      app.add_subcommand("completion", "print a shell completion script (bash, zsh or fish)");
  completion->add_option("shell", *shell, "bash, zsh or fish")->required();
  completion->add_flag("--json", *asJson, "the script inside a JSON object");
  completion->callback([shell, &result] {
    std::string_view script = *shell == "bash"   ? kBash
                              : *shell == "zsh"  ? kZsh
                              : *shell == "fish" ? kFish
                                                 : std::string_view();
    if (script.empty()) {
      result.exitCode = printFailure(
          "shoal completion",
          invalidArgument("usage", "no completion for `" + *shell + "`: bash, zsh or fish"), 2);
      return;
    }
    if (jsonOutput()) {
      printJson(json::object{{"ok", true}, {"shell", *shell}, {"script", script}});
    } else {
      std::fputs(std::string(script).c_str(), stdout);
    }
    result.exitCode = 0;
  });
}

}  // namespace shoal::cli
