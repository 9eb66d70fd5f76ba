// Principal: the wire identity of one agent or endpoint, the pair (owner, actor) (Cotal §2).
//
// Forms:
//   dot-form   `<owner>.<actor>`  AgentCard.id, from.id, subject sender tokens, presence key
//   dash-form  `<owner>-<actor>`  JetStream durable/consumer names (`.` is illegal there)
// Lifecycle-scoped forms (`<owner>-<actor>-<uid>`, `<owner>.<actor>.<uid>`) live in names.h.
//
// Tokens:
//   owner  `u_` + 26 lower-case base32 (`^u_[a-z2-7]{26}$`, authenticated), or exactly
//          `local` (open dev mode). This is also the "real owner" check of the surfacing
//          boundary (Cotal §3, §12 item 5). An nkey-shaped owner (56 upper-case base32
//          characters starting with `U`) is refused with its own reason, `nkey-owner`.
//   actor  [A-Za-z0-9_]{1,64}: `-` is reserved for the dash-form separator; `.`, `*`, `>`
//          are forbidden; 64 is the Cotal §13.2 bound, so every actor is also usable on the
//          endpoint rails.
//
// Invariant: a Principal returned by `parsePrincipal` or accepted by `validatePrincipal` has a
// real owner and a valid actor, so both forms are safe subject tokens / durable-name parts.
// A Principal taken from a subject by `parseSubject` is NOT validated (split only) until
// `checkSurfaceable` (subject.h) accepts it.
//
// Thread safety: value type; pure functions.
// Lifetime: owns its strings.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/status.h"

namespace shoal::wire {

inline constexpr std::string_view kLocalOwner = "local";
inline constexpr size_t kMaxActorLength = 64;

struct Principal {
  std::string owner;
  std::string actor;

  std::string dotForm() const { return owner + "." + actor; }
  std::string dashForm() const { return owner + "-" + actor; }

  bool operator==(const Principal&) const = default;
};

// `u_` + 26 of [a-z2-7], or exactly `local`.
bool isOwnerToken(std::string_view s);
// [A-Za-z0-9_]{1,64}.
bool isActorToken(std::string_view s);
// 56 characters of upper-case base32 [A-Z2-7] starting with `U` (a NATS user nkey).
bool isNkeyShaped(std::string_view s);
// The surfacing-boundary owner check: same as isOwnerToken.
bool isRealOwner(std::string_view s);

// OK for a real owner; `nkey-owner` for an nkey-shaped one; `not-a-principal-owner` otherwise.
Status checkRealOwner(std::string_view owner);

// Real owner and valid actor (`nkey-owner`, `not-a-principal-owner`, `bad-actor-token`).
Status validatePrincipal(const Principal& p);

// `<owner>.<actor>` with exactly one dot, both tokens valid (`bad-principal` when the shape is
// wrong, else the validatePrincipal reasons).
Result<Principal> parsePrincipal(std::string_view dotForm);

// A display name as an actor token: characters outside [A-Za-z0-9_] become `_` (so `-` does
// too), white space is trimmed first, the result is cut to 64 characters and an empty result
// is `_`. Lossy; never decoded back. Example: "Code Reviewer-2" -> "Code_Reviewer_2".
std::string actorFromName(std::string_view name);

}  // namespace shoal::wire
