// Subjects: building and parsing every `cotal.<space>.<kind>.…` subject Shoal touches
// (Cotal §3, §8, Appendix B; docs §6.1 for `live`; docs/architecture.md, Conventions, for `wake`
// and `rcpt`).
//
//   kind    subject (split on `.`)                   tokens principal  rest
//   chat    cotal.<space>.chat.<o>.<a>.<channel…>    ≥ 6    sender     channel (tokens 5+)
//   inst    cotal.<space>.inst.<rO>.<rA>.<sO>.<sA>   7      sender     recipient dot-form
//   svc     cotal.<space>.svc.<role>.<o>.<a>         6      sender     role
//   live    cotal.<space>.live.<plane>.<o>.<a>       6      caller     plane
//   dinbox  cotal.<space>.dinbox.<o>.<a>.<uid>       6      member     uid
//   dlv     cotal.<space>.dlv.<o>.<a>.<uid>          6      member     uid
//   wake    cotal.<space>.wake.<o>.<a>               5      seat       (empty)
//   rcpt    cotal.<space>.rcpt.<sO>.<sA>.<rO>.<rA>   7      sender     recipient dot-form
//
// `parseSubject` SPLITS ONLY (Cotal §3): it checks the root, the kind and that kind's exact
// arity, and nothing about the tokens' grammar. Anything else — wrong root, unknown kind, the
// retired `ctl`/`control` kinds, wrong arity, an empty or wildcard token, white space or
// control bytes, more than kMaxSubjectBytes — is `malformed-subject`, i.e. there is no sender
// and the message must not be read as a delivery. `checkSurfaceable` is the separate
// surfacing-boundary check: real owner tokens (`nkey-owner`, `not-a-principal-owner`), actor
// tokens, and the kind's own tokens (concrete channel, role, plane, lifecycle uid).
//
// Builders validate every input (real principals, routing tokens, a concrete channel for a
// publish subject, a valid pattern for a filter) and return the subject or the reason.
//
// Thread safety: pure functions.
// Lifetime: results own their bytes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/status.h"
#include "wire/plane.h"
#include "wire/principal.h"

namespace shoal::wire {

inline constexpr std::string_view kSubjectRoot = "cotal";
// A maximal channel (4096) plus room for the root, space, kind and principal tokens.
inline constexpr size_t kMaxSubjectBytes = 4096 + 512;

enum class SubjectKind { kChat, kInst, kSvc, kLive, kDinbox, kDlv, kWake, kRcpt };

std::string_view subjectKindName(SubjectKind kind);

struct ParsedSubject {
  SubjectKind kind = SubjectKind::kChat;
  std::string space;
  // The identity tokens of the subject (see the table): the sender of chat/inst/svc/rcpt,
  // the caller of live, the member of dinbox/dlv, the seat of wake. Unvalidated until
  // checkSurfaceable.
  Principal principal;
  // inst and rcpt only: the recipient. Unvalidated until checkSurfaceable.
  std::optional<Principal> recipient;
  // chat: channel; inst/rcpt: recipient dot-form; svc: role; live: plane; dinbox/dlv: uid;
  // wake: empty.
  std::string rest;

  bool operator==(const ParsedSubject&) const = default;
};

// Split-only parse (see above). Every failure is `malformed-subject`.
Result<ParsedSubject> parseSubject(std::string_view subject);

// The surfacing-boundary check of a parsed subject (see above).
Status checkSurfaceable(const ParsedSubject& parsed);

// --- Publish subjects -----------------------------------------------------------------------
Result<std::string> chatSubject(std::string_view space, const Principal& sender,
                                std::string_view channel);
Result<std::string> instSubject(std::string_view space, const Principal& recipient,
                                const Principal& sender);
Result<std::string> svcSubject(std::string_view space, std::string_view role,
                               const Principal& sender);
Result<std::string> dinboxSubject(std::string_view space, const Principal& member,
                                  std::string_view lifecycleUid);
Result<std::string> dlvSubject(std::string_view space, const Principal& member,
                               std::string_view lifecycleUid);
Result<std::string> wakeSubject(std::string_view space, const Principal& seat);
// Receipt for `sender` about a delivery to `recipient`, published by the recipient's daemon.
Result<std::string> rcptSubject(std::string_view space, const Principal& sender,
                                const Principal& recipient);

// --- Plane liveness (docs §6.1) -------------------------------------------------------------
// Probe request subject: the caller's own principal.
Result<std::string> liveSubject(std::string_view space, Plane plane, const Principal& caller);
// `<request>.reply.<nonce>`; nonce is a routing token ([A-Za-z0-9_-]+).
Result<std::string> livenessReplySubject(std::string_view request, std::string_view nonce);
// Responder side: OK iff `reply` is exactly `<request>.reply.<one routing token>`; any other
// reply target is dropped (`bad-reply-subject`).
Status checkLivenessReplyTarget(std::string_view request, std::string_view reply);
// A rail request's reply target: OK iff `reply` lies under an inbox — its first token starts
// with `_INBOX` and at least one token follows. A plane answers nothing else
// (`bad-reply-subject`), so a request cannot aim the plane's reply (sent under its
// allow_responses grant) at an application subject.
Status checkRailReplyTarget(std::string_view reply);
// `cotal.<space>.live.<plane>.*.*` (serve with queue group `live.<plane>`).
Result<std::string> livenessServeFilter(std::string_view space, Plane plane);
// `live.<plane>` — the responder queue group.
std::string livenessQueueGroup(Plane plane);
// `cotal.<space>.live.<plane>.*.*.reply.>` — the responder's reply-publish grant.
Result<std::string> livenessReplyGrant(std::string_view space, Plane plane);

// --- Subscription filters -------------------------------------------------------------------
// `cotal.<space>.chat.*.*.<pattern>` (pattern may hold whole-segment wildcards).
Result<std::string> chatFilter(std::string_view space, std::string_view channelPattern);
// `cotal.<space>.inst.<o>.<a>.>` — every DM to `recipient`.
Result<std::string> dmFilter(std::string_view space, const Principal& recipient);
// `cotal.<space>.svc.<role>.>` — all anycast work for a role.
Result<std::string> svcFilter(std::string_view space, std::string_view role);
// `cotal.<space>.rcpt.<o>.<a>.>` — every receipt addressed to `sender`.
Result<std::string> rcptFilter(std::string_view space, const Principal& sender);
// `cotal.<space>.wake.<o>.<a>` — or `cotal.<space>.wake.>` with no seat.
Result<std::string> wakeFilter(std::string_view space, const std::optional<Principal>& seat);

}  // namespace shoal::wire
