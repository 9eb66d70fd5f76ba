#include "cli/command_line.h"

#include <algorithm>

#include <CLI/CLI.hpp>

namespace shoal::cli {
namespace {

// Does `option` (a token such as "--cwd") take a value on `app`?
bool takesValue(const CLI::App& app, const std::string& token) {
  const CLI::Option* opt = app.get_option_no_throw(token);
  return opt != nullptr && opt->get_expected_min() > 0;
}

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

bool wantsJson(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    if (a == "--") return false;
    if (a == "--json") return true;
  }
  return false;
}

std::vector<const CLI::App*> visibleSubcommands(const CLI::App& app) {
  std::vector<const CLI::App*> out =
      app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); });
  return out;
}

const CLI::App* findSubcommand(const CLI::App& app, std::string_view name) {
  auto all = app.get_subcommands([](const CLI::App*) { return true; });
  for (const CLI::App* s : all) {
    if (s->get_name() == name) return s;
  }
  return nullptr;
}

CommandPath commandPath(const CLI::App& root, const std::vector<std::string>& args) {
  CommandPath path;
  path.leaf = &root;
  size_t i = 0;
  while (i < args.size()) {
    const std::string& a = args[i];
    if (a == "--") break;
    if (a.size() > 1 && a[0] == '-') {
      // An option of the current command (or the root's); skip its value too.
      bool hasInlineValue = a.find('=') != std::string::npos;
      if (!hasInlineValue && (takesValue(*path.leaf, a) || takesValue(root, a))) ++i;
      ++i;
      continue;
    }
    const CLI::App* sub = findSubcommand(*path.leaf, a);
    if (sub == nullptr) break;
    path.leaf = sub;
    path.names.push_back(a);
    ++i;
  }
  path.end = i;
  return path;
}

std::vector<std::string> hoistGlobalFlags(const CLI::App& root, std::vector<std::string> args) {
  std::vector<std::string> hoisted;
  std::vector<std::string> rest;
  size_t i = 0;
  // Only what comes before the first subcommand name is moved.
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--" || a.empty() || a[0] != '-') break;
    if (a == "--json" || a.rfind("--space=", 0) == 0) {
      hoisted.push_back(a);
    } else if (a == "--space" && i + 1 < args.size()) {
      hoisted.push_back(a);
      hoisted.push_back(args[++i]);
    } else {
      rest.push_back(a);
      if (a.find('=') == std::string::npos && takesValue(root, a) && i + 1 < args.size())
        rest.push_back(args[++i]);
    }
  }
  if (hoisted.empty()) return args;
  rest.insert(rest.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  CommandPath path = commandPath(root, rest);
  if (path.names.empty()) return args;  // no subcommand: leave the line as typed
  // Right after the last subcommand name (before its options and words).
  size_t at = 0;
  for (size_t seen = 0; at < rest.size() && seen < path.names.size(); ++at) {
    if (rest[at] == path.names[seen]) ++seen;
  }
  rest.insert(rest.begin() + static_cast<std::ptrdiff_t>(at), hoisted.begin(), hoisted.end());
  return rest;
}

std::optional<std::string> nearestName(const std::vector<std::string>& names,
                                       std::string_view typed) {
  std::optional<std::string> best;
  size_t bestDistance = 0;
  const size_t limit = std::min<size_t>(3, std::max<size_t>(1, typed.size() / 3));
  for (const auto& name : names) {
    size_t d = editDistance(typed, name);
    if (name.rfind(typed, 0) == 0 && !typed.empty()) d = std::min<size_t>(d, 1);  // a prefix
    if (d <= limit && (!best || d < bestDistance)) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

}  // namespace shoal::cli
