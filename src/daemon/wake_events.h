// WakeEvents: the seat's lifecycle facts and sender receipts, published to the space's wake
// stream (docs/architecture.md, Conventions; seed 004 §1; issue 5 point 7). They are never chat
// messages.
//
// Lifecycle events and wake results go to `cotal.<space>.wake.<seat owner>.<seat actor>`,
// stored in WAKE_<space>; their body is wire/wake_record.h's (kinds: start-failed,
// exited-unexpectedly, runtime-error, wake-failed, turn-completed, started, stopped,
// daemon-restarted (seat_history.h), and one wake-result per directed delivery's visible-reply
// outcome (reply_ledger.h)).
//
// Receipts — subject `cotal.<space>.rcpt.<sender o>.<sender a>.<seat o>.<seat a>`, body
// wire/seat_receipt.h's (surfaced with its evidence kind, or failed with its reason),
// Nats-Msg-Id `rcpt-<outcome>-<seat o>.<seat a>-<message id>` (a republished receipt is stored
// once; a later, different outcome of the same message — surfaced evidence upgrading a failure
// — is stored too, and so is each seat's receipt of one channel post). A receipt the broker did
// not acknowledge is logged (once per reason per 10 s) and owed: retryOwed() publishes it again
// with a backoff until it is stored, and the seat persists what is owed (receipt_outbox.h).
//
// Lifecycle events and wake results are best effort: a publish the broker did not acknowledge
// is logged, and the ownership journal (not the event) stays the truth.
//
// Thread safety: every method may be called from any thread.
// Lifetime: must not outlive the JetStream it publishes with.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/log_throttle.h"
#include "base/mutex.h"
#include "base/status.h"
#include "daemon/receipt_outbox.h"
#include "daemon/reply_ledger.h"
#include "daemon/seat_profile.h"
#include "transport/jetstream.h"
#include "transport/publish_pipeline.h"

namespace shoal::daemon {

struct WakeEvent {
  std::string kind;
  uint64_t generation = 0;
  std::string detail;
  std::vector<std::string> messages;
  std::string exit;
};

class WakeEvents {
 public:
  WakeEvents(transport::JetStream& js, std::string space, SeatProfile seat)
      : js_(js), space_(std::move(space)), seat_(std::move(seat)) {}

  Status publish(const WakeEvent& event, int64_t atMs);
  Status result(const WakeResult& result, uint64_t generation, int64_t atMs);
  // `sender` is the message's from.id (dot-form); a malformed one is skipped. A receipt the
  // broker did not store is owed (the error is returned all the same).
  Status surfaced(const std::string& messageId, const std::string& sender, int64_t atMs,
                  std::string_view evidence = "");
  Status failed(const std::string& messageId, const std::string& sender, const std::string& reason,
                int64_t atMs);
  // Many receipts at once (a settled block), pipelined: at most 256 unacknowledged in flight,
  // each stored or owed as if sent alone. One status per receipt, in order.
  std::vector<Status> sendAll(const std::vector<Receipt>& receipts);

  // Publishes the owed receipts due at `nowMs`; returns how many the broker stored.
  size_t retryOwed(int64_t nowMs);
  // When retryOwed() has work next (wall ms); nullopt when nothing is owed.
  std::optional<int64_t> nextRetryMs() const;
  size_t owedCount() const;
  // Whether outboxSection() has a new value.
  bool outboxChanged() const;
  // The `seat.receipts` journal section when it changed (receipt_outbox.h).
  std::optional<std::string> outboxSection(int64_t nowMs);
  // Receipts a previous life owed: published by the next retryOwed().
  void restoreOwed(std::vector<Receipt> owed);

 private:
  Status send(Receipt r);
  Status publishReceipt(const Receipt& r);
  Result<transport::OutgoingMessage> receiptMessage(const Receipt& r) const;
  void noteUnsent(const Receipt& r, const Status& why);

  transport::JetStream& js_;
  const std::string space_;
  const SeatProfile seat_;
  log::LogThrottle unsent_{Clock::real(), std::chrono::seconds(10)};
  Mutex pipelineMu_;  // made on the first sendAll() of more than one receipt
  std::unique_ptr<transport::PublishPipeline> pipeline_ SHOAL_GUARDED_BY(pipelineMu_);
  mutable Mutex mu_;
  ReceiptOutbox outbox_ SHOAL_GUARDED_BY(mu_);
  uint64_t droppedLogged_ SHOAL_GUARDED_BY(mu_) = 0;
};

}  // namespace shoal::daemon
