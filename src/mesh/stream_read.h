// readStored: a read-only look at the messages one filter selects in a space stream — what
// channel history, the person's inbox and a DM conversation are made of. Nothing is consumed:
// the streams are Limits streams and the reader's consumer acks nothing.
//
// How: the watermark is the stream's last sequence read first (or the caller's); a transient
// consumer named `consumer` is created with exactly one filter, AckNone, memory storage,
// inactive threshold 30 s, from the start or from `sinceMs`, through the create subject that
// names the filter (so an agent's grant pins what it may read); messages are fetched up to the
// watermark and the consumer is deleted afterwards (also on failure; the inactive threshold
// removes one left by a crash). Reads under one consumer name are serialised by the caller.
//
// Each stored message goes through wire::readDelivery; a message that fails it is skipped and
// counted (malformed envelopes are never surfaced), never returned.
//
// Thread safety: blocks the calling thread; uses `js` only during the call.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "transport/jetstream.h"
#include "wire/inbound.h"

namespace shoal::mesh {

inline constexpr std::chrono::milliseconds kStoredReadInactiveThreshold{30000};

struct StoredRead {
  std::string stream;
  std::string filter;       // one subject filter (nats-server 2.9 has no multi-filter consumers)
  std::string consumer;     // the transient consumer's name
  std::string description;  // shown by the broker for the consumer
  uint64_t watermark = 0;   // read up to this sequence; 0: the stream's last_seq now
  std::optional<int64_t> sinceMs;  // only messages stored at or after (Unix epoch ms)
  size_t limit = 0;                // keep only the newest `limit`; 0: all
  std::chrono::milliseconds fetchWait{1000};
};

struct StoredEntry {
  uint64_t seq = 0;      // stream sequence
  int64_t storedMs = 0;  // when the stream stored it
  std::string subject;   // as stored
  wire::InboundDelivery delivery;
};

struct StoredPage {
  uint64_t watermark = 0;
  std::vector<StoredEntry> entries;  // oldest first
  size_t skipped = 0;                // stored messages that failed the inbound check
  std::string lastSkipReason;
};

// kNotFound `space-not-provisioned` when the stream does not exist.
Result<StoredPage> readStored(transport::JetStream& js, const StoredRead& read);

}  // namespace shoal::mesh
