#include "daemon/receipt_outbox.h"

#include <algorithm>

#include <boost/json.hpp>

namespace shoal::daemon {
namespace {

namespace json = boost::json;

Status bad(std::string_view what) {
  return dataLoss("bad-receipt-outbox",
                  "the seat's saved receipt outbox is damaged: " + std::string(what));
}

}  // namespace

int64_t receiptRetryDelayMs(uint32_t failures) {
  int64_t delay = 1000;
  for (uint32_t i = 1; i < failures && delay < 30000; ++i)
    delay *= 2;
  return std::min<int64_t>(delay, 30000);
}

ReceiptOutbox::Ticket ReceiptOutbox::begin(Receipt r) {
  const Ticket t = next_++;
  entries_.emplace(t, Entry{std::move(r), true, 0, 0});
  dirty_ = true;  // `through` must not pass it until it is stored or owed
  return t;
}

void ReceiptOutbox::stored(Ticket t) {
  auto it = entries_.find(t);
  if (it == entries_.end()) return;
  entries_.erase(it);
  dirty_ = true;  // `through` may pass it now, and an owed one leaves `owed`
}

void ReceiptOutbox::unsent(Ticket t, int64_t nowMs) {
  auto it = entries_.find(t);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  e.inFlight = false;
  ++e.failures;
  e.dueMs = nowMs + receiptRetryDelayMs(e.failures);
  dirty_ = true;
  trim();
}

void ReceiptOutbox::trim() {
  while (owedCount() > kMaxOwed) {
    // The oldest owed receipt that is not being published right now.
    auto oldest = std::find_if(entries_.begin(), entries_.end(),
                               [](const auto& kv) { return kv.second.failures > 0; });
    if (oldest == entries_.end()) return;
    entries_.erase(oldest);
    ++dropped_;
  }
}

std::vector<std::pair<ReceiptOutbox::Ticket, Receipt>> ReceiptOutbox::due(int64_t nowMs) {
  std::vector<std::pair<Ticket, Receipt>> out;
  for (auto& [t, e] : entries_) {
    if (e.inFlight || e.dueMs > nowMs) continue;
    e.inFlight = true;
    out.emplace_back(t, e.receipt);
  }
  return out;
}

std::optional<int64_t> ReceiptOutbox::nextDueMs() const {
  std::optional<int64_t> next;
  for (const auto& [t, e] : entries_) {
    if (e.inFlight) continue;
    if (!next || e.dueMs < *next) next = e.dueMs;
  }
  return next;
}

size_t ReceiptOutbox::owedCount() const {
  return static_cast<size_t>(std::count_if(entries_.begin(), entries_.end(),
                                           [](const auto& kv) { return kv.second.failures > 0; }));
}

std::optional<std::string> ReceiptOutbox::takeSection(int64_t nowMs) {
  if (!dirty_) return std::nullopt;
  int64_t through = nowMs;
  json::array owed;
  for (const auto& [t, e] : entries_) {
    if (e.failures == 0) {
      through = std::min(through, e.receipt.atMs);
      continue;
    }
    owed.push_back(json::object{{"outcome", e.receipt.outcome},
                                {"id", e.receipt.id},
                                {"sender", e.receipt.sender},
                                {"at", e.receipt.atMs},
                                {"detail", e.receipt.detail}});
  }
  dirty_ = false;
  return json::serialize(
      json::object{{"through", through - kThroughSlackMs}, {"owed", std::move(owed)}});
}

void ReceiptOutbox::restore(std::vector<Receipt> owed) {
  for (auto& r : owed) {
    const Ticket t = next_++;
    entries_.emplace(t, Entry{std::move(r), false, 1, 0});
  }
  trim();
}

Result<OwedReceipts> parseOwedReceipts(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return bad("not a JSON object");
  const json::object& o = v.as_object();
  const json::value* through = o.if_contains("through");
  if (through == nullptr || !through->is_int64()) return bad("through");
  const json::value* owed = o.if_contains("owed");
  if (owed == nullptr || !owed->is_array()) return bad("owed");
  OwedReceipts out;
  out.throughMs = through->as_int64();
  for (const json::value& item : owed->as_array()) {
    const json::object* r = item.if_object();
    auto field = [&](const char* key) -> const json::string* {
      const json::value* f = r == nullptr ? nullptr : r->if_contains(key);
      return f == nullptr ? nullptr : f->if_string();
    };
    const json::value* at = r == nullptr ? nullptr : r->if_contains("at");
    const json::string* outcome = field("outcome");
    if (outcome == nullptr || (*outcome != "surfaced" && *outcome != "failed") ||
        field("id") == nullptr || field("sender") == nullptr || field("detail") == nullptr ||
        at == nullptr || !at->is_int64()) {
      return bad("an owed receipt");
    }
    out.owed.push_back(Receipt{std::string(*outcome), std::string(*field("id")),
                               std::string(*field("sender")), at->as_int64(),
                               std::string(*field("detail"))});
  }
  return out;
}

}  // namespace shoal::daemon
