// probeLiveness: ask whether a space plane (`manager` or `delivery`) is serving, as any
// credentialed peer may (seed 000 "Plane liveness"; Cotal SPEC §6.1).
//
// The probe publishes an empty request on `cotal.<space>.live.<plane>.<owner>.<actor>` (the
// caller's own principal) with the reply subject `<request>.reply.<nonce>` (random nonce),
// having subscribed to that reply subject and flushed first. Outcome table:
//   well-formed LivenessAnswer                          → its `responder` (+ instance)
//   broker "no responders" (503 status on the reply)    → unbound
//   timeout, permission refusal, transport failure      → unknown
//   reply that does not parse (wrong plane, bad enum,   → unknown
//   bad instance)
// `unknown` means the probe did not find out; it is never a health report. A plane name other
// than `manager` / `delivery`, a bad space or a bad caller principal is refused (an error
// Result) before anything is sent.
//
// Thread safety: may be called from any thread; it blocks the caller up to `timeout`.
// Lifetime: uses `conn` only during the call.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "transport/connection.h"
#include "wire/liveness.h"
#include "wire/plane.h"
#include "wire/principal.h"

namespace shoal::mesh {

// Tests of the reference use 1500 ms; a CLI default a person will wait for.
inline constexpr std::chrono::milliseconds kDefaultLivenessTimeout{1500};

// How the verdict was reached (the row of the outcome table).
enum class LivenessEvidence { kReply, kNoResponders, kTimeout, kRefused, kMalformedReply };

std::string_view livenessEvidenceName(LivenessEvidence evidence);

struct LivenessVerdict {
  wire::Plane plane = wire::Plane::kManager;
  wire::Responder responder = wire::Responder::kUnknown;
  std::optional<std::string> instance;  // from a well-formed reply only
  LivenessEvidence evidence = LivenessEvidence::kTimeout;
  std::string detail;  // human words for `evidence` (the error, the malformed reply's reason)
};

// Refuses (kInvalidArgument, `bad-plane`) any plane but `manager` / `delivery`.
Result<LivenessVerdict> probeLiveness(transport::Connection& conn, std::string_view space,
                                      const wire::Principal& caller, std::string_view plane,
                                      std::chrono::milliseconds timeout);

}  // namespace shoal::mesh
