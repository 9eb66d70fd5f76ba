// Admission refusals: when the seat cannot take a delivered message into its ownership journal,
// is that forever or for now? The answer decides what happens at the broker (seed 004 §2.1,
// §3.3: surfaced exactly once, or failed loudly with a reason a person can read):
//
//   permanent   the message itself can never be admitted: the broker message is terminated
//               (never redelivered, no `max_ack_pending` slot held) and the sender gets a
//               `failed` receipt with the reason. Nothing is journaled: there is no record to
//               fail, the receipt is the evidence.
//   transient   the seat cannot take it now (a journal write failed, a race with a concurrent
//               mutation, a full inbox of directed work): left unacknowledged and nak'ed with a
//               delay that doubles per redelivery up to 30 s, never a tight loop.
//
// Refusals of the wire parser itself (a malformed envelope, an id or size over the bounds of
// wire/message_limits.h) never reach the seat: the endpoint terminates them and reports them to
// the seat through EndpointOptions::onRefused, which sends the same receipt. The whole table,
// with the test of each row, is in docs/reliability.md.
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

#include "base/status.h"

namespace shoal::daemon {

enum class RefusalKind { kPermanent, kTransient };

// Classifies a failed journal commit of an admission.
RefusalKind classifyAdmissionRefusal(const Status& journalRefusal);

std::string_view refusalKindName(RefusalKind kind);

}  // namespace shoal::daemon
