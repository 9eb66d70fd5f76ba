// `shoal history <channel>`: a channel's stored posts; `shoal history --dm <peer>`: your
// conversation with one peer, both ways. Read-only: nothing is consumed.
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/clock.h"
#include "cli/command.h"
#include "cli/mail_view.h"
#include "cli/mesh_target.h"
#include "cli/message_text.h"
#include "cli/output.h"
#include "cli/peer_state.h"
#include "mesh/mailbox.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct HistoryArgs {
  MeshTargetArgs target;
  std::string channel;
  std::string dm;
  size_t limit = 50;
  double sinceMinutes = 0;
  bool json = false;
};

// The DMs between the person at the CLI and `args.dm`, merged in stream order.
int runConversation(const HistoryArgs& args, const MeshTarget& target, mesh::Endpoint& me) {
  const std::string what = "shoal history --dm";
  wire::Principal peer;
  if (auto id = wire::parsePrincipal(args.dm); id.isOk()) {
    peer = *id;
  } else {
    (void)me.waitForRoster(args.target.timeout());
    auto row = me.findPeer(args.dm);
    if (!row.isOk()) return printFailure(what, row.status());
    peer = *wire::parsePrincipal(row->id);
  }
  auto uid = peerLifecycleUid(target.space, me.principal());
  if (!uid.isOk()) return printFailure(what, uid.status());
  mesh::MailboxReader reader{target.space, me.principal(), *uid};
  auto turn = takeMailReaderTurn(target.space, me.principal(), args.target.timeout());
  if (!turn.isOk()) return printFailure(what, turn.status());
  auto page = mesh::readConversation(me.jetStream(), reader, peer, args.limit);
  turn->reset();
  if (!page.isOk()) return printFailure(what, page.status());
  auto marks = ReadMarks::load(target.space, me.principal());
  auto unread = [&](const mesh::StoredEntry& e) {
    return e.delivery.message.from.id != me.principal().dotForm() && marks.isOk() &&
           !marks->has(e.delivery.message.id);
  };
  if (jsonOutput()) {
    json::array messages;
    for (const auto& e : page->entries)
      messages.push_back(mailJson(MailView::of(e), unread(e)));
    printResult(json::object{{"peer", peer.dotForm()}, {"messages", std::move(messages)}});
    return 0;
  }
  printOk(fmt::format("{} message{} between you ({}) and {}", page->entries.size(),
                      page->entries.size() == 1 ? "" : "s", me.principal().dotForm(),
                      peer.dotForm()));
  for (const auto& e : page->entries)
    printDetail(mailLine(MailView::of(e), unread(e), me.principal()));
  return 0;
}

int runHistory(const HistoryArgs& args) {
  const std::string what = "shoal history";
  if (args.channel.empty() == args.dm.empty()) {
    return printFailure(what,
                        invalidArgument("usage",
                                        "name a channel (`shoal history team.backend`) "
                                        "or a peer (`shoal history --dm NAME`)"),
                        2);
  }
  auto target = resolveMeshTarget(args.target);
  if (!target.isOk()) return printFailure(what, target.status());
  if (!args.dm.empty()) {
    // Auth mode: a conversation is read through the person's own mail reader.
    if (Status st = usePrivilege(args.target, *target, supervisor::Privilege::kMailbox, what);
        !st.isOk()) {
      return printFailure(what, st);
    }
  }
  auto endpoint = openObserver(*target, "shoal history");
  if (!endpoint.isOk()) return printFailure(what, endpoint.status());
  if (!args.dm.empty()) return runConversation(args, *target, **endpoint);
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
    printDetail(fmt::format("#{:<6} {}  {}: {}{}", e.seq, formatDateTime(e.storedMs),
                            senderLabel(m), messageText(m), mentions));
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
  CLI::App* cmd = app.add_subcommand(
      "history", "a channel's stored posts, or your DMs with a peer (read-only; consumes nothing)");
  cmd->add_option("channel", args->channel, "a concrete channel, e.g. team.backend");
  cmd->add_option("--dm", args->dm, "your conversation with this peer (name or id) instead");
  cmd->add_option("--limit", args->limit, "show the newest N posts (0: all)")
      ->capture_default_str();
  cmd->add_option("--since", args->sinceMinutes, "only posts of the last N minutes");
  addMeshTargetOptions(cmd, args->target, "the broker");
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->callback([args, &result] { result.exitCode = runHistory(*args); });
}

}  // namespace shoal::cli
