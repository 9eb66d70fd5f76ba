#include "journal/ownership_journal.h"

#include <unistd.h>

#include "journal/reasons.h"

namespace shoal::journal {
namespace {

std::string parentOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string stripTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  return path;
}

// Makes every directory entry on the way to `workdir` durable. Directories createDirs made are
// synced strictly (their entries are new); pre-existing ancestors best-effort, which also
// covers a chain made by an earlier open that crashed before syncing it.
Status syncDirectoryChain(FileSystem& fs, const std::string& workdir,
                          const std::vector<std::string>& created) {
  for (const std::string& dir : created) {
    SHOAL_RETURN_IF_ERROR(fs.syncDir(parentOf(dir)).withContext("syncing new workdir chain"));
  }
  for (std::string dir = workdir; dir != "/" && dir != ".";) {
    std::string parent = parentOf(dir);
    bool fresh = false;
    for (const std::string& c : created)
      fresh = fresh || c == dir;
    if (!fresh) (void)fs.syncDir(parent);
    dir = parent;
  }
  return Status::ok();
}

}  // namespace

OwnershipJournal::OwnershipJournal(FileSystem& fs, const Clock& clock, std::string workdir,
                                   std::unique_ptr<FileLock> lock, JournalState state)
    : fs_(fs),
      clock_(clock),
      workdir_(std::move(workdir)),
      statePath_(workdir_ + "/" + std::string(kStateFileName)),
      tempPath_(workdir_ + "/" + std::string(kTempFileName)),
      limits_(state.limits()),
      lock_(std::move(lock)),
      state_(std::move(state)) {}

OwnershipJournal::~OwnershipJournal() = default;

Result<std::unique_ptr<OwnershipJournal>> OwnershipJournal::open(FileSystem& fs, const Clock& clock,
                                                                 std::string workdir,
                                                                 OpenOptions options) {
  workdir = stripTrailingSlashes(std::move(workdir));
  if (workdir.empty()) return invalidArgument(reason::kBadField, "journal workdir is empty");
  SHOAL_ASSIGN_OR_RETURN(std::vector<std::string> created, fs.createDirs(workdir));
  SHOAL_RETURN_IF_ERROR(syncDirectoryChain(fs, workdir, created));

  std::string holder =
      options.holder.empty() ? "pid " + std::to_string(::getpid()) : options.holder;
  std::string lockPath = workdir + "/" + std::string(kLockFileName);
  auto lock = fs.lockFile(lockPath, holder);
  if (!lock.isOk()) {
    if (lock.status().reason() != "lock-held") return lock.status();
    return failedPrecondition(reason::kLocked,
                              "another daemon owns the ownership journal in " + workdir + ": " +
                                  std::string(lock.status().message()) +
                                  ". Only one daemon may serve a seat workdir; stop the other one "
                                  "(`shoal down` or its own stop) before starting this one.");
  }

  std::string statePath = workdir + "/" + std::string(kStateFileName);
  std::string tempPath = workdir + "/" + std::string(kTempFileName);
  JournalState state(options.limits);
  auto bytes = fs.readFile(statePath);
  if (bytes.isOk()) {
    SHOAL_ASSIGN_OR_RETURN(state, JournalState::decode(*bytes, options.limits));
  } else if (bytes.status().code() != StatusCode::kNotFound) {
    return bytes.status().withContext("reading the ownership journal");
  }
  // A leftover temp file is an uncommitted write: never part of the state.
  (void)fs.remove(tempPath);

  state.attach(clock.wallMs());
  std::unique_ptr<OwnershipJournal> journal(
      new OwnershipJournal(fs, clock, workdir, std::move(*lock), std::move(state)));
  std::string initial;
  {
    MutexLock l(journal->mu_);
    initial = journal->state_.encode();
  }
  SHOAL_RETURN_IF_ERROR(
      journal->writeChain({initial}).withContext("attaching the ownership journal"));
  return journal;
}

Result<RestartView> OwnershipJournal::inspect(FileSystem& fs, const std::string& workdir) {
  std::string dir = stripTrailingSlashes(workdir);
  SHOAL_ASSIGN_OR_RETURN(std::string bytes, fs.readFile(dir + "/" + std::string(kStateFileName)));
  SHOAL_ASSIGN_OR_RETURN(JournalState state, JournalState::decode(bytes));
  return state.view();
}

Status OwnershipJournal::writeChain(const std::vector<std::string_view>& parts) {
  auto file = fs_.openForWrite(tempPath_, CreateMode::kTruncate);
  if (!file.isOk()) return file.status().withContext("journal commit: open temp");
  Status st = (*file)->appendAll(parts);
  if (st.isOk()) st = (*file)->sync();
  Status closed = (*file)->close();
  if (st.isOk()) st = closed;
  if (!st.isOk()) {
    (void)fs_.remove(tempPath_);  // best effort: free the space; the state file is untouched
    return st.withContext("journal commit: write temp");
  }
  SHOAL_RETURN_IF_ERROR(fs_.rename(tempPath_, statePath_).withContext("journal commit: rename"));
  return fs_.syncDir(workdir_).withContext("journal commit: fsync workdir");
}

Status OwnershipJournal::poisonedError() const {
  return failedPrecondition(reason::kPoisoned,
                            "the ownership journal " + statePath_ +
                                " is poisoned by an earlier failed commit (" + poison_.toString() +
                                "); every mutation is refused until the journal is read back from "
                                "disk, which needs room on it again (a seat reopens its journal "
                                "by itself)");
}

Result<OperationResult> OwnershipJournal::one(Operation op) {
  Transaction txn;
  txn.ops.push_back(std::move(op));
  SHOAL_ASSIGN_OR_RETURN(TransactionResult r, commit(std::move(txn)));
  return std::move(r.results.front());
}

Result<TransactionResult> OwnershipJournal::commit(Transaction txn) {
  MutexLock l(mu_);
  if (!poison_.isOk()) return poisonedError();
  auto result = state_.apply(txn, clock_.wallMs());
  bool changed = false;
  if (result.isOk()) {
    for (const auto& r : result->results)
      changed = changed || r.changed;
  }
  // A refusal or a no-op still waits for the state it observed to be durable.
  uint64_t ticket = changed ? ++appliedSeq_ : appliedSeq_;
  Status durable = waitDurable(ticket, attachment_);
  if (!durable.isOk()) return durable;
  return result;
}

Status OwnershipJournal::waitDurable(uint64_t ticket, uint64_t attachment) {
  for (;;) {
    if (attachment != attachment_) {
      return failedPrecondition(reason::kPoisoned,
                                "the ownership journal was recovered from disk while this "
                                "transaction waited; its outcome is unknown: re-read the record");
    }
    if (durableSeq_ >= ticket) return Status::ok();
    if (!poison_.isOk()) {
      if (ticket <= failedSeq_) return poison_;
      return poisonedError();
    }
    if (writerActive_) {
      cv_.wait(mu_);
      continue;
    }
    // Become the leader: write everything applied so far in one chain.
    writerActive_ = true;
    const uint64_t batch = appliedSeq_;
    const uint64_t batchTxns = appliedSeq_ - durableSeq_;
    Snapshot snapshot = state_.snapshot();
    mu_.unlock();
    FileImage image = snapshot.image();  // ranges into `snapshot`: no copy of the records
    Status st = writeChain(image.parts());
    mu_.lock();
    writerActive_ = false;
    commitStats_.batches++;
    if (st.isOk()) {
      durableSeq_ = batch;
      commitStats_.transactions += batchTxns;
      commitStats_.bytesWritten += image.size();
    } else {
      poison_ = st;
      failedSeq_ = batch;
    }
    cv_.notify_all();
  }
}

Result<uint32_t> OwnershipJournal::noteAttempt(std::string_view id, const OwnerToken& expected) {
  MutexLock l(mu_);
  if (!poison_.isOk()) return poisonedError();
  return state_.noteAttempt(id, expected);
}

std::optional<OwnershipRecord> OwnershipJournal::find(std::string_view id) const {
  MutexLock l(mu_);
  const OwnershipRecord* r = state_.find(id);
  if (r == nullptr) return std::nullopt;
  return *r;
}

std::optional<OwnershipRecord> OwnershipJournal::findByReceipt(std::string_view receipt) const {
  MutexLock l(mu_);
  const OwnershipRecord* r = state_.findByReceipt(receipt);
  if (r == nullptr) return std::nullopt;
  return *r;
}

RestartView OwnershipJournal::view() const {
  MutexLock l(mu_);
  return state_.view();
}

std::vector<OwnershipRecord> OwnershipJournal::live(
    const std::function<bool(const OwnershipRecord&)>& keep) const {
  MutexLock l(mu_);
  return state_.live(keep);
}

std::optional<Section> OwnershipJournal::section(std::string_view name) const {
  MutexLock l(mu_);
  const SectionMap& sections = state_.sections();
  auto it = sections.find(std::string(name));
  if (it == sections.end()) return std::nullopt;
  return it->second;
}

ResumeSafety OwnershipJournal::resumeSafety() const {
  MutexLock l(mu_);
  return state_.resumeSafety();
}

JournalStats OwnershipJournal::stats() const {
  MutexLock l(mu_);
  return state_.stats();
}

CommitStats OwnershipJournal::commitStats() const {
  MutexLock l(mu_);
  return commitStats_;
}

Status OwnershipJournal::poisonStatus() const {
  MutexLock l(mu_);
  return poison_;
}

Status OwnershipJournal::recover() {
  MutexLock l(mu_);
  while (writerActive_)
    cv_.wait(mu_);
  writerActive_ = true;  // keeps leaders out while the file is re-read and rewritten
  mu_.unlock();
  Status st;
  std::optional<JournalState> fresh;
  auto bytes = fs_.readFile(statePath_);
  if (!bytes.isOk()) {
    st = bytes.status().withContext("recovering the ownership journal");
  } else {
    auto decoded = JournalState::decode(*bytes, limits_);
    if (!decoded.isOk()) {
      st = decoded.status();
    } else {
      fresh.emplace(std::move(decoded).value());
      fresh->attach(clock_.wallMs());
      const std::string recovered = fresh->encode();
      st = writeChain({recovered}).withContext("recovering the ownership journal");
    }
  }
  mu_.lock();
  writerActive_ = false;
  if (st.isOk()) {
    state_ = std::move(*fresh);
    attachment_++;
    durableSeq_ = appliedSeq_;
    failedSeq_ = 0;
    poison_ = Status::ok();
  } else if (poison_.isOk()) {
    poison_ = st;
    failedSeq_ = appliedSeq_;
  }
  cv_.notify_all();
  return st;
}

}  // namespace shoal::journal
