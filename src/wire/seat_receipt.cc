#include "wire/seat_receipt.h"

#include "wire/json_support.h"
#include "wire/reasons.h"

namespace shoal::wire {
namespace {

using internal::json::object;

std::string text(const object& o, std::string_view key) {
  const auto* f = internal::field(o, key);
  return f != nullptr && f->is_string() ? std::string(f->as_string()) : std::string();
}

std::optional<int64_t> wholeMs(const object& o, std::string_view key) {
  const auto* f = internal::field(o, key);
  if (f == nullptr) return std::nullopt;
  auto n = internal::asNumber(*f);
  if (!n) return std::nullopt;
  return static_cast<int64_t>(*n);
}

}  // namespace

std::string evidenceKind(std::string_view reason) {
  const std::string_view head = reason.substr(0, reason.find(':'));
  for (std::string_view k : kEvidenceKinds) {
    if (head == k) return std::string(k);
  }
  return "";
}

std::string_view seatReceiptOutcomeName(SeatReceipt::Outcome outcome) {
  return outcome == SeatReceipt::Outcome::kSurfaced ? "surfaced" : "failed";
}

std::string encodeSeatReceipt(const SeatReceipt& r) {
  object body{{"id", r.id}, {"recipient", r.recipient}};
  if (r.outcome == SeatReceipt::Outcome::kSurfaced) {
    body["surfacedAt"] = r.atMs;
    if (!r.evidence.empty()) body["evidence"] = r.evidence;
  } else {
    body["failedAt"] = r.atMs;
    body["reason"] = r.reason;
  }
  return internal::toJson(body);
}

Result<SeatReceipt> decodeSeatReceipt(std::string_view body) {
  SHOAL_ASSIGN_OR_RETURN(auto value, internal::parseJsonObject(body));
  const object& o = value.as_object();
  SeatReceipt r;
  r.id = text(o, "id");
  r.recipient = text(o, "recipient");
  if (r.id.empty()) return invalidArgument(reason::kBadReceipt, "a receipt without an id");
  if (auto at = wholeMs(o, "surfacedAt")) {
    r.atMs = *at;
    r.evidence = text(o, "evidence");
  } else if (auto failed = wholeMs(o, "failedAt")) {
    r.outcome = SeatReceipt::Outcome::kFailed;
    r.atMs = *failed;
    r.reason = text(o, "reason");
    if (r.reason.empty()) r.reason = "no reason given";
  } else {
    return invalidArgument(reason::kBadReceipt,
                           "receipt of " + r.id + " has neither surfacedAt nor failedAt");
  }
  return r;
}

}  // namespace shoal::wire
