#include "daemon/admission_refusal.h"

#include "journal/reasons.h"

namespace shoal::daemon {

RefusalKind classifyAdmissionRefusal(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      // A field the journal cannot hold (bad-journal-field): the same bytes fail every time.
      return RefusalKind::kPermanent;
    case StatusCode::kResourceExhausted:
      // One record over the per-record cap can never fit; the aggregate caps recover (capacity
      // admission reclaims the oldest owners), so anything else is for now.
      return s.reason() == journal::reason::kOversized ? RefusalKind::kPermanent
                                                       : RefusalKind::kTransient;
    default:
      // Poisoned or failed writes (a full disk), a lost race (kAborted), a closed journal.
      return RefusalKind::kTransient;
  }
}

std::string_view refusalKindName(RefusalKind kind) {
  return kind == RefusalKind::kPermanent ? "permanent" : "transient";
}

}  // namespace shoal::daemon
