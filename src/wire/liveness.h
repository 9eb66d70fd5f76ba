// LivenessAnswer: a plane's reply to a liveness probe (Cotal docs §6.1, reference
// liveness.ts; not in the schema).
//
// Wire form: {"plane": "manager"|"delivery", "responder": "bound"|"unbound"|"stale"|"unknown",
// "instance"?: non-empty string}. Nothing else is carried; unknown fields are ignored.
// A reply for another plane than the one asked, a responder value outside the four, or an
// empty / non-string instance is malformed (`malformed-liveness-answer`): the caller's verdict
// for a malformed reply is `unknown`.
//
// Thread safety: value types; pure functions.
// Lifetime: owns its strings.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "wire/plane.h"

namespace shoal::wire {

enum class Responder { kBound, kUnbound, kStale, kUnknown };

std::string_view responderName(Responder responder);
std::optional<Responder> parseResponder(std::string_view name);

struct LivenessAnswer {
  Plane plane = Plane::kManager;
  Responder responder = Responder::kUnknown;
  std::optional<std::string> instance;  // opaque per-bind token; re-minted on every (re)bind

  bool operator==(const LivenessAnswer&) const = default;
};

// Decodes a reply to a probe of plane `asked`.
Result<LivenessAnswer> decodeLivenessAnswer(std::string_view json, Plane asked);
// Refuses an empty instance (`malformed-liveness-answer`).
Result<std::string> encodeLivenessAnswer(const LivenessAnswer& answer);

}  // namespace shoal::wire
