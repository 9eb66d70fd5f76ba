// StoredDelivery: how one admitted delivery is kept in the seat's ownership journal — the exact
// bytes a restart re-renders from — and the journal id it is owned under.
//
// Body format (the journal's `body`): three header lines, then the message:
//   <kind>            dm | channel | anycast
//   <subject>         the subject it arrived on
//   <flags>           'h' historical or '-', 'r' redelivered or '-', then 'p' when the rest is
//                     the payload exactly as the broker held it
//   <payload>         with 'p': those bytes, read again at dispatch by the same parser that
//                     admitted them (wire::readDelivery); without (a history copy, whose bytes
//                     are not kept, and every body an older Shoal wrote): the admitted message
//                     re-encoded as compact wire JSON, read by wire::decodeMessage
// Keeping the payload spares an encode per admission, and a body is the broker's bytes, not a
// rendering of them.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "base/result.h"
#include "mesh/endpoint.h"
#include "wire/message.h"

namespace shoal::daemon {

struct StoredDelivery {
  wire::DeliveryKind kind = wire::DeliveryKind::kDm;
  std::string subject;
  bool historical = false;
  bool redelivered = false;
  wire::CotalMessage message;
};

// The id a delivery is owned under: its message id, or — for the legal but undeduplicatable
// empty id — `seq:<subject>:<stream seq>`, or `seq:#<64-bit FNV-1a of the subject>:<seq>` when
// that would be longer than a MessageID may be (256 bytes).
std::string ownershipId(const mesh::Delivery& delivery);

std::string encodeStoredDelivery(const mesh::Delivery& delivery);
// kDataLoss `bad-journal-body` when the header lines are damaged (or a kept payload is not of
// the kind the body names); the wire parser's reasons when the message is.
Result<StoredDelivery> decodeStoredDelivery(const std::string& body);

}  // namespace shoal::daemon
