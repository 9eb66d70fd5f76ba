// Inbound delivery admission: the whole receive-side wire check of one chat / DM / anycast
// message, in the order Cotal §5 and §12 require, as one call.
//
//   1. parseSubject           wrong shape ⇒ malformed-subject (no sender)
//   2. checkSurfaceable       nkey-owner / not-a-principal-owner / bad tokens
//   3. decodeMessage          malformed-json, missing-id, multiple-routing-fields, ...
//   4. checkAgainstSubject    not-a-delivery-subject, sender-mismatch
//   5. normalizeForDelivery   routing rewritten from the subject (payload routing is advisory)
//
// Every refusal is a permanent anomaly: a durable consumer terms the message (never naks it),
// a live subscriber drops it. What to do with an accepted message (dedup by id unless id is
// empty, own-echo drop, journal admission) is the caller's business.
//
// Thread safety: pure function.
// Lifetime: the result owns its data.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "wire/message.h"
#include "wire/subject.h"

namespace shoal::wire {

struct InboundDelivery {
  ParsedSubject subject;
  DeliveryKind kind = DeliveryKind::kChannel;
  CotalMessage message;  // routing already normalised from the subject

  bool operator==(const InboundDelivery&) const = default;
};

Result<InboundDelivery> readDelivery(std::string_view subject, std::string_view payload);

// The envelope's `id` when the payload is a JSON object whose `id` is a valid message id
// (message_limits.h), whatever else is wrong with it; nullopt otherwise. For naming a refused
// message in a receipt, never for admitting one.
std::optional<std::string> peekMessageId(std::string_view payload);

}  // namespace shoal::wire
