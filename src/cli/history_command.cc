// `shoal history <channel>`: a channel's stored posts, read-only (nothing is consumed).
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/clock.h"
#include "cli/command.h"
#include "cli/mesh_target.h"
#include "cli/message_text.h"
#include "cli/output.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct HistoryArgs {
  MeshTargetArgs target;
  std::string channel;
  size_t limit = 50;
  double sinceMinutes = 0;
  bool json = false;
};

std::string clockTime(int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

int runHistory(const HistoryArgs& args) {
  const std::string what = "shoal history";
  auto target = resolveMeshTarget(args.target);
  if (!target.isOk()) return printFailure(what, target.status());
  auto endpoint = openObserver(*target, "shoal history");
  if (!endpoint.isOk()) return printFailure(what, endpoint.status());
  mesh::HistoryOptions options;
  options.limit = args.limit;
  if (args.sinceMinutes > 0) {
    options.sinceMs = Clock::real().wallMs() - static_cast<int64_t>(args.sinceMinutes * 60000);
  }
  auto page = (*endpoint)->history(args.channel, options);
  if (!page.isOk()) return printFailure(what, page.status());

  if (args.json) {
    json::object out;
    out["channel"] = page->channel;
    out["watermark"] = page->watermark;
    out["skipped"] = page->skipped;
    json::array posts;
    for (const auto& e : page->entries) {
      const auto& m = e.delivery.message;
      json::array mentions;
      for (const auto& x : m.mentions)
        mentions.push_back(json::value(x));
      posts.push_back(json::object{{"seq", e.seq},
                                   {"storedMs", e.storedMs},
                                   {"id", m.id},
                                   {"from", m.from.id},
                                   {"name", m.from.name},
                                   {"text", messageText(m)},
                                   {"mentions", std::move(mentions)}});
    }
    out["posts"] = std::move(posts);
    printResult(out);
    return 0;
  }
  if (page->entries.empty()) {
    printOk(fmt::format("no posts in #{}{}", page->channel,
                        args.sinceMinutes > 0 ? " in that window" : ""));
  }
  for (const auto& e : page->entries) {
    const auto& m = e.delivery.message;
    std::string mentions;
    for (const auto& x : m.mentions)
      mentions += " @" + x;
    printDetail(fmt::format("#{:<6} {}  {}: {}{}", e.seq, clockTime(e.storedMs), senderLabel(m),
                            messageText(m), mentions));
  }
  if (page->skipped > 0) {
    printNote(fmt::format("{} stored message(s) skipped: not valid deliveries (last: {})",
                          page->skipped, page->lastSkipReason));
  }
  return 0;
}

}  // namespace

void registerHistoryCommands(CLI::App& app, CommandResult& result) {
  auto args = std::make_shared<HistoryArgs>();
  CLI::App* cmd =
      app.add_subcommand("history", "a channel's stored posts (read-only; consumes nothing)");
  cmd->add_option("channel", args->channel, "a concrete channel, e.g. team.backend")->required();
  cmd->add_option("--limit", args->limit, "show the newest N posts (0: all)")
      ->capture_default_str();
  cmd->add_option("--since", args->sinceMinutes, "only posts of the last N minutes");
  addMeshTargetOptions(cmd, args->target, "the broker");
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->callback([args, &result] { result.exitCode = runHistory(*args); });
}

}  // namespace shoal::cli
