// ReconcileOutcome: what one read of a runtime's thread proves about one identity the seat
// handed out — a handoff's clientId, or an inbox page's receipt marker (seed 004 §3.2):
//   surfaced  the history holds it (read wins over everything else, also on an active thread)
//   absent    a complete snapshot of an inactive thread lacks it: never read, safe to replay
//   pending   the complete history of an active thread lacks it: it may not have materialised
//   unknown   anything else — a failed or refused read, an incomplete history, another thread
// The seat keeps pending and unknown owners for another read (their budgets differ) and never
// replays on anything but absent.
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

#include "runtime/driver.h"

namespace shoal::daemon {

enum class ReconcileOutcome { kSurfaced, kPending, kAbsent, kUnknown };
std::string_view reconcileOutcomeName(ReconcileOutcome outcome);

// `read` is a kReconciled event; `threadId` the owner's recorded thread; `marker` true when
// `identity` is an inbox receipt (looked for in `read.markers`, else in `read.clientIds`).
ReconcileOutcome reconcileOutcome(const runtime::DriverEvent& read, std::string_view threadId,
                                  std::string_view identity, bool marker);

}  // namespace shoal::daemon
