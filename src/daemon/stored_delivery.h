// StoredDelivery: how one admitted delivery is kept in the seat's ownership journal — the exact
// bytes a restart re-renders from — and the journal id it is owned under.
//
// Body format (the journal's `body`): three header lines then the message as compact wire JSON
// (which holds no raw newline):
//   <kind>            dm | channel | anycast
//   <subject>         the subject it arrived on
//   <flags>           two characters: 'h' historical or '-', 'r' redelivered or '-'
//   <message JSON>
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
// kDataLoss `bad-journal-body` when the header lines are damaged; the wire decoder's reasons
// when the message is.
Result<StoredDelivery> decodeStoredDelivery(const std::string& body);

}  // namespace shoal::daemon
