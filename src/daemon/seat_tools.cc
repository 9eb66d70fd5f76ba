#include "daemon/seat_tools.h"

#include <optional>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/clock.h"
#include "daemon/reply_ledger.h"
#include "mesh/endpoint.h"
#include "wire/channel.h"
#include "wire/presence.h"
#include "wire/principal.h"

namespace shoal::daemon {
namespace {

namespace json = boost::json;
using mcp::ToolResult;
using mcp::ToolSpec;

constexpr const char* kToolNames[] = {
    "shoal_orientation",  "shoal_roster", "shoal_dm",     "shoal_send",
    "shoal_anycast",      "shoal_inbox",  "shoal_status", "shoal_channels",
    "shoal_channel_mode", "shoal_join",   "shoal_leave",  "shoal_connection_status"};

json::object schema(json::object properties, std::initializer_list<const char*> required) {
  json::array req;
  for (const char* r : required)
    req.emplace_back(r);
  return json::object{{"type", "object"},
                      {"properties", std::move(properties)},
                      {"required", std::move(req)},
                      {"additionalProperties", false}};
}

json::object stringProp(const char* description) {
  return json::object{{"type", "string"}, {"description", description}};
}

std::string str(const json::object& args, const char* key) {
  const json::value* v = args.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

ToolResult ok(std::string text, json::object meta = {}) {
  return ToolResult{std::move(text), false, std::move(meta)};
}

// What a model can do next about a refusal, by its reason.
std::string_view remedyFor(std::string_view reason) {
  if (reason == mesh::kReasonUnknownPeer || reason == mesh::kReasonAmbiguousName ||
      reason == mesh::kReasonViewStale || reason == mesh::kReasonViewUnpopulated ||
      reason == mesh::kReasonSnapshotTimeout) {
    return " shoal_roster lists who is present, with their ids.";
  }
  if (reason == "not-joined") return " shoal_channels lists the channels you have joined.";
  return "";
}

ToolResult fail(const Status& status, std::string_view doing) {
  return ToolResult{fmt::format("{} failed: {} ({}).{}", doing, status.message(), status.reason(),
                                remedyFor(status.reason())),
                    true,
                    {}};
}

// In auth mode a seat's credential reads only the channels its profile declares: an agent
// cannot widen its own grants, so the refusal names what the person who runs it can do.
ToolResult joinRefused(const Status& status, const SeatProfile& profile,
                       const std::string& channel) {
  std::string declared;
  for (const auto& c : profile.channels)
    declared += (declared.empty() ? "#" : ", #") + c;
  return ToolResult{
      fmt::format("shoal_join failed: {} ({}). This seat may read only the channels its profile "
                  "declares ({}); ask the person who runs it to add #{} with `shoal seat channels "
                  "\"{}\" --add {}` (the seat restarts with it).",
                  status.message(), status.reason(), declared.empty() ? "none" : declared, channel,
                  profile.name, channel),
      true,
      {}};
}

// A concrete channel name, or the tool error saying why not.
std::optional<ToolResult> notAConcreteChannel(const std::string& channel) {
  Status valid = wire::validateConcreteChannel(channel);
  if (valid.isOk()) return std::nullopt;
  return ToolResult{fmt::format("`{}` is not a channel you can use here: {} — name one concrete "
                                "channel, e.g. team.backend (no wildcards)",
                                channel, valid.message()),
                    true,
                    {}};
}

// "12s ago" / "3m ago" / "2h ago"; "" without a stamp.
std::string ago(std::optional<double> stampMs, int64_t nowMs) {
  if (!stampMs) return "";
  int64_t s = (nowMs - static_cast<int64_t>(*stampMs)) / 1000;
  if (s < 0) s = 0;
  if (s < 120) return fmt::format("{}s ago", s);
  if (s < 7200) return fmt::format("{}m ago", s / 60);
  return fmt::format("{}h ago", s / 3600);
}

std::string rowLine(const mesh::RosterRow& row, int64_t nowMs) {
  const wire::Presence& p = row.presence;
  std::string line =
      fmt::format("{} ({}): {}", p.card.name, row.id, wire::presenceStatusName(p.status));
  if (p.card.role) line += ", role " + *p.card.role;
  if (p.activity) line += ", activity \"" + *p.activity + "\"";
  if (p.condition) {
    line += fmt::format(", condition {}", wire::conditionCodeName(p.condition->code));
    if (p.condition->message) line += " (" + *p.condition->message + ")";
  }
  if (p.activeAt) line += ", active " + ago(p.activeAt, nowMs);
  if (!row.online()) line += ", last seen " + ago(p.ts, nowMs);
  return line;
}

std::string receiptText(const mesh::SendReceipt& r) {
  return fmt::format(
      "sent: stored seq {} in {} (message id {}){}; {}. Stored is not read: the "
      "recipient sees it when its runtime takes it.",
      r.stored.seq, r.stored.stream, r.stored.messageId,
      r.stored.duplicate ? " (a duplicate of an earlier send)" : "", r.note);
}

json::object receiptMeta(const mesh::SendReceipt& r) {
  return json::object{{"shoal/receipt", json::object{{"messageId", r.stored.messageId},
                                                     {"stream", r.stored.stream},
                                                     {"seq", r.stored.seq},
                                                     {"duplicate", r.stored.duplicate},
                                                     {"target", r.target}}}};
}

// The visible-reply frontier of `targetKey` before a send, and the settlement after it.
uint64_t frontierBefore(const SeatToolContext& ctx, const std::string& targetKey) {
  return ctx.replyFrontier ? ctx.replyFrontier(targetKey) : 0;
}
void settleAfter(const SeatToolContext& ctx, const std::string& targetKey, uint64_t seen,
                 const mesh::SendReceipt& r) {
  if (ctx.replied && seen > 0) ctx.replied(targetKey, seen, r.stored.messageId);
}

}  // namespace

std::vector<std::string> seatToolNamesForClaude() {
  std::vector<std::string> out;
  for (const char* name : kToolNames)
    out.push_back(std::string("mcp__shoal__") + name);
  return out;
}

std::vector<mcp::ToolSpec> seatTools(SeatToolContext context) {
  auto ctx = std::make_shared<SeatToolContext>(std::move(context));
  std::vector<ToolSpec> tools;

  tools.push_back(ToolSpec{
      "shoal_orientation", "Orientation",
      "Who you are on the shoal mesh: your name and id, space, role, joined channels, who is "
      "present, your status, and how many deliveries wait for you. Call it first.",
      schema({}, {}), [ctx](const json::object&) {
        mesh::Endpoint& ep = *ctx->endpoint;
        const int64_t now = Clock::real().wallMs();
        mesh::RosterSnapshot roster = ep.roster();
        std::string text = fmt::format("You are {} ({}) in space {}.", ctx->profile.name,
                                       ctx->profile.principal.dotForm(), ctx->space);
        if (ctx->profile.role) text += " Your role: " + *ctx->profile.role + ".";
        auto channels = ep.channels();
        text += channels.empty()
                    ? " You have joined no channel."
                    : " Joined channels: #" + fmt::format("{}", fmt::join(channels, ", #")) + ".";
        size_t present = 0;
        std::string others;
        for (const auto& row : roster.rows) {
          if (row.id == ctx->profile.principal.dotForm()) continue;
          if (!row.online()) continue;
          ++present;
          others += "\n- " + rowLine(row, now);
        }
        text +=
            fmt::format("\n{} other peer(s) present{}:", present,
                        roster.view.fresh ? "" : " (last known: the roster view is not current)");
        text += others.empty() ? " none." : others;
        if (ctx->attention) {
          text += fmt::format("\nYour attention: {}.", wire::attentionName(ctx->attention()));
        }
        if (ctx->channelModes) {
          for (const auto& [channel, mode] : ctx->channelModes())
            text += fmt::format(" #{} is {}.", channel, mode);
        }
        if (ctx->queued) text += fmt::format("\nDeliveries waiting for you: {}.", ctx->queued());
        text +=
            "\nReply with shoal_dm (to a peer) or shoal_send (to a channel); local text you "
            "write is never relayed to anyone.";
        return ok(std::move(text));
      }});

  tools.push_back(ToolSpec{
      "shoal_roster", "Roster",
      "Every peer on the mesh with status (idle, working, waiting, offline), activity, "
      "condition and ages.",
      schema({}, {}), [ctx](const json::object&) {
        const int64_t now = Clock::real().wallMs();
        mesh::RosterSnapshot roster = ctx->endpoint->roster();
        std::string text;
        if (!roster.view.fresh) {
          text = "LAST KNOWN (the roster view is not current: " +
                 std::string(roster.view.condition.message()) + ")\n";
        }
        json::array rows;
        for (const auto& row : roster.rows) {
          text += "- " + rowLine(row, now) + "\n";
          rows.push_back(
              json::object{{"id", row.id},
                           {"name", row.presence.card.name},
                           {"status", std::string(wire::presenceStatusName(row.presence.status))}});
        }
        if (roster.rows.empty()) text += "nobody is on the roster yet\n";
        return ok(std::move(text),
                  json::object{{"shoal/roster", json::object{{"rows", std::move(rows)},
                                                             {"current", roster.view.fresh}}}});
      }});

  tools.push_back(
      ToolSpec{"shoal_dm", "Direct message",
               "Send a direct message to one peer (by name or id). The receipt says it was stored, "
               "never that it was read.",
               schema({{"to", stringProp("the peer's name or id, e.g. alice or local.alice")},
                       {"text", stringProp("the message")}},
                      {"to", "text"}),
               [ctx](const json::object& args) {
                 const std::string text = str(args, "text");
                 if (text.empty()) return ToolResult{"text is empty: nothing was sent", true, {}};
                 // The frontier is read before sending: what surfaced later is not answered.
                 const std::string to = str(args, "to");
                 auto peer = ctx->endpoint->findPeer(to);
                 const std::string self = ctx->profile.principal.dotForm();
                 if ((peer.isOk() && peer->id == self) || to == self) {
                   return ToolResult{"that is you: a message to yourself reaches nobody", true, {}};
                 }
                 const std::string key = peer.isOk()                       ? peerTargetKey(peer->id)
                                         : wire::parsePrincipal(to).isOk() ? peerTargetKey(to)
                                                                           : std::string();
                 const uint64_t seen = key.empty() ? 0 : frontierBefore(*ctx, key);
                 auto sent = ctx->endpoint->sendDirect(to, text);
                 if (!sent.isOk()) return fail(sent.status(), "shoal_dm");
                 if (!key.empty() && peerTargetKey(sent->target) == key)
                   settleAfter(*ctx, key, seen, *sent);
                 return ok(receiptText(*sent), receiptMeta(*sent));
               }});

  tools.push_back(ToolSpec{
      "shoal_send", "Channel post",
      "Post to a channel. Without `channel`, posts to your only joined channel. `mentions` "
      "names peers to notify (each must resolve to exactly one peer).",
      schema({{"text", stringProp("the post")},
              {"channel", stringProp("a concrete channel, e.g. team.backend")},
              {"mentions", json::object{{"type", "array"},
                                        {"items", json::object{{"type", "string"}}},
                                        {"description", "peer names or ids to @mention"}}}},
             {"text"}),
      [ctx](const json::object& args) {
        if (str(args, "text").empty())
          return ToolResult{"text is empty: nothing was sent", true, {}};
        std::string channel = str(args, "channel");
        if (channel.empty()) {
          auto joined = ctx->endpoint->channels();
          if (joined.size() != 1) {
            return ToolResult{joined.empty()
                                  ? "no channel given and you have joined none: pass `channel`"
                                  : "no channel given and you have joined several: pass `channel`",
                              true,
                              {}};
          }
          channel = joined.front();
        }
        std::vector<std::string> mentions;
        if (const json::value* m = args.if_contains("mentions"); m != nullptr && m->is_array()) {
          for (const auto& v : m->as_array()) {
            if (v.is_string()) mentions.emplace_back(v.as_string());
          }
        }
        const std::string key = channelTargetKey(channel);
        const uint64_t seen = frontierBefore(*ctx, key);
        auto sent = ctx->endpoint->post(channel, str(args, "text"), mentions);
        if (!sent.isOk()) return fail(sent.status(), "shoal_send");
        settleAfter(*ctx, key, seen, *sent);
        return ok(receiptText(*sent), receiptMeta(*sent));
      }});

  tools.push_back(ToolSpec{
      "shoal_anycast", "Ask a role",
      "Send work to whoever holds a role; exactly one holder takes it.",
      schema({{"role", stringProp("the role, e.g. reviewer")}, {"text", stringProp("the work")}},
             {"role", "text"}),
      [ctx](const json::object& args) {
        if (str(args, "text").empty())
          return ToolResult{"text is empty: nothing was sent", true, {}};
        auto sent = ctx->endpoint->ask(str(args, "role"), str(args, "text"));
        if (!sent.isOk()) return fail(sent.status(), "shoal_anycast");
        return ok(receiptText(*sent), receiptMeta(*sent));
      }});

  tools.push_back(ToolSpec{
      "shoal_inbox", "Read my inbox",
      "Take the messages waiting for you now (oldest first), without waiting for your turn to "
      "end: direct messages, jobs, mentions, and posts of quiet channels. Each page is yours "
      "once returned; the same message is never shown twice.",
      schema({{"limit", json::object{{"type", "integer"},
                                     {"description",
                                      "at most this many messages (1-50, default "
                                      "10)"}}}},
             {}),
      [ctx](const json::object& args) {
        if (!ctx->inbox) return ToolResult{"this seat has no inbox", true, {}};
        int64_t limit = 0;
        if (const json::value* l = args.if_contains("limit"); l != nullptr) {
          limit = l->is_int64() ? l->as_int64() : static_cast<int64_t>(l->as_uint64());
          if (limit < 1 || limit > 50) return ToolResult{"limit is 1 to 50", true, {}};
        }
        return ctx->inbox(static_cast<size_t>(limit));
      }});

  tools.push_back(ToolSpec{
      "shoal_channel_mode", "Set a channel's attention",
      "How a channel's posts reach you: normal (they arrive in your session), quiet (they wait "
      "for shoal_inbox and never interrupt you), muted (dropped). Direct messages, jobs and "
      "posts that @mention you always arrive.",
      schema({{"channel", stringProp("a channel, e.g. general")},
              {"mode", json::object{{"type", "string"},
                                    {"enum", json::array{"normal", "quiet", "muted"}},
                                    {"description", "normal, quiet or muted"}}}},
             {"channel", "mode"}),
      [ctx](const json::object& args) {
        if (!ctx->setChannelMode)
          return ToolResult{"this seat has no attention settings", true, {}};
        const std::string channel = str(args, "channel");
        const std::string mode = str(args, "mode");
        if (auto bad = notAConcreteChannel(channel)) return *bad;
        Status set = ctx->setChannelMode(channel, mode);
        if (!set.isOk()) return fail(set, "shoal_channel_mode");
        return ok(fmt::format("#{} is now {}{}", channel, mode,
                              mode == "quiet"   ? ": its posts wait for shoal_inbox"
                              : mode == "muted" ? ": its posts are dropped (mentions of you "
                                                  "still arrive)"
                                                : ""));
      }});

  tools.push_back(ToolSpec{
      "shoal_status", "Set my status",
      "Set your presence: status idle | working | waiting, a short activity line others see, "
      "and your attention: open (channel posts reach you), dnd (they wait until something "
      "addressed to you starts your next turn), focus (they wait for shoal_inbox). Direct "
      "messages, jobs and mentions always reach you. Attention resets to open when your "
      "session restarts.",
      schema({{"status", stringProp("idle, working or waiting")},
              {"attention", json::object{{"type", "string"},
                                         {"enum", json::array{"open", "dnd", "focus"}},
                                         {"description", "open, dnd or focus"}}},
              {"activity", stringProp("what you are doing, in a few words; empty clears it")}},
             {}),
      [ctx](const json::object& args) {
        std::string said;
        if (args.contains("status")) {
          auto status = wire::parsePresenceStatus(str(args, "status"));
          if (!status || *status == wire::PresenceStatus::kOffline) {
            return ToolResult{
                "status is idle, working or waiting (offline is not yours to set: the seat "
                "goes offline when it stops)",
                true,
                {}};
          }
          Status set = ctx->endpoint->setStatus(*status);
          if (!set.isOk()) return fail(set, "shoal_status");
          said += "status " + str(args, "status");
        }
        if (args.contains("attention")) {
          auto attention = wire::parseAttention(str(args, "attention"));
          if (!attention) return ToolResult{"attention is open, dnd or focus", true, {}};
          if (!ctx->setAttention) return ToolResult{"this seat has no attention setting", true, {}};
          ctx->setAttention(*attention);
          said += std::string(said.empty() ? "" : ", ") + "attention " + str(args, "attention");
        }
        if (args.contains("activity")) {
          std::string activity = str(args, "activity");
          Status set = ctx->endpoint->setActivity(
              activity.empty() ? std::nullopt : std::optional<std::string>(activity));
          if (!set.isOk()) return fail(set, "shoal_status");
          said += std::string(said.empty() ? "" : ", ") +
                  (activity.empty() ? "activity cleared" : "activity \"" + activity + "\"");
        }
        if (said.empty()) return ToolResult{"pass status, attention and/or activity", true, {}};
        return ok("set: " + said);
      }});

  tools.push_back(ToolSpec{"shoal_channels", "My channels", "The channels you have joined.",
                           schema({}, {}), [ctx](const json::object&) {
                             auto joined = ctx->endpoint->channels();
                             if (joined.empty()) return ok("you have joined no channel");
                             auto modes = ctx->channelModes ? ctx->channelModes()
                                                            : std::map<std::string, std::string>{};
                             std::string text = "joined:";
                             for (const auto& c : joined) {
                               auto m = modes.find(c);
                               text += " #" + c + (m == modes.end() ? "" : " (" + m->second + ")");
                             }
                             return ok(std::move(text));
                           }});

  tools.push_back(ToolSpec{
      "shoal_join", "Join a channel", "Join a channel to receive its posts.",
      schema({{"channel", stringProp("a concrete channel, e.g. team.backend")}}, {"channel"}),
      [ctx](const json::object& args) {
        if (auto bad = notAConcreteChannel(str(args, "channel"))) return *bad;
        auto joined = ctx->endpoint->join(str(args, "channel"));
        if (!joined.isOk() && joined.status().reason() == "join-refused") {
          return joinRefused(joined.status(), ctx->profile, str(args, "channel"));
        }
        if (!joined.isOk()) return fail(joined.status(), "shoal_join");
        return ok(joined->alreadyJoined ? "already joined #" + joined->channel
                                        : "joined #" + joined->channel);
      }});

  tools.push_back(ToolSpec{"shoal_leave", "Leave a channel",
                           "Leave a channel; its posts stop reaching you.",
                           schema({{"channel", stringProp("a channel you joined")}}, {"channel"}),
                           [ctx](const json::object& args) {
                             Status left = ctx->endpoint->leave(str(args, "channel"));
                             if (!left.isOk()) return fail(left, "shoal_leave");
                             return ok("left #" + str(args, "channel"));
                           }});

  tools.push_back(ToolSpec{
      "shoal_connection_status", "Connection status",
      "Whether the mesh connection and the roster view are healthy.", schema({}, {}),
      [ctx](const json::object&) {
        mesh::RosterSnapshot roster = ctx->endpoint->roster();
        std::string text = roster.view.fresh ? "connected; the roster view is current"
                                             : "the roster view is not current: " +
                                                   std::string(roster.view.condition.message());
        return ok(
            std::move(text),
            json::object{{"shoal/connection", json::object{{"rosterCurrent", roster.view.fresh}}}});
      }});
  return tools;
}

}  // namespace shoal::daemon
