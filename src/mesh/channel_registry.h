// readEffectiveChannel: the one resolution of a channel's delivery class and replay that live
// join, durable fan-out, history and membership all use (Cotal SPEC §7; seed 000 "Channel
// delivery"). It reads the channel's row and `=defaults` from `cotal_channels_<space>` fresh on
// every call — no cache, so an operator's `shoal channels set` applies to the next post.
//
// A channel without a row resolves from the defaults; a space whose defaults row is missing
// resolves to the Cotal fallbacks (durable, replay on). A row that does not decode is an error
// (`bad-channel-config` …), never silently the default.
//
// Thread safety: may be called from any thread (it only uses `js`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "transport/jetstream.h"
#include "wire/channel_config.h"

namespace shoal::mesh {

struct EffectiveChannel {
  std::string channel;
  wire::ChannelConfig config;      // the row (default-constructed when absent)
  wire::ChannelDefaults defaults;  // `=defaults` (default-constructed when absent)
  wire::DeliveryClass deliveryClass = wire::DeliveryClass::kDurable;
  bool replay = true;
  std::optional<int64_t> replayWindowMs;
};

// `channel` must be concrete. kNotFound `bucket-not-found` when the space was never ensured.
Result<EffectiveChannel> readEffectiveChannel(transport::JetStream& js, std::string_view space,
                                              std::string_view channel);

}  // namespace shoal::mesh
