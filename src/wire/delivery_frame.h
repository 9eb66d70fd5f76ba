// The durable backstop's two wire records (Cotal wire contract: durable backstop; seed 000
// "Channel delivery"):
//
//   FanoutEntry  on `cotal.<space>.dinbox.<o>.<a>.<uid>` (INBOX stream), written by the
//                delivery plane's fan-out, read only by its trusted reader:
//                {"channel":"team.backend","seq":42,"reason":"durable-channel"|"live-mention",
//                 "generation":3,"msg":{…CotalMessage…}}
//   DeliveryFrame on `cotal.<space>.dlv.<o>.<a>.<uid>` (DLV stream), header
//                `Cotal-Delivery-Frame: 1`, read by the member's own `dlv_…` durable:
//                {"version":1,"channel":"team.backend","msg":{…CotalMessage…}}
//
// Both carry the message normalised for the channel (routing = the channel the CHAT subject
// named; `to` / `toService` gone). Each copy is published with the per-copy id
// `<msg.id>:<o>.<a>:<uid>:<generation>` as Nats-Msg-Id, so a fan-out or hand-off that runs twice
// stores one copy (INBOX / DLV duplicate window 2 h).
//
// Decoders are strict: a frame has exactly the keys version, channel, msg; version is 1; the
// channel is concrete; msg is a valid CotalMessage whose channel equals the frame's. Anything
// else is refused with a named reason (the caller terms it: a bad frame is permanent).
//
// Thread safety: pure functions.
// Lifetime: results own their data.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"
#include "wire/message.h"
#include "wire/principal.h"

namespace shoal::wire {

inline constexpr std::string_view kDeliveryFrameHeader = "Cotal-Delivery-Frame";
inline constexpr std::string_view kDeliveryFrameVersion = "1";

enum class FanoutReason { kDurableChannel, kLiveMention };
std::string_view fanoutReasonName(FanoutReason reason);  // durable-channel | live-mention

struct FanoutEntry {
  std::string channel;
  uint64_t seq = 0;  // the CHAT stream sequence of the post
  FanoutReason reason = FanoutReason::kDurableChannel;
  uint64_t generation = 0;  // the membership generation (0 for a live mention)
  CotalMessage msg;
};

struct DeliveryFrame {
  std::string channel;
  CotalMessage msg;
};

// Reasons: bad-fanout-entry (shape), plus encodeMessage's.
Result<std::string> encodeFanoutEntry(const FanoutEntry& entry);
// Reasons: malformed-json, bad-fanout-entry, and decodeMessage's.
Result<FanoutEntry> decodeFanoutEntry(std::string_view json);

Result<std::string> encodeDeliveryFrame(const DeliveryFrame& frame);
// Reasons: malformed-json, bad-delivery-frame (keys, version, channel mismatch), and
// decodeMessage's.
Result<DeliveryFrame> decodeDeliveryFrame(std::string_view json);

// `<msgId>:<o>.<a>:<uid>:<generation>`.
std::string copyMsgId(std::string_view msgId, const Principal& member,
                      std::string_view lifecycleUid, uint64_t generation);

}  // namespace shoal::wire
