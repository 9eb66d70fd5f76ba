#include "daemon/seat_history.h"

#include <type_traits>

#include <boost/json.hpp>
#include <fmt/format.h>

namespace shoal::daemon {
namespace {

namespace json = boost::json;

// Every counter with its name: the one list both directions use.
template <typename Fn>
void eachCounter(SeatCounters& c, Fn&& fn) {
  fn("admitted", c.admitted);
  fn("surfaced", c.surfaced);
  fn("failed", c.failed);
  fn("receipts", c.receipts);
  fn("launches", c.launches);
  fn("unexpectedExits", c.unexpectedExits);
  fn("coldStarts", c.coldStarts);
  fn("turns", c.turns);
  fn("inboxClaimed", c.inboxClaimed);
  fn("replied", c.replied);
  fn("noVisibleReply", c.noVisibleReply);
  fn("replyFailed", c.replyFailed);
  fn("inboxEvicted", c.inboxEvicted);
  fn("inboxRefused", c.inboxRefused);
  fn("inboxDropped", c.inboxDropped);
  fn("surfacedRuntimeAck", c.surfacedRuntimeAck);
  fn("surfacedStdinRead", c.surfacedStdinRead);
  fn("surfacedStdinWrite", c.surfacedStdinWrite);
  fn("surfacedInboxPage", c.surfacedInboxPage);
  fn("surfacedReconciled", c.surfacedReconciled);
  fn("direct", c.direct);
  fn("directRequeued", c.directRequeued);
}

struct EvidenceCounter {
  std::string_view kind;
  uint64_t SeatCounters::*field;
};

constexpr EvidenceCounter kEvidenceCounters[] = {
    {"runtime-ack", &SeatCounters::surfacedRuntimeAck},
    {"stdin-read", &SeatCounters::surfacedStdinRead},
    {"stdin-write", &SeatCounters::surfacedStdinWrite},
    {"inbox-page", &SeatCounters::surfacedInboxPage},
    {"reconciled", &SeatCounters::surfacedReconciled},
};

Status bad(std::string_view what) {
  return dataLoss("bad-seat-history", "the seat's saved history is damaged: " + std::string(what));
}

}  // namespace

std::string SeatHistory::toJson() const {
  json::object counts;
  SeatCounters c = counters;
  eachCounter(c, [&](const char* name, uint64_t& v) { counts[name] = v; });
  return json::serialize(json::object{{"generation", generation},
                                      {"counters", std::move(counts)},
                                      {"pid", pid},
                                      {"startedAt", startedAtMs},
                                      {"clean", clean}});
}

Result<SeatHistory> SeatHistory::fromJson(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return bad("not a JSON object");
  const json::object& o = v.as_object();
  SeatHistory h;
  // A whole number of the field's type (never negative for an unsigned one).
  auto number = [&](const char* key, auto& out) -> Status {
    using T = std::remove_reference_t<decltype(out)>;
    const json::value* f = o.if_contains(key);
    boost::system::error_code notExact;
    const T n = f != nullptr && (f->is_int64() || f->is_uint64()) ? f->to_number<T>(notExact) : T{};
    if (f == nullptr || !(f->is_int64() || f->is_uint64()) || notExact)
      return bad(std::string(key));
    out = n;
    return Status::ok();
  };
  SHOAL_RETURN_IF_ERROR(number("generation", h.generation));
  SHOAL_RETURN_IF_ERROR(number("pid", h.pid));
  SHOAL_RETURN_IF_ERROR(number("startedAt", h.startedAtMs));
  const json::value* clean = o.if_contains("clean");
  if (clean == nullptr || !clean->is_bool()) return bad("clean");
  h.clean = clean->as_bool();
  const json::value* counts = o.if_contains("counters");
  if (counts == nullptr || !counts->is_object()) return bad("counters");
  Status status;
  eachCounter(h.counters, [&](const char* name, uint64_t& out) {
    const json::value* f = counts->as_object().if_contains(name);
    if (f == nullptr) return;  // a counter newer than the file starts at 0
    boost::system::error_code notExact;
    const uint64_t n = f->is_int64() || f->is_uint64() ? f->to_number<uint64_t>(notExact) : 0;
    if (!(f->is_int64() || f->is_uint64()) || notExact) {
      status = bad(std::string("counters.") + name);
      return;
    }
    out = n;
  });
  SHOAL_RETURN_IF_ERROR(status);
  return h;
}

uint64_t SeatCounters::*surfacedCounter(std::string_view kind) {
  for (const auto& e : kEvidenceCounters) {
    if (e.kind == kind) return e.field;
  }
  return nullptr;
}

std::vector<std::pair<std::string_view, uint64_t>> surfacedByEvidence(const SeatCounters& c) {
  std::vector<std::pair<std::string_view, uint64_t>> out;
  for (const auto& e : kEvidenceCounters)
    out.emplace_back(e.kind, c.*e.field);
  return out;
}

std::string previousLifeText(const SeatHistory& found) {
  if (found.clean) {
    return fmt::format(
        "the previous daemon (pid {}) stopped this seat cleanly; generation {} "
        "was its last",
        found.pid, found.generation);
  }
  return fmt::format(
      "the previous daemon (pid {}) ended without stopping this seat (it was "
      "killed or crashed); generation {} was its last",
      found.pid, found.generation);
}

}  // namespace shoal::daemon
