// The seat's internal declaration, shared by the files of src/daemon/seat/ (the seat's
// implementation, split by part): `class Seat::Impl`, over the rules (seat/rules.h) and the
// gate's types (seat/gate_types.h) the parts share. Not an API: include it only from the files of
// src/daemon/seat/; everything else uses daemon/seat.h.
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <thread>

#include "base/clock.h"
#include "base/log_throttle.h"
#include "base/mutex.h"
#include "base/restart_policy.h"
#include "daemon/admitted_seqs.h"
#include "daemon/backlog_mark.h"
#include "daemon/inbox_leases.h"
#include "daemon/local_inbox.h"
#include "daemon/reply_ledger.h"
#include "daemon/seat.h"
#include "daemon/seat/gate_types.h"
#include "daemon/seat/rules.h"
#include "daemon/seat_files.h"
#include "daemon/seat_history.h"
#include "daemon/seat_launch.h"
#include "daemon/stored_delivery.h"
#include "daemon/wake_events.h"
#include "journal/ownership_journal.h"
#include "mcp/server.h"
#include "mesh/endpoint.h"
#include "mesh/presence_publisher.h"
#include "runtime/driver.h"
#include "transport/connection.h"
#include "transport/jetstream.h"

namespace shoal::daemon {

class Seat::Impl {
 public:
  Impl(SeatProfile profile, SeatOptions options)
      : profile_(std::move(profile)), options_(std::move(options)), mode_(options_.mode) {}

  ~Impl();

  Status open();
  Status command(GateEvent::Kind kind, std::optional<TimePoint> deadline, bool wait);
  void stop() { (void)command(GateEvent::Kind::kStop, std::nullopt, true); }
  void requestStop(TimePoint deadline) { (void)command(GateEvent::Kind::kStop, deadline, false); }
  bool waitStopped(TimePoint deadline);
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
                     bool promoted, std::optional<DirectLane::Claim> direct = std::nullopt);
  std::optional<DirectLane::Claim> claimLane(const mesh::Delivery& d, journal::Admit& op);
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
  mesh::EndpointOptions endpointOptions();
  void rejoinChannels();
  void count(uint64_t SeatCounters::*field, uint64_t n = 1);
  void note(std::string text);

  // --- gate thread ---
  void gateMain();
  void handle(GateEvent& event);
  void onDriver(const runtime::DriverEvent& event);
  void onCommand(GateEvent& event);
  void onTimer(TimePoint now);
  Status launch(const std::string& why);
  void dispatch();
  bool dispatchOne();
  std::string handingReason() const;
  std::optional<PreparedHandoff> prepareHandoff(std::vector<journal::OwnershipRecord> chosen,
                                                std::string handoffId);
  bool writeHandoff(PreparedHandoff p, std::vector<journal::OwnershipRecord> begun, bool steering);
  void directAdmitted(GateEvent& event);  // direct_lane.h
  bool idleForDirect() const;
  void refreshLane();
  void turnEnded(const runtime::DriverEvent& event);
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
  bool resumesSessions() const { return seatRuntimeTraits(profile_).resumesSessions; }
  void unexpectedExit(const runtime::DriverEvent& event);
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
  void reconciled(const runtime::DriverEvent& e);
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
  std::unique_ptr<WakeEvents> wake_;
  // Refusals and endpoint warnings repeat per message: one line per reason per interval.
  log::LogThrottle refusalLog_{Clock::real(), kRefusalLogInterval};
  std::unique_ptr<mesh::Endpoint> endpoint_;
  std::unique_ptr<mcp::Server> mcp_;  // the seat's tools; stopped before the endpoint closes
  std::string mcpConfigPath_;
  std::optional<runtime::McpAccess> mcpAccess_;  // what each launch hands its runtime
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
  DirectLane lane_;
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
  std::unique_ptr<runtime::RuntimeDriver> driver_;
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
  // Handoffs steered into the running turn (drivers whose traits steersMidTurn: Codex turn/steer),
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
  std::vector<Reconciling> reconciling_;     // seat/gate_types.h
  std::map<std::string, int> handoffs_;      // live deliveries handed out, times (this daemon life)
  int reconcileAttempts_ = 0;                // unknown results and failed reads
  int pendingReads_ = 0;                     // `pending` results
  std::optional<TimePoint> reconcileAt_;     // the next read
  std::optional<TimePoint> reconcileSince_;  // the first read of the current owners
  std::optional<TimePoint> reconcileReadDeadline_;  // the read in flight must answer by
  // Restarts after an unexpected exit or a failed launch (base/restart_policy.h).
  RestartPolicy restarts_{RestartLimits{options_.restartBackoff, options_.maxRestartBackoff,
                                        kCrashWindow, options_.maxCrashesInARow}};
  bool parked_ = false;
  TimePoint lastWorkEvent_{};
  bool stopped_ = false;
  std::vector<std::pair<std::shared_ptr<Completion>, Status>> toFinish_;
};

}  // namespace shoal::daemon
