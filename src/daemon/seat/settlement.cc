#include <algorithm>
#include <set>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include "base/ids.h"
#include "base/log.h"
#include "daemon/presentation.h"
#include "daemon/seat/seat_impl.h"
#include "wire/inbox_receipt.h"
#include "wire/seat_receipt.h"

namespace shoal::daemon {

void Seat::Impl::readFromStdin(ActiveHandoff& h, std::optional<size_t> bytesRead) {
  // Whole messages the bytes read cover are surfaced; the rest stay unread (and fail when the
  // generation ends: the program saw, at most, part of them).
  std::vector<Handed> read;
  std::vector<Handed> rest;
  std::vector<size_t> restEnds;
  for (size_t i = 0; i < h.owners.size(); ++i) {
    const size_t end = i < h.ends.size() ? h.ends[i] : SIZE_MAX;
    if (!bytesRead || end <= *bytesRead) {
      read.push_back(std::move(h.owners[i]));
    } else {
      rest.push_back(std::move(h.owners[i]));
      restEnds.push_back(end);
    }
  }
  if (!read.empty()) {
    settleSurfaced(std::move(read),
                   "stdin-read: the runtime read it from its stdin (handoff " + h.id + ")", h.id);
  }
  h.owners = std::move(rest);
  h.ends = std::move(restEnds);
}

void Seat::Impl::acknowledged(ActiveHandoff& h, const std::string& ownerId) {
  for (size_t i = 0; i < h.owners.size(); ++i) {
    if (h.owners[i].id != ownerId) continue;
    std::vector<Handed> one;
    one.push_back(std::move(h.owners[i]));
    h.owners.erase(h.owners.begin() + static_cast<std::ptrdiff_t>(i));
    if (i < h.ends.size()) h.ends.erase(h.ends.begin() + static_cast<std::ptrdiff_t>(i));
    settleSurfaced(
        std::move(one),
        "runtime-ack: the program acknowledged it on $SHOAL_ACK_FD (handoff " + h.id + ")", h.id);
    return;
  }
}

void Seat::Impl::saveHistory(bool clean, bool force) {
  SeatHistory h;
  h.generation = generation_;
  {
    MutexLock lock(mu_);
    h.counters = snap_.counters;
  }
  const bool changed = h.counters != savedCounters_ || h.generation != savedGeneration_;
  if (!changed && !force) return;
  const TimePoint now = Clock_::now();
  if (!force && h.generation == savedGeneration_ && now - savedAt_ < std::chrono::seconds(1)) {
    historyDueAt_ = savedAt_ + std::chrono::seconds(1);
    return;
  }
  h.pid = ::getpid();
  h.startedAtMs = lifeStartedAtMs_;
  h.clean = clean;
  journal::Transaction txn;
  txn.add(journal::SetSection{std::string(kSeatHistorySection), h.toJson(), std::nullopt});
  if (!journal_->commit(std::move(txn)).isOk()) {
    historyDueAt_ = now + std::chrono::seconds(5);  // a poisoned journal says so elsewhere
    return;
  }
  savedCounters_ = h.counters;
  savedGeneration_ = h.generation;
  savedAt_ = now;
  historyDueAt_.reset();
}

void Seat::Impl::retryReceipts(bool force) {
  if (const size_t stored = wake_->retryOwed(wallMs()); stored > 0) {
    count(&SeatCounters::receipts, stored);
    log::info("seat {}: {} owed receipt(s) stored; {} still owed", profile_.principal.dotForm(),
              stored, wake_->owedCount());
  }
  const TimePoint now = Clock_::now();
  if (!force && now - receiptsSavedAt_ < kReceiptsSaveEvery) {
    if (wake_->outboxChanged()) receiptsDueAt_ = receiptsSavedAt_ + kReceiptsSaveEvery;
    return;
  }
  receiptsDueAt_.reset();
  auto section = wake_->outboxSection(wallMs());
  if (!section) return;
  journal::Transaction txn;
  txn.add(journal::SetSection{std::string(kReceiptsSection), *section, std::nullopt});
  (void)journal_->commit(std::move(txn));  // a poisoned journal says so elsewhere
  receiptsSavedAt_ = now;
}

void Seat::Impl::replayReceipts() {
  int64_t through = wallMs() - kReceiptReplayWindow.count();
  std::set<std::string> owedIds;
  if (auto section = journal_->section(kReceiptsSection)) {
    if (auto owed = parseOwedReceipts(section->valueJson); owed.isOk()) {
      through = owed->throughMs;
      for (const auto& r : owed->owed)
        owedIds.insert(r.outcome + "/" + r.id);
      if (!owed->owed.empty()) {
        log::info("seat {}: the previous daemon owed {} receipt(s); publishing them",
                  profile_.principal.dotForm(), owed->owed.size());
      }
      wake_->restoreOwed(std::move(owed->owed));
    } else {
      log::warn("seat {}: {}; republishing the receipts of the last {} s instead",
                profile_.principal.dotForm(), owed.status().toString(),
                kReceiptReplayWindow.count() / 1000);
    }
  }
  // A daemon that ended between a terminal journal write and its receipt's publish left the
  // sender without one: those are published again (the duplicate window, keyed
  // `rcpt-<outcome>-<seat>-<id>`, keeps exactly one of a receipt already stored).
  for (const auto& t : journal_->view().tombstones) {
    if (t.stateSinceMs < through || t.target.empty()) continue;
    const bool surfaced = t.state == journal::OwnerState::kSurfaced;
    if (owedIds.contains((surfaced ? "surfaced/" : "failed/") + t.id)) continue;
    if (surfaced) {
      (void)wake_->surfaced(t.id, t.target, t.stateSinceMs, wire::evidenceKind(t.reason));
    } else {
      (void)wake_->failed(t.id, t.target, t.reason, t.stateSinceMs);
    }
  }
  (void)wake_->retryOwed(wallMs());
}

void Seat::Impl::failUnread(const std::string& how) {
  const std::string reason =
      profile_.acks ? "runtime-exited-before-ack: the runtime " + how +
                          " before acknowledging it on $SHOAL_ACK_FD (it may have read it); "
                          "never replayed"
                    : "runtime-exited-before-reading: the runtime " + how +
                          " before reading it from its stdin (its bytes were still in the "
                          "pipe); never replayed";
  for (auto& h : unread_)
    settleFailed(std::move(h.owners), reason);
  unread_.clear();
}

void Seat::Impl::failInflight(const std::string& reason) {
  std::vector<Handed> inflight;
  for (const auto& record :
       journal_->live([](const auto& r) { return journal::isInflight(r.state); })) {
    // An inbox receipt is not the runtime's: its lease decides (a write still in flight may
    // prove it surfaced; else it fails at the lease's end). A handoff being reconciled waits
    // for the runtime's answer.
    const bool reconciling =
        std::any_of(reconciling_.begin(), reconciling_.end(),
                    [&](const Reconciling& r) { return r.owner.id == record.id; });
    // A direct claim not handed yet (direct_lane.h) had no byte written: the gate requeues it.
    if (journal::isInflight(record.state) && !leases_.holds(record.id) && !reconciling &&
        !lane_.pending(record.id))
      inflight.push_back(Handed{record.id, record.token, record.target, {}, {}, 0});
  }
  if (!inflight.empty()) settleFailed(std::move(inflight), reason);
}

void Seat::Impl::settleSurfaced(std::vector<Handed> owners, const std::string& how,
                                const std::string& wakeToken) {
  journal::Transaction txn;
  for (const auto& o : owners) {
    txn.add(journal::MarkSurfaced{o.id, o.token, how});
    handoffs_.erase(o.id);
  }
  auto done = journal_->commit(std::move(txn));
  if (!done.isOk()) {
    log::warn("seat {}: recording surfaced: {}", profile_.principal.dotForm(),
              done.status().toString());
    return;
  }
  const int64_t now = wallMs();
  count(&SeatCounters::surfaced, owners.size());
  const std::string evidence = wire::evidenceKind(how);
  if (auto byEvidence = surfacedCounter(evidence)) count(byEvidence, owners.size());
  std::vector<Receipt> receipts;
  for (const auto& o : owners)
    receipts.push_back(Receipt{"surfaced", o.id, o.sender, now, evidence});
  for (const Status& sent : wake_->sendAll(receipts)) {
    if (sent.isOk()) count(&SeatCounters::receipts);
  }
  std::vector<WakeResult> earlyReplies;
  for (const auto& o : owners) {
    if (o.replyKey.empty()) continue;
    // Answered already (the reply beat this acknowledgement): its result is out at once.
    if (auto early = ledger_.add(ReplyRow{o.id, o.replyTarget, o.replyKey, o.replySeq, wakeToken}))
      earlyReplies.push_back(std::move(*early));
  }
  if (!earlyReplies.empty()) {
    uint64_t generation = 0;
    {
      MutexLock lock(mu_);
      generation = snap_.generation;
    }
    publishResults(earlyReplies, generation);
  }
}

void Seat::Impl::settleFailed(std::vector<Handed> owners, const std::string& reason) {
  journal::Transaction txn;
  for (const auto& o : owners) {
    txn.add(journal::MarkFailed{o.id, o.token, reason});
    handoffs_.erase(o.id);
  }
  auto done = journal_->commit(std::move(txn));
  if (!done.isOk()) {
    log::warn("seat {}: recording failed: {}", profile_.principal.dotForm(),
              done.status().toString());
    return;
  }
  const int64_t now = wallMs();
  count(&SeatCounters::failed, owners.size());
  std::vector<Receipt> receipts;
  for (const auto& o : owners)
    receipts.push_back(Receipt{"failed", o.id, o.sender, now, reason});
  for (const Status& sent : wake_->sendAll(receipts)) {
    if (sent.isOk()) count(&SeatCounters::receipts);
  }
}

// ---------------------------------------------------------------------------------------------
// Inbox pages and visible replies

mcp::ToolResult Seat::Impl::inboxPage(size_t limit) {
  auto request = std::make_shared<InboxRequest>();
  request->limit = std::clamp<size_t>(limit == 0 ? kInboxPageDefault : limit, 1, kInboxPageMax);
  GateEvent e;
  e.kind = GateEvent::Kind::kInbox;
  e.inbox = request;
  {
    MutexLock lock(mu_);
    if (closed_) return mcp::ToolResult::error("shoal_inbox: the seat has stopped");
    events_.push_back(std::move(e));
    cv_.notifyAll();
  }
  if (!request->done.wait(Clock_::now() + kInboxWait)) {
    MutexLock lock(request->mu);
    if (!request->taken) {
      request->abandoned = true;  // the gate will claim nothing for it
      return mcp::ToolResult::error("shoal_inbox: the seat is busy; try again in a moment");
    }
  }
  request->done.wait(std::nullopt);  // the claim began: it ends in moments
  return std::move(request->result);
}

void Seat::Impl::claimInbox(InboxRequest& request, int attempt) {
  if (driver_ == nullptr || retiring_ != Retiring::kNone || !leases_.accepting(generation_)) {
    request.result = mcp::ToolResult::error(
        "shoal_inbox: the seat's runtime is stopping or not running; nothing was taken");
    return;
  }
  std::vector<journal::OwnershipRecord> queued =
      journal_->live([](const auto& r) { return r.state == journal::OwnerState::kQueued; });
  std::sort(queued.begin(), queued.end(),
            [](const auto& a, const auto& b) { return a.seq < b.seq; });
  const size_t waiting = queued.size();
  if (queued.size() > request.limit) queued.resize(request.limit);

  const bool tracksReplies =
      !driver_->traits().surfacedOnWrite && !driver_->traits().surfacedOnRead;
  PresentationInput input;
  std::vector<journal::OwnershipRecord> page;
  std::vector<InboxClaim> claims;
  std::vector<Handed> unreadable;
  const TimePoint deadline = Clock_::now() + options_.finalHopLease;
  for (auto& record : queued) {
    auto stored = decodeStoredDelivery(record.body);
    if (!stored.isOk()) {
      unreadable.push_back(Handed{record.id, record.token, record.target, {}, {}, 0});
      continue;
    }
    // A cryptographically random receipt; no randomness fails closed, the bodies stay queued.
    auto receipt = newHexToken(16);
    if (!receipt.isOk()) {
      request.result = mcp::ToolResult::error("shoal_inbox: no receipt could be minted (" +
                                              receipt.status().toString() +
                                              "); nothing was taken, your messages stay queued");
      return;
    }
    PresentationItem item = presentationItemFor(stored->kind, stored->message);
    item.historical = stored->historical;
    item.possibleRepeat = stored->redelivered;
    item.deliveryId = record.id;
    input.items.push_back(std::move(item));
    InboxClaim c;
    c.receipt = std::string(wire::kInboxReceiptPrefix) + *receipt;
    c.id = record.id;
    c.token = record.token;
    c.sender = record.target;
    if (auto target = tracksReplies ? replyTargetOf(*stored, profile_.principal) : std::nullopt)
      std::tie(c.replyTarget, c.replyKey) = *target;
    c.generation = generation_;
    c.deadline = deadline;
    claims.push_back(std::move(c));
    page.push_back(std::move(record));
  }
  if (!unreadable.empty()) settleFailed(std::move(unreadable), "bad-journal-body");
  if (input.items.empty()) {
    request.result = mcp::ToolResult::ok("shoal_inbox: no new messages.");
    return;
  }
  SeatIdentity self{profile_.principal.dotForm(), profile_.name};
  RenderedBlock block = renderDeliveryBlock(input, self);
  claims.resize(block.taken);
  page.resize(block.taken);

  // The claim: queued → inflight(outcome_unknown) under its receipt, one transaction (a
  // receipt another record holds refuses all of it: the bodies stay queued).
  journal::Transaction txn;
  for (const auto& c : claims) {
    journal::RuntimeIdentity runtime;
    runtime.receipt = c.receipt;
    runtime.sessionId = driver_->sessionId();
    txn.add(journal::BeginInflight{
        c.id, c.token, journal::InflightPhase::kOutcomeUnknown, runtime,
        fmt::format("claimed by an inbox page of generation {}; awaiting its final hop",
                    generation_)});
  }
  auto committed = journal_->commit(std::move(txn));
  if (!committed.isOk() && committed.status().code() == StatusCode::kAborted &&
      attempt < kInboxAttempts) {
    // A record the full local inbox ended since the view was read: choose again.
    claimInbox(request, attempt + 1);
    return;
  }
  if (!committed.isOk()) {
    log::warn("seat {}: an inbox page could not claim its messages: {}",
              profile_.principal.dotForm(), committed.status().toString());
    request.result =
        mcp::ToolResult::error("shoal_inbox: nothing was taken (" + committed.status().toString() +
                               "); your messages stay queued");
    return;
  }
  roomMade();  // they left the queue
  for (size_t i = 0; i < claims.size(); ++i) {
    if (const auto& r = committed->results[i].record) claims[i].token = r->token;
    if (!claims[i].replyKey.empty()) claims[i].replySeq = ledger_.reserve(claims[i].replyKey);
  }
  std::vector<std::string> receipts;
  std::string markers;
  boost::json::array meta;
  for (const auto& c : claims) {
    receipts.push_back(c.receipt);
    markers += "[" + c.receipt + "]";
    meta.push_back(boost::json::object{{"receipt", c.receipt}, {"messageId", c.id}});
  }
  const size_t claimed = claims.size();
  const uint64_t generation = generation_;
  (void)leases_.add(std::move(claims));  // open for this generation: checked above, on the gate
  count(&SeatCounters::inboxClaimed, claimed);
  std::deque<std::string> stillForeground;
  for (const auto& id : foreground_) {
    if (std::none_of(page.begin(), page.end(), [&](const auto& r) { return r.id == id; }))
      stillForeground.push_back(id);
  }
  foreground_ = std::move(stillForeground);

  mcp::ToolResult result(
      fmt::format("shoal_inbox receipts {}\n{} message(s), oldest first{}:\n\n{}", markers, claimed,
                  waiting > claimed ? " (more are waiting: call again)" : "", block.text));
  result.meta["shoal/receipts"] = std::move(meta);
  result.onWritten = [this, receipts = std::move(receipts), generation](bool complete) {
    inboxWritten(receipts, generation, complete);
  };
  request.result = std::move(result);
}

void Seat::Impl::inboxWritten(const std::vector<std::string>& receipts, uint64_t generation,
                              bool complete) {
  std::vector<InboxClaim> acked = leases_.finishWrite(receipts, generation, complete);
  if (!complete) {
    log::warn(
        "seat {}: an inbox page ({} receipt(s)) was not written whole; no acknowledgement, "
        "its leases stay until they end",
        profile_.principal.dotForm(), receipts.size());
  } else if (acked.size() < receipts.size()) {
    log::warn(
        "seat {}: an inbox page of generation {} was written after that generation "
        "retired; not acknowledged",
        profile_.principal.dotForm(), generation);
  }
  if (!acked.empty()) {
    std::vector<Handed> owners;
    for (auto& c : acked)
      owners.push_back(Handed{c.id, c.token, c.sender, c.replyTarget, c.replyKey, c.replySeq});
    settleSurfaced(std::move(owners),
                   "inbox-page: an inbox page carrying its receipt was written whole",
                   "inbox:" + acked.front().receipt);
  }
  leases_.handled(receipts.size());  // the lifecycle-mutation lease ends here
}

void Seat::Impl::drainLeases() {
  leases_.close();
  if (!leases_.drain(Clock_::now() + kLeaseDrain)) {
    log::warn(
        "seat {}: an inbox page's write outcome did not arrive in {} ms; its receipts "
        "are no longer acknowledged and end at their lease",
        profile_.principal.dotForm(), kLeaseDrain.count());
  }
}

void Seat::Impl::replied(const std::string& targetKey, uint64_t seenUpTo,
                         const std::string& replyId) {
  auto results = ledger_.settle(targetKey, seenUpTo, replyId);
  uint64_t generation = 0;
  {
    MutexLock lock(mu_);
    generation = snap_.generation;
  }
  if (!results.empty()) publishResults(results, generation);
}

void Seat::Impl::finalCheck(const std::string& failedReason) {
  auto results = ledger_.finalCheck(failedReason);
  if (!results.empty()) publishResults(results, generation_);
}

void Seat::Impl::publishResults(const std::vector<WakeResult>& results, uint64_t generation) {
  const int64_t now = wallMs();
  for (const auto& r : results) {
    Status published = wake_->result(r, generation, now);
    if (!published.isOk()) {
      log::warn("seat {}: wake result for {} not stored: {}", profile_.principal.dotForm(),
                r.messageId, published.toString());
    }
  }
  MutexLock lock(mu_);
  for (const auto& r : results) {
    if (r.result == "replied") {
      ++snap_.counters.replied;
    } else if (r.result == "failed") {
      ++snap_.counters.replyFailed;
    } else {
      ++snap_.counters.noVisibleReply;
    }
    snap_.recentResults.push_back(
        SeatWakeResult{r.messageId, r.targetKey, r.result, r.replyId, r.reason, now});
  }
  if (snap_.recentResults.size() > kRecentResults) {
    snap_.recentResults.erase(snap_.recentResults.begin(),
                              snap_.recentResults.end() - static_cast<long>(kRecentResults));
  }
}

}  // namespace shoal::daemon
