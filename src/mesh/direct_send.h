// sendDirect: publish one DM (Cotal unicast) and return what is known for certain about it.
//
// Builds a CotalMessage (`id` = UUIDv7, `ts`, `space`, `from`, `to` = recipient dot-form,
// one text part), publishes it with JetStream on
// `cotal.<space>.inst.<rOwner>.<rActor>.<sOwner>.<sActor>` with `Nats-Msg-Id` = `id`, and
// returns the stream's acknowledgement. The receipt states facts only: the DM stream stored it
// at sequence N. It never says "delivered": whether a recipient read it is a later, separate
// fact (DESIGN.md §2, seed 000 "Durable transport").
//
// Thread safety: blocks the calling thread for one JetStream publish round trip.
#pragma once

#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/result.h"
#include "transport/jetstream.h"
#include "wire/principal.h"

namespace shoal::mesh {

struct Sender {
  wire::Principal principal;
  std::string displayName;
};

struct DirectReceipt {
  std::string messageId;
  std::string stream;  // "DM_<space>"
  uint64_t seq = 0;    // the stored sequence
  bool duplicate = false;
};

Result<DirectReceipt> sendDirect(transport::JetStream& js, const Clock& clock,
                                 std::string_view space, const Sender& from,
                                 const wire::Principal& to, std::string_view text);

}  // namespace shoal::mesh
