#include "wire/presence.h"

#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "wire/channel.h"
#include "wire/json_support.h"
#include "wire/names.h"
#include "wire/reasons.h"
#include "wire/text_internal.h"
#include "wire/token.h"

namespace shoal::wire {

namespace json = internal::json;

namespace {

using internal::quoted;

constexpr std::array<std::string_view, 4> kStatusNames = {"idle", "waiting", "working", "offline"};
constexpr std::array<std::string_view, 3> kAttentionNames = {"open", "dnd", "focus"};
constexpr std::array<std::string_view, 2> kChannelModeNames = {"quiet", "muted"};
constexpr std::array<std::string_view, 13> kConditionNames = {
    "rate_limit", "overloaded", "auth",     "billing",  "budget", "context", "model",
    "request",    "server",     "retrying", "approval", "input",  "failed"};

template <typename Enum, size_t N>
std::optional<Enum> parseEnum(const std::array<std::string_view, N>& names, std::string_view s) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == s) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

template <typename Enum, size_t N>
std::string_view enumName(const std::array<std::string_view, N>& names, Enum e) {
  const auto i = static_cast<size_t>(e);
  return i < N ? names[i] : std::string_view("unknown");
}

std::string sv(const json::string& s) {
  return std::string(s.data(), s.size());
}
std::string_view view(const json::string& s) {
  return std::string_view(s.data(), s.size());
}

Status badField(std::string_view field, std::string_view want) {
  return invalidArgument(reason::kBadPresenceField,
                         "presence." + std::string(field) + " must be " + std::string(want));
}

Status optionalString(const json::object& o, std::string_view key,
                      std::optional<std::string>& out) {
  const json::value* v = internal::field(o, key);
  if (v == nullptr) return Status::ok();
  if (!v->is_string()) return badField(key, "a string when present");
  out = sv(v->get_string());
  return Status::ok();
}

Status optionalTime(const json::object& o, std::string_view key, std::string_view why,
                    std::optional<double>& out) {
  const json::value* v = internal::field(o, key);
  if (v == nullptr) return Status::ok();
  const std::optional<double> n = internal::asNumber(*v);
  if (!n || !std::isfinite(*n)) {
    return invalidArgument(
        why, "presence." + std::string(key) + " must be a finite number of epoch milliseconds");
  }
  out = *n;
  return Status::ok();
}

Result<PresenceCondition> decodeCondition(const json::value& v) {
  const json::object* o = v.if_object();
  if (o == nullptr) return invalidArgument(reason::kBadCondition, "condition must be an object");
  const json::value* code = internal::field(*o, "code");
  const std::optional<ConditionCode> parsed =
      code && code->is_string() ? parseConditionCode(view(code->get_string())) : std::nullopt;
  if (!parsed) {
    return invalidArgument(reason::kBadCondition,
                           "condition.code must be one of rate_limit, overloaded, auth, billing, "
                           "budget, context, model, request, server, retrying, approval, input, "
                           "failed");
  }
  PresenceCondition c;
  c.code = *parsed;
  for (auto [key, target] :
       {std::pair<std::string_view, std::optional<std::string>*>{"source", &c.source},
        {"message", &c.message}}) {
    if (const json::value* s = internal::field(*o, key)) {
      if (!s->is_string()) {
        return invalidArgument(reason::kBadCondition,
                               "condition." + std::string(key) + " must be a string");
      }
      *target = sv(s->get_string());
    }
  }
  SHOAL_RETURN_IF_ERROR(optionalTime(*o, "since", reason::kBadCondition, c.since));
  return c;
}

Status checkUtf8(const std::optional<std::string>& s, std::string_view field) {
  if (!s || isValidUtf8(*s)) return Status::ok();
  return invalidArgument(reason::kInvalidUtf8,
                         "presence." + std::string(field) + " is not valid UTF-8");
}

Status checkTime(const std::optional<double>& t, std::string_view field, std::string_view why) {
  if (!t || std::isfinite(*t)) return Status::ok();
  return invalidArgument(why, "presence." + std::string(field) + " must be finite");
}

}  // namespace

std::string_view presenceStatusName(PresenceStatus s) {
  return enumName(kStatusNames, s);
}
std::optional<PresenceStatus> parsePresenceStatus(std::string_view name) {
  return parseEnum<PresenceStatus>(kStatusNames, name);
}
std::string_view attentionName(Attention a) {
  return enumName(kAttentionNames, a);
}
std::optional<Attention> parseAttention(std::string_view name) {
  return parseEnum<Attention>(kAttentionNames, name);
}
std::string_view channelModeName(ChannelMode m) {
  return enumName(kChannelModeNames, m);
}
std::optional<ChannelMode> parseChannelMode(std::string_view name) {
  return parseEnum<ChannelMode>(kChannelModeNames, name);
}
std::string_view conditionCodeName(ConditionCode c) {
  return enumName(kConditionNames, c);
}
std::optional<ConditionCode> parseConditionCode(std::string_view name) {
  return parseEnum<ConditionCode>(kConditionNames, name);
}

Result<Presence> decodePresence(std::string_view key, std::string_view text) {
  if (key == kPresenceCanaryKey) {
    return invalidArgument(reason::kReservedPresenceKey,
                           "key " + quoted(key) + " is the TTL canary, not a presence record");
  }
  unsigned char buffer[4096];
  json::monotonic_resource arena(buffer, sizeof buffer);
  SHOAL_ASSIGN_OR_RETURN(json::value doc, internal::parseJsonObject(text, &arena));
  const json::object& o = doc.get_object();

  Presence p;
  const json::value* card = internal::field(o, "card");
  if (card == nullptr) return invalidArgument(reason::kMissingCard, "presence.card is missing");
  // The key check comes first: a record under someone else's key is dropped whatever it holds.
  if (const json::object* co = card->if_object()) {
    const json::value* id = internal::field(*co, "id");
    if (id != nullptr && id->is_string() && view(id->get_string()) != key) {
      return invalidArgument(reason::kCardIdMismatch, "card.id " + quoted(view(id->get_string())) +
                                                          " is not the record's key " +
                                                          quoted(key) +
                                                          "; a writer may only write its own key");
    }
  }
  SHOAL_ASSIGN_OR_RETURN(p.card, internal::cardFromJson(*card, "presence.card"));

  const json::value* status = internal::field(o, "status");
  const std::optional<PresenceStatus> st = status && status->is_string()
                                               ? parsePresenceStatus(view(status->get_string()))
                                               : std::nullopt;
  if (!st) {
    return invalidArgument(reason::kBadStatus,
                           "presence.status must be one of idle, waiting, working, offline");
  }
  p.status = *st;

  const json::value* ts = internal::field(o, "ts");
  const std::optional<double> tsValue = ts ? internal::asNumber(*ts) : std::nullopt;
  if (!tsValue || !std::isfinite(*tsValue)) {
    return invalidArgument(reason::kBadTs,
                           "presence.ts must be a finite number of epoch milliseconds");
  }
  p.ts = *tsValue;

  if (const json::value* uid = internal::field(o, "lifecycleUid")) {
    if (!uid->is_string()) {
      return invalidArgument(reason::kBadLifecycleUid, "presence.lifecycleUid must be a string");
    }
    SHOAL_RETURN_IF_ERROR(validateLifecycleUid(view(uid->get_string())));
    p.lifecycleUid = sv(uid->get_string());
  }
  if (const json::value* condition = internal::field(o, "condition")) {
    SHOAL_ASSIGN_OR_RETURN(p.condition, decodeCondition(*condition));
  }
  SHOAL_RETURN_IF_ERROR(optionalString(o, "environment", p.environment));
  SHOAL_RETURN_IF_ERROR(optionalString(o, "activity", p.activity));
  if (const json::value* attention = internal::field(o, "attention")) {
    const std::optional<Attention> a =
        attention->is_string() ? parseAttention(view(attention->get_string())) : std::nullopt;
    if (!a) {
      return invalidArgument(reason::kBadAttention,
                             "presence.attention must be one of open, dnd, focus");
    }
    p.attention = *a;
  }
  if (const json::value* modes = internal::field(o, "channelModes")) {
    if (!modes->is_object()) {
      return invalidArgument(reason::kBadChannelModes,
                             "presence.channelModes must be an object {channel: quiet|muted}");
    }
    for (const auto& kv : modes->get_object()) {
      const std::string_view channel(kv.key().data(), kv.key().size());
      const Status valid = validateConcreteChannel(channel);
      const std::optional<ChannelMode> mode =
          kv.value().is_string() ? parseChannelMode(view(kv.value().get_string())) : std::nullopt;
      if (!valid.isOk() || !mode) {
        return invalidArgument(reason::kBadChannelModes,
                               "presence.channelModes[" + quoted(channel) +
                                   "] must map a concrete channel to quiet or muted");
      }
      p.channelModes.emplace(std::string(channel), *mode);
    }
  }
  SHOAL_RETURN_IF_ERROR(optionalTime(o, "activeAt", reason::kBadPresenceField, p.activeAt));
  SHOAL_RETURN_IF_ERROR(optionalTime(o, "statusSince", reason::kBadPresenceField, p.statusSince));
  SHOAL_RETURN_IF_ERROR(
      optionalTime(o, "activitySince", reason::kBadPresenceField, p.activitySince));
  if (p.status == PresenceStatus::kOffline) {
    // An offline record has no live preferences and no status age (reference `toOffline`).
    p.attention.reset();
    p.channelModes.clear();
    p.statusSince.reset();
  }
  return p;
}

Status checkActivity(std::string_view activity) {
  if (activity.size() > kMaxActivityBytes) {
    return invalidArgument(reason::kPresenceFieldTooLong,
                           "the activity is " + std::to_string(activity.size()) +
                               " bytes; at most " + std::to_string(kMaxActivityBytes) +
                               " are shown to others: say it in a few words");
  }
  return checkUtf8(std::optional<std::string>(std::string(activity)), "activity");
}

Result<std::string> encodePresence(const Presence& presence) {
  unsigned char buffer[4096];
  json::monotonic_resource arena(buffer, sizeof buffer);
  json::object o(&arena);
  json::object card(&arena);
  SHOAL_RETURN_IF_ERROR(internal::cardToJson(presence.card, card));
  const bool offline = presence.status == PresenceStatus::kOffline;

  if (!std::isfinite(presence.ts)) {
    return invalidArgument(reason::kBadTs, "presence.ts must be finite");
  }
  if (presence.lifecycleUid) {
    SHOAL_RETURN_IF_ERROR(validateLifecycleUid(*presence.lifecycleUid));
  }
  SHOAL_RETURN_IF_ERROR(checkUtf8(presence.environment, "environment"));
  SHOAL_RETURN_IF_ERROR(checkUtf8(presence.activity, "activity"));
  SHOAL_RETURN_IF_ERROR(checkTime(presence.activeAt, "activeAt", reason::kBadPresenceField));
  SHOAL_RETURN_IF_ERROR(
      checkTime(presence.activitySince, "activitySince", reason::kBadPresenceField));
  if (!offline) {
    SHOAL_RETURN_IF_ERROR(
        checkTime(presence.statusSince, "statusSince", reason::kBadPresenceField));
    for (const auto& [channel, mode] : presence.channelModes) {
      if (!isConcreteChannel(channel)) {
        return invalidArgument(
            reason::kBadChannelModes,
            "presence.channelModes key " + quoted(channel) + " is not a concrete channel");
      }
    }
  }

  o.emplace("card", std::move(card));
  o.emplace("status", presenceStatusName(presence.status));
  o.emplace("ts", internal::numberValue(presence.ts));
  if (presence.lifecycleUid) o.emplace("lifecycleUid", *presence.lifecycleUid);
  if (presence.condition) {
    const PresenceCondition& c = *presence.condition;
    SHOAL_RETURN_IF_ERROR(checkUtf8(c.source, "condition.source"));
    SHOAL_RETURN_IF_ERROR(checkUtf8(c.message, "condition.message"));
    SHOAL_RETURN_IF_ERROR(checkTime(c.since, "condition.since", reason::kBadCondition));
    json::object co(&arena);
    co.emplace("code", conditionCodeName(c.code));
    if (c.source) co.emplace("source", *c.source);
    if (c.message) co.emplace("message", *c.message);
    if (c.since) co.emplace("since", internal::numberValue(*c.since));
    o.emplace("condition", std::move(co));
  }
  if (presence.environment) o.emplace("environment", *presence.environment);
  if (presence.activity) o.emplace("activity", *presence.activity);
  if (!offline && presence.attention) o.emplace("attention", attentionName(*presence.attention));
  if (!offline && !presence.channelModes.empty()) {
    json::object modes(&arena);
    for (const auto& [channel, mode] : presence.channelModes) {
      modes.emplace(channel, channelModeName(mode));
    }
    o.emplace("channelModes", std::move(modes));
  }
  if (presence.activeAt) o.emplace("activeAt", internal::numberValue(*presence.activeAt));
  if (!offline && presence.statusSince) {
    o.emplace("statusSince", internal::numberValue(*presence.statusSince));
  }
  if (presence.activitySince) {
    o.emplace("activitySince", internal::numberValue(*presence.activitySince));
  }
  return internal::toJson(o);
}

}  // namespace shoal::wire
