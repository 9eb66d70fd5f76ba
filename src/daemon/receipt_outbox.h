// ReceiptOutbox: the receipts a seat owes its senders, held until the broker stores them
// (issue 18: a receipt lost to a broker outage was never published again).
//
// A receipt enters when its publish begins and leaves when the broker acknowledged it. A
// publish that failed leaves it owed: it is published again after 1 s, then 2, 4, … up to
// 30 s, until stored. The outbox is persisted in the seat's journal (section `seat.receipts`)
// so a daemon that ends while it owes a receipt publishes it in its next life:
//   {"through":<wall ms>, "owed":[{"outcome":"surfaced"|"failed", "id":…, "sender":…,
//                                  "at":<wall ms>, "detail":…}, …]}
// `through`: every receipt of a delivery that became terminal before this time was stored or
// is in `owed`. The next life publishes `owed` and the receipts of the tombstones at or after
// `through` again; the broker's 2-minute duplicate window drops the ones already stored, so a
// receipt is stored at least once, and twice only when a daemon ends and its next life starts
// more than two minutes later.
//
// At most kMaxOwed receipts are owed; past that the oldest is dropped, counted and logged.
//
// Thread safety: none; WakeEvents guards it.
// Lifetime: owns its receipts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace shoal::daemon {

// One receipt's facts; its body is built from them each time it is published.
struct Receipt {
  std::string outcome;  // "surfaced" | "failed"
  std::string id;       // the message id
  std::string sender;   // the message's from.id (dot-form)
  int64_t atMs = 0;     // surfacedAt / failedAt
  std::string detail;   // surfaced: the evidence kind (may be empty); failed: the reason
  friend bool operator==(const Receipt&, const Receipt&) = default;
};

// What a previous life persisted.
struct OwedReceipts {
  int64_t throughMs = 0;
  std::vector<Receipt> owed;
};

class ReceiptOutbox {
 public:
  static constexpr size_t kMaxOwed = 1000;
  // A terminal write and its receipt's first publish are moments apart on one thread; `through`
  // stays this far behind the oldest publish in flight to cover that gap.
  static constexpr int64_t kThroughSlackMs = 5000;

  using Ticket = uint64_t;

  // A publish of `r` begins.
  Ticket begin(Receipt r);
  // The broker stored it.
  void stored(Ticket t);
  // The broker did not: it is owed, published again after the next backoff step.
  void unsent(Ticket t, int64_t nowMs);

  // The owed receipts due at `nowMs`; each begins again (report it with stored/unsent).
  std::vector<std::pair<Ticket, Receipt>> due(int64_t nowMs);
  // When the next owed receipt falls due; nullopt when none waits.
  std::optional<int64_t> nextDueMs() const;
  size_t owedCount() const;
  // Receipts dropped because more than kMaxOwed were owed.
  uint64_t dropped() const { return dropped_; }

  bool changed() const { return dirty_; }
  // The section's value when anything changed since it was last taken; nullopt when the value
  // last taken is still true.
  std::optional<std::string> takeSection(int64_t nowMs);
  // Owed receipts a previous life persisted: they are due at once.
  void restore(std::vector<Receipt> owed);

 private:
  struct Entry {
    Receipt receipt;
    bool inFlight = true;
    uint32_t failures = 0;
    int64_t dueMs = 0;
  };
  void trim();

  std::map<Ticket, Entry> entries_;
  Ticket next_ = 1;
  bool dirty_ = false;
  uint64_t dropped_ = 0;
};

// The backoff before the n-th retry (n ≥ 1): 1 s doubling, at most 30 s.
int64_t receiptRetryDelayMs(uint32_t failures);

// Parses a `seat.receipts` section; a malformed one is an error naming what is wrong.
Result<OwedReceipts> parseOwedReceipts(std::string_view sectionJson);

}  // namespace shoal::daemon
