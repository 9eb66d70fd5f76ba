// `shoal watch`: a live line stream of presence changes, channel memberships and traffic in a
// space; a channel post names its delivery class (read fresh from the registry).
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/clock.h"
#include "cli/command.h"
#include "cli/mesh_target.h"
#include "cli/message_text.h"
#include "cli/output.h"
#include "cli/signal_wait.h"
#include "mesh/channel_registry.h"
#include "mesh/operator_identity.h"
#include "transport/kv.h"
#include "wire/inbound.h"
#include "wire/membership.h"
#include "wire/names.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct WatchArgs {
  MeshTargetArgs target;
  bool plain = false;
  bool json = false;
  double forSeconds = 0;  // 0: until SIGINT / SIGTERM
};

// Serialises output from the endpoint's threads; one flushed line at a time.
class LinePrinter {
 public:
  explicit LinePrinter(bool asJson) : json_(asJson) {}

  void line(std::string_view kind, const std::string& text, json::object fields = {}) {
    std::lock_guard lock(mu_);
    const int64_t now = Clock::real().wallMs();
    if (json_) {
      fields["t"] = now;
      fields["type"] = std::string(kind);
      if (!fields.contains("text")) fields["text"] = text;
      std::printf("%s\n", json::serialize(fields).c_str());
    } else {
      std::time_t t = static_cast<std::time_t>(now / 1000);
      std::tm tm{};
      localtime_r(&t, &tm);
      std::printf("%02d:%02d:%02d %-8.*s %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>(kind.size()), kind.data(), text.c_str());
    }
    std::fflush(stdout);
  }

 private:
  std::mutex mu_;
  const bool json_;
};

// What was last printed about a peer, so heartbeats (which change only `ts`) print nothing.
struct Shown {
  std::string status;
  std::string activity;
  std::string condition;
};

std::string describe(const mesh::RosterRow& row) {
  const wire::Presence& p = row.presence;
  std::string out(wire::presenceStatusName(p.status));
  if (!row.online() && row.offlineCause != mesh::OfflineCause::kNone) {
    out += fmt::format(" ({})", mesh::offlineCauseName(row.offlineCause));
  }
  if (p.condition) out += fmt::format(" [{}]", wire::conditionCodeName(p.condition->code));
  if (p.activity) out += " · " + printablePeerText(*p.activity);
  return out;
}

int runWatch(const WatchArgs& args) {
  const std::string what = "shoal watch";
  blockStopSignals();
  auto target = resolveMeshTarget(args.target);
  if (!target.isOk()) return printFailure(what, target.status());
  // Auth mode: every DM and work item as it is sent is the admin profile's to read.
  if (Status st = usePrivilege(args.target, *target, supervisor::Privilege::kAdminReads, what);
      !st.isOk()) {
    return printFailure(what, st);
  }

  auto printer = std::make_shared<LinePrinter>(args.json);
  auto shownMu = std::make_shared<std::mutex>();
  auto shown = std::make_shared<std::map<std::string, Shown>>();

  mesh::OperatorIdentity me = mesh::localOperator();
  mesh::EndpointOptions options;
  options.servers = {target->url};
  options.nkeySeedFile = target->nkeySeedFile;
  options.credentialsFile = target->credentialsFile;
  options.inboxPrefix = target->inboxPrefix;
  options.tlsCaFile = target->caFile;
  options.space = target->space;
  options.principal = target->caller;
  options.displayName = me.displayName;
  options.presence = false;
  options.receiveDirect = false;
  options.connectionName = "shoal watch";
  options.onWarning = [printer](const Status& s) {
    printer->line("warning", s.toString(), {{"reason", std::string(s.reason())}});
  };
  options.onRoster = [printer, shownMu, shown](const mesh::RosterEvent& event,
                                               const std::optional<mesh::RosterRow>& row) {
    using Kind = mesh::RosterEvent::Kind;
    if (event.kind == Kind::kViewChanged) return;  // reported by the view's own warnings
    if (!row) return;
    Shown now{std::string(wire::presenceStatusName(row->presence.status)),
              row->presence.activity.value_or(""),
              row->presence.condition
                  ? std::string(wire::conditionCodeName(row->presence.condition->code))
                  : ""};
    std::string change;
    {
      std::lock_guard lock(*shownMu);
      auto it = shown->find(row->id);
      if (it != shown->end() && event.kind == Kind::kUpdated && it->second.status == now.status &&
          it->second.activity == now.activity && it->second.condition == now.condition) {
        return;  // a heartbeat
      }
      change = it == shown->end() ? "" : it->second.status + " → ";
      (*shown)[row->id] = now;
    }
    std::string verb = event.kind == Kind::kLifecycleChanged ? "restarted: "
                       : change.empty()                      ? "present: "
                                                             : "";
    printer->line("presence",
                  fmt::format("{} ({}) {}{}{}", printablePeerText(row->presence.card.name), row->id,
                              verb, change, describe(*row)),
                  {{"id", row->id},
                   {"name", row->presence.card.name},
                   {"status", now.status},
                   {"activity", now.activity},
                   {"condition", now.condition}});
  };
  auto endpoint = mesh::Endpoint::open(std::move(options));
  if (!endpoint.isOk()) return printFailure(what, endpoint.status());

  // Traffic: core subscriptions to the three delivery kinds. They consume nothing (anycast work
  // stays queued for its role) and see only what is published while watching.
  std::vector<transport::Subscription> subs;
  for (const char* kind : {"chat", "inst", "svc"}) {
    std::string filter = fmt::format("cotal.{}.{}.>", target->space, kind);
    mesh::Endpoint* ep = endpoint->get();
    const std::string space = target->space;
    auto sub =
        (*endpoint)->connection().subscribe(filter, [printer, ep, space](transport::Message m) {
          auto d = wire::readDelivery(m.subject, m.data);
          if (!d.isOk()) {
            printer->line("refused", fmt::format("{}: {}", m.subject, d.status().toString()),
                          {{"subject", m.subject}, {"reason", std::string(d.status().reason())}});
            return;
          }
          std::string line = trafficLine(d->kind, d->message, false);
          json::object fields{{"kind", std::string(wire::deliveryKindName(d->kind))},
                              {"id", d->message.id},
                              {"from", d->message.from.id},
                              {"target", d->message.routing.target},
                              {"text", messageText(d->message)}};
          if (d->kind == wire::DeliveryKind::kChannel) {
            auto effective =
                mesh::readEffectiveChannel(ep->jetStream(), space, d->message.routing.target);
            if (effective.isOk()) {
              const std::string cls(wire::deliveryClassName(effective->deliveryClass));
              line += " [" + cls + "]";
              fields["class"] = cls;
            }
          }
          printer->line("traffic", line, std::move(fields));
        });
    if (!sub.isOk()) return printFailure(what, sub.status());
    subs.push_back(std::move(sub).value());
  }
  (void)(*endpoint)->connection().flush(args.target.timeout());
  auto roster = (*endpoint)->waitForRoster(args.target.timeout());
  if (!roster.isOk()) printer->line("warning", roster.status().toString());
  printer->line("watching",
                fmt::format("space {} on {} (Ctrl-C to stop)", target->space, target->url));

  // Durable channel memberships as the delivery plane records them: the current ones first,
  // then every join and leave.
  std::optional<transport::KvWatcher> members;
  if (auto bucket = wire::bucketName(wire::Bucket::kMembers, target->space); bucket.isOk()) {
    auto kv = transport::KeyValue::openBucket((*endpoint)->jetStream(), *bucket);
    if (kv.isOk()) {
      auto w = kv->watchAll();
      if (w.isOk()) members.emplace(std::move(w).value());
    }
  }
  auto showMember = [&](const transport::KvEntry& e) {
    if (e.operation != transport::KvOperation::kPut) return;
    auto r = wire::decodeMembership(e.value);
    if (!r.isOk()) return;
    const std::string who = r->member.dotForm();
    json::object fields{{"channel", r->channel},           {"member", who},
                        {"lifecycleUid", r->lifecycleUid}, {"generation", r->generation},
                        {"joinCursor", r->joinCursor},     {"active", r->active()}};
    if (r->leaveCursor) fields["leaveCursor"] = *r->leaveCursor;
    printer->line("member",
                  r->active() ? fmt::format("{} is a durable member of #{} (after seq {}, "
                                            "generation {})",
                                            who, r->channel, r->joinCursor, r->generation)
                              : fmt::format("{} left #{} (copies end at seq {})", who, r->channel,
                                            *r->leaveCursor),
                  std::move(fields));
  };

  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(args.forSeconds * 1000));
  while (true) {
    if (members) {
      if (waitForStopSignal(std::chrono::milliseconds(0))) break;
      auto next = members->next(std::chrono::milliseconds(200));
      if (next.isOk() && next->has_value()) showMember(**next);
      if (!next.isOk()) members.reset();
    } else if (waitForStopSignal(std::chrono::milliseconds(200))) {
      break;
    }
    if (args.forSeconds > 0 && std::chrono::steady_clock::now() >= deadline) break;
  }
  if (members) members->stop();
  subs.clear();
  (void)(*endpoint)->close();
  return 0;
}

}  // namespace

void registerWatchCommands(CLI::App& app, CommandResult& result) {
  auto args = std::make_shared<WatchArgs>();
  CLI::App* cmd = app.add_subcommand("watch", "a live line stream of presence changes and traffic");
  cmd->add_flag("--plain", args->plain, "plain timestamped lines (the default rendering)");
  cmd->add_flag("--json", args->json, "one JSON object per line");
  cmd->add_option("--for", args->forSeconds, "stop after N seconds (default: until Ctrl-C)");
  addMeshTargetOptions(cmd, args->target, "the roster");
  cmd->callback([args, &result] { result.exitCode = runWatch(*args); });
}

}  // namespace shoal::cli
