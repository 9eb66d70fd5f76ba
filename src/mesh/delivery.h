// Delivery: one inbound message as an Endpoint hands it to its owner, the verdict the owner
// returns for it, and the record of a durable DM the endpoint refused before any handler saw
// it (endpoint.h, "Receiving").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "wire/message.h"
#include "wire/principal.h"

namespace shoal::mesh {

// One message handed to the endpoint's owner.
struct Delivery {
  wire::DeliveryKind kind = wire::DeliveryKind::kDm;  // from the subject
  wire::CotalMessage message;                         // routing normalised from the subject
  std::string subject;
  std::string payload;        // the bytes as the broker held them (empty for a history copy)
  bool historical = false;    // a replay-on-join copy
  bool durable = false;       // a durable copy (acked after the handler accepted)
  uint64_t streamSeq = 0;     // durable and history copies
  uint64_t numDelivered = 0;  // durable copies: 1 on the first delivery
};

enum class HandlerVerdict {
  kAccepted,    // surfaced: a durable copy is acked
  kRetryLater,  // transient: a durable copy is nak'ed with a delay (not remembered as seen)
  kRejected,    // permanent: a durable copy is terminated
};

using DeliveryHandler = std::function<HandlerVerdict(const Delivery&)>;
// A fetched batch of durable DM / task copies, in stream order; one verdict per delivery.
using BatchHandler = std::function<std::vector<HandlerVerdict>(const std::vector<Delivery>&)>;

// A durable DM the endpoint terminated because it can never be admitted (it fails the wire
// parser: a malformed envelope, an id a journal cannot hold, a message over the size bound).
// `sender` is the subject's sender token pair and `messageId` the envelope's id when that much
// parses (a receipt can then name them); the broker will not redeliver it.
struct RefusedDelivery {
  std::string subject;
  uint64_t streamSeq = 0;
  std::optional<wire::Principal> sender;
  std::optional<std::string> messageId;
  Status why;
};

}  // namespace shoal::mesh
