// Runtime framing limits: the numbers of seed 004 §1.2 (docs/architecture.md, Default numbers).
//
// The line cap is measured on the complete raw line INCLUDING its terminating newline; the
// translated-output queue is charged by each entry's final encoded wire bytes (newline
// included). The defaults are the seed's; the option structs that carry them exist so tests can
// shrink them. Production always uses the defaults.
//
// Thread safety: constants only.
// Lifetime: static storage.
#pragma once

#include <cstddef>

namespace shoal::runtime {

inline constexpr size_t kKiB = 1024;
inline constexpr size_t kMiB = 1024 * kKiB;

// One hard cap on a complete runtime line, newline included (seed 004 §1.2).
inline constexpr size_t kMaxLineBytes = 32 * kMiB;
// How much a line reader asks its source for at a time. Not a limit: lines span chunks.
inline constexpr size_t kReadChunkBytes = 64 * kKiB;
// The generation-scoped translated-output queue (seed 004 §1.2).
inline constexpr size_t kOutputQueueMaxEntries = 128;
inline constexpr size_t kOutputQueueMaxBytes = 32 * kMiB;

}  // namespace shoal::runtime
