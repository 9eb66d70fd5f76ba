#include "wire/channel_config.h"

#include <limits>
#include <string>

#include "wire/json_support.h"
#include "wire/reasons.h"
#include "wire/text_internal.h"
#include "wire/token.h"

namespace shoal::wire {

namespace json = internal::json;

namespace {

using internal::quoted;

std::string sv(const json::string& s) {
  return std::string(s.data(), s.size());
}

Status badType(std::string_view field, std::string_view want) {
  return invalidArgument(reason::kBadChannelConfig, "channel config '" + std::string(field) +
                                                        "' must be " + std::string(want));
}

Status checkText(const std::optional<std::string>& text, std::string_view field, size_t limit,
                 std::string_view tooLong) {
  if (!text) return Status::ok();
  if (!isValidUtf8(*text)) {
    return invalidArgument(reason::kInvalidUtf8,
                           "channel " + std::string(field) + " is not valid UTF-8");
  }
  const size_t length = utf16Length(*text);
  if (length > limit) {
    return invalidArgument(tooLong, "channel " + std::string(field) + " is " +
                                        std::to_string(length) + " characters; the limit is " +
                                        std::to_string(limit) +
                                        " (refused, never truncated: shorten it)");
  }
  return Status::ok();
}

// The fields ChannelConfig and ChannelDefaults share.
struct Common {
  std::optional<bool> replay;
  std::optional<std::string> replayWindow;
  std::optional<DeliveryClass> deliveryClass;
};

Result<Common> decodeCommon(const json::object& o) {
  Common c;
  if (const json::value* replay = internal::field(o, "replay")) {
    if (!replay->is_bool()) return badType("replay", "a boolean");
    c.replay = replay->get_bool();
  }
  if (const json::value* window = internal::field(o, "replayWindow")) {
    if (!window->is_string()) return badType("replayWindow", "a string like '24h'");
    c.replayWindow = sv(window->get_string());
    SHOAL_RETURN_IF_ERROR(parseReplayWindowMs(*c.replayWindow).status());
  }
  if (const json::value* cls = internal::field(o, "deliveryClass")) {
    const std::string name = cls->is_string() ? sv(cls->get_string()) : std::string();
    if (name == "live") {
      c.deliveryClass = DeliveryClass::kLive;
    } else if (name == "durable") {
      c.deliveryClass = DeliveryClass::kDurable;
    } else {
      return invalidArgument(reason::kBadDeliveryClass,
                             "deliveryClass must be 'live' or 'durable'");
    }
  }
  return c;
}

void encodeCommon(const Common& c, json::object& o) {
  if (c.replay) o.emplace("replay", *c.replay);
  if (c.replayWindow) o.emplace("replayWindow", *c.replayWindow);
  if (c.deliveryClass) o.emplace("deliveryClass", deliveryClassName(*c.deliveryClass));
}

Status validateWindow(const std::optional<std::string>& window) {
  if (!window) return Status::ok();
  return parseReplayWindowMs(*window).status();
}

}  // namespace

std::string_view deliveryClassName(DeliveryClass c) {
  return c == DeliveryClass::kLive ? "live" : "durable";
}

Result<int64_t> parseReplayWindowMs(std::string_view window) {
  const auto refuse = [&] {
    return invalidArgument(
        reason::kBadReplayWindow,
        "replayWindow " + quoted(window) + " must be digits then one of s, m, h, d (e.g. '24h')");
  };
  if (window.size() < 2) return refuse();
  int64_t unitMs = 0;
  switch (window.back()) {
    case 's':
      unitMs = 1000;
      break;
    case 'm':
      unitMs = int64_t{60} * 1000;
      break;
    case 'h':
      unitMs = int64_t{60} * 60 * 1000;
      break;
    case 'd':
      unitMs = int64_t{24} * 60 * 60 * 1000;
      break;
    default:
      return refuse();
  }
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t count = 0;
  for (char c : window.substr(0, window.size() - 1)) {
    if (c < '0' || c > '9') return refuse();
    if (count > (kMax - (c - '0')) / 10) return refuse();
    count = count * 10 + (c - '0');
  }
  if (count > kMax / unitMs) {
    return invalidArgument(reason::kBadReplayWindow,
                           "replayWindow " + quoted(window) + " is too long to represent");
  }
  return count * unitMs;
}

Status validateChannelConfig(const ChannelConfig& config) {
  SHOAL_RETURN_IF_ERROR(validateWindow(config.replayWindow));
  SHOAL_RETURN_IF_ERROR(checkText(config.description, "description", kMaxChannelDescriptionLength,
                                  reason::kDescriptionTooLong));
  return checkText(config.instructions, "instructions", kMaxChannelInstructionsLength,
                   reason::kInstructionsTooLong);
}

Status validateChannelDefaults(const ChannelDefaults& defaults) {
  return validateWindow(defaults.replayWindow);
}

Result<ChannelConfig> decodeChannelConfig(std::string_view text) {
  unsigned char buffer[2048];
  json::monotonic_resource arena(buffer, sizeof buffer);
  SHOAL_ASSIGN_OR_RETURN(json::value doc, internal::parseJsonObject(text, &arena));
  const json::object& o = doc.get_object();
  SHOAL_ASSIGN_OR_RETURN(Common common, decodeCommon(o));
  ChannelConfig config{common.replay, common.replayWindow, common.deliveryClass, std::nullopt,
                       std::nullopt};
  for (auto [key, target] : {std::pair<std::string_view, std::optional<std::string>*>{
                                 "description", &config.description},
                             {"instructions", &config.instructions}}) {
    if (const json::value* v = internal::field(o, key)) {
      if (!v->is_string()) return badType(key, "a string");
      *target = sv(v->get_string());
    }
  }
  SHOAL_RETURN_IF_ERROR(validateChannelConfig(config));
  return config;
}

Result<std::string> encodeChannelConfig(const ChannelConfig& config) {
  SHOAL_RETURN_IF_ERROR(validateChannelConfig(config));
  unsigned char buffer[2048];
  json::monotonic_resource arena(buffer, sizeof buffer);
  json::object o(&arena);
  encodeCommon({config.replay, config.replayWindow, config.deliveryClass}, o);
  if (config.description) o.emplace("description", *config.description);
  if (config.instructions) o.emplace("instructions", *config.instructions);
  return internal::toJson(o);
}

Result<ChannelDefaults> decodeChannelDefaults(std::string_view text) {
  unsigned char buffer[1024];
  json::monotonic_resource arena(buffer, sizeof buffer);
  SHOAL_ASSIGN_OR_RETURN(json::value doc, internal::parseJsonObject(text, &arena));
  SHOAL_ASSIGN_OR_RETURN(Common common, decodeCommon(doc.get_object()));
  return ChannelDefaults{common.replay, common.replayWindow, common.deliveryClass};
}

Result<std::string> encodeChannelDefaults(const ChannelDefaults& defaults) {
  SHOAL_RETURN_IF_ERROR(validateChannelDefaults(defaults));
  unsigned char buffer[1024];
  json::monotonic_resource arena(buffer, sizeof buffer);
  json::object o(&arena);
  encodeCommon({defaults.replay, defaults.replayWindow, defaults.deliveryClass}, o);
  return internal::toJson(o);
}

bool effectiveReplay(const ChannelConfig& channel, const ChannelDefaults& defaults) {
  return channel.replay.value_or(defaults.replay.value_or(true));
}

DeliveryClass effectiveClass(const ChannelConfig& channel, const ChannelDefaults& defaults) {
  return channel.deliveryClass.value_or(defaults.deliveryClass.value_or(DeliveryClass::kDurable));
}

std::optional<int64_t> effectiveReplayWindowMs(const ChannelConfig& channel,
                                               const ChannelDefaults& defaults) {
  const std::optional<std::string>& window =
      channel.replayWindow ? channel.replayWindow : defaults.replayWindow;
  if (!window) return std::nullopt;
  const Result<int64_t> ms = parseReplayWindowMs(*window);
  return ms.isOk() ? std::optional<int64_t>(*ms) : std::nullopt;
}

}  // namespace shoal::wire
