#include "daemon/wake_events.h"

#include <fmt/format.h>

#include "base/log.h"
#include "wire/seat_receipt.h"
#include "wire/subject.h"
#include "wire/wake_record.h"

namespace shoal::daemon {

Status WakeEvents::publish(const WakeEvent& event, int64_t atMs) {
  SHOAL_ASSIGN_OR_RETURN(std::string subject, wire::wakeSubject(space_, seat_.principal));
  wire::WakeRecord r;
  r.kind = event.kind;
  r.seatId = seat_.principal.dotForm();
  r.seatName = seat_.name;
  r.generation = event.generation;
  r.atMs = atMs;
  r.detail = event.detail;
  r.messages = event.messages;
  r.exit = event.exit;
  return js_.publish(subject, wire::encodeWakeRecord(r)).status();
}

Status WakeEvents::result(const WakeResult& result, uint64_t generation, int64_t atMs) {
  SHOAL_ASSIGN_OR_RETURN(std::string subject, wire::wakeSubject(space_, seat_.principal));
  wire::WakeRecord r;
  r.kind = std::string(wire::kWakeResultKind);
  r.seatId = seat_.principal.dotForm();
  r.seatName = seat_.name;
  r.generation = generation;
  r.atMs = atMs;
  r.message = result.messageId;
  r.target = result.targetKey;
  r.result = result.result;
  r.replyId = result.replyId;
  r.reason = result.reason;
  return js_.publish(subject, wire::encodeWakeRecord(r)).status();
}

Status WakeEvents::surfaced(const std::string& messageId, const std::string& sender, int64_t atMs,
                            std::string_view evidence) {
  return send(Receipt{"surfaced", messageId, sender, atMs, std::string(evidence)});
}

Status WakeEvents::failed(const std::string& messageId, const std::string& sender,
                          const std::string& reason, int64_t atMs) {
  return send(Receipt{"failed", messageId, sender, atMs, reason});
}

Status WakeEvents::send(Receipt r) {
  SHOAL_ASSIGN_OR_RETURN(wire::Principal from, wire::parsePrincipal(r.sender));
  (void)from;
  ReceiptOutbox::Ticket ticket = 0;
  {
    MutexLock lock(mu_);
    ticket = outbox_.begin(r);
  }
  Status sent = publishReceipt(r);
  MutexLock lock(mu_);
  if (sent.isOk()) {
    outbox_.stored(ticket);
  } else {
    outbox_.unsent(ticket, Clock::real().wallMs());
  }
  return sent;
}

size_t WakeEvents::retryOwed(int64_t nowMs) {
  std::vector<std::pair<ReceiptOutbox::Ticket, Receipt>> due;
  {
    MutexLock lock(mu_);
    due = outbox_.due(nowMs);
  }
  size_t stored = 0;
  bool down = false;
  for (const auto& [ticket, r] : due) {
    // One failure says the broker is still away: the rest wait for their next turn, unsent.
    Status sent = down ? unavailable("broker-unavailable", "not tried") : publishReceipt(r);
    down = !sent.isOk();
    MutexLock lock(mu_);
    if (sent.isOk()) {
      outbox_.stored(ticket);
      ++stored;
    } else {
      outbox_.unsent(ticket, nowMs);
    }
  }
  MutexLock lock(mu_);
  if (outbox_.dropped() != droppedLogged_) {
    log::warn("seat {}: {} receipt(s) dropped unsent: more than {} were owed at once",
              seat_.principal.dotForm(), outbox_.dropped() - droppedLogged_,
              ReceiptOutbox::kMaxOwed);
    droppedLogged_ = outbox_.dropped();
  }
  return stored;
}

std::optional<int64_t> WakeEvents::nextRetryMs() const {
  MutexLock lock(mu_);
  return outbox_.nextDueMs();
}

size_t WakeEvents::owedCount() const {
  MutexLock lock(mu_);
  return outbox_.owedCount();
}

bool WakeEvents::outboxChanged() const {
  MutexLock lock(mu_);
  return outbox_.changed();
}

std::optional<std::string> WakeEvents::outboxSection(int64_t nowMs) {
  MutexLock lock(mu_);
  return outbox_.takeSection(nowMs);
}

void WakeEvents::restoreOwed(std::vector<Receipt> owed) {
  MutexLock lock(mu_);
  outbox_.restore(std::move(owed));
}

std::vector<Status> WakeEvents::sendAll(const std::vector<Receipt>& receipts) {
  std::vector<Status> out(receipts.size());
  std::vector<transport::OutgoingMessage> messages;
  std::vector<size_t> at;  // messages[k] is receipts[at[k]]
  std::vector<ReceiptOutbox::Ticket> tickets;
  for (size_t i = 0; i < receipts.size(); ++i) {
    auto m = receiptMessage(receipts[i]);
    if (!m.isOk()) {
      out[i] = m.status();  // a malformed sender: skipped, as send() does
      continue;
    }
    messages.push_back(std::move(m).value());
    at.push_back(i);
  }
  if (messages.size() <= 1) {
    for (size_t i : at)
      out[i] = send(receipts[i]);
    return out;
  }
  {
    MutexLock lock(mu_);
    for (size_t i : at)
      tickets.push_back(outbox_.begin(receipts[i]));
  }
  std::vector<Result<transport::PubAck>> acks;
  {
    MutexLock lock(pipelineMu_);
    if (!pipeline_) {
      auto made = transport::PublishPipeline::create(js_.connection());
      if (made.isOk()) pipeline_ = std::move(made).value();
    }
    if (pipeline_) acks = pipeline_->publishAll(messages);
  }
  for (size_t k = 0; k < messages.size(); ++k) {
    // Without a pipeline (its context could not be made), one at a time.
    Status sent = k < acks.size() ? acks[k].status() : publishReceipt(receipts[at[k]]);
    if (k < acks.size() && !sent.isOk()) noteUnsent(receipts[at[k]], sent);
    MutexLock lock(mu_);
    if (sent.isOk()) {
      outbox_.stored(tickets[k]);
    } else {
      outbox_.unsent(tickets[k], Clock::real().wallMs());
    }
    out[at[k]] = std::move(sent);
  }
  return out;
}

Result<transport::OutgoingMessage> WakeEvents::receiptMessage(const Receipt& r) const {
  SHOAL_ASSIGN_OR_RETURN(wire::Principal from, wire::parsePrincipal(r.sender));
  SHOAL_ASSIGN_OR_RETURN(std::string subject, wire::rcptSubject(space_, from, seat_.principal));
  const bool surfaced = r.outcome == "surfaced";
  wire::SeatReceipt body{.outcome = surfaced ? wire::SeatReceipt::Outcome::kSurfaced
                                             : wire::SeatReceipt::Outcome::kFailed,
                         .id = r.id,
                         .recipient = seat_.principal.dotForm(),
                         .atMs = r.atMs,
                         .evidence = surfaced ? r.detail : "",
                         .reason = surfaced ? "" : r.detail};
  transport::OutgoingMessage m;
  m.subject = std::move(subject);
  m.data = wire::encodeSeatReceipt(body);
  // One id per outcome: a repeat of the same receipt is dropped by the duplicate window, a
  // different outcome (a failed upgraded to surfaced, seed 004 §3.3) never is.
  m.options.msgId = fmt::format("rcpt-{}-{}-{}", r.outcome, seat_.principal.dotForm(), r.id);
  return m;
}

Status WakeEvents::publishReceipt(const Receipt& r) {
  SHOAL_ASSIGN_OR_RETURN(transport::OutgoingMessage m, receiptMessage(r));
  Status sent = js_.publish(m.subject, m.data, m.options).status();
  if (!sent.isOk()) noteUnsent(r, sent);
  return sent;
}

void WakeEvents::noteUnsent(const Receipt& r, const Status& why) {
  if (auto held = unsent_.admit(why.reason())) {
    log::warn("seat {}: the {} receipt of {} to {} was not stored (owed, retried): {}{}",
              seat_.principal.dotForm(), r.outcome, r.id, r.sender, why.toString(),
              log::heldBackSuffix(*held));
  }
}

}  // namespace shoal::daemon
