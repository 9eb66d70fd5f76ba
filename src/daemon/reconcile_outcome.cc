#include "daemon/reconcile_outcome.h"

#include <algorithm>

namespace shoal::daemon {

std::string_view reconcileOutcomeName(ReconcileOutcome outcome) {
  switch (outcome) {
    case ReconcileOutcome::kSurfaced:
      return "surfaced";
    case ReconcileOutcome::kPending:
      return "pending";
    case ReconcileOutcome::kAbsent:
      return "absent";
    case ReconcileOutcome::kUnknown:
      return "unknown";
  }
  return "unknown";
}

ReconcileOutcome reconcileOutcome(const runtime::DriverEvent& read, std::string_view threadId,
                                  std::string_view identity, bool marker) {
  if (read.kind != runtime::DriverEvent::Kind::kReconciled || read.threadId != threadId ||
      !read.detail.empty() || identity.empty()) {
    return ReconcileOutcome::kUnknown;
  }
  const auto& seen = marker ? read.markers : read.clientIds;
  if (std::find(seen.begin(), seen.end(), identity) != seen.end()) {
    return ReconcileOutcome::kSurfaced;
  }
  if (read.complete) return ReconcileOutcome::kAbsent;
  if (read.pending) return ReconcileOutcome::kPending;
  return ReconcileOutcome::kUnknown;
}

}  // namespace shoal::daemon
