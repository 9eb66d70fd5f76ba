// ClaudeStream: the facts the seat needs from one line of Claude Code's headless stream-json
// output (`-p --output-format stream-json --verbose --replay-user-messages`; docs/daemon.md,
// Runtimes), and the stdin line that hands it one delivery block.
//
// Observed on the real binary and relied on here:
//   - `{"type":"user",…,"isReplay":true,"uuid":U}` replays OUR stdin uuid unchanged; on 2.1.197
//     it appears when that message's turn starts (or when it is folded into a running turn);
//   - 2.1.332 adds `{"type":"command_lifecycle","command_uuid":U,"state":"queued|started|
//     completed"}`; `started` is the real ack (queued is not: it arrives for every line);
//   - `system/init` repeats at every turn start (it carries `session_id`);
//   - `result` is the one turn end; `is_error:true` (API errors, `error_during_execution` after
//     an interrupt) fails the wake; its `api_error_status` names the trouble;
//   - `system/api_retry` (`error_status`, `error`) is trouble that did not end the turn;
//   - `{"type":"control_response","response":{"subtype":"success"|"error","request_id":R}}`
//     answers our control request R.
// Any other line (assistant, tool results, unknown types) is work evidence only. A line that is
// not a JSON object is a malformed frame (transport-fatal for the generation).
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "wire/presence.h"

namespace shoal::runtime {

struct ClaudeLine {
  enum class Kind { kInit, kReplay, kAckStarted, kResult, kRetry, kControlResponse, kWork, kOther };
  Kind kind = Kind::kOther;
  std::string uuid;       // kReplay / kAckStarted: the client uuid acknowledged;
                          // kControlResponse: the request_id answered
  std::string sessionId;  // when the line carries one
  bool isError = false;   // kResult
  std::string detail;     // kResult with isError, kRetry: a readable summary
  std::optional<wire::PresenceCondition> condition;  // kResult with isError, kRetry
};

// kInvalidArgument `malformed-frame` when the line is not a JSON object with a string `type`.
Result<ClaudeLine> parseClaudeLine(std::string_view line);

// The control request (with its newline) that asks a fresh process to initialize; its
// control_response is the readiness handshake (the process is up and reading stdin; a
// `--resume` of an unknown session exits before answering).
std::string claudeInitializeRequest(std::string_view requestId);
// The interrupt control request (the running turn ends with an error `result`).
std::string claudeInterruptRequest(std::string_view requestId);

// The stdin line (with its newline) that hands `text` to Claude under `uuid`.
std::string claudeUserLine(std::string_view uuid, std::string_view text);

// The condition an HTTP status / error name from Claude maps to (429 rate_limit, 529
// overloaded, 401/403 auth, 402 billing, 400/413/422 request, 5xx server, else failed).
wire::PresenceCondition claudeCondition(int httpStatus, std::string_view errorName,
                                        std::string message);

}  // namespace shoal::runtime
