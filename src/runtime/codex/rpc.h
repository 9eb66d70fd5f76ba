// CodexRpc: the facts the seat needs from one line of `codex app-server` (JSON-RPC over stdio,
// newline-delimited, no `jsonrpc` member; docs/daemon.md, Runtimes), and the request
// lines the Codex driver writes.
//
// Observed on the real binary (0.171) and relied on here:
//   - `turn/start` / `turn/steer` carry `clientUserMessageId`; it comes back as `clientId` on the
//     `userMessage` item (item/started and item/completed) — the surfaced boundary;
//   - `turn/started` and `turn/completed` (status completed | interrupted | failed, `error`) are
//   the
//     only busy/idle boundaries; `thread/status/changed` is advisory;
//   - `error` {willRetry:true} is trouble that did not end the turn; {willRetry:false} precedes a
//     `failed` turn/completed;
//   - the server sends requests of its own (approvals, `item/tool/call`) that must be answered;
//   - resuming an unknown thread fails with -32600 `no rollout found for thread id <id>` (resume)
//     or `thread not found: <id>` (turn/start).
// A line that is not a JSON object is a malformed frame (transport-fatal for the generation).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "wire/presence.h"

namespace shoal::runtime {

struct CodexLine {
  enum class Kind {
    kResponse,       // a result for our request `id`
    kErrorResponse,  // an error for our request `id` (`errorCode`, `detail`)
    kServerRequest,  // a request to us (`requestId`, `method`): must be answered
    kTurnStarted,
    kTurnCompleted,  // `turnStatus`, `detail` when failed
    kUserMessage,    // a userMessage item; `clientId` when echoed
    kError,          // the `error` notification (`willRetry`, `detail`)
    kThreadStatus,   // `thread/status/changed` (`threadStatus`: idle, active, …)
    kWork,           // agent output, tool items, deltas: activity evidence
    kOther,
  };
  Kind kind = Kind::kOther;
  int64_t id = -1;         // kResponse / kErrorResponse
  std::string requestId;   // kServerRequest: the id to answer, as raw JSON
  std::string method;      // notifications and server requests
  std::string threadId;    // kResponse to thread/start|resume (result.thread.id); notifications
  std::string turnId;      // turn notifications, kResponse to turn/start (result.turn.id)
  std::string turnStatus;  // kTurnCompleted
  std::string clientId;    // kUserMessage
  bool willRetry = false;  // kError
  int64_t errorCode = 0;   // kErrorResponse
  // kErrorResponse: the direct string members `code`, `kind` and `type` of `error.data`, in
  // that order (absent or non-string ones are "").
  std::string errorDataCode, errorDataKind, errorDataType;
  std::string detail;                                // error texts
  std::optional<wire::PresenceCondition> condition;  // kError, failed kTurnCompleted
  // kResponse to thread/read {includeTurns}: the thread's status type (`idle`, `active`, …),
  // whether turns were returned, and every userMessage clientId in them. kThreadStatus: the
  // new status type.
  std::string threadStatus;
  bool hasTurns = false;
  std::vector<std::string> clientIds;
  // kResponse to thread/read: every inbox receipt marker (`shoal-rcpt-` + 32 hex digits) found
  // anywhere in an mcpToolCall or dynamicToolCall item — a shoal_inbox page Codex received.
  std::vector<std::string> toolMarkers;
};

// kInvalidArgument `malformed-frame` when the line is not a JSON object.
Result<CodexLine> parseCodexLine(std::string_view line);

// What a thread/read answer (`read`, a kResponse) says about the thread asked for: the
// clientIds and inbox receipt markers its history holds; `complete` only for the full history
// of an inactive thread (status idle, notLoaded or systemError) — the one snapshot that proves
// an identity absent; `pending` for the full history of an active one. An answer about another
// thread says nothing (empty).
struct CodexReadSnapshot {
  std::vector<std::string> clientIds;
  std::vector<std::string> markers;
  bool complete = false;
  bool pending = false;
};
CodexReadSnapshot codexReadSnapshot(const CodexLine& read, std::string_view requestedThread);

// Request / notification lines, each with its newline.
std::string codexInitialize(int64_t id);
std::string codexInitialized();
std::string codexThreadStart(int64_t id, std::string_view cwd);
std::string codexThreadResume(int64_t id, std::string_view threadId, std::string_view cwd);
std::string codexThreadRead(int64_t id, std::string_view threadId);
// `turn/interrupt {threadId, turnId}`: answers `{}`; the turn ends with turn/completed
// `interrupted`.
std::string codexTurnInterrupt(int64_t id, std::string_view threadId, std::string_view turnId);
// `thread/compact/start {threadId}`: answers `{}` at once; the compaction runs as a turn of its
// own (turn/started … turn/completed) that cannot be steered.
std::string codexThreadCompactStart(int64_t id, std::string_view threadId);
std::string codexTurnStart(int64_t id, std::string_view threadId, std::string_view clientId,
                           std::string_view text);
std::string codexTurnSteer(int64_t id, std::string_view threadId, std::string_view turnId,
                           std::string_view clientId, std::string_view text);
// The answer to a server request we do not grant: approvals are declined (the seat's runtime
// runs with the approval policy of its own config; Shoal never approves on a model's behalf),
// anything else gets a -32601 error.
std::string codexDecline(std::string_view requestIdJson, std::string_view method);

// Whether a refused `thread/resume` (an error response) authorises one fresh thread (seed 004
// §2, docs/decisions/009): under the server-error outer code -32000, a direct structured
// `error.data.code|kind|type` of `thread_not_found` or `invalid_thread_id`, or the message forms
// below; under -32600 (what the pinned codex 0.171 answers) only the message forms
// `no rollout found for thread id …` and `thread not found: …`. Nothing else does: other codes,
// tokens in other members (`reason`, `status`, …), bare `invalid` / `not_found`, valid tokens
// under another outer code.
bool codexThreadLost(const CodexLine& error);

}  // namespace shoal::runtime
