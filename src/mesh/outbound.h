// publishMessage: publish one Cotal delivery — a DM (unicast), a channel post (multicast) or
// role-addressed work (anycast) — and return what is known for certain about it.
//
// Builds a CotalMessage (`id` = UUIDv7, `ts`, `space`, `from`, the one routing field, optional
// mentions, one text part — refused as `empty-text` when it is empty or only whitespace),
// validates it (a JSON over wire::kMaxMessageBytes is `message-too-large`), and publishes it
// with JetStream on the subject of its kind with `Nats-Msg-Id` = `id`:
//   dm       cotal.<space>.inst.<rOwner>.<rActor>.<sOwner>.<sActor>   → DM_<space>
//   channel  cotal.<space>.chat.<sOwner>.<sActor>.<channel>            → CHAT_<space>
//   anycast  cotal.<space>.svc.<role>.<sOwner>.<sActor>                → TASK_<space>
// The receipt states facts only: the stream stored it at sequence N (or had already stored
// this id: `duplicate`). It never says "delivered": whether anyone read it is a later,
// separate fact (docs/architecture.md, The path of one DM; seed 000 "Durable transport"). A
// publish that timed out may or may not be stored; publishing the same `Outbound` again with its
// `id` set finds out without storing it twice.
//
// Thread safety: blocks the calling thread for one JetStream publish round trip.
// Lifetime: the receipt owns its strings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "transport/jetstream.h"
#include "wire/message.h"
#include "wire/principal.h"

namespace shoal::mesh {

struct Sender {
  wire::Principal principal;
  std::string displayName;
  std::optional<std::string> role;
};

struct Outbound {
  wire::DeliveryKind kind = wire::DeliveryKind::kDm;
  // dm: the recipient's principal dot-form; channel: a concrete channel; anycast: a role.
  std::string target;
  std::string text;
  std::vector<std::string> mentions;  // channel posts only (names, normalised on encode)
  std::optional<std::string> replyTo;
  std::optional<std::string> contextId;
  // Empty: a fresh UUIDv7. Set it to republish an earlier attempt without duplicating it.
  std::string id;
};

struct StoredReceipt {
  std::string messageId;
  std::string subject;
  std::string stream;  // "DM_<space>", "CHAT_<space>" or "TASK_<space>"
  uint64_t seq = 0;    // the stored sequence
  bool duplicate = false;
};

// The subject `outbound` is published on (validates the target for its kind).
Result<std::string> outboundSubject(std::string_view space, const wire::Principal& sender,
                                    const Outbound& outbound);

// The envelope `outbound` is published as (id minted when empty); kInvalidArgument with the
// wire reason when it would not be a valid message.
Result<wire::CotalMessage> buildMessage(const Clock& clock, std::string_view space,
                                        const Sender& from, const Outbound& outbound);

Result<StoredReceipt> publishMessage(transport::JetStream& js, const Clock& clock,
                                     std::string_view space, const Sender& from,
                                     const Outbound& outbound);

}  // namespace shoal::mesh
