// RuntimeDriver: one Process generation of a seat's runtime, as the seat sees it — the child,
// the protocol spoken on its stdin/stdout, and the facts it reports back (seed 004 §1.1, §2.1,
// §3; issue 5).
//
// A driver is given everything it needs in its LaunchSpec — argv inputs, cwd, environment, the
// MCP endpoint, the allowed tools — and never reads a seat's profile or files. What it can do
// (its protocol's capabilities) is one RuntimeTraits value, fixed for the driver's life.
//
// A driver is launched for one generation and never reused: every event it reports carries
// that generation, so the seat can drop the facts of a retired Process. Events arrive on the
// driver's reader thread through the sink; the sink must not block for long (the seat queues
// them for its gate thread).
//
//   kAck          the runtime acknowledged it read handoff `handoffId` (Claude: the replayed
//                 user message with our uuid, or `command_lifecycle` started; exec: its last
//                 byte left the stdin pipe, or — `bytesRead` — only that many of its bytes had
//                 when the program ended; an acking exec program: `ackedId`, the one message
//                 of the handoff it acknowledged) — the surfaced boundary for runtimes that are
//                 not `surfacedOnWrite`
//   kTurnStarted  the runtime began a turn (working)
//   kTurnEnded    the runtime's authoritative turn end; `isError` + `detail` when it reported
//                 an error result (the wake failed). A compaction (compact()) ends with one
//                 kTurnEnded too: `isError` with a `context_compaction_failed: …` detail when it
//                 did not complete
//   kCondition    the runtime reported trouble that did not end the turn (rate limit, retry)
//   kWork         a work event (assistant text, a tool step): activity evidence only
//   kReady        the runtime answered its readiness handshake (drivers that needReady())
//   kReconciled   the answer to reconcile(thread): `clientIds` the thread's history holds
//                 (and `markers`, the inbox receipts its tool items carry),
//                 `complete` when it is a complete snapshot of an inactive thread (only that
//                 proves an id absent), `pending` when it is the complete history of an active
//                 one, `detail` = the error of a failed read
//   kExited       the Process is gone: its exit status, and `detail` naming a transport fault
//                 (oversized or malformed frame, read error) when that is what ended it. The
//                 last event of a generation; the reader has drained every line before it.
//
// Thread safety: handoff(), closeInput() and kill() are called by the seat's gate thread only.
// Lifetime: the destructor kills the process group and joins the reader; no event is reported
// after it returns.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "base/result.h"
#include "base/subprocess.h"
#include "runtime/child_process.h"
#include "runtime/kind.h"
#include "runtime/traits.h"
#include "wire/presence.h"

namespace shoal::runtime {

struct DriverEvent {
  enum class Kind {
    kAck,
    kTurnStarted,
    kTurnEnded,
    kCondition,
    kWork,
    kReady,
    kReconciled,
    kExited
  };
  Kind kind = Kind::kWork;
  uint64_t generation = 0;
  std::string handoffId;  // kAck
  // kAck from a surfacedOnRead driver whose Process ended (or was stopped) part way through
  // the handoff: how many of its bytes were read. nullopt: all of them.
  std::optional<size_t> bytesRead;
  // kAck from an acksMessages() driver: the owner id (HandoffItem::ownerId) of the one message
  // the program acknowledged; empty otherwise (the whole handoff, or bytesRead of it).
  std::string ackedId;
  bool isError = false;  // kTurnEnded
  std::string detail;    // kTurnEnded (error text), kExited (transport fault), kCondition
  std::optional<wire::PresenceCondition> condition;  // kCondition, kTurnEnded with isError
  std::optional<ExitStatus> exit;                    // kExited
  std::vector<std::string> clientIds;                // kReconciled
  bool complete = false;                             // kReconciled
  // kReconciled: the complete history of an active thread — what it lacks may not have
  // materialised yet (seed 004 §3.2 `pending`).
  bool pending = false;
  std::string threadId;  // kReconciled: the thread that was read
  // kReconciled: the inbox receipt markers found in the history's tool items (shoal_inbox pages
  // the runtime received).
  std::vector<std::string> markers;
};

using DriverSink = std::function<void(DriverEvent)>;

// One message of a handoff, as an acknowledging program names it.
struct HandoffItem {
  std::string ownerId;  // the journal record's id (the seat's key for it)
  std::string shownId;  // the id as the block shows it after ", id " (presentation.h)
};

// One handoff: a rendered delivery block and the id the runtime will acknowledge it by.
struct Handoff {
  std::string handoffId;           // a UUID minted by the seat
  std::string text;                // the delivery block
  std::vector<HandoffItem> items;  // the messages in the block, in order
};

// The seat's MCP endpoint as a runtime reaches it.
struct McpAccess {
  std::string url;          // http://127.0.0.1:<port>/mcp
  std::string bearerToken;  // sent as `Authorization: Bearer <token>`
  // The client config file the seat wrote for it (`<cwd>/.shoal/mcp.json`, mode 0600): Claude
  // gets it with --mcp-config; every runtime finds it in $SHOAL_MCP_CONFIG.
  std::string configPath;
};

struct LaunchSpec {
  RuntimeKind kind = RuntimeKind::kExec;
  uint64_t generation = 0;
  // The seat's command; empty: the runtime's default program (claude, codex app-server,
  // opencode serve). The driver adds its protocol flags (runtimeArgv()).
  std::vector<std::string> command;
  std::string cwd;
  // Variables passed through from the daemon's environment (PATH and HOME always are).
  std::vector<std::string> envAllowList;
  // Variables set for the runtime (SHOAL_SEAT, SHOAL_SPACE, …); the driver adds its own.
  std::vector<std::pair<std::string, std::string>> env;
  std::string seatId;          // the seat's dot-form principal, for names and logs
  std::string runtimeLogPath;  // stdout transcript and stderr are appended here
  DriverSink sink;
  // The session to resume (empty: a fresh session).
  std::string resumeSession;
  std::optional<McpAccess> mcp;  // nullopt: no MCP endpoint
  // Claude: the tools it may call without a permission prompt (`--allowedTools`).
  std::vector<std::string> allowedTools;
  // Exec: the program acknowledges each message on fd 3 (`SHOAL_ACK_FD`).
  bool acks = false;
  // How long one handoff may wait on a runtime that does not read its stdin.
  std::chrono::milliseconds stdinWriteTimeout{10000};
  // OpenCode: how long a prompt may wait for proof that a run took it (busy, retry or the
  // assistant answering it) before the generation is retired.
  std::chrono::milliseconds admissionWatchdog{60000};
};

class RuntimeDriver {
 public:
  virtual ~RuntimeDriver() = default;

  // What this runtime's protocol can do (set at launch, never changes).
  const RuntimeTraits& traits() const { return traits_; }

  // Asks the runtime for the history of `threadId` (Codex `thread/read {includeTurns}`).
  virtual Status reconcile(const std::string& threadId) {
    return failedPrecondition("no-reconciler",
                              "this runtime cannot be asked what it read: " + threadId);
  }
  // Starts compacting the session's context. Called only at an idle boundary (no turn running,
  // no handoff unresolved). OK: the request went out; the compaction's end is reported as one
  // kTurnEnded (after a kTurnStarted), and no handoff may be written until then.
  virtual Status compact() {
    return failedPrecondition("compaction-unsupported", "this runtime cannot compact on request");
  }
  // Asks the runtime to stop its running turn (Claude `control_request` interrupt, Codex
  // `turn/interrupt`, OpenCode `/abort`). OK: asked; the turn's end is reported as usual (a
  // kTurnEnded with isError). Refused when there is no turn to stop or it cannot be stopped
  // safely yet.
  virtual Status interrupt() {
    return failedPrecondition("interrupt-unsupported", "this runtime cannot be interrupted");
  }
  // Writes one handoff. OK iff every byte went out; bytesWritten says how many did otherwise.
  virtual StdinWrite handoff(const Handoff& handoff) = 0;
  // Begins a graceful stop: the runtime reads EOF and may finish what it already read.
  virtual void closeInput() = 0;
  // Ends the process group now (SIGTERM, `grace`, SIGKILL). Blocks until the leader is reaped.
  virtual void kill(std::chrono::milliseconds grace) = 0;
  virtual pid_t pid() const = 0;
  // The session the runtime reported (Claude `session_id`), empty until known. Any thread.
  virtual std::string sessionId() const { return {}; }

 protected:
  explicit RuntimeDriver(RuntimeTraits traits) : traits_(traits) {}

 private:
  const RuntimeTraits traits_;
};

}  // namespace shoal::runtime
