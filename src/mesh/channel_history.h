// readChannelHistory: a read-only look at one channel's stored posts (Cotal §7 "replay on
// join", §8 `chathist_…`). Nothing is consumed: CHAT is a Limits stream and the reader's
// consumer acks nothing.
//
// How: readStored (stream_read.h) over CHAT_<space> with the one filter
// `cotal.<space>.chat.*.*.<channel>` under the reader's consumer `chathist_<o>-<a>-<uid>`.
// Reads by one reader uid are serialised by the caller (one consumer name per uid).
//
// Thread safety: blocks the calling thread; uses `js` only during the call.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "mesh/stream_read.h"
#include "transport/jetstream.h"
#include "wire/inbound.h"
#include "wire/principal.h"

namespace shoal::mesh {

inline constexpr std::chrono::milliseconds kHistoryInactiveThreshold = kStoredReadInactiveThreshold;

struct HistoryOptions {
  uint64_t watermark = 0;          // read up to this CHAT sequence; 0: CHAT's last_seq now
  std::optional<int64_t> sinceMs;  // only posts stored at or after (Unix epoch ms)
  size_t limit = 0;                // keep only the newest `limit` posts; 0: all
  std::chrono::milliseconds fetchWait{1000};
};

using HistoryEntry = StoredEntry;

struct HistoryPage {
  std::string channel;
  uint64_t watermark = 0;
  std::vector<HistoryEntry> entries;  // oldest first
  size_t skipped = 0;                 // stored messages that failed the inbound check
  std::string lastSkipReason;
};

Result<HistoryPage> readChannelHistory(transport::JetStream& js, std::string_view space,
                                       const wire::Principal& reader, std::string_view lifecycleUid,
                                       std::string_view channel,
                                       const HistoryOptions& options = {});

}  // namespace shoal::mesh
