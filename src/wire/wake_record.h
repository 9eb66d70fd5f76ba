// WakeRecord: one lifecycle fact of a seat as published on the space's wake stream
// (`cotal.<space>.wake.<seat owner>.<seat actor>`, stored in WAKE_<space>; seed 004 §1).
// Written by the daemon (daemon/wake_events.h); read by `shoal send --wait`, `shoal seat
// events` and the dashboard. Never a chat message.
//
// The body, one JSON object:
//   {"kind":K, "seat":{"id":"local.reviewer","name":"Reviewer"}, "generation":N, "at":ms,
//    "detail"?:"…", "messages"?:["<message id>",…], "exit"?:"exit code 3"}
// kinds: start-failed, exited-unexpectedly, runtime-error, wake-failed, turn-completed,
//        started, stopped, daemon-restarted, and wake-result — one per directed delivery's
//        visible-reply outcome, which adds:
//   "message":"<message id>", "target":"peer:local.alice"|"channel:general",
//   "result":"replied"|"completed_without_visible_reply"|"failed",
//   "replyId"?:"<the answering message id>", "reason"?:"…"
// The seat is named by its public name and technical id, never by an internal uid.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace shoal::wire {

inline constexpr std::string_view kWakeResultKind = "wake-result";

struct WakeRecord {
  std::string kind;
  std::string seatId;    // dot-form principal
  std::string seatName;  // the seat's public name
  uint64_t generation = 0;
  int64_t atMs = 0;
  std::string detail;                 // optional
  std::vector<std::string> messages;  // optional: the message ids the event is about
  std::string exit;                   // optional: "exit code 3", "signal 9"
  // kind == wake-result only:
  std::string message;
  std::string target;
  std::string result;
  std::string replyId;
  std::string reason;
  friend bool operator==(const WakeRecord&, const WakeRecord&) = default;
};

std::string encodeWakeRecord(const WakeRecord& record);
// `malformed-json` for a body that is not a JSON object, `bad-wake-record` for one without a
// kind, or a wake-result without its message. Fields of the wrong type read as absent.
Result<WakeRecord> decodeWakeRecord(std::string_view body);

}  // namespace shoal::wire
