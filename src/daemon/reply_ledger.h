// ReplyLedger: visible-reply settlement — which surfaced deliveries still wait for the agent
// to answer where someone can see it (seed 004 §3.1; issue 6 point 4).
//
// Every directed delivery surfaced to a runtime that has turns (a DM, an anycast job, an
// @mention of the seat) keeps one row: message id, exact target, canonical TargetKey
// (`peer:<sender id>` for DMs and jobs, `channel:<name>` for a mention), a target-local
// sequence, the wake token (the handoff or inbox receipt that surfaced it). The sequence is
// reserved when the delivery is handed to the runtime (written to it, or put in an inbox page)
// — the frontier of what the runtime may have seen — and the row is added when it surfaces. Ambient
// channel posts are signal-only: they demand no reply and never enter the ledger. A duplicate
// message id is suppressed.
//
// Settlement is target-frontier based: a successful `shoal_dm` / `shoal_send` (stored, or a
// duplicate of an earlier send) to a TargetKey settles every row of that key whose sequence is
// ≤ the frontier the call observed before it sent (SeenUpToSeq) — rows handed over later stay.
// The replied frontier is remembered: a row whose surfacing acknowledgement arrives after the
// reply (the runtime answered before its ack was processed) settles as it is added. Other keys
// are untouched. A failed send settles nothing.
//
// Final-check runs at a turn end, a terminal error, an unexpected exit or a stop: every
// unresolved row gets one terminal result (`completed_without_visible_reply`, or `failed` with
// the reason) and the table is cleared. `replied` results come from settle(), at once.
//
// The bound: at most `bound` rows; add() past it still records the row (an input the runtime
// already accepted keeps its obligation) and full() tells the dispatcher to hold new handoffs.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"

namespace shoal::daemon {

struct ReplyRow {
  std::string messageId;
  std::string target;     // the sender's id, or the channel
  std::string targetKey;  // peer:<id> | channel:<name>
  uint64_t targetSeq = 0;
  std::string wakeToken;
};

struct WakeResult {
  std::string messageId;
  std::string targetKey;
  std::string result;   // replied | completed_without_visible_reply | failed
  std::string replyId;  // replied: the message that answered it
  std::string reason;   // failed: why
};

std::string peerTargetKey(const std::string& principalId);
std::string channelTargetKey(const std::string& channel);

class ReplyLedger {
 public:
  explicit ReplyLedger(size_t bound = 512) : bound_(bound) {}

  // The next sequence of `targetKey`, at handoff: the runtime may see it from now on.
  uint64_t reserve(const std::string& targetKey) SHOAL_EXCLUDES(mu_);
  // Records a surfaced delivery (row.targetSeq from reserve()). A duplicate id is dropped
  // (nullopt, no row); a row at or below the replied frontier of its key is settled at once
  // (its `replied` result is returned, no row).
  std::optional<WakeResult> add(ReplyRow row) SHOAL_EXCLUDES(mu_);
  // The highest sequence handed over for `targetKey` so far (0: none) — a send's SeenUpToSeq.
  uint64_t frontier(const std::string& targetKey) const SHOAL_EXCLUDES(mu_);
  // A visible reply to `targetKey` that observed `seenUpTo`: its rows end `replied`.
  std::vector<WakeResult> settle(const std::string& targetKey, uint64_t seenUpTo,
                                 const std::string& replyId) SHOAL_EXCLUDES(mu_);
  // Every unresolved row ends: `failed` with `failedReason` when it is not empty, else
  // `completed_without_visible_reply`. Clears the table.
  std::vector<WakeResult> finalCheck(const std::string& failedReason) SHOAL_EXCLUDES(mu_);

  size_t size() const SHOAL_EXCLUDES(mu_);
  bool full() const SHOAL_EXCLUDES(mu_);
  std::vector<ReplyRow> rows() const SHOAL_EXCLUDES(mu_);

 private:
  const size_t bound_;
  mutable Mutex mu_;
  std::vector<ReplyRow> rows_ SHOAL_GUARDED_BY(mu_);               // surfacing order
  std::map<std::string, uint64_t> lastSeq_ SHOAL_GUARDED_BY(mu_);  // by TargetKey; never reset
  struct Replied {
    uint64_t upTo = 0;
    std::string replyId;
  };
  std::map<std::string, Replied> replied_ SHOAL_GUARDED_BY(mu_);  // by TargetKey
};

}  // namespace shoal::daemon
