// JournalState: the in-memory ownership journal — records, sections, resume safety — and the
// rules of seed 004 §2.1 / §3.3 applied to it. Pure: no I/O, no clock, no locks.
//
// OwnershipJournal (ownership_journal.h) wraps one JournalState in a mutex and makes each
// applied transaction durable; tests and the model test drive a JournalState directly.
//
// Invariants (checked by checkInvariants(), and on every decode):
//   - every MessageID appears once; live records are queued/inflight and hold their body,
//     tombstones are terminal and hold no body or wake data;
//   - live order is admission order (seq), tombstone order is terminal order (terminalSeq);
//   - counts and exact byte totals respect Limits (live, tombstones, total, per live record);
//   - every token generation < nextGeneration, every seq/terminalSeq < nextSeq, every
//     token epoch <= storeEpoch.
//
// Thread safety: none; the owner serializes access.
// Lifetime: a value type (copyable), owns everything it holds.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "journal/format.h"
#include "journal/limits.h"
#include "journal/record.h"
#include "journal/transaction.h"

namespace shoal::journal {

// What a restarting daemon needs: live owners oldest-first (restore handles only the oldest),
// tombstones for same-ID dedup, and the other sections of the file.
struct RestartView {
  uint64_t storeEpoch = 0;
  std::vector<OwnershipRecord> live;        // oldest admission first
  std::vector<OwnershipRecord> tombstones;  // oldest terminal first
  ResumeSafety resumeSafety;
  SectionMap sections;
};

struct JournalStats {
  size_t liveRecords = 0;  // queued + inflight
  size_t queued = 0;
  size_t inflight = 0;
  size_t liveBytes = 0;
  size_t tombstones = 0;
  size_t tombstoneBytes = 0;
};

// The encoded pieces of one state, cheap to take under a lock (shared, immutable record
// bytes) and assembled into file bytes outside it.
struct Snapshot {
  FileHeader header;
  std::string resumeSafetyJson;
  Piece sections;
  std::vector<Piece> live;
  std::vector<Piece> tombstones;

  std::string encode() const;
  // The file as ranges into this snapshot's pieces (valid while the snapshot lives).
  FileImage image() const;
};

class JournalState {
 public:
  explicit JournalState(Limits limits = {});

  // Builds a state from decoded file contents, checking every invariant above (kDataLoss,
  // reason `journal-corrupt`, on any violation; nothing is repaired silently).
  static Result<JournalState> fromDecoded(DecodedFile decoded, Limits limits = {});
  // decodeFile() + fromDecoded().
  static Result<JournalState> decode(std::string_view bytes, Limits limits = {});

  // Applies every operation of `txn`, or none. `nowMs` stamps changed records.
  Result<TransactionResult> apply(const Transaction& txn, int64_t nowMs);

  // A new store attachment (an open): advances the epoch and turns every
  // inflight(dispatching) into inflight(outcome_unknown) with a fresh token.
  void attach(int64_t nowMs);

  // Counts one attempt for a live owner (memory only; no token change, nothing persisted).
  Result<uint32_t> noteAttempt(std::string_view id, const OwnerToken& expected);

  const OwnershipRecord* find(std::string_view id) const;
  // The record (live or tombstone) whose runtime identity carries `receipt`, if any.
  const OwnershipRecord* findByReceipt(std::string_view receipt) const;
  RestartView view() const;
  // The live records `keep` accepts (all when it is empty), oldest admission first: what a
  // caller that needs some live owners copies instead of the whole view.
  std::vector<OwnershipRecord> live(
      const std::function<bool(const OwnershipRecord&)>& keep = {}) const;
  JournalStats stats() const { return stats_; }
  const FileHeader& header() const { return header_; }
  const ResumeSafety& resumeSafety() const { return resume_; }
  const SectionMap& sections() const { return sections_; }
  const Limits& limits() const { return limits_; }

  Snapshot snapshot() const;
  std::string encode() const { return snapshot().encode(); }

  // Re-derives every invariant from scratch (tests, SHOAL_PARANOID builds).
  Status checkInvariants() const;

 private:
  struct Entry {
    OwnershipRecord record;
    RecordBytes bytes;       // canonical encoding of `record`
    uint32_t crc = 0;        // CRC-32C of `bytes`
    RecordBytes bodyMember;  // live: encodeBodyMember(record.body), kept across transitions
  };
  // A place in admission or terminal order, with the record's bytes (a snapshot reads the
  // order alone).
  struct Slot {
    std::string id;
    Piece piece;
  };
  // One undo step: the prior value of one record, section, or resume safety.
  struct Undo {
    enum class Kind { kRecord, kSection, kResume } kind;
    std::string key;
    std::optional<Entry> entry;
    std::optional<Section> section;
    ResumeSafety resume;
  };
  struct Txn;  // apply() context: undo log + "now"

  Status applyOne(const Operation& op, Txn& txn, OperationResult& out);
  Status admit(const Admit& op, Txn& txn, OperationResult& out);
  Status beginInflight(const BeginInflight& op, Txn& txn, OperationResult& out);
  Status markOutcomeUnknown(const MarkOutcomeUnknown& op, Txn& txn, OperationResult& out);
  Status requeue(const Requeue& op, Txn& txn, OperationResult& out);
  Status markSurfaced(const MarkSurfaced& op, Txn& txn, OperationResult& out);
  Status markFailed(const MarkFailed& op, Txn& txn, OperationResult& out);
  Status removeLive(const RemoveLive& op, Txn& txn, OperationResult& out);
  Status setSection(const SetSection& op, Txn& txn, OperationResult& out);
  Status setResumeSafety(const SetResumeSafety& op, Txn& txn, OperationResult& out);

  // Finds a live owner and checks the caller's token: kNotFound / terminal-is-final / stale.
  Result<const Entry*> liveOwner(std::string_view id, const OwnerToken& expected) const;
  // A receipt correlates one MessageID only: kAlreadyExists (`receipt-collision`) otherwise.
  Status checkReceipt(const std::string& id, const std::optional<RuntimeIdentity>& runtime) const;
  // Replaces a live record by `next` (same id), checking caps (never reclaims).
  Status rewriteLive(Txn& txn, OwnershipRecord next);
  // Turns a live record into a tombstone (drops body and wake), then prunes tombstones.
  void terminalize(Txn& txn, const std::string& id, OwnerState outcome, std::string reason);
  void pruneTombstones(Txn& txn);
  void markUnsafe(Txn& txn);
  OwnerToken nextToken() { return {header_.storeEpoch, header_.nextGeneration++}; }

  void saveRecord(Txn& txn, const std::string& id);
  void insert(Entry entry);
  void erase(const std::string& id);
  void rollback(Txn& txn);
  // Encodes `record`; reuses `previous`'s body member when it is live with the same body.
  static Entry makeEntry(OwnershipRecord record, const Entry* previous = nullptr);

  Limits limits_;
  FileHeader header_;
  ResumeSafety resume_;
  SectionMap sections_;
  size_t sectionsBytes_ = 0;
  Piece sectionsJson_;  // the canonical "sections" object
  std::unordered_map<std::string, Entry> records_;
  std::map<uint64_t, Slot> liveOrder_;  // seq → record
  std::map<uint64_t, Slot> tombOrder_;  // terminalSeq → record
  // runtime.receipt → id, for every record that holds one (a lookup per correlated operation).
  std::unordered_multimap<std::string, std::string> byReceipt_;
  JournalStats stats_;
};

}  // namespace shoal::journal
