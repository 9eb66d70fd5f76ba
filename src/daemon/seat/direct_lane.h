// DirectLane: the one fsync chain before an idle runtime sees a DM (seed 004 §2.1: a new
// owner's first live admission may be `inflight(dispatching)` immediately before a direct
// runtime mutation).
//
// The gate opens the lane when the current generation is accepting and has nothing in hand and
// nothing queued; an admission that finds it open claims it, admits its DM straight to
// inflight(dispatching) in the one transaction that precedes the broker ack, and the gate
// writes it without a second commit. One claim at a time: a claim closes the lane until the
// gate reopens it. Everything else is admitted `queued`, and closes the lane first so the next
// DM cannot overtake it.
//
// The gate checks its own state again when the claim reaches it; a runtime that is no longer
// idle (or no longer the claimed generation) gets nothing, and the owner goes back to `queued`
// — the daemon knows no byte of it was written. While a claim is pending, the gate's sweeps of
// inflight owners (a generation's exit, reconciliation) leave it alone.
//
// Thread safety: every member is safe from any thread (one internal mutex).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/mutex.h"

namespace shoal::daemon::seat_parts {

class DirectLane {
 public:
  struct Claim {
    std::string id;           // the owner admitted inflight(dispatching)
    uint64_t generation = 0;  // the generation it is meant for
    std::string sessionId;    // that generation's session when the lane opened
    std::string handoffId;    // the handoff it goes out in (its receipt is `<handoffId>/0`)
    std::string reason;       // the inflight diagnostic its admission records
  };

  // The gate: the generation `generation` (session `sessionId`) can take a DM now; `reason`
  // is what a claim's owner says while it is inflight.
  void open(uint64_t generation, std::string sessionId, std::string reason = {})
      SHOAL_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    open_ = true;
    generation_ = generation;
    sessionId_ = std::move(sessionId);
    reason_ = std::move(reason);
  }

  // The gate (something to do) or an admission (a queued owner is coming).
  void close() SHOAL_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    open_ = false;
  }

  // An admission: takes the lane for `id`, or nullopt when it is closed or already claimed.
  std::optional<Claim> claim(const std::string& id, std::string handoffId) SHOAL_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (!open_ || pending_) return std::nullopt;
    open_ = false;
    pending_ = id;
    return Claim{id, generation_, sessionId_, std::move(handoffId), reason_};
  }

  // The gate took the claim, or its admission was not committed.
  void release(const std::string& id) SHOAL_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (pending_ == id) pending_.reset();
  }

  // True while `id` was claimed and the gate has not taken it yet.
  bool pending(const std::string& id) const SHOAL_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return pending_ == id;
  }

  // True while any claim is on its way to the gate.
  bool busy() const SHOAL_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return pending_.has_value();
  }

 private:
  mutable Mutex mu_;
  bool open_ SHOAL_GUARDED_BY(mu_) = false;
  uint64_t generation_ SHOAL_GUARDED_BY(mu_) = 0;
  std::string sessionId_ SHOAL_GUARDED_BY(mu_);
  std::string reason_ SHOAL_GUARDED_BY(mu_);
  std::optional<std::string> pending_ SHOAL_GUARDED_BY(mu_);
};

}  // namespace shoal::daemon::seat_parts
