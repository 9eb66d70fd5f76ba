// TranslatedOutputQueue: the generation-scoped, lossless queue of translated runtime output
// (seed 004 §1.2). Producers (a generation's reader/translator) push each event's FINAL wire
// bytes — the exact bytes, newline included, that the flusher will write — and one consumer
// (the flusher) pops and writes them in order.
//
// Capacity: at most `maxEntries` (128) entries AND `maxBytes` (32 MiB), charged by each
// entry's exact byte length. An entry is released from the charge when the consumer pops it.
// Backpressure: a push that does not fit blocks until it does. Blocked producers are admitted
// strictly in arrival order, so a large entry is never starved by smaller ones. Waiting ends
// only by admission, the caller's stop token (kCancelled, reason `cancelled`), its timeout
// (kDeadlineExceeded, `output-queue-full`), seal() or abort(); every refused entry is reported
// to its producer as a Status, never dropped silently.
//
// Refused entries: one longer than the line cap (kResourceExhausted, `line-too-long`) or not
// exactly one newline-terminated line (kInternal, `frame-not-one-line`) is transport-fatal:
// the queue seals itself with that Status, so nothing pushed later can be written past the gap,
// and everything admitted before it still drains.
//
// States:
//   open     pushes admitted as they fit
//   sealed   seal() (source EOF, malformed frame) or a refused entry: pushes are refused with
//            kFailedPrecondition, `output-queue-sealed` (blocked producers are woken with it);
//            every admitted entry is still popped in order, then pop() reports end of stream
//   drained  sealed, and the consumer's pop() reported end of stream (it pops again only after
//            writing what it popped before, so every admitted byte has been written)
//   aborted  abort(): intentional and idempotent. Producers, the consumer and drain waiters
//            are woken with kCancelled, reason `aborted`; entries still queued are abandoned
//            and abort() returns how many (the caller reports them; nothing vanishes unseen)
// A new Process generation gets a new queue object, so aborting an old generation's queue
// cannot touch the new one.
//
// Thread safety: every method may be called from any thread concurrently. pop() has one
// consumer (with several, each entry still goes to exactly one of them, but write order across
// them is undefined).
// Lifetime: every call must have returned before the queue is destroyed (abort() first, then
// join the producer and consumer threads).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <stop_token>
#include <string>

#include "base/mutex.h"
#include "base/result.h"
#include "base/status.h"
#include "runtime/deadline.h"
#include "runtime/limits.h"

namespace shoal::runtime {

struct OutputQueueLimits {
  size_t maxEntries = kOutputQueueMaxEntries;  // >= 1
  size_t maxBytes = kOutputQueueMaxBytes;      // >= maxLineBytes, so any valid entry fits
  size_t maxLineBytes = kMaxLineBytes;         // one entry, newline included
};

struct OutputQueueStats {
  size_t entries = 0;           // queued now
  size_t bytes = 0;             // charged now
  size_t blockedProducers = 0;  // push() calls waiting for room
  uint64_t admitted = 0;
  uint64_t popped = 0;
  uint64_t abandoned = 0;  // by abort()
  bool sealed = false;
  bool drained = false;
  bool aborted = false;
};

class TranslatedOutputQueue {
 public:
  explicit TranslatedOutputQueue(uint64_t generation, OutputQueueLimits limits = {});
  TranslatedOutputQueue(const TranslatedOutputQueue&) = delete;
  TranslatedOutputQueue& operator=(const TranslatedOutputQueue&) = delete;

  uint64_t generation() const { return generation_; }

  // Producer: admits `wireBytes` (one line ending in '\n'), blocking while the queue is full.
  // An entry that fits right away is admitted even if `cancel` was already triggered. nullopt
  // timeout = wait as long as it takes. OK = admitted; see the header comment for refusals.
  Status push(std::string wireBytes, const std::stop_token& cancel = {},
              std::optional<std::chrono::nanoseconds> timeout = std::nullopt) SHOAL_EXCLUDES(mu_);

  // Owner: no new pushes; admitted entries still drain. Idempotent (the first `why` is kept;
  // OK means a clean source EOF). No effect after abort().
  void seal(Status why = Status::ok()) SHOAL_EXCLUDES(mu_);

  // Owner: retire this generation's output. Returns how many queued entries this call
  // abandoned (0 on every later call). `why` is appended to the `aborted` errors it causes.
  [[nodiscard]] size_t abort(Status why = Status::ok()) SHOAL_EXCLUDES(mu_);

  // Consumer: the oldest entry; nullopt = end of stream (sealed and everything popped; this
  // marks the queue drained). Errors: kCancelled `aborted` / `cancelled`, kDeadlineExceeded
  // `timed-out` (nothing was popped).
  Result<std::optional<std::string>> pop(
      std::optional<std::chrono::nanoseconds> timeout = std::nullopt,
      const std::stop_token& cancel = {}) SHOAL_EXCLUDES(mu_);

  // Owner: blocks until drained (OK), so "process exited" can be withheld until every admitted
  // entry was written. Errors: kCancelled `aborted` (the message says how many were
  // abandoned) or `cancelled`, kDeadlineExceeded `timed-out`.
  Status awaitDrained(const std::stop_token& cancel = {},
                      std::optional<std::chrono::nanoseconds> timeout = std::nullopt)
      SHOAL_EXCLUDES(mu_);

  OutputQueueStats stats() const SHOAL_EXCLUDES(mu_);
  // Why the queue was sealed (OK while open, or sealed by a clean EOF).
  Status sealReason() const SHOAL_EXCLUDES(mu_);

  // Blocks until at least `producers` push() calls and `consumers` pop() calls are waiting.
  void waitForWaitersForTest(size_t producers, size_t consumers) SHOAL_EXCLUDES(mu_);

 private:
  struct WakeAll {
    TranslatedOutputQueue* queue;
    void operator()() const;
  };
  enum class Wait { kNotified, kCancelled, kTimedOut };

  bool fits(size_t bytes) const SHOAL_REQUIRES(mu_);
  void sealLocked(Status why) SHOAL_REQUIRES(mu_);
  // One condition-variable wait honouring the stop token and the deadline.
  Wait waitOnce(const std::stop_token& cancel, const Deadline& deadline) SHOAL_REQUIRES(mu_);
  void removeTicket(uint64_t ticket) SHOAL_REQUIRES(mu_);
  Status abortedError() const SHOAL_REQUIRES(mu_);
  Status sealedError() const SHOAL_REQUIRES(mu_);
  Status cancelledError(std::string_view what) const;
  Status timedOutError(std::string_view what, std::string_view reason) const;

  // Constant after construction.
  const uint64_t generation_;
  const OutputQueueLimits limits_;

  mutable Mutex mu_;
  CondVar cv_;  // every state change notifies all waiters
  std::deque<std::string> entries_ SHOAL_GUARDED_BY(mu_);
  size_t bytes_ SHOAL_GUARDED_BY(mu_) = 0;
  std::deque<uint64_t> waitingTickets_ SHOAL_GUARDED_BY(mu_);  // blocked producers, in order
  uint64_t nextTicket_ SHOAL_GUARDED_BY(mu_) = 1;
  size_t waitingConsumers_ SHOAL_GUARDED_BY(mu_) = 0;
  uint64_t admitted_ SHOAL_GUARDED_BY(mu_) = 0;
  uint64_t popped_ SHOAL_GUARDED_BY(mu_) = 0;
  uint64_t abandoned_ SHOAL_GUARDED_BY(mu_) = 0;
  bool sealed_ SHOAL_GUARDED_BY(mu_) = false;
  Status sealReason_ SHOAL_GUARDED_BY(mu_);
  bool drained_ SHOAL_GUARDED_BY(mu_) = false;
  bool aborted_ SHOAL_GUARDED_BY(mu_) = false;
  Status abortReason_ SHOAL_GUARDED_BY(mu_);
};

}  // namespace shoal::runtime
