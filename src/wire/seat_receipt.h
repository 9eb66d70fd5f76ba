// SeatReceipt: what a seat tells a sender about one message it delivered — the proven
// surfaced boundary and how it was proven, or the reason it failed (seed 004 §1, §3.3). Written
// by the daemon (daemon/wake_events.h) on `cotal.<space>.rcpt.<sender>.<seat>`, read by
// `shoal send --wait` and anything else that waits on a delivery.
//
// The body, one JSON object:
//   surfaced  {"id","recipient","surfacedAt","evidence"?}
//   failed    {"id","recipient","failedAt","reason"}
// `evidence` names how the surfaced boundary was proven (kEvidenceKinds); a receipt of an
// older Shoal may carry none. A failed receipt always carries a reason.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace shoal::wire {

// The evidence kinds a surfaced receipt may name:
//   runtime-ack  the runtime echoed the handoff's id
//   stdin-read   an exec program read the handoff's last byte from its stdin
//   stdin-write  the handoff was written whole to the program's stdin
//   inbox-page   a shoal_inbox page holding it was written whole
//   reconciled   found in the runtime's own thread
inline constexpr std::string_view kEvidenceKinds[] = {"runtime-ack", "stdin-read", "stdin-write",
                                                      "inbox-page", "reconciled"};

// The evidence kind at the head of a journal `surfaced` reason ("stdin-read: …" →
// "stdin-read"); "" when it names none.
std::string evidenceKind(std::string_view surfacedReason);

struct SeatReceipt {
  enum class Outcome { kSurfaced, kFailed };
  Outcome outcome = Outcome::kSurfaced;
  std::string id;         // the message id
  std::string recipient;  // the seat (dot-form principal)
  int64_t atMs = 0;       // surfacedAt / failedAt, epoch ms
  std::string evidence;   // surfaced: an evidence kind, or empty
  std::string reason;     // failed: why (never empty once decoded)
  friend bool operator==(const SeatReceipt&, const SeatReceipt&) = default;
};

std::string_view seatReceiptOutcomeName(SeatReceipt::Outcome outcome);  // "surfaced" | "failed"

std::string encodeSeatReceipt(const SeatReceipt& receipt);
// `malformed-json` for a body that is not a JSON object, `bad-receipt` for one without an id
// or without a numeric surfacedAt / failedAt. A failed receipt without a reason reads as
// "no reason given".
Result<SeatReceipt> decodeSeatReceipt(std::string_view body);

}  // namespace shoal::wire
