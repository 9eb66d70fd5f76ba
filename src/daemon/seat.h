// Seat: one agent principal on the mesh and the runtime Process generations that speak for it
// (docs/architecture.md, The path of one DM, steps 3–6; seed 004 §2, §2.1, §2.2, §3, §3.3;
// issue 5).
//
// Admission (mesh pump threads): every delivery addressed to the seat is committed `queued` in
// the seat's ownership journal (`<cwd>/.shoal/.daemon-state.json`) and only then accepted, so the
// broker's ack follows durable ownership; a journal failure naks it for later. Admission runs
// whatever the Process is doing — sleeping, restarting, stopping — so nothing waits in memory.
// The queued backlog is the seat's bounded local inbox (local_inbox.h, decision 007): at
// `inboxCapacity` an arrival makes room by ending queued channel posts (pull-only first), is
// dropped itself (a live channel copy), or — when only directed items are queued — is not
// acked, so the broker redelivers it once the session drains. A queued DM is never dropped.
//
// The gate (one thread per seat) owns every runtime mutation and lifecycle decision, one event
// at a time — admissions, driver facts, commands, timers — so the delivery gate, the start
// reservation and the publish fence are one serialised owner:
//   - Generations: every launch reserves the next generation; a driver's facts carry it, and
//     facts of any generation but the current one are dropped (a retired Process cannot move
//     ownership, end a turn or schedule recovery).
//   - Dispatch (the `agent:deliver` boundary): only to the current generation while it is
//     accepting and idle. One block per handoff (presentation.h): the foreground lane first
//     (directed messages admitted live, in order), else the backlog oldest first. The block's
//     owners become inflight(dispatching) — durable — before the first byte is written:
//       every byte written:  raw stdin (exec) → surfaced;  Claude → inflight(outcome_unknown)
//                            until the runtime acknowledges the handoff uuid → surfaced;
//       zero bytes:          requeued (the runtime never saw it), the generation retired;
//       a partial write:     terminal failed (`partial-stdin-write`), never replayed, retired.
//     A Claude turn that ends without acknowledging the handoff fails it (`no-runtime-ack`).
//     Mid-turn arrivals stay queued and go out at the turn end, in order (busy-turn
//     continuation through the journal).
//   - Sleeping (the `agent:start` boundary): no Process; a fresh directed message (DM,
//     anycast, @mention of this seat, stored after the seat attached) cold-starts the runtime
//     with that message as the launch input. Backlog — anything stored before the seat
//     attached, historical replays, ambient channel traffic — never starts it.
//   - Unexpected exit of the current generation: non-accepting at once; its inflight owners end
//     terminal `failed` (`no-read-reconciliation`: neither raw stdin nor Claude can say whether
//     the runtime read them; a blind replay could run the work twice), a failed receipt goes to
//     each sender, `exited-unexpectedly` and `wake-failed` events are published; then, while
//     the seat should run, a no-prompt relaunch after a backoff (0.5 s doubling, at most 30 s;
//     five crashes or failed launches in a row without a completed turn or 60 s of life park
//     the seat with a `failed` condition until `seat start`) and the oldest live owner is
//     handed to it after publication (and, for Claude, after its readiness handshake).
//   - Restart of the daemon: inflight owners left by the previous daemon end `failed` the same
//     way before anything else runs.
//   - Sleep / Stop are strong completion boundaries: one retirement at a time (non-accepting,
//     stdin closed, up to `stopGrace` for the runtime to finish what it read, then the group is
//     killed), every concurrent caller waits for that one completion. Stop then leaves the mesh
//     (presence offline). requestStop(deadline) + waitStopped(deadline) is the bounded variant
//     for daemon shutdown: the grace is cut to the deadline, started concurrently for all seats.
//   - Compaction (compact(), decision 011): asked by the operator, started only at an idle
//     boundary (no turn, no unresolved handoff, no reconciliation); the session is unsafe to
//     resume meanwhile, nothing is dispatched until the compaction's one turn end, and one
//     that has not ended within `compactionTimeout` retires the generation.
//   - Interrupt (interrupt(), decision 012): the runtime's own interrupt of the running turn;
//     the turn ends failed, "interrupted by `shoal seat interrupt`", unless it had finished.
//
// The seat's tools (seat_tools.h) reach into it in three ways:
//   - Inbox pages (`shoal_inbox`): claimed on the gate into inflight(outcome_unknown) under
//     random receipts with a final-hop lease bound to the generation (inbox_leases.h),
//     surfaced only when the page's HTTP response was written whole, failed at the lease's end
//     otherwise (decision 006).
//   - Visible replies (reply_ledger.h): each surfaced directed delivery of a runtime with turns
//     waits for a `shoal_dm` / `shoal_send` to its target; final-check at the turn end, an
//     error, an exit or a stop; `wake-result` events.
//   - Attention: `shoal_status attention` (open | dnd | focus) and `shoal_channel_mode`
//     (quiet | muted, journal section `attention.channels`) decide what ambient channel posts
//     do (docs/tools.md); both are mirrored into presence.
//
// Presence follows the runtime: working at a turn start, idle at its end, the runtime's
// reported condition (rate limit, overloaded, API error …) until the next turn, activity
// "sleeping" while asleep, offline once stopped.
//
// Thread safety: every public method may be called from any thread.
// Lifetime: the destructor stops the seat (strong) and joins the gate.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "daemon/local_inbox.h"
#include "daemon/seat_profile.h"

namespace shoal::transport {
class JetStream;
}

namespace shoal::daemon {

enum class SeatMode { kRunning, kSleeping };

struct SeatOptions {
  std::string url;           // the broker
  std::string nkeySeedFile;  // the broker credential (empty: none)
  // Auth mode: the seat's own `.creds` (seat_credentials.h) and the inbox its grants allow.
  std::string credentialsFile;
  std::string tlsCaFile;  // a broker that requires TLS: the CA to trust
  std::string inboxPrefix;
  std::string space;  // the seat's space
  SeatMode mode = SeatMode::kRunning;
  std::chrono::milliseconds stopGrace{3000};
  // A handoff to a runtime that stopped reading its stdin fails after this (partial or zero
  // bytes, see above).
  std::chrono::milliseconds stdinWriteTimeout{10000};
  // Reconciliation (seed 004 §3.2): one read may take this long; an owner the runtime keeps
  // showing as `pending` (its thread active) is failed after this long.
  std::chrono::milliseconds reconcileReadTimeout{10000};
  std::chrono::milliseconds reconcilePendingCeiling{std::chrono::minutes(15)};
  // OpenCode: how long a prompt waits for proof a run took it
  // (runtime::LaunchSpec.admissionWatchdog).
  std::chrono::milliseconds admissionWatchdog{60000};
  std::chrono::milliseconds restartBackoff{500};
  std::chrono::milliseconds maxRestartBackoff{30000};
  int maxCrashesInARow = 5;
  // How long an inbox receipt waits for proof that the page carrying it was written (seed 004
  // §2.1: longer than Codex's 5-minute MCP request timeout). Tests shorten it.
  std::chrono::milliseconds finalHopLease{360000};
  // SO_SNDBUF of the seat's MCP connections; 0 leaves it to the kernel. Tests use a small one
  // to hold a response write open.
  int mcpSendBufferBytes = 0;
  // The local inbox: at most this many queued records (at least 1). Tests shrink it.
  size_t inboxCapacity = kLocalInboxCapacity;
  // A compaction (`shoal seat compact`) that has not ended after this long retires the runtime
  // generation (the next one resumes the session).
  std::chrono::milliseconds compactionTimeout{std::chrono::minutes(10)};
};

struct SeatCounters {
  uint64_t admitted = 0;
  uint64_t surfaced = 0;
  uint64_t failed = 0;
  uint64_t receipts = 0;
  uint64_t launches = 0;
  uint64_t unexpectedExits = 0;
  uint64_t coldStarts = 0;
  uint64_t turns = 0;
  uint64_t inboxClaimed = 0;  // deliveries handed out by shoal_inbox pages
  uint64_t replied = 0;       // wake results, by kind
  uint64_t noVisibleReply = 0;
  uint64_t replyFailed = 0;
  // The local inbox (local_inbox.h): queued channel posts ended to make room; arrivals left
  // unacknowledged for the broker to redeliver; channel arrivals dropped without being kept (a
  // live copy that found no room, a durable one turned away kMaxInboxEvictions times, then
  // acknowledged).
  uint64_t inboxEvicted = 0;
  uint64_t inboxRefused = 0;
  uint64_t inboxDropped = 0;
  // `surfaced`, split by the evidence that proved it (wire/seat_receipt.h evidenceKind): the
  // runtime echoed the handoff, an exec program read it from stdin, it was written whole to stdin
  // (no proof of reading), an inbox page carrying it was written, or reconciliation found it.
  uint64_t surfacedRuntimeAck = 0;
  uint64_t surfacedStdinRead = 0;
  uint64_t surfacedStdinWrite = 0;
  uint64_t surfacedInboxPage = 0;
  uint64_t surfacedReconciled = 0;
  // The direct lane (seed 004 §2.1): DMs admitted straight to inflight(dispatching) for an idle
  // runtime and handed with no second commit; claims the runtime was no longer idle for when
  // they reached the gate (put back in the queue).
  uint64_t direct = 0;
  uint64_t directRequeued = 0;
  friend bool operator==(const SeatCounters&, const SeatCounters&) = default;
};

// One visible-reply outcome (reply_ledger.h), kept for `shoal ps`.
struct SeatWakeResult {
  std::string messageId;
  std::string target;  // peer:<id> | channel:<name>
  std::string result;  // replied | completed_without_visible_reply | failed
  std::string replyId;
  std::string reason;
  int64_t atMs = 0;
};

// The last compaction asked of the seat (`shoal seat compact`).
struct SeatCompaction {
  std::string state;  // "" (never asked) | compacting | compacted | failed
  std::string detail;
  int64_t startedAtMs = 0;
  int64_t endedAtMs = 0;
};

struct SeatSnapshot {
  // running | busy | compacting | starting (also: launched, readiness handshake not answered
  // yet) | restarting | sleeping | retiring | parked | stopped
  std::string state;
  bool processRunning = false;
  uint64_t generation = 0;
  int pid = 0;
  size_t queued = 0;
  size_t inflight = 0;
  std::string note;  // why the seat is not running, or the last trouble
  SeatCounters counters;
  size_t awaitingReply = 0;  // surfaced directed deliveries with no visible reply yet
  size_t inboxLeases = 0;    // inbox receipts awaiting proof of their final hop
  std::vector<SeatWakeResult> recentResults;        // newest last, at most 20
  std::map<std::string, std::string> channelModes;  // channel → quiet | muted
  SeatCompaction compaction;
  // Runtimes that resume a session (claude, codex, opencode): the saved session, and whether
  // the journal marks it safe to resume without reconciling (seed 004 §1.1).
  std::string session;
  bool resumeSafe = false;
  // The failed write that poisoned the seat's journal ("" while it is healthy) and when the
  // seat first saw it. A poisoned journal refuses every mutation; the daemon reopens the seat
  // (with backoff) until it can write again (docs/daemon.md, "A full disk").
  std::string journalPoisoned;
  int64_t journalPoisonedSinceMs = 0;
  // Receipts the broker has not stored yet; the seat keeps publishing them (receipt_outbox.h).
  size_t receiptsOwed = 0;
};

class Seat {
 public:
  static Result<std::unique_ptr<Seat>> open(const SeatProfile& profile, SeatOptions options);
  ~Seat();
  Seat(const Seat&) = delete;
  Seat& operator=(const Seat&) = delete;

  // Running mode; launches the runtime if there is none (also un-parks a crash-looping seat).
  // Returns once the launch was published or failed.
  Status wake();
  // Sleeping mode: retires the Process (strong). Admission continues.
  Status sleep();
  // Starts compacting the runtime's session context (Codex `thread/compact/start`, OpenCode
  // summarize). Returns once it started or was refused: `seat-not-running`,
  // `compaction-unsupported`, `seat-busy` (a turn runs or deliveries are unresolved),
  // `already-compacting`. Its end is in snapshot().compaction. No delivery is handed to the
  // runtime while it runs; arrivals wait in the journal.
  Status compact();
  // Stops the runtime's running turn (`shoal seat interrupt`). Returns once asked or refused:
  // `seat-not-running`, `interrupt-unsupported` (exec), `not-in-a-turn`, `compacting`, or the
  // runtime's own refusal. The turn then ends failed (`interrupted: …`); its deliveries stay
  // surfaced (the runtime read them) and their wakes fail; queued ones go out next.
  Status interrupt();
  // Retires the Process and leaves the mesh (strong). Idempotent.
  void stop();
  // The bounded variant (daemon shutdown): request on every seat first, then wait on each with
  // the same deadline. waitStopped is true when the seat completed its stop in time.
  void requestStop(std::chrono::steady_clock::time_point deadline);
  bool waitStopped(std::chrono::steady_clock::time_point deadline);

  const SeatProfile& profile() const;
  std::string runtimeLogPath() const;
  // The seat's MCP client config (`<cwd>/.shoal/mcp.json`, 0600): its endpoint and token.
  std::string mcpConfigPath() const;
  SeatSnapshot snapshot() const;

  class Impl;

 private:
  explicit Seat(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shoal::daemon
