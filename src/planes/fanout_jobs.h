// FanoutJobs: the status record of every fan-out job the delivery plane has seen (seed 004 §2,
// §4, §5 "fanout outbox"; issue 7). A job is one CHAT post; its states:
//
//   leased     fetched from the `fanout` consumer, copies being written
//   delivered  every copy stored in INBOX and the post acked
//   retry      a copy or the registry read failed; the post was nak'ed and comes back
//   failed     given up after the bounded number of deliveries (termed), with the last error
//   suppressed nothing to copy (live channel without an authorised mention, no other member,
//              a post that fails the envelope checks — the reason says which)
// `pending` (in the consumer, not fetched yet) is the consumer's own count, reported beside the
// table. Hand-offs by the trusted reader are counted per outcome, and its failures are kept as
// jobs too (keyed by the copy id).
//
// The table is bounded: unfinished jobs (leased, retry) are always kept; the oldest finished ones
// are forgotten first. It is memory only — after a restart the broker redelivers every unacked
// post and the table fills again.
//
// Thread safety: all methods may be called from any thread (one mutex).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace shoal::planes {

enum class JobState { kLeased, kDelivered, kRetry, kFailed, kSuppressed };
std::string_view jobStateName(JobState state);

struct FanoutJob {
  std::string key;  // `chat:<seq>` for a fan-out, `copy:<copy id>` for a reader hand-off
  std::string channel;
  std::string messageId;
  uint64_t seq = 0;  // the CHAT sequence
  JobState state = JobState::kLeased;
  uint64_t attempts = 0;
  uint64_t copies = 0;
  std::string lastError;
  int64_t updatedMs = 0;
};

struct ReaderCounters {
  uint64_t handedOver = 0;
  uint64_t suppressed = 0;  // ACL no longer covers the channel, or outside the membership
  uint64_t deferred = 0;    // ACL unknown: nak'ed with a delay
  uint64_t failed = 0;      // termed after the bounded number of deliveries
  uint64_t malformed = 0;
};

class FanoutJobs {
 public:
  explicit FanoutJobs(size_t capacity = 512) : capacity_(capacity) {}

  void update(const FanoutJob& job);
  std::vector<FanoutJob> snapshot() const;
  // Jobs per state (all ever recorded, including forgotten ones).
  std::map<std::string, uint64_t> totals() const;

  void countReader(uint64_t ReaderCounters::*field);
  ReaderCounters reader() const;

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::map<std::string, FanoutJob> jobs_;   // guarded by mu_
  std::deque<std::string> order_;           // guarded by mu_: insertion order of keys
  std::map<std::string, uint64_t> totals_;  // guarded by mu_: finished jobs per final state
  ReaderCounters reader_;                   // guarded by mu_
};

}  // namespace shoal::planes
