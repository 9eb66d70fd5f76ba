// RuntimeDriver: one Process generation of a seat's runtime, as the seat sees it — the child,
// the protocol spoken on its stdin/stdout, and the facts it reports back (seed 004 §1.1, §2.1,
// §3; issue 5).
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
#include "daemon/seat_profile.h"
#include "runtime/child_process.h"
#include "wire/presence.h"

namespace shoal::daemon {

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

struct LaunchSpec {
  uint64_t generation = 0;
  std::string space;
  std::string runtimeLogPath;  // stdout transcript and stderr are appended here
  DriverSink sink;
  // Claude: the session to resume (empty: a fresh session).
  std::string resumeSession;
  // The seat's MCP client config (`<cwd>/.shoal/mcp.json`, mode 0600): Claude gets it with
  // --mcp-config; every runtime finds it in $SHOAL_MCP_CONFIG. Empty: no MCP endpoint.
  std::string mcpConfigPath;
  // How long one handoff may wait on a runtime that does not read its stdin.
  std::chrono::milliseconds stdinWriteTimeout{10000};
  // OpenCode: how long a prompt may wait for proof that a run took it (busy, retry or the
  // assistant answering it) before the generation is retired.
  std::chrono::milliseconds admissionWatchdog{60000};
};

class RuntimeDriver {
 public:
  virtual ~RuntimeDriver() = default;

  // True: a complete write is the surfaced boundary (raw stdin). False: the runtime
  // acknowledges each handoff (kAck) and ends turns (kTurnEnded).
  virtual bool surfacedOnWrite() const = 0;
  // The surfaced boundary is the runtime reading the handoff's last byte from its stdin: the
  // driver reports kAck (`detail` "stdin-read") once the pipe holds none of its bytes, and a
  // handoff still unread when the Process ends fails (`runtime-exited-before-reading`). No
  // turns: the seat may hand the next block over at once.
  virtual bool surfacedOnRead() const { return false; }
  // With surfacedOnRead: reading is not enough — the program acknowledges each message it
  // handled (`ack <shown id>` on $SHOAL_ACK_FD, exec_driver.cc), and only that surfaces it
  // (kAck with `ackedId`, detail "runtime-ack"); a message unacknowledged when the Process
  // ends fails `runtime-exited-before-ack`.
  virtual bool acksMessages() const { return false; }
  // True: no handoff before kReady (the driver started a readiness handshake at launch).
  virtual bool needsReady() const { return false; }
  // True: a handoff may be written while a turn runs (Codex `turn/steer`); it is acknowledged
  // on its own and ends with the turn. False: the seat waits for the turn's end.
  virtual bool steersMidTurn() const { return false; }
  // True: the runtime can be asked what it read (reconcile()); its answer is kReconciled.
  virtual bool reconciles() const { return false; }
  // Asks the runtime for the history of `threadId` (Codex `thread/read {includeTurns}`).
  virtual Status reconcile(const std::string& threadId) {
    return failedPrecondition("no-reconciler",
                              "this runtime cannot be asked what it read: " + threadId);
  }
  // True: the runtime can compact its session's context on request (compact()).
  virtual bool compacts() const { return false; }
  // Starts compacting the session's context. Called only at an idle boundary (no turn running,
  // no handoff unresolved). OK: the request went out; the compaction's end is reported as one
  // kTurnEnded (after a kTurnStarted), and no handoff may be written until then.
  virtual Status compact() {
    return failedPrecondition("compaction-unsupported", "this runtime cannot compact on request");
  }
  // True: the running turn can be interrupted on request (interrupt()).
  virtual bool interrupts() const { return false; }
  // Asks the runtime to stop its running turn (Claude `control_request` interrupt, Codex
  // `turn/interrupt`, OpenCode `/abort`). OK: asked; the turn's end is reported as usual (a
  // kTurnEnded with isError). Refused when there is no turn to stop or it cannot be stopped
  // safely yet.
  virtual Status interrupt() {
    return failedPrecondition("interrupt-unsupported", "this runtime cannot be interrupted");
  }
  // Writes one handoff. OK iff every byte went out; bytesWritten says how many did otherwise.
  virtual runtime::StdinWrite handoff(const Handoff& handoff) = 0;
  // Begins a graceful stop: the runtime reads EOF and may finish what it already read.
  virtual void closeInput() = 0;
  // Ends the process group now (SIGTERM, `grace`, SIGKILL). Blocks until the leader is reaped.
  virtual void kill(std::chrono::milliseconds grace) = 0;
  virtual pid_t pid() const = 0;
  // The session the runtime reported (Claude `session_id`), empty until known. Any thread.
  virtual std::string sessionId() const { return {}; }
};

// Launches `profile`'s runtime as generation `spec.generation`. Errors name the program
// (spawn failures) or `runtime-not-built` for a runtime kind with no driver yet.
Result<std::unique_ptr<RuntimeDriver>> launchRuntime(const SeatProfile& profile, LaunchSpec spec);

// Whether the program `profile` would run exists and is executable for this process: a path
// (relative ones against the seat's cwd), or a name found on PATH. kFailedPrecondition
// `runtime-missing` naming the program and how to install it otherwise.
Status checkRuntimeProgram(const SeatProfile& profile, std::string_view pathEnv);

// The argv a seat runs for `profile` (the profile's command plus the driver's protocol flags).
std::vector<std::string> runtimeArgv(const SeatProfile& profile, const LaunchSpec& spec);

}  // namespace shoal::daemon
