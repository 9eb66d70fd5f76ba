// OpenCode `opencode serve` wire shapes (docs/daemon.md, Runtimes): one SSE event of
// `GET /event` parsed into the facts the driver needs (OpenCodeEvent), the daemon-minted
// message ids `prompt_async` carries, and the request bodies it sends.
//
// Parsing is lenient about what it does not use (OpenCode adds fields and event types freely)
// and strict about what it does: an event that is not a JSON object with a string `type` is an
// error (`opencode-event-malformed`), and so is a known type whose identifying fields are
// missing or mistyped.
//
// Thread safety: pure functions, except mintOpenCodeMessageId (thread-safe, process-wide).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace shoal::runtime {

struct OpenCodeEvent {
  enum class Kind {
    kConnected,  // server.connected: the stream is live
    kHeartbeat,  // server.heartbeat
    kMessage,    // message.updated: `messageId`, `role`, `parentId`, completion facts
    kPart,       // message.part.updated / message.part.delta: `messageId`, `partType`
    kStatus,     // session.status: `status` busy | idle | retry | …
    kIdle,       // session.idle (deprecated; sent with every idle status)
    kError,      // session.error: `errorName`, `errorMessage`
    kCompacted,  // session.compacted
    kDisposed,   // server.instance.disposed: the stream is about to end
    kOther,      // anything else (session.updated, file.*, plugin.*, …)
  };
  Kind kind = Kind::kOther;
  std::string type;       // the raw type
  std::string sessionId;  // empty when the event names none
  // kMessage, kPart
  std::string messageId;
  std::string role;        // kMessage: user | assistant
  std::string parentId;    // kMessage (assistant): the user message it answers
  bool completed = false;  // kMessage: time.completed is set
  std::string finish;      // kMessage: e.g. stop, tool-calls (empty while running)
  bool summary = false;    // kMessage: a compaction summary assistant
  std::string providerId;  // kMessage: the model that answered (or that a user message asked)
  std::string modelId;
  std::string partType;  // kPart: text, tool, step-start, compaction, … ("delta" for deltas)
  bool compactionAuto = false;  // kPart of type compaction: auto:true
  bool pruned = false;          // kPart: a tool part with state.time.compacted (background prune)
  // kStatus
  std::string status;        // busy | idle | retry | …
  int64_t retryAttempt = 0;  // retry
  // kMessage with an error, kError, kStatus retry (its message)
  std::string errorName;
  std::string errorMessage;
};

// Kind::kOther for unknown types; an error for a malformed event.
Result<OpenCodeEvent> parseOpenCodeEvent(std::string_view data);

// A fresh user-message id in OpenCode's ascending format: "msg_" + 12 lowercase hex digits of
// (milliseconds since the epoch × 4096 + a per-millisecond counter) + 14 random base62
// characters. Never repeats in this process and never goes backwards when the wall clock does
// (a rollback keeps counting on from the last stamp); the random tail makes it unique across
// processes and daemons sharing an OpenCode data directory.
Result<std::string> mintOpenCodeMessageId();  // kUnavailable when the OS has no randomness

// The `prompt_async` body: {"messageID":id,"parts":[{"type":"text","text":text}]}.
std::string openCodePromptBody(std::string_view messageId, std::string_view text);

// The `summarize` body: {"providerID":p,"modelID":m,"auto":false}.
std::string openCodeSummarizeBody(std::string_view providerId, std::string_view modelId);

}  // namespace shoal::runtime
