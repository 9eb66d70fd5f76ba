// Journal limits: the capacity caps of seed 004 §2.1 and the bounds on each record field.
//
// Caps are measured on exact serialized bytes: a record's size is the length of its canonical
// JSON object as written in `.daemon-state.json` (docs/journal-format.md), without the
// separating comma and newline. The seed's numbers are the defaults; `Limits` exists so tests
// can shrink them (production always uses `Limits{}`).
//
// Thread safety: plain values.
// Lifetime: static / value.
#pragma once

#include <cstddef>

#include "wire/message_limits.h"

namespace shoal::journal {

inline constexpr size_t kKiB = 1024;
inline constexpr size_t kMiB = 1024 * kKiB;

struct Limits {
  size_t maxLiveRecords = 512;
  size_t maxLiveBytes = 8 * kMiB;
  size_t maxTombstones = 512;
  size_t maxTombstoneBytes = 2 * kMiB;
  size_t maxTotalRecords = 1024;
  size_t maxTotalBytes = 10 * kMiB;
  size_t maxLiveRecordBytes = 512 * kKiB;
};

// Field bounds, checked on input (kInvalidArgument) so a record can never grow unboundedly.
// MessageID: the wire's own bound (wire/message_limits.h), so every valid message is admittable.
inline constexpr size_t kMaxIdBytes = wire::kMaxMessageIdBytes;
inline constexpr size_t kMaxReasonBytes = 1 * kKiB;        // longer reasons are truncated
inline constexpr size_t kMaxRuntimeFieldBytes = 1 * kKiB;  // threadId / sessionId / receipt
inline constexpr size_t kMaxTargetBytes = 16 * kKiB;  // opaque, daemon-owned (kept in tombstones)
inline constexpr size_t kMaxWakeBytes = 16 * kKiB;    // opaque, daemon-owned (dropped at terminal)
// Sections: the other state sharing the file (identity, runtime policy, deferred continuation…).
inline constexpr size_t kMaxSectionNameBytes = 64;
inline constexpr size_t kMaxSections = 32;
inline constexpr size_t kMaxSectionBytes = 256 * kKiB;  // canonical JSON of one section value
inline constexpr size_t kMaxSectionsBytes = 1 * kMiB;   // all section values together
inline constexpr size_t kMaxSectionDepth = 24;          // JSON nesting inside a section value

}  // namespace shoal::journal
