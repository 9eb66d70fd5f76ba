// Transaction: a list of journal operations applied as one locked, all-or-nothing unit.
//
// Each operation enforces the ownership rules of seed 004 §2.1 itself (generation and terminal
// checks happen together with the state change, never read-then-write). If any operation of a
// transaction is refused, none of them takes effect and the transaction returns that refusal.
//
// Rules, by operation (token = the record's current OwnerToken, see record.h):
//   Admit           new MessageID → queued, or inflight(dispatching) just before a direct
//                   runtime mutation. Reclaims the oldest live owners (→ failed,
//                   `ownership_backlog_reclaimed`) until it fits. An existing MessageID is not
//                   changed: the result says kAlreadyLive / kAlreadyTerminal (dedup).
//   BeginInflight   queued → inflight(phase), optionally setting the runtime identity.
//   MarkOutcomeUnknown inflight → inflight(outcome_unknown) (reason/identity update).
//   Requeue         inflight → queued (authoritative `absent`, explicit zero-byte write, known
//                   pre-accept failure). The body was kept, so replay is exact.
//   MarkSurfaced    live → surfaced, or failed → surfaced (late correlated evidence). Without a
//                   token it is authoritative evidence and skips the generation check.
//   MarkFailed      live → failed. Surfaced is never downgraded.
//   RemoveLive      deletes a live owner (rollback); a tombstone is never removed this way.
//   SetSection      writes one named section, optionally compare-and-set on its revision.
//   SetResumeSafety compare-and-set on (launchEpoch, version); safe=true needs no live owner.
// A runtime receipt correlates exactly one MessageID: Admit/BeginInflight/MarkOutcomeUnknown
// carrying a receipt another record already holds are refused (kAlreadyExists).
// Every operation that leaves a live owner written (admit, begin, unknown, requeue) also sets
// resume safety to unsafe in the same transaction. Existing-owner transitions never reclaim.
//
// Thread safety: plain values.
// Lifetime: owns its operations.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "journal/record.h"

namespace shoal::journal {

struct Admit {
  std::string id;
  std::string body;
  std::string target;
  std::string wake;
  RuntimeIdentity runtime;
  bool dispatching = false;  // true: first state is inflight(dispatching)
  std::string reason;        // dispatching: its diagnostic (optional); ignored for queued
};
struct BeginInflight {
  std::string id;
  OwnerToken expected;
  InflightPhase phase = InflightPhase::kDispatching;
  std::optional<RuntimeIdentity> runtime;  // set: replaces the stored identity
  std::string reason;
};
struct MarkOutcomeUnknown {
  std::string id;
  OwnerToken expected;
  std::optional<RuntimeIdentity> runtime;
  std::string reason;
};
struct Requeue {
  std::string id;
  OwnerToken expected;
  std::string reason;
};
struct MarkSurfaced {
  std::string id;
  std::optional<OwnerToken> expected;  // nullopt: authoritative evidence, no generation check
  std::string reason;
};
struct MarkFailed {
  std::string id;
  OwnerToken expected;
  std::string reason;
};
struct RemoveLive {
  std::string id;
  OwnerToken expected;
};
struct SetSection {
  std::string name;       // [A-Za-z][A-Za-z0-9_.-]*, at most 64 bytes
  std::string valueJson;  // any JSON value; stored canonicalized
  std::optional<uint64_t> expectedRevision;
};
struct SetResumeSafety {
  ResumeSafety next;
};

using Operation = std::variant<Admit, BeginInflight, MarkOutcomeUnknown, Requeue, MarkSurfaced,
                               MarkFailed, RemoveLive, SetSection, SetResumeSafety>;

struct Transaction {
  std::vector<Operation> ops;

  Transaction& add(Operation op) {
    ops.push_back(std::move(op));
    return *this;
  }
};

enum class AdmitDisposition : uint8_t {
  kAdmitted,         // a new live owner was written
  kAlreadyLive,      // same MessageID is a live owner: ownership already durable, ACK it
  kAlreadyTerminal,  // same MessageID is a tombstone: deduplicated, never re-run
};

// A live owner that capacity recovery turned into a failed tombstone, for diagnostics.
struct ReclaimedOwner {
  std::string id;
  OwnerState previousState = OwnerState::kQueued;
  OwnerToken token;  // the tombstone's token
  std::string target;
  std::string wake;
  RuntimeIdentity runtime;
};

struct OperationResult {
  // The record after the operation (nullopt for RemoveLive and section/safety ops).
  std::optional<OwnershipRecord> record;
  AdmitDisposition disposition = AdmitDisposition::kAdmitted;  // Admit only
  std::vector<ReclaimedOwner> reclaimed;                       // Admit only
  uint64_t sectionRevision = 0;                                // SetSection only
  bool changed = false;  // false: an idempotent repeat or a dedup hit
};

struct TransactionResult {
  std::vector<OperationResult> results;  // one per operation, in order
};

}  // namespace shoal::journal
