#include "wire/liveness.h"

#include <string>

#include "wire/json_support.h"
#include "wire/reasons.h"
#include "wire/text_internal.h"
#include "wire/token.h"

namespace shoal::wire {

namespace json = internal::json;

namespace {

Status malformed(std::string_view why) {
  return invalidArgument(
      reason::kMalformedLivenessAnswer,
      "liveness answer " + std::string(why) + "; treat the plane's state as unknown");
}

std::string_view view(const json::string& s) {
  return std::string_view(s.data(), s.size());
}

}  // namespace

std::string_view responderName(Responder responder) {
  switch (responder) {
    case Responder::kBound:
      return "bound";
    case Responder::kUnbound:
      return "unbound";
    case Responder::kStale:
      return "stale";
    case Responder::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::optional<Responder> parseResponder(std::string_view name) {
  if (name == "bound") return Responder::kBound;
  if (name == "unbound") return Responder::kUnbound;
  if (name == "stale") return Responder::kStale;
  if (name == "unknown") return Responder::kUnknown;
  return std::nullopt;
}

Result<LivenessAnswer> decodeLivenessAnswer(std::string_view text, Plane asked) {
  unsigned char buffer[1024];
  json::monotonic_resource arena(buffer, sizeof buffer);
  SHOAL_ASSIGN_OR_RETURN(json::value doc, internal::parseJsonObject(text, &arena));
  const json::object& o = doc.get_object();

  const json::value* plane = internal::field(o, "plane");
  const std::optional<Plane> p =
      plane && plane->is_string() ? parsePlane(view(plane->get_string())) : std::nullopt;
  if (!p) return malformed("has no valid 'plane' (manager or delivery)");
  if (*p != asked) {
    return malformed("is for plane '" + std::string(planeName(*p)) + "' but '" +
                     std::string(planeName(asked)) + "' was asked");
  }
  const json::value* responder = internal::field(o, "responder");
  const std::optional<Responder> r = responder && responder->is_string()
                                         ? parseResponder(view(responder->get_string()))
                                         : std::nullopt;
  if (!r) return malformed("has no valid 'responder' (bound, unbound, stale or unknown)");
  LivenessAnswer answer{*p, *r, std::nullopt};
  if (const json::value* instance = internal::field(o, "instance")) {
    if (!instance->is_string() || instance->get_string().empty()) {
      return malformed("has an 'instance' that is not a non-empty string");
    }
    answer.instance = std::string(view(instance->get_string()));
  }
  return answer;
}

Result<std::string> encodeLivenessAnswer(const LivenessAnswer& answer) {
  if (answer.instance && (answer.instance->empty() || !isValidUtf8(*answer.instance))) {
    return malformed("instance must be a non-empty UTF-8 string");
  }
  unsigned char buffer[1024];
  json::monotonic_resource arena(buffer, sizeof buffer);
  json::object o(&arena);
  o.emplace("plane", planeName(answer.plane));
  o.emplace("responder", responderName(answer.responder));
  if (answer.instance) o.emplace("instance", *answer.instance);
  return internal::toJson(o);
}

}  // namespace shoal::wire
