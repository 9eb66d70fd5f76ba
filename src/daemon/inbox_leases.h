// InboxLeases: the final-hop leases of inbox receipts and the lifecycle-mutation barrier they
// pass through (seed 004 §2.1 "Daemon-local inbox bodies", §2.2; issue 6 point 3).
//
// A `shoal_inbox` page claims queued deliveries for the current runtime generation: each one
// becomes inflight(outcome_unknown) in the journal under a fresh random receipt, and gets a
// lease here — bound to that exact generation, with a deadline (6 minutes by default) — before
// the page leaves the seat. Then, on the MCP server's network thread:
//   the page's HTTP response was written whole  → finishWrite(complete=true) hands the claims
//                                                 back to be committed `surfaced`, but only
//                                                 while their generation is still the open one
//                                                 (a replacement Process never receives an old
//                                                 acknowledgement);
//   a short or failed write, or a retired        → nothing is acknowledged; the lease stays and
//   generation                                     expire() ends it at its deadline (`failed`,
//                                                 never replayed: the client may have parsed it).
//
// The barrier: a claim counts as an admitted lifecycle mutation from the claim until its write
// outcome was handled (committed, receipts published). close() refuses new claims; drain()
// waits for the admitted ones — retirement, an unexpected exit and Stop run close() + drain()
// before they end the generation, so no write outcome races them.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "journal/record.h"

namespace shoal::daemon {

struct InboxClaim {
  std::string receipt;  // the runtime correlation key (wire/inbox_receipt.h)
  std::string id;       // the MessageID (canonical identity)
  journal::OwnerToken token;
  std::string sender;
  std::string replyTarget;  // ReplyLedger target / key, empty for signal-only deliveries
  std::string replyKey;
  uint64_t replySeq = 0;
  uint64_t generation = 0;
  std::chrono::steady_clock::time_point deadline;
};

class InboxLeases {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // Claims are accepted for `generation` from now on (a launch published it).
  void open(uint64_t generation) SHOAL_EXCLUDES(mu_);
  // No claim is accepted, and no write outcome acknowledged, until the next open().
  void close() SHOAL_EXCLUDES(mu_);
  bool accepting(uint64_t generation) const SHOAL_EXCLUDES(mu_);
  // Waits until no claim awaits its write outcome. False when `deadline` came first.
  bool drain(TimePoint deadline) SHOAL_EXCLUDES(mu_);

  // Records the leases of one page (all of one generation) as awaiting their write.
  // False (nothing recorded) when the generation is not the open one.
  bool add(std::vector<InboxClaim> claims) SHOAL_EXCLUDES(mu_);
  // The write outcome of a page. Returns the claims to commit surfaced (removed from the
  // table): none unless `complete` and the generation is still open. Either way the page no
  // longer counts against drain() once `handled()` is called for it.
  std::vector<InboxClaim> finishWrite(const std::vector<std::string>& receipts, uint64_t generation,
                                      bool complete) SHOAL_EXCLUDES(mu_);
  void handled(size_t claims) SHOAL_EXCLUDES(mu_);

  // Leases past their deadline, removed.
  std::vector<InboxClaim> expire(TimePoint now) SHOAL_EXCLUDES(mu_);
  std::optional<TimePoint> nextDeadline() const SHOAL_EXCLUDES(mu_);
  // Whether `id` is held by a lease (its owner is not the runtime's to fail at retirement).
  bool holds(const std::string& id) const SHOAL_EXCLUDES(mu_);
  size_t size() const SHOAL_EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  CondVar cv_;
  std::optional<uint64_t> open_ SHOAL_GUARDED_BY(mu_);
  std::vector<InboxClaim> leases_ SHOAL_GUARDED_BY(mu_);
  size_t awaitingWrite_ SHOAL_GUARDED_BY(mu_) = 0;
};

}  // namespace shoal::daemon
