#include <algorithm>

#include <fmt/format.h>

#include "base/ids.h"
#include "base/log.h"
#include "daemon/admission_refusal.h"
#include "daemon/seat/seat_impl.h"
#include "journal/reasons.h"
#include "wire/subject.h"

namespace shoal::daemon {
namespace {

// The local inbox's class of a queued record (local_inbox.h). Its `wake` was set from the subject
// the delivery arrived on, so a mention — a channel subject — is channel traffic here.
InboxClass inboxClassOf(std::string_view wake) {
  if (wake == kPullOnlyWake) return InboxClass::kPullOnly;
  if (wake == kAmbientWake || wake == kMentionWake) return InboxClass::kChannel;
  return InboxClass::kDirected;  // dm, anycast; an unknown class is kept, never evicted
}

}  // namespace

bool Seat::Impl::isFresh(const mesh::Delivery& d) {
  if (d.historical) return false;
  switch (d.kind) {
    case wire::DeliveryKind::kDm:
      return dmBacklog_.isFresh(d.streamSeq);
    case wire::DeliveryKind::kAnycast:
      return taskBacklog_.isFresh(d.streamSeq);
    case wire::DeliveryKind::kChannel:
      // A durable channel copy is backlog by construction.
      return !d.durable && isMention(d);
  }
  return false;
}

mesh::HandlerVerdict Seat::Impl::admit(const mesh::Delivery& d) {
  // Every delivery counts toward the backlog mark, in arrival order (backlog_mark.h).
  return admitOne(d, isFresh(d));
}

std::vector<mesh::HandlerVerdict> Seat::Impl::admitBatch(const std::vector<mesh::Delivery>& ds) {
  std::vector<mesh::HandlerVerdict> verdicts(ds.size(), mesh::HandlerVerdict::kRetryLater);
  std::vector<std::pair<size_t, bool>> run;  // (index, fresh): admitted in one transaction
  for (size_t i = 0; i < ds.size(); ++i) {
    const bool fresh = isFresh(ds[i]);  // in arrival order, once each
    if (batchable(ds[i], run.size())) {
      run.emplace_back(i, fresh);
      continue;
    }
    admitTogether(ds, run, verdicts);
    run.clear();
    verdicts[i] = admitOne(ds[i], fresh);
  }
  admitTogether(ds, run, verdicts);
  return verdicts;
}

bool Seat::Impl::batchable(const mesh::Delivery& d, size_t ahead) {
  // Only the plain case — a directed copy with room for it in the local inbox — to which no rule
  // of admitOne() applies beyond the Admit itself. Anything else goes one at a time.
  if (d.kind == wire::DeliveryKind::kChannel || d.historical) return false;
  {
    MutexLock lock(admitMu_);
    if (inboxRefusals_.count(ownershipId(d)) > 0) return false;
    if (d.kind == wire::DeliveryKind::kDm && admittedDms_.contains(d.streamSeq)) return false;
  }
  return journal_->stats().queued + ahead < std::max<size_t>(options_.inboxCapacity, 1);
}

void Seat::Impl::admitTogether(const std::vector<mesh::Delivery>& ds,
                               const std::vector<std::pair<size_t, bool>>& run,
                               std::vector<mesh::HandlerVerdict>& verdicts) {
  if (run.size() == 1) verdicts[run[0].first] = admitOne(ds[run[0].first], run[0].second);
  if (run.size() <= 1) return;
  journal::Transaction txn;
  std::vector<uint64_t> dmSeqs;
  std::optional<DirectLane::Claim> direct;  // the first of the run, when the lane is open
  for (const auto& [i, fresh] : run) {
    const mesh::Delivery& d = ds[i];
    journal::Admit op;
    op.id = ownershipId(d);
    op.target = d.message.from.id;
    op.wake = std::string(wire::deliveryKindName(d.kind));
    op.body = encodeStoredDelivery(d);
    if (txn.ops.empty()) {
      direct = claimLane(d, op);
    } else {
      lane_.close();
    }
    txn.add(std::move(op));
    if (d.durable && d.kind == wire::DeliveryKind::kDm && d.streamSeq > 0)
      dmSeqs.push_back(d.streamSeq);
  }
  if (!dmSeqs.empty()) {
    MutexLock lock(admitMu_);
    AdmittedSeqs next = admittedDms_;
    for (uint64_t seq : dmSeqs)
      next.insert(seq);
    txn.add(journal::SetSection{std::string(kDmAdmittedSection), next.toJson(), std::nullopt});
  }
  auto committed = journal_->commit(std::move(txn));
  if (!committed.isOk()) {
    if (direct) lane_.release(direct->id);
    // One at a time, each meets its own refusal (a race, an oversized body, a full disk).
    for (const auto& [i, fresh] : run)
      verdicts[i] = admitOne(ds[i], fresh);
    return;
  }
  {
    MutexLock lock(admitMu_);
    for (uint64_t seq : dmSeqs)
      admittedDms_.insert(seq);
  }
  for (size_t k = 0; k < run.size(); ++k) {
    const auto& [i, fresh] = run[k];
    tookOwnership(ownershipId(ds[i]), committed->results[k], fresh, false,
                  k == 0 ? std::move(direct) : std::nullopt);
    verdicts[i] = mesh::HandlerVerdict::kAccepted;
  }
}

// The direct lane (direct_lane.h): a live DM admitted while the generation is idle becomes
// inflight(dispatching) in its admission, for the handoff the claim names; anything else is
// queued and closes the lane until the gate has seen it.
std::optional<DirectLane::Claim> Seat::Impl::claimLane(const mesh::Delivery& d,
                                                       journal::Admit& op) {
  if (d.kind != wire::DeliveryKind::kDm || d.historical) {
    lane_.close();
    return std::nullopt;
  }
  auto handoffId = newUuidV7(Clock::real());
  if (!handoffId.isOk()) return std::nullopt;
  auto claim = lane_.claim(op.id, *handoffId);
  if (!claim) return std::nullopt;
  op.dispatching = true;
  op.runtime.receipt = claim->handoffId + "/0";
  op.runtime.sessionId = claim->sessionId;
  op.reason = claim->reason;
  return claim;
}

void Seat::Impl::tookOwnership(const std::string& id, const journal::OperationResult& admitted,
                               bool fresh, bool promoted, std::optional<DirectLane::Claim> direct) {
  // Capacity admission may have ended the oldest live owners (seed 004 §3.3): their senders
  // hear it like any other failure.
  for (const auto& r : admitted.reclaimed) {
    count(&SeatCounters::failed);
    log::warn("seat {}: the journal is full; {} was ended to admit {}",
              profile_.principal.dotForm(), r.id, id);
    (void)wake_->failed(r.id, r.target, "ownership_backlog_reclaimed: the seat's backlog was full",
                        wallMs());
  }
  if (admitted.disposition != journal::AdmitDisposition::kAdmitted) {
    if (direct) lane_.release(direct->id);  // a copy the journal already had: nothing new
    return;
  }
  if (!promoted) count(&SeatCounters::admitted);  // a promotion is the same message
  GateEvent e;
  e.kind = GateEvent::Kind::kAdmitted;
  e.id = id;
  e.fresh = fresh;
  e.direct = std::move(direct);
  post(std::move(e));
}

mesh::HandlerVerdict Seat::Impl::admitOne(const mesh::Delivery& d, bool fresh) {
  journal::Admit op;
  op.id = ownershipId(d);
  op.target = d.message.from.id;
  op.wake = std::string(wire::deliveryKindName(d.kind));
  // Attention (shoal_channel_mode): a muted channel's posts are dropped on receipt, a quiet
  // one's wait for an inbox page, and so does historical ambient traffic (seed 000 "Replay on
  // join"). A post that @mentions the seat is addressed to it: none of these.
  if (d.kind == wire::DeliveryKind::kChannel && isMention(d)) {
    op.wake = std::string(kMentionWake);
  } else if (d.kind == wire::DeliveryKind::kChannel) {
    const std::string mode = channelMode(d.message.routing.target);
    if (mode == "muted") {
      log::debug("seat {}: #{} is muted; dropped {}", profile_.principal.dotForm(),
                 d.message.routing.target, op.id);
      return mesh::HandlerVerdict::kAccepted;
    }
    if (mode == "quiet" || d.historical) op.wake = std::string(kPullOnlyWake);
  }
  const std::string id = op.id;
  // Copies the full local inbox refused in this daemon run never reached the journal: they do
  // not make this one a possible repeat (`numDelivered` counts them).
  uint32_t refused = 0;
  {
    MutexLock lock(admitMu_);
    refused = inboxRefusals_.count(id);
  }
  if (refused > 0 && d.numDelivered > 1) {
    mesh::Delivery unseen = d;
    unseen.numDelivered = d.numDelivered > refused ? d.numDelivered - refused : 1;
    op.body = encodeStoredDelivery(unseen);
  } else {
    op.body = encodeStoredDelivery(d);
  }
  // A redelivered DM the journal no longer knows, whose sequence the seat admitted before (its
  // tombstone pruned while the broker waited out the ack of a daemon that died between
  // admission and ack), is acked and never surfaced a second time (admitted_seqs.h).
  const bool dmCopy = d.durable && d.kind == wire::DeliveryKind::kDm && d.streamSeq > 0;
  {
    MutexLock lock(admitMu_);
    if (dmCopy && admittedDms_.contains(d.streamSeq) && !journal_->find(id)) {
      log::warn(
          "seat {}: DM {} (seq {}) redelivered after its journal record was pruned; "
          "acked, not surfaced again",
          profile_.principal.dotForm(), id, d.streamSeq);
      return mesh::HandlerVerdict::kAccepted;
    }
  }
  const InboxClass inboxClass = inboxClassOf(op.wake);
  std::optional<DirectLane::Claim> direct;
  const TimePoint roomDeadline = Clock_::now() + kRoomWait;
  for (int attempt = 1;; ++attempt) {
    // A post the rejoin's replay took in as historical (pull-only) before its own copy came: it
    // was made while the seat was away, not before it joined, so the copy replaces it.
    const std::optional<journal::OwnerToken> promoted = replacedHistorical(d, op.wake, id);
    // The local inbox (local_inbox.h): a full one makes room by ending queued channel posts in
    // the same transaction that admits this one, or turns this one away.
    std::vector<journal::OwnershipRecord> victims;
    const InboxVerdict verdict = makeRoom(id, inboxClass, victims);
    if (verdict == InboxVerdict::kRefuseArrival && waitForRoom(roomDeadline)) continue;
    if (verdict != InboxVerdict::kAdmit) {
      if (direct) lane_.release(direct->id);
      return turnAway(d, id, verdict, fresh);
    }
    if (!direct) direct = claimLane(d, op);
    const std::string evictedReason = fmt::format(
        "{}: the seat's local inbox was full ({} queued); a newer message took its place",
        kInboxEvictedReason, std::max<size_t>(options_.inboxCapacity, 1));
    journal::Transaction txn;
    for (const auto& v : victims)
      txn.add(journal::MarkFailed{v.id, v.token, evictedReason});
    if (promoted) txn.add(journal::RemoveLive{id, *promoted});
    const size_t admitAt = txn.ops.size();
    txn.add(op);  // a copy: another attempt needs it again
    std::optional<std::string> admittedJson;
    {
      MutexLock lock(admitMu_);
      if (dmCopy && !admittedDms_.contains(d.streamSeq)) {
        AdmittedSeqs next = admittedDms_;
        next.insert(d.streamSeq);
        admittedJson = next.toJson();
      }
    }
    if (admittedJson) {
      txn.add(journal::SetSection{std::string(kDmAdmittedSection), *admittedJson, std::nullopt});
    }
    auto committed = journal_->commit(std::move(txn));
    if (!committed.isOk() && (!victims.empty() || promoted) &&
        committed.status().code() == StatusCode::kAborted && attempt < kInboxAttempts) {
      continue;  // a victim (or the historical copy) left the queue since it was chosen
    }
    if (!committed.isOk()) {
      if (direct) lane_.release(direct->id);
      return refusedByJournal(d, id, committed.status());
    }
    {
      MutexLock lock(admitMu_);
      if (admittedJson) admittedDms_.insert(d.streamSeq);
      inboxRefusals_.forget(id);
    }
    if (!victims.empty()) evicted(victims, id, evictedReason);
    tookOwnership(id, committed->results[admitAt], fresh, promoted.has_value(), std::move(direct));
    return mesh::HandlerVerdict::kAccepted;
  }
}

std::optional<journal::OwnerToken> Seat::Impl::replacedHistorical(const mesh::Delivery& d,
                                                                  std::string_view wake,
                                                                  const std::string& id) const {
  if (d.kind != wire::DeliveryKind::kChannel || d.historical || wake == kPullOnlyWake)
    return std::nullopt;
  auto record = journal_->find(id);
  if (!record || record->state != journal::OwnerState::kQueued || record->wake != kPullOnlyWake)
    return std::nullopt;
  auto stored = decodeStoredDelivery(record->body);
  if (!stored.isOk() || !stored->historical) return std::nullopt;  // quiet, not historical
  return record->token;
}

mesh::HandlerVerdict Seat::Impl::refusedByJournal(const mesh::Delivery& d, const std::string& id,
                                                  const Status& why) {
  const RefusalKind kind = classifyAdmissionRefusal(why);
  if (auto held = refusalLog_.admit(why.reason())) {
    log::warn("seat {}: could not take ownership of {} from {} ({}): {}{}",
              profile_.principal.dotForm(), id, d.message.from.id, refusalKindName(kind),
              why.toString(), log::heldBackSuffix(*held));
  }
  if (kind == RefusalKind::kTransient) {
    if (why.reason() == journal::reason::kPoisoned || !journal_->poisonStatus().isOk()) {
      journalPoisoned(why);
    } else if (why.code() != StatusCode::kAborted) {
      // A race lost every time is no journal trouble worth a note.
      note("journal write failed: " + why.toString());
    }
    return mesh::HandlerVerdict::kRetryLater;  // nak'ed with backoff: the broker redelivers it
  }
  // It can never be admitted: ended at the broker, and its sender hears why.
  count(&SeatCounters::failed);
  if (d.kind != wire::DeliveryKind::kChannel) {
    (void)wake_->failed(d.message.id, d.message.from.id,
                        fmt::format("{}: {}", why.reason(), why.message()), wallMs());
  }
  return mesh::HandlerVerdict::kRejected;
}

void Seat::Impl::refusedByParser(const mesh::RefusedDelivery& r) {
  count(&SeatCounters::failed);
  // A refused delivery still takes its place in the backlog count (backlog_mark.h).
  if (auto parsed = wire::parseSubject(r.subject); parsed.isOk()) {
    if (parsed->kind == wire::SubjectKind::kInst) (void)dmBacklog_.isFresh(r.streamSeq);
    if (parsed->kind == wire::SubjectKind::kSvc) (void)taskBacklog_.isFresh(r.streamSeq);
  }
  if (!r.sender) return;
  // A message without a usable id is named by its stream position (the receipt's `id` cannot be
  // the sender's, which is missing or unusable; `seq:` ids are never minted by a sender).
  const std::string id = r.messageId ? *r.messageId : "seq:" + std::to_string(r.streamSeq);
  (void)wake_->failed(id, r.sender->dotForm(),
                      fmt::format("{}: {}", r.why.reason(), r.why.message()), wallMs());
}

bool Seat::Impl::waitForRoom(TimePoint deadline) {
  if (roomStalled_.load()) return false;
  const size_t capacity = std::max<size_t>(options_.inboxCapacity, 1);
  MutexLock lock(roomMu_);
  // Slices: a close is noticed, and a notification that raced the check costs one slice.
  while (journal_->stats().queued >= capacity) {
    const TimePoint now = Clock_::now();
    if (closing_.load()) return false;
    if (now >= deadline) {
      roomStalled_.store(true);
      return false;
    }
    (void)roomCv_.waitUntil(roomMu_, std::min(deadline, now + milliseconds(20)));
  }
  return true;
}

void Seat::Impl::roomMade() {
  roomStalled_.store(false);
  MutexLock lock(roomMu_);
  roomCv_.notifyAll();
}

InboxVerdict Seat::Impl::makeRoom(const std::string& id, InboxClass c,
                                  std::vector<journal::OwnershipRecord>& victims) {
  const size_t capacity = std::max<size_t>(options_.inboxCapacity, 1);
  // Fewer queued records than the capacity leave room, without copying the journal; an id it
  // knows already is deduplicated by the Admit.
  if (journal_->stats().queued < capacity || journal_->find(id)) return InboxVerdict::kAdmit;
  std::vector<journal::OwnershipRecord> live =
      journal_->live([](const auto& r) { return r.state == journal::OwnerState::kQueued; });
  std::vector<InboxEntry> queued;
  for (const auto& r : live)
    queued.push_back(InboxEntry{r.id, inboxClassOf(r.wake), r.seq});
  InboxChoice choice = chooseInboxVictims(queued, c, capacity);
  for (const auto& victim : choice.evict) {
    auto it = std::find_if(live.begin(), live.end(),
                           [&](const journal::OwnershipRecord& r) { return r.id == victim; });
    if (it != live.end()) victims.push_back(std::move(*it));
  }
  return choice.verdict;
}

mesh::HandlerVerdict Seat::Impl::turnAway(const mesh::Delivery& d, const std::string& id,
                                          InboxVerdict verdict, bool fresh) {
  const std::string self = profile_.principal.dotForm();
  const size_t capacity = std::max<size_t>(options_.inboxCapacity, 1);
  if (verdict == InboxVerdict::kRefuseArrival) {
    // Everything queued is directed and already acked: none of it is dropped. This one waits,
    // unacknowledged, at the broker, which redelivers it until the session drains the inbox.
    uint32_t times = 0;
    {
      MutexLock lock(admitMu_);
      times = inboxRefusals_.note(id);
    }
    count(&SeatCounters::inboxRefused);
    if (times == 1) {
      log::warn(
          "seat {}: the local inbox is full of directed messages ({} queued); {} {} from {} "
          "is left unacknowledged for the broker to redeliver",
          self, capacity, wire::deliveryKindName(d.kind), id, d.message.from.id);
    } else {
      log::debug("seat {}: {} refused again by the full local inbox ({} times)", self, id, times);
    }
    // A sleeping seat whose inbox is full of backlog would never wake (backlog never starts
    // it): a fresh directed message waiting at the broker starts the runtime all the same, so
    // the backlog drains and the message lands.
    if (fresh) {
      GateEvent e;
      e.kind = GateEvent::Kind::kAdmitted;
      e.id = id;
      e.fresh = true;
      e.waiting = true;
      post(std::move(e));
    }
    return mesh::HandlerVerdict::kRetryLater;
  }
  // kEvictArrival: a channel post ranking below everything queued.
  const std::string channel = d.message.routing.target;
  if (!d.durable) {
    // A live (or historical) copy has nothing to redeliver it: it is dropped. It is reported
    // as not taken, not as accepted, so the endpoint does not remember its id as seen: a
    // durable copy of the same post (the delivery plane's backstop) then meets these rules
    // itself instead of being acked as a duplicate.
    count(&SeatCounters::inboxDropped);
    log::info("seat {}: the local inbox is full ({} queued); dropped {} in #{} (a live copy)", self,
              capacity, id, channel);
    return mesh::HandlerVerdict::kRetryLater;
  }
  uint32_t times = 0;
  bool drop = false;
  {
    MutexLock lock(admitMu_);
    times = inboxRefusals_.count(id);
    drop = times >= kMaxInboxEvictions;
    if (drop) {
      inboxRefusals_.forget(id);
    } else {
      times = inboxRefusals_.note(id);
    }
  }
  if (drop) {
    count(&SeatCounters::inboxDropped);
    log::warn(
        "seat {}: {} in #{} was turned away by the full local inbox {} times; acknowledged and "
        "dropped",
        self, id, channel, times);
    return mesh::HandlerVerdict::kAccepted;
  }
  count(&SeatCounters::inboxRefused);
  log::info(
      "seat {}: the local inbox is full ({} queued); {} in #{} is left unacknowledged for the "
      "broker to redeliver ({} of {})",
      self, capacity, id, channel, times, kMaxInboxEvictions);
  return mesh::HandlerVerdict::kRetryLater;
}

void Seat::Impl::evicted(const std::vector<journal::OwnershipRecord>& victims,
                         const std::string& forId, const std::string& reason) {
  count(&SeatCounters::inboxEvicted, victims.size());
  count(&SeatCounters::failed, victims.size());
  const int64_t now = wallMs();
  for (const auto& v : victims) {
    auto stored = decodeStoredDelivery(v.body);
    log::info("seat {}: the local inbox is full; ended {} ({}{}) to admit {}",
              profile_.principal.dotForm(), v.id, inboxClassName(inboxClassOf(v.wake)),
              stored.isOk() ? " in #" + stored->message.routing.target : std::string(), forId);
    if (wake_->failed(v.id, v.target, reason, now).isOk()) count(&SeatCounters::receipts);
  }
}

}  // namespace shoal::daemon
