// JoinOptions / JoinReport: what Endpoint::join is asked and what it answers — whether and how
// far history is replayed, and what the delivery plane recorded about a durable membership
// (endpoint.h; docs/channels.md).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace shoal::mesh {

struct JoinOptions {
  // Read the channel's history up to the watermark (historical copies). Unset: the channel's
  // effective `replay` from the registry (mesh/channel_registry.h). Never for a durable
  // membership the lifecycle already held (JoinReport::continued).
  std::optional<bool> replay;
  // Only posts newer than now − window. Unset: the registry's effective `replayWindow`.
  std::optional<std::chrono::milliseconds> replayWindow;
  // The caller remembers that this lifecycle held a durable membership of the channel (a
  // seat's journal does). When the delivery plane cannot be asked (it is down: a whole-mesh
  // crash restarted the seat first), that membership is taken to continue — the plane still
  // holds it and sends the copies of later posts once it is back — so nothing is replayed.
  // A plane that answers decides, as always.
  bool heldDurably = false;
};

struct JoinReport {
  std::string channel;
  bool alreadyJoined = false;
  uint64_t watermark = 0;  // CHAT last_seq read before subscribing
  size_t replayed = 0;     // historical copies surfaced
  size_t replaySkipped = 0;
  bool replay = false;        // whether history was read (the effective value)
  std::string deliveryClass;  // "live" | "durable"; empty for a wildcard pattern (live only)
  bool durable = false;       // the delivery plane recorded a durable membership
  uint64_t generation = 0;    // of that membership
  // The lifecycle was already a durable member (a restarted seat): the membership continues
  // and no history is replayed (the first join did; the backstop carries the rest). Also set,
  // with `backstop` saying so, when the plane could not be asked and the caller held it
  // (JoinOptions::heldDurably).
  bool continued = false;
  // Set when the channel is durable but the backstop is not: "joined live, durable backstop
  // unestablished: <why>" (never silent).
  std::string backstop;
};

}  // namespace shoal::mesh
