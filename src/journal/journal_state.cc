#include "journal/journal_state.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <unordered_set>

#include "base/assert.h"
#include "journal/reasons.h"

namespace shoal::journal {

struct JournalState::Txn {
  int64_t nowMs = 0;
  FileHeader savedHeader;
  std::vector<Undo> undo;
  std::unordered_set<std::string> savedRecords;
  std::set<std::string, std::less<>> savedSections;
  bool savedResume = false;
};

namespace {

Status badField(const std::string& what) {
  return invalidArgument(reason::kBadField, what);
}

bool validId(std::string_view id) {
  return wire::isValidMessageId(id);
}

Status checkText(std::string_view name, std::string_view value, size_t max) {
  if (value.size() > max) {
    return badField(std::string(name) + " is " + std::to_string(value.size()) + " bytes; at most " +
                    std::to_string(max) + " are allowed");
  }
  if (!isValidUtf8(value)) return badField(std::string(name) + " is not valid UTF-8");
  return Status::ok();
}

Status checkRuntime(const RuntimeIdentity& r) {
  SHOAL_RETURN_IF_ERROR(checkText("runtime.threadId", r.threadId, kMaxRuntimeFieldBytes));
  SHOAL_RETURN_IF_ERROR(checkText("runtime.sessionId", r.sessionId, kMaxRuntimeFieldBytes));
  return checkText("runtime.receipt", r.receipt, kMaxRuntimeFieldBytes);
}

// Diagnostics must never make a transition fail: reasons are made valid UTF-8 and bounded.
std::string boundedReason(std::string_view in, std::string_view fallback) {
  if (in.empty()) in = fallback;
  std::string out;
  out.reserve(std::min(in.size(), kMaxReasonBytes));
  for (size_t i = 0; i < in.size();) {
    size_t len = 1;
    unsigned char c = static_cast<unsigned char>(in[i]);
    if (c >= 0xF0)
      len = 4;
    else if (c >= 0xE0)
      len = 3;
    else if (c >= 0xC0)
      len = 2;
    std::string_view ch = in.substr(i, len);
    bool ok = ch.size() == len && isValidUtf8(ch) && (len > 1 || c < 0x80);
    if (out.size() + (ok ? len : 1) > kMaxReasonBytes) break;
    if (ok)
      out += ch;
    else
      out += '?';
    i += ok ? len : 1;
  }
  return out;
}

bool validSectionName(std::string_view name) {
  if (name.empty() || name.size() > kMaxSectionNameBytes) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!alpha(name[0])) return false;
  for (char c : name) {
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '_' && c != '.' && c != '-') return false;
  }
  return true;
}

size_t sectionBytes(const std::string& name, const Section& s) {
  return name.size() + s.valueJson.size();
}

Status corrupt(const std::string& what) {
  return dataLoss(reason::kCorrupt,
                  ".daemon-state.json is corrupt: " + what + " (the file was left untouched)");
}

std::string tokenText(const OwnerToken& t) {
  return "epoch " + std::to_string(t.epoch) + " generation " + std::to_string(t.generation);
}

}  // namespace

JournalState::JournalState(Limits limits) : limits_(limits) {
  sectionsJson_ = makePiece(encodeSections(sections_));
}

JournalState::Entry JournalState::makeEntry(OwnershipRecord record, const Entry* previous) {
  RecordBytes body;
  if (isLive(record.state)) {
    if (previous != nullptr && previous->bodyMember && previous->record.body == record.body) {
      body = previous->bodyMember;
    } else {
      body = std::make_shared<const std::string>(encodeBodyMember(record.body));
    }
  }
  Piece piece =
      makePiece(encodeRecord(record, body ? std::string_view(*body) : std::string_view()));
  return Entry{std::move(record), std::move(piece.bytes), piece.crc, std::move(body)};
}

void JournalState::insert(Entry entry) {
  const OwnershipRecord& r = entry.record;
  size_t size = entry.bytes->size();
  if (isLive(r.state)) {
    liveOrder_.emplace(r.seq, Slot{r.id, Piece{entry.bytes, entry.crc}});
    stats_.liveRecords++;
    (r.state == OwnerState::kQueued ? stats_.queued : stats_.inflight)++;
    stats_.liveBytes += size;
  } else {
    tombOrder_.emplace(r.terminalSeq, Slot{r.id, Piece{entry.bytes, entry.crc}});
    stats_.tombstones++;
    stats_.tombstoneBytes += size;
  }
  if (!r.runtime.receipt.empty()) byReceipt_.emplace(r.runtime.receipt, r.id);
  std::string id = r.id;
  records_.insert_or_assign(std::move(id), std::move(entry));
}

void JournalState::erase(const std::string& id) {
  auto it = records_.find(id);
  if (it == records_.end()) return;
  const OwnershipRecord& r = it->second.record;
  size_t size = it->second.bytes->size();
  if (isLive(r.state)) {
    liveOrder_.erase(r.seq);
    stats_.liveRecords--;
    (r.state == OwnerState::kQueued ? stats_.queued : stats_.inflight)--;
    stats_.liveBytes -= size;
  } else {
    tombOrder_.erase(r.terminalSeq);
    stats_.tombstones--;
    stats_.tombstoneBytes -= size;
  }
  auto [from, to] = byReceipt_.equal_range(r.runtime.receipt);
  for (auto at = from; at != to; ++at) {
    if (at->second == id) {
      byReceipt_.erase(at);
      break;
    }
  }
  records_.erase(it);
}

void JournalState::saveRecord(Txn& txn, const std::string& id) {
  if (!txn.savedRecords.insert(id).second) return;
  Undo u{Undo::Kind::kRecord, id, std::nullopt, std::nullopt, {}};
  auto it = records_.find(id);
  if (it != records_.end()) u.entry = it->second;
  txn.undo.push_back(std::move(u));
}

void JournalState::rollback(Txn& txn) {
  for (auto it = txn.undo.rbegin(); it != txn.undo.rend(); ++it) {
    switch (it->kind) {
      case Undo::Kind::kRecord:
        erase(it->key);
        if (it->entry) insert(std::move(*it->entry));
        break;
      case Undo::Kind::kSection: {
        auto cur = sections_.find(it->key);
        if (cur != sections_.end()) {
          sectionsBytes_ -= sectionBytes(cur->first, cur->second);
          sections_.erase(cur);
        }
        if (it->section) {
          sectionsBytes_ += sectionBytes(it->key, *it->section);
          sections_.emplace(it->key, std::move(*it->section));
        }
        sectionsJson_ = makePiece(encodeSections(sections_));
        break;
      }
      case Undo::Kind::kResume:
        resume_ = it->resume;
        break;
    }
  }
  header_ = txn.savedHeader;
}

Result<TransactionResult> JournalState::apply(const Transaction& txn, int64_t nowMs) {
  Txn ctx;
  ctx.nowMs = nowMs;
  ctx.savedHeader = header_;
  TransactionResult result;
  result.results.resize(txn.ops.size());
  for (size_t i = 0; i < txn.ops.size(); ++i) {
    Status st = applyOne(txn.ops[i], ctx, result.results[i]);
    if (!st.isOk()) {
      rollback(ctx);
      return st;
    }
  }
  SHOAL_PARANOID(checkInvariants().isOk(), "journal invariant broken after a transaction");
  return result;
}

Status JournalState::applyOne(const Operation& op, Txn& txn, OperationResult& out) {
  return std::visit(
      [&](const auto& o) -> Status {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, Admit>)
          return admit(o, txn, out);
        else if constexpr (std::is_same_v<T, BeginInflight>)
          return beginInflight(o, txn, out);
        else if constexpr (std::is_same_v<T, MarkOutcomeUnknown>)
          return markOutcomeUnknown(o, txn, out);
        else if constexpr (std::is_same_v<T, Requeue>)
          return requeue(o, txn, out);
        else if constexpr (std::is_same_v<T, MarkSurfaced>)
          return markSurfaced(o, txn, out);
        else if constexpr (std::is_same_v<T, MarkFailed>)
          return markFailed(o, txn, out);
        else if constexpr (std::is_same_v<T, RemoveLive>)
          return removeLive(o, txn, out);
        else if constexpr (std::is_same_v<T, SetSection>)
          return setSection(o, txn, out);
        else
          return setResumeSafety(o, txn, out);
      },
      op);
}

void JournalState::markUnsafe(Txn& txn) {
  if (!resume_.safe) return;
  if (!txn.savedResume) {
    txn.undo.push_back(Undo{Undo::Kind::kResume, {}, std::nullopt, std::nullopt, resume_});
    txn.savedResume = true;
  }
  resume_.safe = false;
}

Status JournalState::admit(const Admit& op, Txn& txn, OperationResult& out) {
  if (!validId(op.id)) {
    return badField("MessageID must be 1.." + std::to_string(kMaxIdBytes) +
                    " printable ASCII bytes");
  }
  SHOAL_RETURN_IF_ERROR(checkText("target", op.target, kMaxTargetBytes));
  SHOAL_RETURN_IF_ERROR(checkText("wake", op.wake, kMaxWakeBytes));
  SHOAL_RETURN_IF_ERROR(checkRuntime(op.runtime));
  if (const OwnershipRecord* existing = find(op.id)) {
    out.record = *existing;
    out.disposition = isLive(existing->state) ? AdmitDisposition::kAlreadyLive
                                              : AdmitDisposition::kAlreadyTerminal;
    return Status::ok();
  }
  SHOAL_RETURN_IF_ERROR(checkReceipt(op.id, op.runtime));
  OwnershipRecord r;
  r.id = op.id;
  r.state = op.dispatching ? OwnerState::kDispatching : OwnerState::kQueued;
  r.body = op.body;
  r.target = op.target;
  r.wake = op.wake;
  r.runtime = op.runtime;
  if (op.dispatching && !op.reason.empty()) r.reason = boundedReason(op.reason, "");
  r.seq = header_.nextSeq++;
  r.token = nextToken();
  r.admittedAtMs = r.stateSinceMs = txn.nowMs;
  Entry entry = makeEntry(std::move(r));
  const size_t size = entry.bytes->size();
  if (size > limits_.maxLiveRecordBytes || size > limits_.maxLiveBytes ||
      size > limits_.maxTotalBytes) {
    return resourceExhausted(reason::kOversized,
                             "the ownership record for message " + op.id + " is " +
                                 std::to_string(size) + " bytes; one live record may be at most " +
                                 std::to_string(limits_.maxLiveRecordBytes) +
                                 " bytes, so it can never be admitted (shrink the message)");
  }
  // Capacity recovery, in the same transaction: oldest live owners become failed tombstones
  // until the new record fits; tombstones are pruned oldest-first.
  for (;;) {
    bool liveOver = stats_.liveRecords + 1 > limits_.maxLiveRecords ||
                    stats_.liveBytes + size > limits_.maxLiveBytes;
    size_t totalRecords = stats_.liveRecords + stats_.tombstones;
    size_t totalBytes = stats_.liveBytes + stats_.tombstoneBytes;
    bool totalOver =
        totalRecords + 1 > limits_.maxTotalRecords || totalBytes + size > limits_.maxTotalBytes;
    if (!liveOver && !totalOver) break;
    if (liveOver || tombOrder_.empty()) {
      SHOAL_CHECK(!liveOrder_.empty(), "capacity recovery found nothing to reclaim");
      std::string victim = liveOrder_.begin()->second.id;
      const OwnershipRecord& v = records_.at(victim).record;
      ReclaimedOwner info{v.id, v.state, {}, v.target, v.wake, v.runtime};
      terminalize(txn, victim, OwnerState::kFailed, std::string(reason::kBacklogReclaimed));
      if (const OwnershipRecord* t = find(victim)) info.token = t->token;
      out.reclaimed.push_back(std::move(info));
    } else {
      std::string oldest = tombOrder_.begin()->second.id;
      saveRecord(txn, oldest);
      erase(oldest);
    }
  }
  saveRecord(txn, entry.record.id);
  out.record = entry.record;
  insert(std::move(entry));
  markUnsafe(txn);
  out.disposition = AdmitDisposition::kAdmitted;
  out.changed = true;
  return Status::ok();
}

Result<const JournalState::Entry*> JournalState::liveOwner(std::string_view id,
                                                           const OwnerToken& expected) const {
  auto it = records_.find(std::string(id));
  if (it == records_.end()) {
    return notFound(reason::kUnknownOwner, "no ownership record for message " + std::string(id) +
                                               " (never admitted, or a pruned tombstone)");
  }
  const OwnershipRecord& r = it->second.record;
  if (isTerminal(r.state)) {
    return failedPrecondition(reason::kTerminalIsFinal,
                              "message " + r.id + " is already " +
                                  std::string(ownerStateName(r.state)) +
                                  "; terminal ownership never returns to live");
  }
  if (!(r.token == expected)) {
    return aborted(reason::kStaleGeneration,
                   "message " + r.id + " is at " + tokenText(r.token) + " but the write carried " +
                       tokenText(expected) + " (a newer mutation won; re-read and decide again)");
  }
  return &it->second;
}

Status JournalState::rewriteLive(Txn& txn, OwnershipRecord next) {
  saveRecord(txn, next.id);
  auto previous = records_.find(next.id);
  Entry entry =
      makeEntry(std::move(next), previous == records_.end() ? nullptr : &previous->second);
  if (entry.bytes->size() > limits_.maxLiveRecordBytes) {
    return resourceExhausted(reason::kOversized, "message " + entry.record.id + " would grow to " +
                                                     std::to_string(entry.bytes->size()) +
                                                     " bytes, over the per-record cap of " +
                                                     std::to_string(limits_.maxLiveRecordBytes));
  }
  // Existing-owner transitions never pick reclaim victims: a record that grows may leave the
  // aggregate caps exceeded until the next admission recovers capacity (journal-format.md).
  erase(entry.record.id);
  insert(std::move(entry));
  return Status::ok();
}

void JournalState::terminalize(Txn& txn, const std::string& id, OwnerState outcome,
                               std::string reasonText) {
  saveRecord(txn, id);
  OwnershipRecord r = records_.at(id).record;
  erase(id);
  r.state = outcome;
  r.body.clear();
  r.wake.clear();
  r.reason = boundedReason(reasonText, outcome == OwnerState::kSurfaced ? "surfaced" : "failed");
  r.token = nextToken();
  r.terminalSeq = header_.nextSeq++;
  r.stateSinceMs = txn.nowMs;
  r.attempts = 0;
  insert(makeEntry(std::move(r)));
  pruneTombstones(txn);
}

void JournalState::pruneTombstones(Txn& txn) {
  for (;;) {
    size_t totalRecords = stats_.liveRecords + stats_.tombstones;
    size_t totalBytes = stats_.liveBytes + stats_.tombstoneBytes;
    bool over = stats_.tombstones > limits_.maxTombstones ||
                stats_.tombstoneBytes > limits_.maxTombstoneBytes ||
                totalRecords > limits_.maxTotalRecords || totalBytes > limits_.maxTotalBytes;
    if (!over || tombOrder_.empty()) return;
    std::string oldest = tombOrder_.begin()->second.id;
    saveRecord(txn, oldest);
    erase(oldest);
  }
}

Status JournalState::beginInflight(const BeginInflight& op, Txn& txn, OperationResult& out) {
  if (op.runtime) SHOAL_RETURN_IF_ERROR(checkRuntime(*op.runtime));
  SHOAL_ASSIGN_OR_RETURN(const Entry* e, liveOwner(op.id, op.expected));
  if (e->record.state != OwnerState::kQueued) {
    return failedPrecondition(reason::kWrongState,
                              "message " + op.id + " is " +
                                  std::string(ownerStateName(e->record.state)) +
                                  "; only a queued owner can begin inflight");
  }
  SHOAL_RETURN_IF_ERROR(checkReceipt(op.id, op.runtime));
  OwnershipRecord next = e->record;
  next.state = op.phase == InflightPhase::kDispatching ? OwnerState::kDispatching
                                                       : OwnerState::kOutcomeUnknown;
  if (op.runtime) next.runtime = *op.runtime;
  next.reason = op.reason.empty() ? std::string() : boundedReason(op.reason, "");
  next.token = nextToken();
  next.stateSinceMs = txn.nowMs;
  next.attempts = 0;
  out.record = next;
  SHOAL_RETURN_IF_ERROR(rewriteLive(txn, std::move(next)));
  markUnsafe(txn);
  out.changed = true;
  return Status::ok();
}

Status JournalState::markOutcomeUnknown(const MarkOutcomeUnknown& op, Txn& txn,
                                        OperationResult& out) {
  if (op.runtime) SHOAL_RETURN_IF_ERROR(checkRuntime(*op.runtime));
  SHOAL_ASSIGN_OR_RETURN(const Entry* e, liveOwner(op.id, op.expected));
  if (!isInflight(e->record.state)) {
    return failedPrecondition(reason::kWrongState,
                              "message " + op.id + " is " +
                                  std::string(ownerStateName(e->record.state)) +
                                  "; only an inflight owner can be unknown");
  }
  SHOAL_RETURN_IF_ERROR(checkReceipt(op.id, op.runtime));
  OwnershipRecord next = e->record;
  if (next.state != OwnerState::kOutcomeUnknown) next.stateSinceMs = txn.nowMs;
  next.state = OwnerState::kOutcomeUnknown;
  if (op.runtime) next.runtime = *op.runtime;
  if (!op.reason.empty()) next.reason = boundedReason(op.reason, "");
  next.token = nextToken();
  out.record = next;
  SHOAL_RETURN_IF_ERROR(rewriteLive(txn, std::move(next)));
  markUnsafe(txn);
  out.changed = true;
  return Status::ok();
}

Status JournalState::requeue(const Requeue& op, Txn& txn, OperationResult& out) {
  SHOAL_ASSIGN_OR_RETURN(const Entry* e, liveOwner(op.id, op.expected));
  if (!isInflight(e->record.state)) {
    return failedPrecondition(reason::kWrongState,
                              "message " + op.id + " is " +
                                  std::string(ownerStateName(e->record.state)) +
                                  "; only an inflight owner can be requeued");
  }
  OwnershipRecord next = e->record;
  next.state = OwnerState::kQueued;
  next.reason = op.reason.empty() ? std::string() : boundedReason(op.reason, "");
  next.token = nextToken();
  next.stateSinceMs = txn.nowMs;
  out.record = next;
  SHOAL_RETURN_IF_ERROR(rewriteLive(txn, std::move(next)));
  markUnsafe(txn);
  out.changed = true;
  return Status::ok();
}

Status JournalState::markSurfaced(const MarkSurfaced& op, Txn& txn, OperationResult& out) {
  const OwnershipRecord* cur = find(op.id);
  if (cur == nullptr) {
    return notFound(reason::kUnknownOwner, "no ownership record for message " + op.id);
  }
  if (cur->state == OwnerState::kSurfaced) {
    out.record = *cur;  // idempotent: surfaced is the strongest state
    return Status::ok();
  }
  if (cur->state == OwnerState::kFailed) {
    // Late correlated evidence upgrades a failed tombstone; it never restores live ownership.
    saveRecord(txn, op.id);
    OwnershipRecord next = *cur;
    next.state = OwnerState::kSurfaced;
    next.reason = boundedReason(op.reason, "surfaced");
    next.token = nextToken();
    next.stateSinceMs = txn.nowMs;
    erase(op.id);
    out.record = next;
    insert(makeEntry(std::move(next)));
    pruneTombstones(txn);
    out.changed = true;
    return Status::ok();
  }
  if (op.expected) SHOAL_RETURN_IF_ERROR(liveOwner(op.id, *op.expected).status());
  terminalize(txn, op.id, OwnerState::kSurfaced, op.reason);
  if (const OwnershipRecord* r = find(op.id)) out.record = *r;
  out.changed = true;
  return Status::ok();
}

Status JournalState::markFailed(const MarkFailed& op, Txn& txn, OperationResult& out) {
  const OwnershipRecord* cur = find(op.id);
  if (cur == nullptr) {
    return notFound(reason::kUnknownOwner, "no ownership record for message " + op.id);
  }
  if (cur->state == OwnerState::kSurfaced) {
    return failedPrecondition(reason::kTerminalIsFinal,
                              "message " + op.id +
                                  " is terminal(surfaced); surfaced is never "
                                  "downgraded to failed");
  }
  if (cur->state == OwnerState::kFailed) {
    out.record = *cur;  // idempotent
    return Status::ok();
  }
  SHOAL_RETURN_IF_ERROR(liveOwner(op.id, op.expected).status());
  terminalize(txn, op.id, OwnerState::kFailed, op.reason);
  if (const OwnershipRecord* r = find(op.id)) out.record = *r;
  out.changed = true;
  return Status::ok();
}

Status JournalState::removeLive(const RemoveLive& op, Txn& txn, OperationResult& out) {
  SHOAL_RETURN_IF_ERROR(liveOwner(op.id, op.expected).status());
  saveRecord(txn, op.id);
  erase(op.id);
  out.changed = true;
  return Status::ok();
}

Status JournalState::setSection(const SetSection& op, Txn& txn, OperationResult& out) {
  if (!validSectionName(op.name)) {
    return badField("section name \"" + op.name + "\" must match [A-Za-z][A-Za-z0-9_.-]{0,63}");
  }
  SHOAL_ASSIGN_OR_RETURN(std::string canonical, canonicalJson(op.valueJson, kMaxSectionDepth));
  auto it = sections_.find(op.name);
  uint64_t current = it == sections_.end() ? 0 : it->second.revision;
  if (op.expectedRevision && *op.expectedRevision != current) {
    return aborted(reason::kStaleSection, "section " + op.name + " is at revision " +
                                              std::to_string(current) + ", the write expected " +
                                              std::to_string(*op.expectedRevision) +
                                              " (re-read the section and retry)");
  }
  Section next{current + 1, std::move(canonical)};
  size_t oldBytes = it == sections_.end() ? 0 : sectionBytes(it->first, it->second);
  size_t newBytes = sectionBytes(op.name, next);
  if (next.valueJson.size() > kMaxSectionBytes ||
      sectionsBytes_ - oldBytes + newBytes > kMaxSectionsBytes ||
      (it == sections_.end() && sections_.size() + 1 > kMaxSections)) {
    return resourceExhausted(reason::kSectionTooLarge,
                             "section " + op.name + " (" + std::to_string(next.valueJson.size()) +
                                 " bytes) exceeds the section bounds (256 KiB each, 1 MiB and " +
                                 "32 sections in all)");
  }
  if (txn.savedSections.insert(op.name).second) {
    Undo u{Undo::Kind::kSection, op.name, std::nullopt, std::nullopt, {}};
    if (it != sections_.end()) u.section = it->second;
    txn.undo.push_back(std::move(u));
  }
  sectionsBytes_ = sectionsBytes_ - oldBytes + newBytes;
  out.sectionRevision = next.revision;
  sections_.insert_or_assign(op.name, std::move(next));
  sectionsJson_ = makePiece(encodeSections(sections_));
  out.changed = true;
  return Status::ok();
}

Status JournalState::setResumeSafety(const SetResumeSafety& op, Txn& txn, OperationResult& out) {
  const ResumeSafety& next = op.next;
  auto key = [](const ResumeSafety& s) { return std::make_tuple(s.launchEpoch, s.version); };
  if (next == resume_) return Status::ok();
  if (key(next) <= key(resume_)) {
    return aborted(reason::kStaleResumeSafety,
                   "resume safety is at launch epoch " + std::to_string(resume_.launchEpoch) +
                       " version " + std::to_string(resume_.version) +
                       "; the write carried launch epoch " + std::to_string(next.launchEpoch) +
                       " version " + std::to_string(next.version) + " (a newer launch won)");
  }
  if (next.safe && stats_.liveRecords > 0) {
    return failedPrecondition(
        reason::kLiveOwnerPresent,
        "resume safety cannot become safe: " + std::to_string(stats_.liveRecords) +
            " live owner(s) are queued or inflight");
  }
  if (!txn.savedResume) {
    txn.undo.push_back(Undo{Undo::Kind::kResume, {}, std::nullopt, std::nullopt, resume_});
    txn.savedResume = true;
  }
  resume_ = next;
  out.changed = true;  // durable like every other change
  return Status::ok();
}

void JournalState::attach(int64_t nowMs) {
  header_.storeEpoch++;
  std::vector<std::string> dispatching;
  for (const auto& [seq, slot] : liveOrder_) {
    if (records_.at(slot.id).record.state == OwnerState::kDispatching)
      dispatching.push_back(slot.id);
  }
  for (const std::string& id : dispatching) {
    Entry previous = records_.at(id);
    OwnershipRecord r = previous.record;
    erase(id);
    r.state = OwnerState::kOutcomeUnknown;
    r.token = nextToken();
    r.stateSinceMs = nowMs;
    insert(makeEntry(std::move(r), &previous));
  }
}

Result<uint32_t> JournalState::noteAttempt(std::string_view id, const OwnerToken& expected) {
  SHOAL_RETURN_IF_ERROR(liveOwner(id, expected).status());
  return ++records_.find(std::string(id))->second.record.attempts;
}

Status JournalState::checkReceipt(const std::string& id,
                                  const std::optional<RuntimeIdentity>& runtime) const {
  if (!runtime || runtime->receipt.empty()) return Status::ok();
  const OwnershipRecord* holder = findByReceipt(runtime->receipt);
  if (holder == nullptr || holder->id == id) return Status::ok();
  return alreadyExists(reason::kReceiptCollision,
                       "receipt " + runtime->receipt + " already correlates message " + holder->id +
                           " (mint a new receipt; the body stays where it was)");
}

const OwnershipRecord* JournalState::findByReceipt(std::string_view receipt) const {
  if (receipt.empty()) return nullptr;
  auto it = byReceipt_.find(std::string(receipt));
  return it == byReceipt_.end() ? nullptr : &records_.at(it->second).record;
}

const OwnershipRecord* JournalState::find(std::string_view id) const {
  auto it = records_.find(std::string(id));
  return it == records_.end() ? nullptr : &it->second.record;
}

RestartView JournalState::view() const {
  RestartView v;
  v.storeEpoch = header_.storeEpoch;
  v.live.reserve(liveOrder_.size());
  for (const auto& [seq, slot] : liveOrder_)
    v.live.push_back(records_.at(slot.id).record);
  v.tombstones.reserve(tombOrder_.size());
  for (const auto& [seq, slot] : tombOrder_)
    v.tombstones.push_back(records_.at(slot.id).record);
  v.resumeSafety = resume_;
  v.sections = sections_;
  return v;
}

std::vector<OwnershipRecord> JournalState::live(
    const std::function<bool(const OwnershipRecord&)>& keep) const {
  std::vector<OwnershipRecord> out;
  for (const auto& [seq, slot] : liveOrder_) {
    const OwnershipRecord& r = records_.at(slot.id).record;
    if (!keep || keep(r)) out.push_back(r);
  }
  return out;
}

Snapshot JournalState::snapshot() const {
  Snapshot s;
  s.header = header_;
  s.resumeSafetyJson = encodeResumeSafety(resume_);
  s.sections = sectionsJson_;
  s.live.reserve(liveOrder_.size());
  for (const auto& [seq, slot] : liveOrder_)
    s.live.push_back(slot.piece);
  s.tombstones.reserve(tombOrder_.size());
  for (const auto& [seq, slot] : tombOrder_)
    s.tombstones.push_back(slot.piece);
  return s;
}

std::string Snapshot::encode() const {
  return encodeFile(header, resumeSafetyJson, sections, live, tombstones);
}

FileImage Snapshot::image() const {
  return encodeImage(header, resumeSafetyJson, sections, live, tombstones);
}

Result<JournalState> JournalState::decode(std::string_view bytes, Limits limits) {
  SHOAL_ASSIGN_OR_RETURN(DecodedFile decoded, decodeFile(bytes));
  return fromDecoded(std::move(decoded), limits);
}

Result<JournalState> JournalState::fromDecoded(DecodedFile d, Limits limits) {
  JournalState s(limits);
  s.header_ = d.header;
  s.resume_ = d.resumeSafety;
  if (d.header.nextGeneration == 0 || d.header.nextSeq == 0) return corrupt("zero counter");
  if (d.sections.size() > kMaxSections) return corrupt("too many sections");
  for (const auto& [name, section] : d.sections) {
    if (!validSectionName(name)) return corrupt("bad section name \"" + name + "\"");
    if (section.revision == 0) return corrupt("section " + name + " has revision 0");
    if (section.valueJson.size() > kMaxSectionBytes) return corrupt("section " + name + " too big");
    s.sectionsBytes_ += sectionBytes(name, section);
  }
  if (s.sectionsBytes_ > kMaxSectionsBytes) return corrupt("sections too big");
  s.sections_ = std::move(d.sections);
  s.sectionsJson_ = makePiece(encodeSections(s.sections_));

  std::unordered_set<uint64_t> seqs, generations;
  auto check = [&](const OwnershipRecord& r) -> Status {
    std::string where = "record \"" + r.id + "\": ";
    if (!validId(r.id)) return corrupt(where + "bad MessageID");
    if (s.records_.count(r.id) != 0) return corrupt(where + "MessageID appears twice");
    if (r.seq == 0 || r.seq >= d.header.nextSeq) return corrupt(where + "seq out of range");
    if (r.token.generation == 0 || r.token.generation >= d.header.nextGeneration) {
      return corrupt(where + "generation out of range");
    }
    if (r.token.epoch > d.header.storeEpoch) return corrupt(where + "epoch from the future");
    if (isTerminal(r.state) && (r.terminalSeq == 0 || r.terminalSeq >= d.header.nextSeq)) {
      return corrupt(where + "terminalSeq out of range");
    }
    if (!seqs.insert(r.seq).second) return corrupt(where + "seq reused");
    if (isTerminal(r.state) && !seqs.insert(r.terminalSeq).second) {
      return corrupt(where + "terminalSeq reused");
    }
    if (!generations.insert(r.token.generation).second) return corrupt(where + "generation reused");
    if (r.target.size() > kMaxTargetBytes || r.wake.size() > kMaxWakeBytes ||
        r.reason.size() > kMaxReasonBytes || r.runtime.threadId.size() > kMaxRuntimeFieldBytes ||
        r.runtime.sessionId.size() > kMaxRuntimeFieldBytes ||
        r.runtime.receipt.size() > kMaxRuntimeFieldBytes) {
      return corrupt(where + "a field is over its bound");
    }
    return Status::ok();
  };
  uint64_t lastSeq = 0;
  for (auto& r : d.live) {
    SHOAL_RETURN_IF_ERROR(check(r));
    if (r.seq <= lastSeq) return corrupt("live owners are not in admission order");
    lastSeq = r.seq;
    s.insert(makeEntry(std::move(r)));
  }
  uint64_t lastTerminal = 0;
  for (auto& r : d.tombstones) {
    SHOAL_RETURN_IF_ERROR(check(r));
    if (r.terminalSeq <= lastTerminal) return corrupt("tombstones are not in terminal order");
    lastTerminal = r.terminalSeq;
    s.insert(makeEntry(std::move(r)));
  }
  return s;
}

Status JournalState::checkInvariants() const {
  JournalStats recount;
  std::unordered_set<uint64_t> generations;
  size_t receipts = 0;
  for (const auto& [id, e] : records_) {
    const OwnershipRecord& r = e.record;
    if (id != r.id) return internalError("journal-invariant", "record keyed under another id");
    if (!r.runtime.receipt.empty()) {
      ++receipts;
      auto [from, to] = byReceipt_.equal_range(r.runtime.receipt);
      while (from != to && from->second != r.id)
        ++from;
      if (from == to) return internalError("journal-invariant", "receipt index misses " + r.id);
    }
    if (*e.bytes != encodeRecord(r) || e.crc != crc32c(*e.bytes))
      return internalError("journal-invariant", "stale bytes " + id);
    if (isLive(r.state) != static_cast<bool>(e.bodyMember) ||
        (e.bodyMember && *e.bodyMember != encodeBodyMember(r.body))) {
      return internalError("journal-invariant", "stale body bytes " + id);
    }
    if (!generations.insert(r.token.generation).second) {
      return internalError("journal-invariant", "generation reused by " + id);
    }
    if (r.token.generation >= header_.nextGeneration || r.seq >= header_.nextSeq ||
        r.token.epoch > header_.storeEpoch) {
      return internalError("journal-invariant", "counter ahead of header in " + id);
    }
    if (isLive(r.state)) {
      recount.liveRecords++;
      (r.state == OwnerState::kQueued ? recount.queued : recount.inflight)++;
      recount.liveBytes += e.bytes->size();
      auto it = liveOrder_.find(r.seq);
      if (it == liveOrder_.end() || it->second.id != id || it->second.piece.bytes != e.bytes) {
        return internalError("journal-invariant", "live order misses " + id);
      }
    } else {
      recount.tombstones++;
      recount.tombstoneBytes += e.bytes->size();
      if (!r.body.empty() || !r.wake.empty() || r.reason.empty()) {
        return internalError("journal-invariant", "tombstone holds live data: " + id);
      }
      auto it = tombOrder_.find(r.terminalSeq);
      if (it == tombOrder_.end() || it->second.id != id || it->second.piece.bytes != e.bytes) {
        return internalError("journal-invariant", "tombstone order misses " + id);
      }
    }
  }
  if (recount.liveRecords != liveOrder_.size() || recount.tombstones != tombOrder_.size() ||
      recount.liveRecords != stats_.liveRecords || recount.liveBytes != stats_.liveBytes ||
      recount.tombstones != stats_.tombstones || recount.tombstoneBytes != stats_.tombstoneBytes ||
      recount.queued != stats_.queued || recount.inflight != stats_.inflight) {
    return internalError("journal-invariant", "stats drifted from the records");
  }
  if (receipts != byReceipt_.size())
    return internalError("journal-invariant", "receipt index names a record that is gone");
  return Status::ok();
}

std::string_view ownerStateName(OwnerState s) {
  switch (s) {
    case OwnerState::kQueued:
      return "queued";
    case OwnerState::kDispatching:
      return "inflight(dispatching)";
    case OwnerState::kOutcomeUnknown:
      return "inflight(outcome_unknown)";
    case OwnerState::kSurfaced:
      return "terminal(surfaced)";
    case OwnerState::kFailed:
      return "terminal(failed)";
  }
  return "unknown";
}

}  // namespace shoal::journal
