// Channel registry records: per-channel config and the space defaults, stored in the
// `cotal_channels_<space>` KV bucket under the concrete channel name and under `=defaults`
// (Cotal §7).
//
// Wire forms:
//   ChannelConfig   {"replay"?, "replayWindow"?, "deliveryClass"?, "description"?,
//                    "instructions"?}
//   ChannelDefaults {"replay"?, "replayWindow"?, "deliveryClass"?}
// `replayWindow` matches ^\d+(s|m|h|d)$ (e.g. `24h`); `deliveryClass` is live|durable;
// `description` ≤ 200 and `instructions` ≤ 2000 characters (UTF-16 code units) — over-long
// text is refused, never truncated. Unknown fields are ignored.
//
// Effective values (one resolution drives live join, fan-out, history and membership):
//   replay = channel.replay ?? defaults.replay ?? true
//   class  = channel.deliveryClass ?? defaults.deliveryClass ?? durable
//   window = channel.replayWindow ?? defaults.replayWindow ?? none (unbounded)
// A channel with no registry record resolves with a default-constructed ChannelConfig.
//
// Thread safety: value types; pure functions.
// Lifetime: owns its strings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/status.h"

namespace shoal::wire {

inline constexpr std::string_view kChannelDefaultsKey = "=defaults";
inline constexpr size_t kMaxChannelDescriptionLength = 200;
inline constexpr size_t kMaxChannelInstructionsLength = 2000;

enum class DeliveryClass { kLive, kDurable };

std::string_view deliveryClassName(DeliveryClass c);  // "live" | "durable"

struct ChannelConfig {
  std::optional<bool> replay;
  std::optional<std::string> replayWindow;  // as written, e.g. "24h"
  std::optional<DeliveryClass> deliveryClass;
  std::optional<std::string> description;
  std::optional<std::string> instructions;

  bool operator==(const ChannelConfig&) const = default;
};

struct ChannelDefaults {
  std::optional<bool> replay;
  std::optional<std::string> replayWindow;
  std::optional<DeliveryClass> deliveryClass;

  bool operator==(const ChannelDefaults&) const = default;
};

// `24h` → 86'400'000. Refuses anything else, and windows that overflow int64 milliseconds
// (`bad-replay-window`).
Result<int64_t> parseReplayWindowMs(std::string_view window);

// Reasons: bad-replay-window, description-too-long, instructions-too-long, invalid-utf8.
Status validateChannelConfig(const ChannelConfig& config);
Status validateChannelDefaults(const ChannelDefaults& defaults);

// Reasons: malformed-json, bad-channel-config (wrong types), bad-delivery-class, and those of
// the validators.
Result<ChannelConfig> decodeChannelConfig(std::string_view json);
Result<std::string> encodeChannelConfig(const ChannelConfig& config);
Result<ChannelDefaults> decodeChannelDefaults(std::string_view json);
Result<std::string> encodeChannelDefaults(const ChannelDefaults& defaults);

bool effectiveReplay(const ChannelConfig& channel, const ChannelDefaults& defaults);
DeliveryClass effectiveClass(const ChannelConfig& channel, const ChannelDefaults& defaults);
// The effective window in ms, or nullopt for "no bound". Both records are assumed validated.
std::optional<int64_t> effectiveReplayWindowMs(const ChannelConfig& channel,
                                               const ChannelDefaults& defaults);

}  // namespace shoal::wire
