// OwnershipJournal: the durable daemon ownership journal of one seat session workdir,
// `<workdir>/.daemon-state.json` (seed 004 §2.1, §3.2, §3.3; docs/journal-format.md).
//
// Every mutation is one locked Transaction (transaction.h) applied to the in-memory
// JournalState, then made durable by the commit chain: temp file in the workdir → write →
// fsync → close → rename over the state file → fsync the workdir. A caller's result is
// released only when the bytes holding its transaction are durable (or, for a refusal, when
// everything it observed is). Concurrent callers are group-committed: while one caller (the
// leader) runs the chain, others apply their transactions in memory and the next leader writes
// them all with one chain.
//
// Poisoning: if any step of the chain fails, the journal is poisoned. The callers of that
// batch get the I/O error (e.g. kResourceExhausted for a full disk); every later mutation gets
// kFailedPrecondition, reason `journal-poisoned`, until recover() (or a reopen) re-reads the
// file — old or new, whichever way the uncertain write landed — and commits it durably again.
//
// Open: creates the workdir if needed and fsyncs each new directory's parent (the
// directory-entry chain) before anything is admitted; takes an exclusive flock on
// `<workdir>/.daemon-state.lock` (a second opener, in this or another process, gets
// kFailedPrecondition, reason `journal-locked`, naming the holder); loads the file (a missing
// file is a fresh journal; a corrupt one is kDataLoss; an unknown version is
// kFailedPrecondition — neither is rewritten); then attaches: advances the store epoch, turns
// every inflight(dispatching) into inflight(outcome_unknown), and commits that durably.
//
// Durability: only transactions are synchronous. noteAttempt() is memory only.
//
// Thread safety: every method may be called from any thread concurrently.
// Lifetime: all calls must have returned before the journal is destroyed; destroying it
// releases the lock (unsynced nothing: every acknowledged transaction is already durable).
#pragma once

#include <condition_variable>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/mutex.h"
#include "base/result.h"
#include "journal/journal_state.h"
#include "journal/limits.h"
#include "journal/transaction.h"

namespace shoal::journal {

inline constexpr std::string_view kStateFileName = ".daemon-state.json";
inline constexpr std::string_view kTempFileName = ".daemon-state.json.tmp";
inline constexpr std::string_view kLockFileName = ".daemon-state.lock";

struct OpenOptions {
  // Recorded in the lock file, shown to a second opener. Empty: "pid <pid>".
  std::string holder;
  // The seed's caps. Tests shrink them; production never changes them.
  Limits limits;
};

struct CommitStats {
  uint64_t transactions = 0;  // state-changing transactions made durable
  uint64_t batches = 0;       // commit chains run (each one write + fsync + rename + dir fsync)
  uint64_t bytesWritten = 0;
};

class OwnershipJournal {
 public:
  static Result<std::unique_ptr<OwnershipJournal>> open(FileSystem& fs, const Clock& clock,
                                                        std::string workdir,
                                                        OpenOptions options = {});
  // Reads `<workdir>/.daemon-state.json` without locking, attaching or writing (status, CLI,
  // diagnostics). kNotFound if there is no file.
  static Result<RestartView> inspect(FileSystem& fs, const std::string& workdir);

  ~OwnershipJournal();
  OwnershipJournal(const OwnershipJournal&) = delete;
  OwnershipJournal& operator=(const OwnershipJournal&) = delete;

  // Applies `txn` atomically and returns once it is durable. Refusals change nothing.
  Result<TransactionResult> commit(Transaction txn) SHOAL_EXCLUDES(mu_);

  // One-operation transactions (transaction.h states each rule).
  Result<OperationResult> admit(Admit op) { return one(std::move(op)); }
  Result<OperationResult> beginInflight(BeginInflight op) { return one(std::move(op)); }
  Result<OperationResult> markOutcomeUnknown(MarkOutcomeUnknown op) { return one(std::move(op)); }
  Result<OperationResult> requeue(Requeue op) { return one(std::move(op)); }
  Result<OperationResult> markSurfaced(MarkSurfaced op) { return one(std::move(op)); }
  Result<OperationResult> markFailed(MarkFailed op) { return one(std::move(op)); }
  Result<OperationResult> removeLive(RemoveLive op) { return one(std::move(op)); }
  Result<OperationResult> setSection(SetSection op) { return one(std::move(op)); }
  Result<OperationResult> setResumeSafety(SetResumeSafety op) { return one(std::move(op)); }

  // Counts a retry/reconcile attempt of a live owner; memory only, returns the new count.
  Result<uint32_t> noteAttempt(std::string_view id, const OwnerToken& expected) SHOAL_EXCLUDES(mu_);

  // Reads of the in-memory state. They may include transactions whose commit has not returned
  // yet; decisions belong on commit results.
  std::optional<OwnershipRecord> find(std::string_view id) const SHOAL_EXCLUDES(mu_);
  std::optional<OwnershipRecord> findByReceipt(std::string_view receipt) const SHOAL_EXCLUDES(mu_);
  RestartView view() const SHOAL_EXCLUDES(mu_);
  // Parts of the view, without copying the rest: the live records `keep` accepts (it runs
  // under the journal's lock: keep it a pure test of the record), one section, resume safety.
  std::vector<OwnershipRecord> live(
      const std::function<bool(const OwnershipRecord&)>& keep = {}) const SHOAL_EXCLUDES(mu_);
  std::optional<Section> section(std::string_view name) const SHOAL_EXCLUDES(mu_);
  ResumeSafety resumeSafety() const SHOAL_EXCLUDES(mu_);
  JournalStats stats() const SHOAL_EXCLUDES(mu_);
  CommitStats commitStats() const SHOAL_EXCLUDES(mu_);

  // OK, or the error that poisoned the journal.
  Status poisonStatus() const SHOAL_EXCLUDES(mu_);
  // Re-reads the file, attaches again (new store epoch) and commits durably; clears the poison
  // on success. Transactions whose callers got errors may or may not be present afterwards.
  Status recover() SHOAL_EXCLUDES(mu_);

  const std::string& workdir() const { return workdir_; }
  const std::string& statePath() const { return statePath_; }

 private:
  OwnershipJournal(FileSystem& fs, const Clock& clock, std::string workdir,
                   std::unique_ptr<FileLock> lock, JournalState state);

  Result<OperationResult> one(Operation op);
  // Runs the commit chain for `bytes`. No lock held.
  // `parts`, in order, are the file's bytes.
  Status writeChain(const std::vector<std::string_view>& parts);
  // Blocks until everything applied up to `ticket` (within `attachment`) is durable.
  Status waitDurable(uint64_t ticket, uint64_t attachment) SHOAL_REQUIRES(mu_);
  Status poisonedError() const SHOAL_REQUIRES(mu_);

  // Constant after construction.
  FileSystem& fs_;
  const Clock& clock_;
  const std::string workdir_;
  const std::string statePath_;
  const std::string tempPath_;
  const Limits limits_;
  std::unique_ptr<FileLock> lock_;

  mutable Mutex mu_;
  std::condition_variable_any cv_;
  JournalState state_ SHOAL_GUARDED_BY(mu_);
  uint64_t appliedSeq_ SHOAL_GUARDED_BY(mu_) = 0;  // state-changing transactions applied
  uint64_t durableSeq_ SHOAL_GUARDED_BY(mu_) = 0;  // ... of which durable
  uint64_t failedSeq_ SHOAL_GUARDED_BY(mu_) = 0;   // last ticket of the batch that failed
  uint64_t attachment_ SHOAL_GUARDED_BY(mu_) = 0;  // bumped by recover(): older tickets lost
  bool writerActive_ SHOAL_GUARDED_BY(mu_) = false;
  Status poison_ SHOAL_GUARDED_BY(mu_);
  CommitStats commitStats_ SHOAL_GUARDED_BY(mu_);
};

}  // namespace shoal::journal
