// The seat's internal declaration, shared by the files of src/daemon/seat/ (the seat's
// implementation, split by part): the helper types, constants and functions the parts share and
// `class Seat::Impl`. Not an API: include it only from the files of src/daemon/seat/; everything
// else uses daemon/seat.h.
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <thread>

#include "base/clock.h"
#include "base/log_throttle.h"
#include "base/mutex.h"
#include "daemon/admitted_seqs.h"
#include "daemon/backlog_mark.h"
#include "daemon/inbox_leases.h"
#include "daemon/local_inbox.h"
#include "daemon/reply_ledger.h"
#include "daemon/runtime_driver.h"
#include "daemon/seat.h"
#include "daemon/seat_files.h"
#include "daemon/seat_history.h"
#include "daemon/stored_delivery.h"
#include "daemon/wake_events.h"
#include "journal/ownership_journal.h"
#include "mcp/server.h"
#include "mesh/endpoint.h"
#include "mesh/presence_publisher.h"
#include "transport/connection.h"
#include "transport/jetstream.h"

namespace shoal::daemon {
// What the parts of the seat share; until the split these lived in seat.cc's anonymous namespace.
namespace seat_parts {

using Clock_ = std::chrono::steady_clock;
using TimePoint = Clock_::time_point;
using std::chrono::milliseconds;

constexpr milliseconds kCrashWindow{60000};
constexpr milliseconds kDispatchRetry{1000};
constexpr milliseconds kWorkEventEvery{1000};
// A refusal repeated (a flood of poison messages) is logged once per reason per interval.
constexpr milliseconds kRefusalLogInterval{10000};
// Inside WAKE_<space>'s 2-minute duplicate window, with a margin: how far back a journal
// without a receipt outbox (an older Shoal's) republishes receipts.
constexpr milliseconds kReceiptReplayWindow{100000};
// The journal section holding the receipts owed to senders (receipt_outbox.h).
constexpr std::string_view kReceiptsSection = "seat.receipts";
// The receipt outbox is written at most this often (and at a stop).
constexpr milliseconds kReceiptsSaveEvery{2000};
// The journal section holding the DM stream sequences admitted (admitted_seqs.h).
constexpr std::string_view kDmAdmittedSection = "seat.dm_admitted";
// The journal section naming the current runtime Process: {"pid":N,"program":"<argv[0]>"}.
constexpr std::string_view kProcessSection = "runtime.process";
// The journal section holding the runtime session to resume: {"id":"<session id>"}.
constexpr std::string_view kSessionSection = "runtime.session";
// A runtime that does not answer its readiness handshake in this time is retired.
constexpr milliseconds kReadyTimeout{60000};
// The journal section holding per-channel attention: {"<channel>":"quiet"|"muted",…}.
constexpr std::string_view kChannelModesSection = "attention.channels";
// The journal `wake` class of a delivery (the record's `wake`): directed ones (dm, anycast,
// channel-mention) always go out; ambient channel posts follow the attention mode; pull-only
// ones (a quiet channel's posts, historical ambient) only an inbox page takes.
constexpr std::string_view kAmbientWake = "channel";
constexpr std::string_view kMentionWake = "channel-mention";
constexpr std::string_view kPullOnlyWake = "channel-pull";
// An admission whose evictions lost a race with the gate (a victim was dispatched or claimed
// meanwhile) chooses again, at most this many times in all.
constexpr int kInboxAttempts = 3;
// Steered handoffs one turn takes at most; later arrivals wait for the turn's end.
constexpr size_t kMaxSteersPerTurn = 8;
// Owners handed to a runtime that proves reading (exec) and not proven read yet: no new block
// goes out beyond this many, so the gate settles what was read before it hands out more (a
// burst otherwise piles inflight owners up to the journal's cap, whose reclaim would fail
// messages the runtime had read).
constexpr size_t kMaxUnreadOwners = 128;
// A directed arrival that finds the local inbox full of directed messages waits this long for
// room on its pump thread (the broker keeps the rest of the burst) before it is left
// unacknowledged for the broker to redeliver. After one such wait times out, arrivals do not
// wait again until room is made (a runtime that stopped reading costs one wait, not one each).
constexpr milliseconds kRoomWait{2000};
// Reconciliation reads (seed 004 §3.2): six attempts, backoff from 100 ms doubling to 5 s.
constexpr int kReconcileAttempts = 6;
// A delivery handed to the runtime this many times, each time given back unread (the runtime
// died first, reconciliation proved it absent, or it took no byte), is poison: failed.
constexpr int kMaxHandoffs = 3;
constexpr milliseconds kReconcileMaxBackoff{5000};
// How long a retirement waits for inbox pages whose write outcome is not known yet.
constexpr milliseconds kLeaseDrain{2000};
// How long a shoal_inbox call waits for the gate.
constexpr milliseconds kInboxWait{10000};
constexpr size_t kInboxPageDefault = 10;
constexpr size_t kInboxPageMax = 50;
constexpr size_t kRecentResults = 20;

// One command's completion, shared by every caller waiting for it.
class Completion {
 public:
  void finish(Status status) {
    MutexLock lock(mu_);
    if (done_) return;
    done_ = true;
    status_ = std::move(status);
    cv_.notifyAll();
  }
  // nullopt deadline: as long as it takes. False when the deadline passed first.
  bool wait(std::optional<TimePoint> deadline) {
    MutexLock lock(mu_);
    while (!done_) {
      if (!deadline) {
        cv_.wait(mu_);
      } else if (!cv_.waitUntil(mu_, *deadline) && !done_) {
        return false;
      }
    }
    return true;
  }
  Status status() {
    MutexLock lock(mu_);
    return status_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool done_ SHOAL_GUARDED_BY(mu_) = false;
  Status status_ SHOAL_GUARDED_BY(mu_);
};

// One shoal_inbox page: asked on an MCP worker thread, claimed on the gate.
// A caller that gave up waiting abandons it; the gate then claims nothing (a page nobody will
// write must not take deliveries out of the queue).
struct InboxRequest {
  size_t limit = kInboxPageDefault;
  mcp::ToolResult result;
  Completion done;
  Mutex mu;
  bool taken SHOAL_GUARDED_BY(mu) = false;      // the gate began the claim
  bool abandoned SHOAL_GUARDED_BY(mu) = false;  // the caller stopped waiting first
};

struct GateEvent {
  enum class Kind { kAdmitted, kDriver, kWake, kSleep, kStop, kInbox, kCompact, kInterrupt };
  Kind kind = Kind::kAdmitted;
  std::string id;      // kAdmitted
  bool fresh = false;  // kAdmitted: a current directed event (may cold-start a sleeping seat)
  // kAdmitted: `id` was refused by the full local inbox and waits at the broker (not queued).
  bool waiting = false;
  DriverEvent driver;  // kDriver
  std::shared_ptr<Completion> done;
  std::optional<TimePoint> deadline;    // kStop
  std::shared_ptr<InboxRequest> inbox;  // kInbox
};

// An owner handed to the current generation, with the token of its last transition.
struct Handed {
  std::string id;
  journal::OwnerToken token;
  std::string sender;
  // Visible-reply obligation once surfaced (reply_ledger.h); empty: none.
  std::string replyTarget;
  std::string replyKey;
  uint64_t replySeq = 0;  // ReplyLedger::reserve() at handoff
};

// Where a reply to `d` goes, for a delivery that asks for one: a DM or job → its sender, an
// @mention of the seat → the channel. Ambient channel posts ask for none.
inline std::optional<std::pair<std::string, std::string>> replyTargetOf(
    const StoredDelivery& d, const wire::Principal& self) {
  switch (d.kind) {
    case wire::DeliveryKind::kDm:
    case wire::DeliveryKind::kAnycast:
      return std::make_pair(d.message.from.id, peerTargetKey(d.message.from.id));
    case wire::DeliveryKind::kChannel:
      for (const auto& m : d.message.mentions) {
        if (m == self.dotForm() || m == self.actor) {
          return std::make_pair(d.message.routing.target,
                                channelTargetKey(d.message.routing.target));
        }
      }
      return std::nullopt;
  }
  return std::nullopt;
}

struct ActiveHandoff {
  std::string id;  // the uuid the runtime acknowledges
  std::vector<Handed> owners;
  bool acked = false;
  std::vector<size_t> ends;  // surfacedOnRead: the byte of the block after each owner's item
};

enum class Retiring { kNone, kSleep, kStop };

}  // namespace seat_parts

// The parts name these unqualified, as the one file did.
using seat_parts::ActiveHandoff;
using seat_parts::Clock_;
using seat_parts::Completion;
using seat_parts::GateEvent;
using seat_parts::Handed;
using seat_parts::InboxRequest;
using seat_parts::kAmbientWake;
using seat_parts::kChannelModesSection;
using seat_parts::kCrashWindow;
using seat_parts::kDispatchRetry;
using seat_parts::kDmAdmittedSection;
using seat_parts::kInboxAttempts;
using seat_parts::kInboxPageDefault;
using seat_parts::kInboxPageMax;
using seat_parts::kInboxWait;
using seat_parts::kLeaseDrain;
using seat_parts::kMaxHandoffs;
using seat_parts::kMaxSteersPerTurn;
using seat_parts::kMaxUnreadOwners;
using seat_parts::kMentionWake;
using seat_parts::kProcessSection;
using seat_parts::kPullOnlyWake;
using seat_parts::kReadyTimeout;
using seat_parts::kReceiptReplayWindow;
using seat_parts::kReceiptsSaveEvery;
using seat_parts::kReceiptsSection;
using seat_parts::kRecentResults;
using seat_parts::kReconcileAttempts;
using seat_parts::kReconcileMaxBackoff;
using seat_parts::kRefusalLogInterval;
using seat_parts::kRoomWait;
using seat_parts::kSessionSection;
using seat_parts::kWorkEventEvery;
using seat_parts::milliseconds;
using seat_parts::replyTargetOf;
using seat_parts::Retiring;
using seat_parts::TimePoint;

class Seat::Impl {
 public:
  Impl(SeatProfile profile, SeatOptions options)
      : profile_(std::move(profile)), options_(std::move(options)), mode_(options_.mode) {}

  ~Impl() {
    stop();
    if (gate_.joinable()) gate_.join();
  }

  Status open();
  Status command(GateEvent::Kind kind, std::optional<TimePoint> deadline, bool wait);
  void stop() { (void)command(GateEvent::Kind::kStop, std::nullopt, true); }
  void requestStop(TimePoint deadline) { (void)command(GateEvent::Kind::kStop, deadline, false); }
  bool waitStopped(TimePoint deadline) {
    std::shared_ptr<Completion> done;
    {
      MutexLock lock(mu_);
      done = stopDone_;
    }
    return done == nullptr || done->wait(deadline);
  }
  SeatSnapshot snapshot() const;
  std::string runtimeLogPath() const { return seatFilesDir(profile_.cwd) + "/runtime.log"; }
  const std::string& mcpConfigPath() const { return mcpConfigPath_; }
  // shoal_inbox (any thread but the gate).
  mcp::ToolResult inboxPage(size_t limit);
  // A visible reply the runtime sent through a tool (any thread).
  uint64_t replyFrontier(const std::string& targetKey) const { return ledger_.frontier(targetKey); }
  void replied(const std::string& targetKey, uint64_t seenUpTo, const std::string& replyId);
  // shoal_channel_mode (any thread): "normal" clears the override.
  Status setChannelMode(const std::string& channel, const std::string& mode);

  const SeatProfile profile_;

 private:
  // --- any thread ---
  void post(GateEvent event);
  mesh::HandlerVerdict admit(const mesh::Delivery& delivery);
  mesh::HandlerVerdict admitOne(const mesh::Delivery& delivery, bool fresh);
  // A fetched batch: runs of plain directed copies are admitted in one transaction each (one
  // fsync chain), everything else through admitOne, all in arrival order.
  std::vector<mesh::HandlerVerdict> admitBatch(const std::vector<mesh::Delivery>& deliveries);
  bool batchable(const mesh::Delivery& delivery, size_t ahead);
  void admitTogether(const std::vector<mesh::Delivery>& deliveries,
                     const std::vector<std::pair<size_t, bool>>& run,
                     std::vector<mesh::HandlerVerdict>& verdicts);
  // After an Admit committed: reclaimed owners' receipts, the counter, the gate's event.
  void tookOwnership(const std::string& id, const journal::OperationResult& admitted, bool fresh,
                     bool promoted);
  // The local inbox's verdict for a new id of class `c` (local_inbox.h); `victims` are the
  // queued records to end in the admitting transaction.
  // Waits (on a pump thread) until the local inbox has room or `deadline` passes; false when
  // it did not get room. roomMade() (the gate, after owners left the queue) wakes it.
  bool waitForRoom(TimePoint deadline);
  void roomMade();
  InboxVerdict makeRoom(const std::string& id, InboxClass c,
                        std::vector<journal::OwnershipRecord>& victims);
  // The token of a queued historical record of `id` that this live or durable copy of the same
  // post replaces (see admit()), or nullopt.
  std::optional<journal::OwnerToken> replacedHistorical(const mesh::Delivery& d,
                                                        std::string_view wake,
                                                        const std::string& id) const;
  // A failed admission commit: permanent ones end the message (failed receipt, kRejected),
  // transient ones leave it for redelivery (admission_refusal.h).
  mesh::HandlerVerdict refusedByJournal(const mesh::Delivery& d, const std::string& id,
                                        const Status& why);
  // A DM the endpoint terminated because the wire parser refused it.
  void refusedByParser(const mesh::RefusedDelivery& r);
  // An arrival the full inbox did not take: refused (not acked) or dropped (acked).
  mesh::HandlerVerdict turnAway(const mesh::Delivery& delivery, const std::string& id,
                                InboxVerdict verdict, bool fresh);
  // Queued records ended to admit `forId`: counted, logged, a failed receipt each.
  void evicted(const std::vector<journal::OwnershipRecord>& victims, const std::string& forId,
               const std::string& reason);
  bool isFresh(const mesh::Delivery& delivery);
  bool isMention(const mesh::Delivery& delivery) const;
  // shoal_status attention (any thread): mirrored into presence; reset to open at each launch.
  void setAttention(wire::Attention attention);
  Status startMcp();
  void endLeftoverRuntime(const std::string& sectionJson);
  // Joins the profile's channels, passing on and updating the journal's memory of the durable
  // memberships this lifecycle holds (channel_rejoin.h).
  void rejoinChannels();
  void count(uint64_t SeatCounters::*field, uint64_t n = 1) {
    MutexLock lock(mu_);
    snap_.counters.*field += n;
  }
  void note(std::string text) {
    MutexLock lock(mu_);
    snap_.note = std::move(text);
  }

  // --- gate thread ---
  void gateMain();
  void handle(GateEvent& event);
  void onDriver(const DriverEvent& event);
  void onCommand(GateEvent& event);
  void onTimer(TimePoint now);
  Status launch(const std::string& why);
  void dispatch();
  bool dispatchOne();
  void turnEnded(const DriverEvent& event);
  // Remembers the runtime session to resume at the next launch ("" forgets it).
  void saveSession(const std::string& id);
  // What a saved session is resumed under (seed 004 §1.1): the runtime, its command and the
  // seat's instructions, hashed (FNV-1a 64, hex). A change starts a fresh session.
  std::string sessionFingerprint() const;
  // Marks the saved session safe to resume (no live owner; this launch's epoch), seed 004 §1.1.
  void markResumeSafe();
  void markResumeUnsafe();
  void startCompaction(GateEvent& event);
  void interruptTurn(GateEvent& event);
  void endCompaction(bool failed, const std::string& detail);
  // Runtimes whose session (Claude session id, Codex thread id) a restart resumes.
  bool resumesSessions() const {
    return profile_.runtime == RuntimeKind::kClaude || profile_.runtime == RuntimeKind::kCodex ||
           profile_.runtime == RuntimeKind::kOpenCode;
  }
  void unexpectedExit(const DriverEvent& event);
  void beginRetire(Retiring kind, std::shared_ptr<Completion> done,
                   std::optional<TimePoint> deadline);
  void finishRetire();
  void scheduleRestart(const std::string& why, bool launchFailed = false);
  void settleSurfaced(std::vector<Handed> owners, const std::string& how,
                      const std::string& wakeToken = "");
  void settleFailed(std::vector<Handed> owners, const std::string& reason);
  // Inflight owners the current runtime can no longer acknowledge end failed (`reason`).
  void failInflight(const std::string& reason);
  // Writes the seat's history section when it changed: at once for a new generation, a stop
  // (`clean`) or `force`, else at most once a second (historyDueAt_ wakes the gate for it).
  void saveHistory(bool clean, bool force);
  // Publishes the owed receipts that are due, and writes the outbox section when it changed
  // (at most every kReceiptsSaveEvery; `force` at a stop).
  void retryReceipts(bool force);
  // At open: the receipts the previous life owed, and those of tombstones it may not have
  // published (receipt_outbox.h), are published again.
  void replayReceipts();
  // Handoffs a surfacedOnRead runtime never read or acknowledged (it exited, or was stopped):
  // failed, the reason saying so (`how`: "exited (code 1)", "was stopped").
  void failUnread(const std::string& how);
  // A surfacedOnRead runtime read `bytesRead` bytes of handoff `h` (nullopt: all of it).
  void readFromStdin(ActiveHandoff& h, std::optional<size_t> bytesRead);
  // An acking exec program acknowledged the message `ownerId` of handoff `h`.
  void acknowledged(ActiveHandoff& h, const std::string& ownerId);
  void event(WakeEvent e);
  // Publishes visible-reply outcomes and keeps them for the snapshot (any thread).
  void publishResults(const std::vector<WakeResult>& results, uint64_t generation);
  // Final-check (seed 004 §3.1): every unresolved reply obligation ends now.
  void finalCheck(const std::string& failedReason);
  // `attempt`: a claim that lost a race with the local inbox's evictions chooses again.
  void claimInbox(InboxRequest& request, int attempt = 1);
  bool canSteer() const;
  size_t unreadOwners() const;  // handed to a read-proving runtime, not proven read yet
  // Reconciliation: asks the runtime to read its thread; its answer settles the owners.
  void startReconcile();
  void reconciled(const DriverEvent& e);
  // The write outcome of an inbox page (MCP network thread).
  void inboxWritten(const std::vector<std::string>& receipts, uint64_t generation, bool complete);
  // Closes inbox claims and waits (bounded) for pages whose write outcome is not known yet.
  void drainLeases();
  std::string channelMode(const std::string& channel) const;
  void presence(std::function<void(mesh::PresencePublisher&)> change);
  bool shouldRun() const { return mode_ == SeatMode::kRunning || awake_; }
  void publishState();
  // Commands finish after the state they produced is published (snapshot() then shows it).
  void complete(std::shared_ptr<Completion> done, Status status) {
    toFinish_.emplace_back(std::move(done), std::move(status));
  }
  int64_t wallMs() const { return Clock::real().wallMs(); }
  // When the journal was first seen poisoned (set once; a reopened seat starts healthy).
  int64_t poisonedSince() const;
  // A mutation was refused as `journal-poisoned`: said once, in the note, log and presence.
  void journalPoisoned(const Status& why);
  mutable std::atomic<int64_t> poisonedSinceMs_{0};

  const SeatOptions options_;
  std::unique_ptr<journal::OwnershipJournal> journal_;
  std::unique_ptr<transport::Connection> conn_;  // wake events, receipts, watermarks
  std::optional<transport::JetStream> js_;
  std::unique_ptr<WakeEvents> wake_;
  // Refusals and endpoint warnings repeat per message: one line per reason per interval.
  log::LogThrottle refusalLog_{Clock::real(), kRefusalLogInterval};
  std::unique_ptr<mesh::Endpoint> endpoint_;
  std::unique_ptr<mcp::Server> mcp_;  // the seat's tools; stopped before the endpoint closes
  std::string mcpConfigPath_;
  ReplyLedger ledger_;
  InboxLeases leases_;
  std::atomic<wire::Attention> attention_{wire::Attention::kOpen};
  mutable Mutex modesMu_;
  std::map<std::string, std::string> channelModes_ SHOAL_GUARDED_BY(modesMu_);
  BacklogMark dmBacklog_;    // DM_<space>: what was stored when the seat attached
  BacklogMark taskBacklog_;  // TASK_<space>: the same
  // DM admissions all run on the one DM pump thread, so a check and its later insert never
  // interleave with another DM's; the mutex makes the set safe to read from anywhere.
  Mutex admitMu_;
  AdmittedSeqs admittedDms_ SHOAL_GUARDED_BY(admitMu_);  // journal section kDmAdmittedSection
  // Turn-aways by the full local inbox per id (memory only): the bound on a durable channel
  // copy, and what tells a refused DM's later redeliveries from possible repeats.
  EvictionCounts inboxRefusals_ SHOAL_GUARDED_BY(admitMu_);
  // Room in the local inbox: admission waits on roomCv_, the gate notifies it (waitForRoom).
  Mutex roomMu_;
  CondVar roomCv_;
  std::atomic<bool> roomStalled_{false};  // a wait timed out; none until room is made
  std::atomic<bool> closing_{false};      // the endpoint is closing: no admission waits
  std::thread gate_;

  mutable Mutex mu_;
  CondVar cv_;
  std::deque<GateEvent> events_ SHOAL_GUARDED_BY(mu_);
  bool closed_ SHOAL_GUARDED_BY(mu_) = false;  // the gate has stopped: commands finish at once
  std::shared_ptr<Completion> stopDone_ SHOAL_GUARDED_BY(mu_);
  SeatSnapshot snap_ SHOAL_GUARDED_BY(mu_);

  // Gate thread only.
  SeatMode mode_;
  bool awake_ = false;  // cold-started while in sleeping mode
  std::unique_ptr<RuntimeDriver> driver_;
  uint64_t generation_ = 0;
  // seat_history.h: what the journal holds of the counters and generation, and when.
  std::optional<SeatHistory> previousLife_;  // found at open
  SeatCounters savedCounters_;
  uint64_t savedGeneration_ = 0;
  TimePoint savedAt_{};
  std::optional<TimePoint> historyDueAt_;
  TimePoint receiptsSavedAt_{};
  std::optional<TimePoint> receiptsDueAt_;
  int64_t lifeStartedAtMs_ = 0;
  bool accepting_ = false;
  std::optional<ActiveHandoff> handoff_;
  // Handoffs steered into the running turn (drivers that steersMidTurn(): Codex turn/steer),
  // each acknowledged on its own; they end with the turn.
  std::vector<ActiveHandoff> steers_;
  // Handoffs written whole to a surfacedOnRead runtime whose last byte it has not read yet.
  std::vector<ActiveHandoff> unread_;
  std::deque<std::string> foreground_;
  Retiring retiring_ = Retiring::kNone;
  TimePoint retireDeadline_{};
  std::vector<std::shared_ptr<Completion>> retireWaiters_;
  std::deque<GateEvent> deferred_;  // commands that arrived while retiring
  std::optional<TimePoint> restartAt_;
  std::optional<TimePoint> readyDeadline_;  // set while the current generation is not ready
  std::string savedSession_;                // the runtime session to resume (journal section)
  std::string savedFingerprint_;            // sessionFingerprint() when it was saved
  bool resumedGeneration_ = false;          // the current generation was launched with it
  uint64_t launchEpoch_ = 0;                // this generation's resume-safety epoch
  std::string instructions_;                // the seat's MCP instructions (fingerprinted)
  bool resumeFallbackUsed_ = false;         // a failed resume fell back to a fresh session
  std::optional<TimePoint> dispatchRetryAt_;
  bool compacting_ = false;   // a compaction runs: nothing is handed to the runtime
  bool interrupted_ = false;  // `shoal seat interrupt` asked to stop the running turn
  std::optional<TimePoint> compactDeadline_;
  // Reconciliation (seed 004 §3.2): handoffs a runtime that can be asked (Codex) may or may not
  // have read when it died, waiting for the next generation's thread/read.
  struct Reconciling {
    Handed owner;
    std::string handoffId;  // the userMessage clientId, or the inbox receipt when `marker`
    std::string threadId;
    bool marker = false;  // an inbox receipt: looked for in the history's tool items
  };
  std::vector<Reconciling> reconciling_;
  std::map<std::string, int> handoffs_;      // live deliveries handed out, times (this daemon life)
  int reconcileAttempts_ = 0;                // unknown results and failed reads
  int pendingReads_ = 0;                     // `pending` results
  std::optional<TimePoint> reconcileAt_;     // the next read
  std::optional<TimePoint> reconcileSince_;  // the first read of the current owners
  std::optional<TimePoint> reconcileReadDeadline_;  // the read in flight must answer by
  milliseconds backoff_{0};
  int crashesInARow_ = 0;
  bool parked_ = false;
  TimePoint launchedAt_{};
  bool progressThisGeneration_ = false;
  TimePoint lastWorkEvent_{};
  bool stopped_ = false;
  std::vector<std::pair<std::shared_ptr<Completion>, Status>> toFinish_;
};

}  // namespace shoal::daemon
