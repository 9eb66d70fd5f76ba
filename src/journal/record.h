// Ownership records: the values stored in `.daemon-state.json` (seed 004 §2.1).
//
// One record per concrete MessageID, the canonical dedup identity. Its state is one of
//   queued                       live: the daemon owns the body; exact replay is safe
//   inflight(dispatching)        live: durable before a runtime mutation; never blind-replayed
//   inflight(outcome_unknown)    live: the runtime may own the input; reconcile first
//   terminal(surfaced)           tombstone: correlated evidence the runtime accepted it
//   terminal(failed)             tombstone: explicit evidence duplicate-safe progress ended
// Live records hold the exact replay body (an inflight record keeps it so an authoritative
// `absent` can return it to queued, seed §3.2); tombstones drop the body and the wake data and
// keep the reason, target and runtime identity (late correlated evidence finds them).
//
// Every mutation stamps the record with a fresh `OwnerToken`: the journal's store-attachment
// epoch (advanced on every open) and a journal-wide, never-reused mutation generation. A writer
// passes the token it last saw; a write carrying an older token is stale and refused.
//
// Thread safety: plain values.
// Lifetime: owns its strings.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace shoal::journal {

enum class OwnerState : uint8_t {
  kQueued,
  kDispatching,     // inflight(dispatching)
  kOutcomeUnknown,  // inflight(outcome_unknown)
  kSurfaced,        // terminal(surfaced)
  kFailed,          // terminal(failed)
};

inline bool isLive(OwnerState s) {
  return s <= OwnerState::kOutcomeUnknown;
}
inline bool isInflight(OwnerState s) {
  return s == OwnerState::kDispatching || s == OwnerState::kOutcomeUnknown;
}
inline bool isTerminal(OwnerState s) {
  return !isLive(s);
}

// "queued", "inflight(dispatching)", "inflight(outcome_unknown)", "terminal(surfaced)",
// "terminal(failed)".
std::string_view ownerStateName(OwnerState s);

// Which inflight phase a transition enters.
enum class InflightPhase : uint8_t { kDispatching, kOutcomeUnknown };

// The runtime identity an inflight owner reconciles against. Opaque to the journal.
struct RuntimeIdentity {
  std::string threadId;
  std::string sessionId;
  std::string receipt;  // e.g. an MCP inbox receipt (the runtime correlation key)

  bool empty() const { return threadId.empty() && sessionId.empty() && receipt.empty(); }
  friend bool operator==(const RuntimeIdentity&, const RuntimeIdentity&) = default;
};

// The compare-and-set token of one record: who last mutated it, and when.
struct OwnerToken {
  uint64_t epoch = 0;       // store-attachment epoch of the mutation
  uint64_t generation = 0;  // journal-wide mutation generation (never reused)
  friend bool operator==(const OwnerToken&, const OwnerToken&) = default;
};

struct OwnershipRecord {
  std::string id;  // MessageID
  OwnerState state = OwnerState::kQueued;
  std::string body;    // exact replay bytes; empty in tombstones
  std::string reason;  // terminal: why (required); inflight: diagnostic (optional)
  std::string target;  // opaque daemon data: where replies go
  std::string wake;    // opaque daemon data: wake token / class (live only)
  RuntimeIdentity runtime;
  OwnerToken token;
  uint64_t seq = 0;          // admission order: smaller is older (restore/reclaim order)
  uint64_t terminalSeq = 0;  // tombstones: order of becoming terminal (prune order); else 0
  int64_t admittedAtMs = 0;  // wall clock at first admission
  int64_t stateSinceMs = 0;  // wall clock when the current state began
  uint32_t attempts = 0;     // retry/reconcile attempts: memory only, never persisted

  friend bool operator==(const OwnershipRecord&, const OwnershipRecord&) = default;
};

// Resume safety (seed 004 §1.1): compare-and-set by (launchEpoch, version). Every live-owner
// upsert sets `safe = false` in the same transaction; `safe = true` is refused while any live
// owner exists.
struct ResumeSafety {
  bool safe = false;
  uint64_t launchEpoch = 0;  // monotonically increasing Process-launch epoch
  uint64_t version = 0;      // epoch-local transition version
  friend bool operator==(const ResumeSafety&, const ResumeSafety&) = default;
};

// An independent section of the file (identity, runtime policy, deferred continuation, …):
// canonical JSON text plus a revision that advances on every write.
struct Section {
  uint64_t revision = 0;
  std::string valueJson;
  friend bool operator==(const Section&, const Section&) = default;
};

using SectionMap = std::map<std::string, Section, std::less<>>;

}  // namespace shoal::journal
