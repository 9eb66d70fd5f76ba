#include "daemon/seat.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <deque>
#include <map>
#include <set>
#include <thread>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/log_throttle.h"
#include "base/mutex.h"
#include "base/process_info.h"
#include "daemon/admission_refusal.h"
#include "daemon/admitted_seqs.h"
#include "daemon/backlog_mark.h"
#include "daemon/channel_rejoin.h"
#include "daemon/inbox_leases.h"
#include "daemon/local_inbox.h"
#include "daemon/presentation.h"
#include "daemon/reconcile_outcome.h"
#include "daemon/reply_ledger.h"
#include "daemon/runtime_driver.h"
#include "daemon/seat_files.h"
#include "daemon/seat_history.h"
#include "daemon/seat_tools.h"
#include "daemon/stored_delivery.h"
#include "daemon/wake_events.h"
#include "journal/ownership_journal.h"
#include "journal/reasons.h"
#include "mcp/server.h"
#include "mesh/endpoint.h"
#include "mesh/presence_publisher.h"
#include "transport/connection.h"
#include "transport/jetstream.h"
#include "wire/names.h"
#include "wire/subject.h"

namespace shoal::daemon {
namespace {

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
std::optional<std::pair<std::string, std::string>> replyTargetOf(const StoredDelivery& d,
                                                                 const wire::Principal& self) {
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

// The local inbox's class of a queued record (local_inbox.h). Its `wake` was set from the subject
// the delivery arrived on, so a mention — a channel subject — is channel traffic here.
InboxClass inboxClassOf(std::string_view wake) {
  if (wake == kPullOnlyWake) return InboxClass::kPullOnly;
  if (wake == kAmbientWake || wake == kMentionWake) return InboxClass::kChannel;
  return InboxClass::kDirected;  // dm, anycast; an unknown class is kept, never evicted
}

std::string exitText(const DriverEvent& e) {
  std::string out = e.exit ? e.exit->toString() : std::string("exit status unknown");
  if (!e.detail.empty()) out += " after a transport fault: " + e.detail;
  return out;
}

}  // namespace

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
  // The local inbox's verdict for a new id of class `c` (local_inbox.h); `victims` are the
  // queued records to end in the admitting transaction.
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

// ---------------------------------------------------------------------------------------------
// Opening and admission (any thread)

Status Seat::Impl::open() {
  FileSystem& fs = FileSystem::posix();
  SHOAL_RETURN_IF_ERROR(prepareSeatFiles(fs, profile_.cwd));
  if (Status excluded = excludeFromGit(profile_.cwd); !excluded.isOk()) {
    log::warn("seat {}: could not add .shoal/ to git's info/exclude: {}",
              profile_.principal.dotForm(), excluded.toString());
  }
  journal::OpenOptions jo;
  jo.holder =
      fmt::format("pid {} (shoal daemon, seat {})", ::getpid(), profile_.principal.dotForm());
  SHOAL_ASSIGN_OR_RETURN(
      journal_, journal::OwnershipJournal::open(fs, Clock::real(), seatFilesDir(profile_.cwd), jo));

  {
    auto view = journal_->view();
    if (auto it = view.sections.find(kProcessSection); it != view.sections.end()) {
      endLeftoverRuntime(it->second.valueJson);
    }
    if (auto it = view.sections.find(kSessionSection); it != view.sections.end()) {
      boost::system::error_code ec;
      auto v = boost::json::parse(it->second.valueJson, ec);
      if (!ec && v.is_object() && v.as_object().contains("id") && v.at("id").is_string())
        savedSession_ = std::string(v.at("id").as_string());
      if (!ec && v.is_object() && v.as_object().contains("fingerprint") &&
          v.at("fingerprint").is_string()) {
        savedFingerprint_ = std::string(v.at("fingerprint").as_string());
      }
    }
    if (auto it = view.sections.find(kChannelModesSection); it != view.sections.end()) {
      boost::system::error_code ec;
      auto v = boost::json::parse(it->second.valueJson, ec);
      if (!ec && v.is_object()) {
        MutexLock lock(modesMu_);
        for (const auto& [channel, mode] : v.as_object()) {
          if (mode.is_string()) channelModes_[std::string(channel)] = std::string(mode.as_string());
        }
      }
    }
    if (auto it = view.sections.find(kSeatHistorySection); it != view.sections.end()) {
      // Counters and generations continue across daemon lives (seat_history.h).
      auto history = SeatHistory::fromJson(it->second.valueJson);
      if (history.isOk()) {
        generation_ = savedGeneration_ = history->generation;
        MutexLock lock(mu_);
        snap_.counters = savedCounters_ = history->counters;
        previousLife_ = std::move(history).value();
      } else {
        log::warn("seat {}: {}; counting from 0", profile_.principal.dotForm(),
                  history.status().toString());
      }
    }
    if (auto it = view.sections.find(kDmAdmittedSection); it != view.sections.end()) {
      auto admitted = AdmittedSeqs::fromJson(it->second.valueJson);
      if (!admitted.isOk()) return admitted.status().withContext("seat " + profile_.cwd);
      MutexLock lock(admitMu_);
      admittedDms_ = std::move(admitted).value();
    }
  }
  // Whatever a previous daemon left inflight may or may not have been read by its runtime.
  // Raw stdin and Claude cannot be asked: it ends failed, never replayed. A Codex handoff with
  // its thread recorded waits for the first generation's thread/read (reconciliation), and so
  // does a Codex inbox receipt: the page it went out on is in the thread's tool items if Codex
  // received it (seed 004 §2.1, last paragraph).
  std::vector<Handed> leftover;
  for (const auto& record : journal_->view().live) {
    if (!journal::isInflight(record.state)) continue;
    const std::string& receipt = record.runtime.receipt;
    const auto slash = receipt.rfind('/');
    const bool inboxReceipt = inboxReceiptMarkers(receipt) == std::vector<std::string>{receipt};
    if (profile_.runtime == RuntimeKind::kCodex && !record.runtime.sessionId.empty() &&
        (slash != std::string::npos || inboxReceipt)) {
      reconciling_.push_back(Reconciling{Handed{record.id, record.token, record.target, {}, {}, 0},
                                         inboxReceipt ? receipt : receipt.substr(0, slash),
                                         record.runtime.sessionId, inboxReceipt});
      continue;
    }
    leftover.push_back(Handed{record.id, record.token, record.target, {}, {}, 0});
  }
  if (!reconciling_.empty()) {
    log::info(
        "seat {}: {} deliveries were inflight when the previous daemon ended; the runtime's "
        "thread will say whether it read them",
        profile_.principal.dotForm(), reconciling_.size());
  }

  transport::ConnectOptions connect;
  connect.servers = {options_.url};
  connect.nkeySeedFile = options_.nkeySeedFile;
  connect.credentialsFile = options_.credentialsFile;
  connect.inboxPrefix = options_.inboxPrefix;
  connect.tlsCaFile = options_.tlsCaFile;
  connect.name = "shoal seat " + profile_.principal.dotForm() + " (events)";
  SHOAL_ASSIGN_OR_RETURN(conn_, transport::Connection::connect(connect));
  SHOAL_ASSIGN_OR_RETURN(auto js, transport::JetStream::create(*conn_));
  js_.emplace(std::move(js));
  wake_ = std::make_unique<WakeEvents>(*js_, options_.space, profile_);
  replayReceipts();
  if (previousLife_) {
    WakeEvent restarted{"daemon-restarted", generation_, previousLifeText(*previousLife_), {}, {}};
    (void)wake_->publish(restarted, wallMs());
  }
  lifeStartedAtMs_ = wallMs();
  saveHistory(false, true);  // this life runs the seat now: `clean` until it stops it
  if (!leftover.empty()) {
    log::warn(
        "seat {}: {} deliveries were inflight when the previous daemon ended; they fail "
        "(no-read-reconciliation)",
        profile_.principal.dotForm(), leftover.size());
    settleFailed(std::move(leftover),
                 "no-read-reconciliation: the daemon restarted while the runtime held it; the "
                 "runtime cannot say whether it read it");
  }

  // What is already stored is backlog: only messages stored after this point are current
  // events that may wake a sleeping seat.
  SHOAL_ASSIGN_OR_RETURN(std::string dm, wire::streamName(wire::Stream::kDm, options_.space));
  SHOAL_ASSIGN_OR_RETURN(std::string task, wire::streamName(wire::Stream::kTask, options_.space));
  // In auth mode an agent's grants do not reach DM_<space>'s info (it would tell who DMs
  // whom), nor TASK_<space>'s without a role: the seat's own DM durable says it there
  // (backlog_mark.h).
  const bool ownCredential = !options_.credentialsFile.empty();
  if (!ownCredential) {
    if (auto info = js_->streamInfo(dm); info.isOk())
      dmBacklog_.setStreamSequence(info->state.lastSeq);
  } else if (auto durable = wire::dmDurable(profile_.principal, profile_.lifecycleUid);
             durable.isOk()) {
    if (auto info = js_->consumerInfo(dm, *durable); info.isOk())
      dmBacklog_.setFromDurable(info->delivered.streamSeq, info->numPending);
  }
  if (!ownCredential || profile_.role) {
    if (auto info = js_->streamInfo(task); info.isOk())
      taskBacklog_.setStreamSequence(info->state.lastSeq);
  }

  mesh::EndpointOptions eo;
  eo.servers = {options_.url};
  eo.nkeySeedFile = options_.nkeySeedFile;
  eo.credentialsFile = options_.credentialsFile;
  eo.inboxPrefix = options_.inboxPrefix;
  eo.tlsCaFile = options_.tlsCaFile;
  eo.space = options_.space;
  eo.principal = profile_.principal;
  eo.displayName = profile_.name;
  eo.role = profile_.role;
  if (profile_.role) eo.serviceRoles = {*profile_.role};
  eo.lifecycleUid = profile_.lifecycleUid;
  eo.connectionName = "shoal seat " + profile_.principal.dotForm();
  eo.onDelivery = [this](const mesh::Delivery& d) { return admit(d); };
  eo.onWarning = [this](const Status& s) {
    if (auto held = refusalLog_.admit(s.reason())) {
      log::warn("seat {}: {}{}", profile_.principal.dotForm(), s.toString(),
                log::heldBackSuffix(*held));
    }
  };
  eo.onRefused = [this](const mesh::RefusedDelivery& r) { refusedByParser(r); };
  eo.historyYieldsToLaterCopies = true;  // the journal dedups; see replacedHistorical()
  SHOAL_ASSIGN_OR_RETURN(endpoint_, mesh::Endpoint::open(std::move(eo)));
  rejoinChannels();
  SHOAL_RETURN_IF_ERROR(startMcp());
  // Admissions queued while the endpoint opened wait for the gate; its first command runs or
  // sleeps the seat as the profile says. A failed launch is not a failed open: the seat stays
  // on the mesh, admitting, and its note and the wake stream say why the runtime is not up.
  gate_ = std::thread([this] { gateMain(); });
  (void)command(mode_ == SeatMode::kRunning ? GateEvent::Kind::kWake : GateEvent::Kind::kSleep,
                std::nullopt, true);
  return Status::ok();
}

void Seat::Impl::rejoinChannels() {
  std::set<std::string> held;
  const auto view = journal_->view();
  if (auto it = view.sections.find(kDurableChannelsSection); it != view.sections.end()) {
    auto parsed = parseDurableChannels(it->second.valueJson);
    if (parsed.isOk()) held = std::move(parsed).value();
    if (!parsed.isOk())
      log::warn("seat {}: {}", profile_.principal.dotForm(), parsed.status().toString());
  }
  const std::string who = profile_.principal.dotForm();
  std::set<std::string> now = joinSeatChannels(*endpoint_, profile_.channels, held, who);
  if (now == held) return;
  auto saved = journal_->setSection(journal::SetSection{std::string(kDurableChannelsSection),
                                                        durableChannelsJson(now), std::nullopt});
  if (!saved.isOk())
    log::warn("seat {}: remembering its channels: {}", who, saved.status().toString());
}

void Seat::Impl::endLeftoverRuntime(const std::string& sectionJson) {
  // A daemon that was killed leaves its runtime running (it leads its own process group); a
  // runtime that hangs would never go. It is ended here, but only when the pid still runs the
  // program the record names — a reused pid is never touched.
  boost::system::error_code ec;
  auto v = boost::json::parse(sectionJson, ec);
  if (ec || !v.is_object() || !v.as_object().contains("pid") || !v.at("pid").is_number()) return;
  const auto pid = static_cast<pid_t>(v.at("pid").to_number<int64_t>());
  const std::string program = v.as_object().contains("program") && v.at("program").is_string()
                                  ? std::string(v.at("program").as_string())
                                  : std::string();
  if (pid <= 1 || program.empty()) return;
  auto argv = processCommandLine(pid);
  if (!argv.isOk() || argv->empty() || (*argv)[0] != program) return;
  log::warn("seat {}: ending runtime pid {} ({}) left by a previous daemon",
            profile_.principal.dotForm(), pid, program);
  ::kill(-pid, SIGKILL);
}

Status Seat::Impl::startMcp() {
  SHOAL_ASSIGN_OR_RETURN(std::string token, newHexToken(32));
  SeatToolContext tools;
  tools.endpoint = endpoint_.get();
  tools.profile = profile_;
  tools.space = options_.space;
  tools.queued = [this] {
    size_t n = 0;
    for (const auto& r : journal_->view().live)
      n += r.state == journal::OwnerState::kQueued ? 1 : 0;
    return n;
  };
  tools.inbox = [this](size_t limit) { return inboxPage(limit); };
  tools.replyFrontier = [this](const std::string& key) { return replyFrontier(key); };
  tools.replied = [this](const std::string& key, uint64_t seen, const std::string& replyId) {
    replied(key, seen, replyId);
  };
  tools.setChannelMode = [this](const std::string& channel, const std::string& mode) {
    return setChannelMode(channel, mode);
  };
  tools.setAttention = [this](wire::Attention a) { setAttention(a); };
  tools.attention = [this] { return attention_.load(); };
  tools.channelModes = [this] {
    MutexLock lock(modesMu_);
    return channelModes_;
  };
  mcp::ServerOptions mo;
  mo.bearerToken = token;
  mo.sendBufferBytes = options_.mcpSendBufferBytes;
  mo.name = "shoal";
  mo.version = "seat " + profile_.principal.dotForm();
  mo.instructions = instructions_ =
      "The shoal mesh: you are " + profile_.name + " (" + profile_.principal.dotForm() +
      "). Messages from peers arrive as delivery blocks; answer them with shoal_dm "
      "or shoal_send. Text you write without a tool reaches nobody.";
  SHOAL_ASSIGN_OR_RETURN(mcp_, mcp::Server::start(mo, seatTools(std::move(tools))));
  // The client config, readable only by the owner: the token is the seat's identity.
  boost::json::object server{
      {"type", "http"},
      {"url", mcp_->url()},
      {"headers", boost::json::object{{"Authorization", "Bearer " + token}}}};
  boost::json::object config{{"mcpServers", boost::json::object{{"shoal", std::move(server)}}}};
  // <cwd>/.shoal is 0700 (open()), so the file is never readable by others, even briefly.
  mcpConfigPath_ = seatFilesDir(profile_.cwd) + "/mcp.json";
  SHOAL_RETURN_IF_ERROR(writeFileAtomically(FileSystem::posix(), mcpConfigPath_,
                                            boost::json::serialize(config) + "\n"));
  ::chmod(mcpConfigPath_.c_str(), 0600);
  return Status::ok();
}

bool Seat::Impl::isMention(const mesh::Delivery& d) const {
  const std::string self = profile_.principal.dotForm();
  for (const auto& m : d.message.mentions) {
    if (m == self || m == profile_.principal.actor) return true;
  }
  return false;
}

std::string Seat::Impl::channelMode(const std::string& channel) const {
  MutexLock lock(modesMu_);
  auto it = channelModes_.find(channel);
  return it == channelModes_.end() ? "normal" : it->second;
}

Status Seat::Impl::setChannelMode(const std::string& channel, const std::string& mode) {
  if (mode != "normal" && mode != "quiet" && mode != "muted") {
    return invalidArgument("bad-channel-mode", "mode is normal, quiet or muted");
  }
  MutexLock lock(modesMu_);
  std::map<std::string, std::string> next = channelModes_;
  if (mode == "normal") {
    next.erase(channel);
  } else {
    next[channel] = mode;
  }
  boost::json::object value;
  for (const auto& [c, m] : next)
    value[c] = m;
  SHOAL_RETURN_IF_ERROR(
      journal_
          ->setSection(journal::SetSection{std::string(kChannelModesSection),
                                           boost::json::serialize(value), std::nullopt})
          .status());
  channelModes_ = std::move(next);
  std::optional<wire::ChannelMode> advisoryMode = wire::parseChannelMode(mode);
  presence([channel, advisoryMode](mesh::PresencePublisher& p) {
    p.setChannelMode(channel, advisoryMode);
  });
  // Advisory, for the roster: what reaches this seat without a DM.
  std::string advisory;
  for (const auto& [c, m] : channelModes_)
    advisory +=
        (advisory.empty() ? "" : ", ") + std::string(m == "muted" ? "muted #" : "quiet #") + c;
  log::info("seat {}: #{} is now {}{}", profile_.principal.dotForm(), channel, mode,
            advisory.empty() ? "" : " (" + advisory + ")");
  return Status::ok();
}

void Seat::Impl::setAttention(wire::Attention attention) {
  attention_ = attention;
  presence([attention](mesh::PresencePublisher& p) {
    p.setAttention(attention == wire::Attention::kOpen ? std::nullopt
                                                       : std::optional<wire::Attention>(attention));
  });
  log::info("seat {}: attention {}", profile_.principal.dotForm(), wire::attentionName(attention));
  // Leaving focus or dnd may release ambient posts: the gate looks again.
  GateEvent e;
  e.kind = GateEvent::Kind::kAdmitted;  // no id: a dispatch pass
  post(std::move(e));
}

bool Seat::Impl::isFresh(const mesh::Delivery& d) {
  if (d.historical) return false;
  switch (d.kind) {
    case wire::DeliveryKind::kDm:
      return dmBacklog_.isFresh(d.streamSeq);
    case wire::DeliveryKind::kAnycast:
      return taskBacklog_.isFresh(d.streamSeq);
    case wire::DeliveryKind::kChannel:
      // A durable channel copy is backlog by construction.
      return !d.durable && isMention(d);
  }
  return false;
}

mesh::HandlerVerdict Seat::Impl::admit(const mesh::Delivery& d) {
  // Every delivery counts toward the backlog mark, in arrival order (backlog_mark.h).
  const bool fresh = isFresh(d);
  journal::Admit op;
  op.id = ownershipId(d);
  op.target = d.message.from.id;
  op.wake = std::string(wire::deliveryKindName(d.kind));
  // Attention (shoal_channel_mode): a muted channel's posts are dropped on receipt, a quiet
  // one's wait for an inbox page, and so does historical ambient traffic (seed 000 "Replay on
  // join"). A post that @mentions the seat is addressed to it: none of these.
  if (d.kind == wire::DeliveryKind::kChannel && isMention(d)) {
    op.wake = std::string(kMentionWake);
  } else if (d.kind == wire::DeliveryKind::kChannel) {
    const std::string mode = channelMode(d.message.routing.target);
    if (mode == "muted") {
      log::debug("seat {}: #{} is muted; dropped {}", profile_.principal.dotForm(),
                 d.message.routing.target, op.id);
      return mesh::HandlerVerdict::kAccepted;
    }
    if (mode == "quiet" || d.historical) op.wake = std::string(kPullOnlyWake);
  }
  const std::string id = op.id;
  // Copies the full local inbox refused in this daemon run never reached the journal: they do
  // not make this one a possible repeat (`numDelivered` counts them).
  uint32_t refused = 0;
  {
    MutexLock lock(admitMu_);
    refused = inboxRefusals_.count(id);
  }
  if (refused > 0 && d.numDelivered > 1) {
    mesh::Delivery unseen = d;
    unseen.numDelivered = d.numDelivered > refused ? d.numDelivered - refused : 1;
    op.body = encodeStoredDelivery(unseen);
  } else {
    op.body = encodeStoredDelivery(d);
  }
  // A redelivered DM the journal no longer knows, whose sequence the seat admitted before (its
  // tombstone pruned while the broker waited out the ack of a daemon that died between
  // admission and ack), is acked and never surfaced a second time (admitted_seqs.h).
  const bool dmCopy = d.durable && d.kind == wire::DeliveryKind::kDm && d.streamSeq > 0;
  {
    MutexLock lock(admitMu_);
    if (dmCopy && admittedDms_.contains(d.streamSeq) && !journal_->find(id)) {
      log::warn(
          "seat {}: DM {} (seq {}) redelivered after its journal record was pruned; "
          "acked, not surfaced again",
          profile_.principal.dotForm(), id, d.streamSeq);
      return mesh::HandlerVerdict::kAccepted;
    }
  }
  const InboxClass inboxClass = inboxClassOf(op.wake);
  for (int attempt = 1;; ++attempt) {
    // A post the rejoin's replay took in as historical (pull-only) before its own copy came: it
    // was made while the seat was away, not before it joined, so the copy replaces it.
    const std::optional<journal::OwnerToken> promoted = replacedHistorical(d, op.wake, id);
    // The local inbox (local_inbox.h): a full one makes room by ending queued channel posts in
    // the same transaction that admits this one, or turns this one away.
    std::vector<journal::OwnershipRecord> victims;
    const InboxVerdict verdict = makeRoom(id, inboxClass, victims);
    if (verdict != InboxVerdict::kAdmit) return turnAway(d, id, verdict, fresh);
    const std::string evictedReason = fmt::format(
        "{}: the seat's local inbox was full ({} queued); a newer message took its place",
        kInboxEvictedReason, std::max<size_t>(options_.inboxCapacity, 1));
    journal::Transaction txn;
    for (const auto& v : victims)
      txn.add(journal::MarkFailed{v.id, v.token, evictedReason});
    if (promoted) txn.add(journal::RemoveLive{id, *promoted});
    const size_t admitAt = txn.ops.size();
    txn.add(op);  // a copy: another attempt needs it again
    std::optional<std::string> admittedJson;
    {
      MutexLock lock(admitMu_);
      if (dmCopy && !admittedDms_.contains(d.streamSeq)) {
        AdmittedSeqs next = admittedDms_;
        next.insert(d.streamSeq);
        admittedJson = next.toJson();
      }
    }
    if (admittedJson) {
      txn.add(journal::SetSection{std::string(kDmAdmittedSection), *admittedJson, std::nullopt});
    }
    auto committed = journal_->commit(std::move(txn));
    if (!committed.isOk() && (!victims.empty() || promoted) &&
        committed.status().code() == StatusCode::kAborted && attempt < kInboxAttempts) {
      continue;  // a victim (or the historical copy) left the queue since it was chosen
    }
    if (!committed.isOk()) return refusedByJournal(d, id, committed.status());
    {
      MutexLock lock(admitMu_);
      if (admittedJson) admittedDms_.insert(d.streamSeq);
      inboxRefusals_.forget(id);
    }
    if (!victims.empty()) evicted(victims, id, evictedReason);
    const journal::OperationResult& admitted = committed->results[admitAt];
    // Capacity admission may have ended the oldest live owners (seed 004 §3.3): their senders
    // hear it like any other failure.
    for (const auto& r : admitted.reclaimed) {
      count(&SeatCounters::failed);
      log::warn("seat {}: the journal is full; {} was ended to admit {}",
                profile_.principal.dotForm(), r.id, id);
      (void)wake_->failed(r.id, r.target,
                          "ownership_backlog_reclaimed: the seat's backlog was full", wallMs());
    }
    if (admitted.disposition == journal::AdmitDisposition::kAdmitted) {
      if (!promoted) count(&SeatCounters::admitted);  // a promotion is the same message
      GateEvent e;
      e.kind = GateEvent::Kind::kAdmitted;
      e.id = id;
      e.fresh = fresh;
      post(std::move(e));
    }
    return mesh::HandlerVerdict::kAccepted;
  }
}

std::optional<journal::OwnerToken> Seat::Impl::replacedHistorical(const mesh::Delivery& d,
                                                                  std::string_view wake,
                                                                  const std::string& id) const {
  if (d.kind != wire::DeliveryKind::kChannel || d.historical || wake == kPullOnlyWake)
    return std::nullopt;
  auto record = journal_->find(id);
  if (!record || record->state != journal::OwnerState::kQueued || record->wake != kPullOnlyWake)
    return std::nullopt;
  auto stored = decodeStoredDelivery(record->body);
  if (!stored.isOk() || !stored->historical) return std::nullopt;  // quiet, not historical
  return record->token;
}

mesh::HandlerVerdict Seat::Impl::refusedByJournal(const mesh::Delivery& d, const std::string& id,
                                                  const Status& why) {
  const RefusalKind kind = classifyAdmissionRefusal(why);
  if (auto held = refusalLog_.admit(why.reason())) {
    log::warn("seat {}: could not take ownership of {} from {} ({}): {}{}",
              profile_.principal.dotForm(), id, d.message.from.id, refusalKindName(kind),
              why.toString(), log::heldBackSuffix(*held));
  }
  if (kind == RefusalKind::kTransient) {
    if (why.reason() == journal::reason::kPoisoned || !journal_->poisonStatus().isOk()) {
      journalPoisoned(why);
    } else if (why.code() != StatusCode::kAborted) {
      // A race lost every time is no journal trouble worth a note.
      note("journal write failed: " + why.toString());
    }
    return mesh::HandlerVerdict::kRetryLater;  // nak'ed with backoff: the broker redelivers it
  }
  // It can never be admitted: ended at the broker, and its sender hears why.
  count(&SeatCounters::failed);
  if (d.kind != wire::DeliveryKind::kChannel) {
    (void)wake_->failed(d.message.id, d.message.from.id,
                        fmt::format("{}: {}", why.reason(), why.message()), wallMs());
  }
  return mesh::HandlerVerdict::kRejected;
}

void Seat::Impl::refusedByParser(const mesh::RefusedDelivery& r) {
  count(&SeatCounters::failed);
  // A refused delivery still takes its place in the backlog count (backlog_mark.h).
  if (auto parsed = wire::parseSubject(r.subject); parsed.isOk()) {
    if (parsed->kind == wire::SubjectKind::kInst) (void)dmBacklog_.isFresh(r.streamSeq);
    if (parsed->kind == wire::SubjectKind::kSvc) (void)taskBacklog_.isFresh(r.streamSeq);
  }
  if (!r.sender) return;
  // A message without a usable id is named by its stream position (the receipt's `id` cannot be
  // the sender's, which is missing or unusable; `seq:` ids are never minted by a sender).
  const std::string id = r.messageId ? *r.messageId : "seq:" + std::to_string(r.streamSeq);
  (void)wake_->failed(id, r.sender->dotForm(),
                      fmt::format("{}: {}", r.why.reason(), r.why.message()), wallMs());
}

InboxVerdict Seat::Impl::makeRoom(const std::string& id, InboxClass c,
                                  std::vector<journal::OwnershipRecord>& victims) {
  const size_t capacity = std::max<size_t>(options_.inboxCapacity, 1);
  // Fewer live records than the capacity leave room whatever their states, without copying the
  // journal; an id it knows already is deduplicated by the Admit.
  if (journal_->stats().liveRecords < capacity || journal_->find(id)) return InboxVerdict::kAdmit;
  std::vector<journal::OwnershipRecord> live = journal_->view().live;
  std::vector<InboxEntry> queued;
  for (const auto& r : live) {
    if (r.state == journal::OwnerState::kQueued)
      queued.push_back(InboxEntry{r.id, inboxClassOf(r.wake), r.seq});
  }
  InboxChoice choice = chooseInboxVictims(queued, c, capacity);
  for (const auto& victim : choice.evict) {
    auto it = std::find_if(live.begin(), live.end(),
                           [&](const journal::OwnershipRecord& r) { return r.id == victim; });
    if (it != live.end()) victims.push_back(std::move(*it));
  }
  return choice.verdict;
}

mesh::HandlerVerdict Seat::Impl::turnAway(const mesh::Delivery& d, const std::string& id,
                                          InboxVerdict verdict, bool fresh) {
  const std::string self = profile_.principal.dotForm();
  const size_t capacity = std::max<size_t>(options_.inboxCapacity, 1);
  if (verdict == InboxVerdict::kRefuseArrival) {
    // Everything queued is directed and already acked: none of it is dropped. This one waits,
    // unacknowledged, at the broker, which redelivers it until the session drains the inbox.
    uint32_t times = 0;
    {
      MutexLock lock(admitMu_);
      times = inboxRefusals_.note(id);
    }
    count(&SeatCounters::inboxRefused);
    if (times == 1) {
      log::warn(
          "seat {}: the local inbox is full of directed messages ({} queued); {} {} from {} "
          "is left unacknowledged for the broker to redeliver",
          self, capacity, wire::deliveryKindName(d.kind), id, d.message.from.id);
    } else {
      log::debug("seat {}: {} refused again by the full local inbox ({} times)", self, id, times);
    }
    // A sleeping seat whose inbox is full of backlog would never wake (backlog never starts
    // it): a fresh directed message waiting at the broker starts the runtime all the same, so
    // the backlog drains and the message lands.
    if (fresh) {
      GateEvent e;
      e.kind = GateEvent::Kind::kAdmitted;
      e.id = id;
      e.fresh = true;
      e.waiting = true;
      post(std::move(e));
    }
    return mesh::HandlerVerdict::kRetryLater;
  }
  // kEvictArrival: a channel post ranking below everything queued.
  const std::string channel = d.message.routing.target;
  if (!d.durable) {
    // A live (or historical) copy has nothing to redeliver it: it is dropped. It is reported
    // as not taken, not as accepted, so the endpoint does not remember its id as seen: a
    // durable copy of the same post (the delivery plane's backstop) then meets these rules
    // itself instead of being acked as a duplicate.
    count(&SeatCounters::inboxDropped);
    log::info("seat {}: the local inbox is full ({} queued); dropped {} in #{} (a live copy)", self,
              capacity, id, channel);
    return mesh::HandlerVerdict::kRetryLater;
  }
  uint32_t times = 0;
  bool drop = false;
  {
    MutexLock lock(admitMu_);
    times = inboxRefusals_.count(id);
    drop = times >= kMaxInboxEvictions;
    if (drop) {
      inboxRefusals_.forget(id);
    } else {
      times = inboxRefusals_.note(id);
    }
  }
  if (drop) {
    count(&SeatCounters::inboxDropped);
    log::warn(
        "seat {}: {} in #{} was turned away by the full local inbox {} times; acknowledged and "
        "dropped",
        self, id, channel, times);
    return mesh::HandlerVerdict::kAccepted;
  }
  count(&SeatCounters::inboxRefused);
  log::info(
      "seat {}: the local inbox is full ({} queued); {} in #{} is left unacknowledged for the "
      "broker to redeliver ({} of {})",
      self, capacity, id, channel, times, kMaxInboxEvictions);
  return mesh::HandlerVerdict::kRetryLater;
}

void Seat::Impl::evicted(const std::vector<journal::OwnershipRecord>& victims,
                         const std::string& forId, const std::string& reason) {
  count(&SeatCounters::inboxEvicted, victims.size());
  count(&SeatCounters::failed, victims.size());
  const int64_t now = wallMs();
  for (const auto& v : victims) {
    auto stored = decodeStoredDelivery(v.body);
    log::info("seat {}: the local inbox is full; ended {} ({}{}) to admit {}",
              profile_.principal.dotForm(), v.id, inboxClassName(inboxClassOf(v.wake)),
              stored.isOk() ? " in #" + stored->message.routing.target : std::string(), forId);
    if (wake_->failed(v.id, v.target, reason, now).isOk()) count(&SeatCounters::receipts);
  }
}

void Seat::Impl::post(GateEvent event) {
  MutexLock lock(mu_);
  if (closed_) {
    if (event.done) {
      event.done->finish(event.kind == GateEvent::Kind::kStop
                             ? Status::ok()
                             : failedPrecondition("seat-stopped", "the seat has stopped"));
    }
    return;
  }
  events_.push_back(std::move(event));
  cv_.notifyAll();
}

Status Seat::Impl::command(GateEvent::Kind kind, std::optional<TimePoint> deadline, bool wait) {
  GateEvent e;
  e.kind = kind;
  e.deadline = deadline;
  e.done = std::make_shared<Completion>();
  if (kind == GateEvent::Kind::kStop) {
    MutexLock lock(mu_);
    if (stopDone_ == nullptr) stopDone_ = e.done;
    e.done = stopDone_;  // one stop: every caller waits for the same completion
  }
  auto done = e.done;
  if (!gate_.joinable()) {
    // Never opened far enough to run a gate: nothing to stop.
    done->finish(kind == GateEvent::Kind::kStop
                     ? Status::ok()
                     : failedPrecondition("seat-not-open", "the seat did not open"));
    if (kind == GateEvent::Kind::kStop && endpoint_) (void)endpoint_->close();
    return done->status();
  }
  post(std::move(e));
  if (!wait) return Status::ok();
  done->wait(std::nullopt);
  return done->status();
}

SeatSnapshot Seat::Impl::snapshot() const {
  SeatSnapshot out;
  {
    MutexLock lock(mu_);
    out = snap_;
  }
  out.awaitingReply = ledger_.size();
  out.inboxLeases = leases_.size();
  if (wake_) out.receiptsOwed = wake_->owedCount();
  {
    MutexLock lock(modesMu_);
    out.channelModes = channelModes_;
  }
  if (journal_) {
    const auto view = journal_->view();
    for (const auto& r : view.live) {
      if (r.state == journal::OwnerState::kQueued) ++out.queued;
      if (journal::isInflight(r.state)) ++out.inflight;
    }
    out.resumeSafe = view.resumeSafety.safe;
    if (Status poison = journal_->poisonStatus(); !poison.isOk()) {
      out.journalPoisoned = poison.toString();
      out.journalPoisonedSinceMs = poisonedSince();
    }
  }
  return out;
}

int64_t Seat::Impl::poisonedSince() const {
  int64_t since = poisonedSinceMs_.load();
  if (since != 0) return since;
  const int64_t now = wallMs();
  return poisonedSinceMs_.compare_exchange_strong(since, now) ? now : since;
}

void Seat::Impl::journalPoisoned(const Status& why) {
  const bool first = poisonedSinceMs_.load() == 0;
  const int64_t since = poisonedSince();
  if (!first) return;
  Status cause = journal_->poisonStatus();
  const std::string text = fmt::format(
      "journal poisoned ({}) since {}: {}; free space where the seat keeps it ({}), and the daemon "
      "reopens the seat by itself (or `shoal seat stop` then `shoal seat start`)",
      cause.reason() == "disk-full" || why.message().find("disk-full") != std::string_view::npos
          ? "disk full"
          : "a failed write",
      formatTimestamp(static_cast<double>(since)), cause.isOk() ? why.toString() : cause.toString(),
      seatFilesDir(profile_.cwd));
  log::error("seat {}: {}", profile_.principal.dotForm(), text);
  note(text);
  wire::PresenceCondition c;
  c.code = wire::ConditionCode::kFailed;
  c.source = "journal-poisoned";
  c.message = text;
  presence([c](mesh::PresencePublisher& p) {
    (void)p.setStatus(wire::PresenceStatus::kWaiting);
    p.setCondition(c);
  });
}

// ---------------------------------------------------------------------------------------------
// The gate

void Seat::Impl::gateMain() {
  while (true) {
    std::optional<GateEvent> next;
    {
      MutexLock lock(mu_);
      std::optional<TimePoint> wakeAt;
      auto earliest = [&](const std::optional<TimePoint>& t) {
        if (t && (!wakeAt || *t < *wakeAt)) wakeAt = t;
      };
      earliest(restartAt_);
      earliest(dispatchRetryAt_);
      earliest(reconcileAt_);
      earliest(reconcileReadDeadline_);
      earliest(readyDeadline_);
      earliest(compactDeadline_);
      earliest(leases_.nextDeadline());
      earliest(historyDueAt_);
      earliest(receiptsDueAt_);
      if (auto retryAt = wake_->nextRetryMs())
        earliest(Clock_::now() + milliseconds(std::max<int64_t>(0, *retryAt - wallMs())));
      if (retiring_ != Retiring::kNone) earliest(retireDeadline_);
      while (events_.empty()) {
        if (!wakeAt) {
          cv_.wait(mu_);
        } else if (!cv_.waitUntil(mu_, *wakeAt)) {
          break;
        }
      }
      if (!events_.empty()) {
        next = std::move(events_.front());
        events_.pop_front();
      }
    }
    if (next) {
      handle(*next);
    } else {
      onTimer(Clock_::now());
    }
    publishState();
    saveHistory(stopped_, stopped_);
    retryReceipts(stopped_);
    for (auto& [done, status] : toFinish_)
      done->finish(std::move(status));
    toFinish_.clear();
    if (stopped_) {
      MutexLock lock(mu_);
      closed_ = true;
      // Commands that raced the stop end here, at once (nothing finishes them later).
      for (auto& e : events_) {
        if (!e.done) continue;
        e.done->finish(e.kind == GateEvent::Kind::kStop
                           ? Status::ok()
                           : failedPrecondition("seat-stopped", "the seat has stopped"));
      }
      events_.clear();
      return;
    }
  }
}

void Seat::Impl::handle(GateEvent& e) {
  switch (e.kind) {
    case GateEvent::Kind::kAdmitted:
      if (e.fresh && !e.waiting) foreground_.push_back(e.id);
      if (driver_ != nullptr) {
        dispatch();
      } else if (e.fresh && !shouldRun() && retiring_ == Retiring::kNone) {
        // agent:start — a current directed event wakes a sleeping seat, as its launch input
        // (one the full inbox refused lands once the backlog drained).
        awake_ = true;
        count(&SeatCounters::coldStarts);
        const std::string why =
            "cold start for message " + e.id +
            (e.waiting ? " (waiting at the broker: the local inbox is full)" : "");
        log::info("seat {}: {}", profile_.principal.dotForm(), why);
        (void)launch(why);
      }
      return;
    case GateEvent::Kind::kDriver:
      onDriver(e.driver);
      return;
    case GateEvent::Kind::kInbox: {
      {
        MutexLock lock(e.inbox->mu);
        if (e.inbox->abandoned) return;
        e.inbox->taken = true;
      }
      claimInbox(*e.inbox);
      e.inbox->done.finish(Status::ok());
      return;
    }
    case GateEvent::Kind::kWake:
    case GateEvent::Kind::kSleep:
    case GateEvent::Kind::kStop:
      onCommand(e);
      return;
    case GateEvent::Kind::kCompact:
      startCompaction(e);
      return;
    case GateEvent::Kind::kInterrupt:
      interruptTurn(e);
      return;
  }
}

void Seat::Impl::onCommand(GateEvent& e) {
  if (retiring_ != Retiring::kNone) {
    if (e.kind == GateEvent::Kind::kStop && retiring_ == Retiring::kStop) {
      retireWaiters_.push_back(e.done);  // the same completion
    } else if (e.kind == GateEvent::Kind::kStop) {
      retiring_ = Retiring::kStop;  // upgrade the running sleep to a stop
      retireWaiters_.push_back(e.done);
      if (e.deadline && *e.deadline < retireDeadline_) retireDeadline_ = *e.deadline;
    } else {
      deferred_.push_back(std::move(e));  // after the retirement completes
    }
    return;
  }
  switch (e.kind) {
    case GateEvent::Kind::kWake: {
      mode_ = SeatMode::kRunning;
      parked_ = false;
      crashesInARow_ = 0;
      restartAt_.reset();
      Status launched = driver_ != nullptr ? Status::ok() : launch("started");
      complete(e.done, launched);
      return;
    }
    case GateEvent::Kind::kSleep:
      mode_ = SeatMode::kSleeping;
      awake_ = false;
      restartAt_.reset();
      parked_ = false;
      if (driver_ != nullptr) {
        beginRetire(Retiring::kSleep, e.done, std::nullopt);
      } else {
        presence(
            [](mesh::PresencePublisher& p) { (void)p.setStatus(wire::PresenceStatus::kIdle); });
        (void)endpoint_->setActivity("sleeping (a direct message wakes it)");
        complete(e.done, Status::ok());
      }
      return;
    case GateEvent::Kind::kStop:
      restartAt_.reset();
      if (driver_ != nullptr) {
        beginRetire(Retiring::kStop, e.done, e.deadline);
      } else {
        retireWaiters_.push_back(e.done);
        retiring_ = Retiring::kStop;
        finishRetire();
      }
      return;
    default:
      return;
  }
}

void Seat::Impl::onTimer(TimePoint now) {
  if (auto expired = leases_.expire(now); !expired.empty()) {
    std::vector<Handed> owners;
    for (const auto& c : expired)
      owners.push_back(Handed{c.id, c.token, c.sender, {}, {}, 0});
    log::warn("seat {}: {} inbox receipt(s) never confirmed written; failing them",
              profile_.principal.dotForm(), owners.size());
    settleFailed(std::move(owners),
                 "final-hop-unconfirmed: the inbox page carrying it was not confirmed written "
                 "before its lease ended; never replayed (the runtime may have read it)");
  }
  if (retiring_ != Retiring::kNone && now >= retireDeadline_) {
    log::warn("seat {}: runtime (pid {}) did not stop within the grace; killing its group",
              profile_.principal.dotForm(), driver_ ? driver_->pid() : 0);
    finishRetire();
    return;
  }
  if (readyDeadline_ && now >= *readyDeadline_ && driver_ != nullptr) {
    readyDeadline_.reset();
    const std::string detail = fmt::format(
        "the runtime (pid {}) did not answer its readiness handshake in {} s; retiring it",
        driver_->pid(), kReadyTimeout.count() / 1000);
    log::warn("seat {}: {}", profile_.principal.dotForm(), detail);
    event(WakeEvent{"start-failed", generation_, detail, {}, {}});
    driver_->kill(milliseconds(0));  // its kExited runs the exit path
  }
  if (compactDeadline_ && now >= *compactDeadline_ && driver_ != nullptr) {
    compactDeadline_.reset();
    const std::string detail = fmt::format(
        "context_compaction_failed: the compaction did not end within {} s; retiring the runtime "
        "(pid {}), the next generation resumes the session",
        options_.compactionTimeout.count() / 1000, driver_->pid());
    endCompaction(true, detail);
    driver_->kill(milliseconds(0));  // its kExited runs the exit path
  }
  if (restartAt_ && now >= *restartAt_) {
    restartAt_.reset();
    if (shouldRun() && driver_ == nullptr && !parked_) (void)launch("restart");
  }
  if (dispatchRetryAt_ && now >= *dispatchRetryAt_) {
    dispatchRetryAt_.reset();
    dispatch();
  }
  if (reconcileReadDeadline_ && now >= *reconcileReadDeadline_) {
    reconcileReadDeadline_.reset();
    if (driver_ != nullptr && !reconciling_.empty()) {
      DriverEvent timedOut;
      timedOut.kind = DriverEvent::Kind::kReconciled;
      timedOut.threadId = driver_->sessionId();
      timedOut.detail = fmt::format("thread/read did not answer within {} s",
                                    options_.reconcileReadTimeout.count() / 1000);
      reconciled(timedOut);
    }
  }
  if (reconcileAt_ && now >= *reconcileAt_) {
    reconcileAt_.reset();
    startReconcile();
  }
}

void Seat::Impl::startReconcile() {
  if (reconciling_.empty() || driver_ == nullptr || !accepting_) return;
  const std::string thread = driver_->sessionId();
  // Only the record's exact thread can answer for it: a runtime now on another thread (a
  // fresh-thread fallback) cannot prove anything about the old one.
  std::vector<Handed> lost;
  std::vector<Reconciling> keep;
  for (auto& r : reconciling_) {
    if (r.threadId == thread) {
      keep.push_back(std::move(r));
    } else {
      lost.push_back(std::move(r.owner));
    }
  }
  reconciling_ = std::move(keep);
  if (!lost.empty()) {
    settleFailed(std::move(lost), "reconcile-thread-changed: the runtime now runs thread " +
                                      thread + ", which cannot say what the old thread read");
  }
  if (reconciling_.empty()) return;
  if (!reconcileSince_) reconcileSince_ = Clock_::now();
  reconcileReadDeadline_ = Clock_::now() + options_.reconcileReadTimeout;
  if (Status st = driver_->reconcile(thread); !st.isOk()) {
    DriverEvent failed;
    failed.threadId = thread;
    failed.detail = "thread/read could not be sent: " + st.toString();
    reconciled(failed);
  }
}

void Seat::Impl::reconciled(const DriverEvent& e) {
  reconcileReadDeadline_.reset();
  std::vector<Handed> surfaced;
  std::vector<Reconciling> open;
  journal::Transaction requeue;
  for (auto& r : reconciling_) {
    if (r.threadId != e.threadId) {
      open.push_back(std::move(r));
      continue;
    }
    const ReconcileOutcome outcome = reconcileOutcome(e, r.threadId, r.handoffId, r.marker);
    if (outcome == ReconcileOutcome::kSurfaced) {
      surfaced.push_back(std::move(r.owner));
    } else if (outcome == ReconcileOutcome::kAbsent) {
      // Proved absent from a complete snapshot of the idle thread: never read, safe to hand
      // out again.
      requeue.add(journal::Requeue{r.owner.id, r.owner.token,
                                   "absent: thread " + r.threadId + " never read " +
                                       (r.marker ? "inbox page " : "handoff ") + r.handoffId});
    } else {
      open.push_back(std::move(r));
    }
  }
  if (!surfaced.empty()) {
    settleSurfaced(std::move(surfaced), "reconciled: the runtime's thread shows it was read", "");
    // (An inbox page found in a tool item counts the same: Codex received that page.)
  }
  if (!requeue.ops.empty()) {
    auto done = journal_->commit(std::move(requeue));
    if (!done.isOk()) {
      log::warn("seat {}: requeueing reconciled-absent deliveries: {}",
                profile_.principal.dotForm(), done.status().toString());
    }
  }
  reconciling_ = std::move(open);
  auto failAll = [this](const std::string& why) {
    std::vector<Handed> owners;
    for (auto& r : reconciling_)
      owners.push_back(std::move(r.owner));
    reconciling_.clear();
    settleFailed(std::move(owners), why);
  };
  const auto backoff = [](int attempt) {
    return std::min<milliseconds>(kReconcileMaxBackoff,
                                  milliseconds(int64_t{100} << std::min(attempt, 10)));
  };
  if (reconciling_.empty()) {
    // nothing left to read for
  } else if (e.pending) {
    // The thread is active: what it lacks may still materialise. Read again (at least 1 s
    // later), up to the ceiling.
    const auto waited = Clock_::now() - reconcileSince_.value_or(Clock_::now());
    if (waited >= options_.reconcilePendingCeiling) {
      failAll(fmt::format(
          "reconcile-pending-ceiling: thread {} stayed active for {} s without "
          "showing whether it read it",
          e.threadId, std::chrono::duration_cast<std::chrono::seconds>(waited).count()));
    } else {
      reconcileAt_ =
          Clock_::now() + std::max<milliseconds>(milliseconds(1000), backoff(pendingReads_++));
    }
  } else if (++reconcileAttempts_ >= kReconcileAttempts) {
    // Unknown (an incomplete history, a refused or lost read): six reads, then give up.
    failAll("reconcile-exhausted: the runtime could not say whether it read it (" +
            (e.detail.empty() ? std::string("no complete snapshot") : e.detail) + ")");
  } else {
    reconcileAt_ = Clock_::now() + backoff(reconcileAttempts_);
  }
  if (reconciling_.empty()) {
    reconcileAttempts_ = 0;
    pendingReads_ = 0;
    reconcileSince_.reset();
    reconcileAt_.reset();
  }
  dispatch();
}

void Seat::Impl::onDriver(const DriverEvent& e) {
  if (driver_ == nullptr || e.generation != generation_) return;  // a retired generation
  switch (e.kind) {
    case DriverEvent::Kind::kAck:
      for (auto it = unread_.begin(); it != unread_.end(); ++it) {
        if (it->id == e.handoffId) {
          if (e.ackedId.empty()) {
            readFromStdin(*it, e.bytesRead);
          } else {
            acknowledged(*it, e.ackedId);
          }
          if (it->owners.empty()) unread_.erase(it);
          return;
        }
      }
      if (handoff_ && !handoff_->acked && e.handoffId == handoff_->id) {
        handoff_->acked = true;
        settleSurfaced(handoff_->owners,
                       "runtime-ack: the runtime acknowledged handoff " + handoff_->id,
                       handoff_->id);
        if (driver_->steersMidTurn()) dispatch();  // directed mail waiting may join the turn
      }
      for (auto& steer : steers_) {
        if (steer.acked || e.handoffId != steer.id) continue;
        steer.acked = true;
        settleSurfaced(steer.owners,
                       "runtime-ack: the runtime acknowledged handoff " + steer.id + " mid-turn",
                       steer.id);
        dispatch();  // the next directed arrival may go in now
      }
      return;
    case DriverEvent::Kind::kTurnStarted:
      presence([](mesh::PresencePublisher& p) { p.beginTurn(); });
      return;
    case DriverEvent::Kind::kWork: {
      TimePoint now = Clock_::now();
      if (now - lastWorkEvent_ < kWorkEventEvery) return;
      lastWorkEvent_ = now;
      presence([](mesh::PresencePublisher& p) { p.recordWorkEvent(); });
      return;
    }
    case DriverEvent::Kind::kCondition:
      note(e.detail);
      if (e.condition) {
        auto c = *e.condition;
        presence([c](mesh::PresencePublisher& p) { p.setCondition(c); });
      }
      return;
    case DriverEvent::Kind::kTurnEnded: {
      // Only an error end is the interrupt's (a turn that finished first stays completed).
      if (!std::exchange(interrupted_, false) || !e.isError) {
        turnEnded(e);
        return;
      }
      DriverEvent ended = e;  // the turn `shoal seat interrupt` stopped: it failed, saying so
      ended.isError = true;
      ended.detail = "interrupted by `shoal seat interrupt`" +
                     (e.detail.empty() ? std::string() : " (" + e.detail + ")");
      turnEnded(ended);
      return;
    }
    case DriverEvent::Kind::kReady:
      if (!readyDeadline_) return;
      readyDeadline_.reset();
      if (retiring_ == Retiring::kNone) accepting_ = true;
      reconcileAttempts_ = 0;
      if (resumesSessions() && reconciling_.empty()) markResumeSafe();
      startReconcile();
      dispatch();
      return;
    case DriverEvent::Kind::kReconciled:
      reconciled(e);
      return;
    case DriverEvent::Kind::kExited:
      if (retiring_ != Retiring::kNone) {
        finishRetire();
      } else {
        unexpectedExit(e);
      }
      return;
  }
}

Status Seat::Impl::launch(const std::string& why) {
  const uint64_t generation = ++generation_;  // the start reservation
  LaunchSpec spec;
  spec.generation = generation;
  spec.space = options_.space;
  spec.runtimeLogPath = runtimeLogPath();
  spec.stdinWriteTimeout = options_.stdinWriteTimeout;
  spec.admissionWatchdog = options_.admissionWatchdog;
  spec.mcpConfigPath = mcpConfigPath_;
  if (resumesSessions() && !savedSession_.empty() && !savedFingerprint_.empty() &&
      savedFingerprint_ != sessionFingerprint()) {
    // Seed 004 §1.1: a session is resumed only under the policy and instructions it ran with.
    // (A session saved before fingerprints existed is resumed and gets one at its next save.)
    const std::string detail = fmt::format(
        "the seat's runtime command or instructions changed since session {}; starting a fresh "
        "session",
        savedSession_);
    log::info("seat {}: {}", profile_.principal.dotForm(), detail);
    event(WakeEvent{"runtime-error", generation, detail, {}, {}});
    saveSession("");
  }
  resumedGeneration_ = resumesSessions() && !savedSession_.empty();
  {
    // The unsafe baseline of this launch, durable before any Process exists (seed 004 §1.1):
    // a newer epoch than every earlier launch's, so no late write of theirs can mark it safe.
    launchEpoch_ = journal_->view().resumeSafety.launchEpoch + 1;
    auto baseline = journal_->setResumeSafety(journal::SetResumeSafety{{false, launchEpoch_, 0}});
    if (!baseline.isOk()) {
      const std::string detail =
          "recording the launch's resume-safety baseline: " + baseline.status().toString();
      log::warn("seat {}: runtime start failed ({}): {}", profile_.principal.dotForm(), why,
                detail);
      note("runtime start failed: " + detail);
      event(WakeEvent{"start-failed", generation, detail, {}, {}});
      progressThisGeneration_ = false;
      scheduleRestart(detail, /*launchFailed=*/true);
      return baseline.status();
    }
  }
  if (resumedGeneration_) spec.resumeSession = savedSession_;
  spec.sink = [this](DriverEvent e) {
    GateEvent g;
    g.kind = GateEvent::Kind::kDriver;
    g.driver = std::move(e);
    post(std::move(g));
  };
  auto driver = launchRuntime(profile_, std::move(spec));
  if (!driver.isOk()) {
    const std::string detail = driver.status().toString();
    log::warn("seat {}: runtime start failed ({}): {}", profile_.principal.dotForm(), why, detail);
    note("runtime start failed: " + detail);
    event(WakeEvent{"start-failed", generation, detail, {}, {}});
    wire::PresenceCondition c;
    c.code = wire::ConditionCode::kFailed;
    c.message = "runtime start failed: " + detail;
    // Never `idle` without a runtime that could take the work: `waiting` says it is blocked.
    presence([c](mesh::PresencePublisher& p) {
      (void)p.setStatus(wire::PresenceStatus::kWaiting);
      p.setCondition(c);
    });
    if (driver.status().reason() == "runtime-not-built") {
      parked_ = true;  // no retry can help
    } else {
      progressThisGeneration_ = false;
      scheduleRestart(detail, /*launchFailed=*/true);
    }
    return driver.status();
  }
  // The publish fence: the gate is the only publisher, and a retirement that began since the
  // reservation (none can, while the gate runs this) would stop the launch before it is seen.
  if (retiring_ != Retiring::kNone || stopped_) {
    (*driver)->kill(milliseconds(0));
    return cancelled("launch-superseded", "the seat began stopping during the launch");
  }
  driver_ = std::move(driver).value();
  {
    const std::vector<std::string> argv = runtimeArgv(profile_, LaunchSpec{});
    boost::json::object process{{"pid", driver_->pid()},
                                {"program", argv.empty() ? std::string() : argv.front()}};
    auto recorded = journal_->setSection(journal::SetSection{
        std::string(kProcessSection), boost::json::serialize(process), std::nullopt});
    if (!recorded.isOk()) {
      log::warn("seat {}: recording the runtime pid: {}", profile_.principal.dotForm(),
                recorded.status().toString());
    }
  }
  leases_.open(generation);  // inbox pages are bound to this exact generation
  if (attention_.exchange(wire::Attention::kOpen) != wire::Attention::kOpen) {
    presence([](mesh::PresencePublisher& p) { p.setAttention(std::nullopt); });  // a new session
  }
  // A driver with a readiness handshake accepts handoffs only once the runtime answered it.
  accepting_ = !driver_->needsReady();
  readyDeadline_.reset();
  if (!accepting_) readyDeadline_ = Clock_::now() + kReadyTimeout;
  launchedAt_ = Clock_::now();
  progressThisGeneration_ = false;
  count(&SeatCounters::launches);
  note("");
  const std::string how =
      resumedGeneration_ ? why + " (resuming session " + savedSession_ + ")" : why;
  log::info("seat {}: runtime generation {} running (pid {}): {}", profile_.principal.dotForm(),
            generation, driver_->pid(), how);
  event(WakeEvent{"started", generation, how, {}, {}});
  presence([](mesh::PresencePublisher& p) {
    p.clearCondition();
    (void)p.setStatus(wire::PresenceStatus::kIdle);
  });
  (void)endpoint_->setActivity(std::nullopt);
  dispatch();
  return Status::ok();
}

void Seat::Impl::dispatch() {
  while (driver_ != nullptr && accepting_ && !compacting_ && (!handoff_ || canSteer()) &&
         dispatchOne()) {
  }
}

// Busy-turn continuation (seed 004 §3): with a driver that steers, directed arrivals go into the
// running turn once its own handoff was acknowledged, one unacknowledged steer at a time.
bool Seat::Impl::canSteer() const {
  if (!handoff_ || !handoff_->acked || !driver_->steersMidTurn()) return false;
  if (steers_.size() >= kMaxSteersPerTurn) return false;
  return std::all_of(steers_.begin(), steers_.end(),
                     [](const ActiveHandoff& h) { return h.acked; });
}

// One handoff. False when nothing more can go out now.
bool Seat::Impl::dispatchOne() {
  const bool steering = handoff_.has_value();
  const bool tracksReplies = !driver_->surfacedOnWrite() && !driver_->surfacedOnRead();
  // The owner bound (seed 004 §3.1): with this many replies outstanding, nothing more goes in
  // until a turn end settles them.
  if (tracksReplies && ledger_.full()) return false;
  // Attention: ambient posts go out in `open`, ride along with directed ones in `dnd`, and
  // wait for an inbox page in `focus`; directed deliveries always go out.
  const wire::Attention attention = attention_.load();
  std::vector<journal::OwnershipRecord> queued;
  bool directed = false;
  for (auto& record : journal_->view().live) {
    if (record.state != journal::OwnerState::kQueued) continue;
    if (record.wake == kPullOnlyWake) continue;  // only an inbox page takes it
    const bool ambient = record.wake == kAmbientWake;
    if (steering && ambient) continue;  // only directed input goes into a running turn
    if (ambient && attention == wire::Attention::kFocus) continue;
    directed = directed || !ambient;
    queued.push_back(std::move(record));
  }
  if (!directed && attention == wire::Attention::kDnd) queued.clear();  // no turn for ambient
  if (queued.empty()) {
    foreground_.clear();
    return false;
  }
  // The foreground lane (current directed events, in arrival order) goes first; without one,
  // the backlog, oldest admission first.
  std::vector<journal::OwnershipRecord> chosen;
  std::deque<std::string> stillForeground;
  for (const auto& id : foreground_) {
    auto it = std::find_if(queued.begin(), queued.end(),
                           [&](const journal::OwnershipRecord& r) { return r.id == id; });
    if (it == queued.end()) continue;
    chosen.push_back(*it);
    stillForeground.push_back(id);
  }
  foreground_ = std::move(stillForeground);
  if (chosen.empty()) {
    chosen = std::move(queued);
  } else if (attention == wire::Attention::kDnd) {
    // Ambient posts held by dnd ride along with the turn something addressed to the seat starts.
    for (auto& record : queued) {
      if (record.wake == kAmbientWake) chosen.push_back(std::move(record));
    }
  }

  PresentationInput input;
  std::vector<journal::OwnershipRecord> rendered;
  std::vector<std::optional<std::pair<std::string, std::string>>> replyTargets;
  std::vector<Handed> unreadable;
  std::vector<Handed> poison;
  for (auto& record : chosen) {
    if (auto it = handoffs_.find(record.id); it != handoffs_.end() && it->second >= kMaxHandoffs) {
      poison.push_back(Handed{record.id, record.token, record.target, {}, {}, 0});
      continue;
    }
    auto stored = decodeStoredDelivery(record.body);
    if (!stored.isOk()) {
      unreadable.push_back(Handed{record.id, record.token, record.target, {}, {}, 0});
      continue;
    }
    replyTargets.push_back(tracksReplies ? replyTargetOf(*stored, profile_.principal)
                                         : std::nullopt);
    PresentationItem item = presentationItemFor(stored->kind, stored->message);
    item.historical = stored->historical;
    item.possibleRepeat = stored->redelivered;
    item.deliveryId = record.id;
    input.items.push_back(std::move(item));
    rendered.push_back(std::move(record));
  }
  if (!unreadable.empty()) settleFailed(std::move(unreadable), "bad-journal-body");
  if (!poison.empty()) {
    settleFailed(std::move(poison),
                 fmt::format("poison: handed to the runtime {} times and each time given back "
                             "unread (the runtime ended before reading it); not handed again",
                             kMaxHandoffs));
  }
  if (input.items.empty()) return true;
  SeatIdentity self{profile_.principal.dotForm(), profile_.name};
  RenderedBlock block = renderDeliveryBlock(input, self);
  rendered.resize(block.taken);  // the rest stay queued for the next block (the first always fits)
  for (const auto& record : rendered)
    ++handoffs_[record.id];
  auto handoffId = newUuidV7(Clock::real());
  Handoff handoff{handoffId.isOk() ? *handoffId : fmt::format("h-{}", generation_), block.text, {}};
  for (size_t i = 0; i < rendered.size(); ++i)
    handoff.items.push_back(HandoffItem{rendered[i].id, block.itemIds[i]});

  // Ownership moves to inflight(dispatching) before the first byte reaches the runtime.
  journal::Transaction begin;
  for (size_t i = 0; i < rendered.size(); ++i) {
    journal::RuntimeIdentity runtime;
    runtime.receipt = fmt::format("{}/{}", handoff.handoffId, i);
    runtime.sessionId = driver_->sessionId();
    begin.add(journal::BeginInflight{rendered[i].id, rendered[i].token,
                                     journal::InflightPhase::kDispatching, runtime,
                                     "handing to generation " + std::to_string(generation_)});
  }
  auto begun = journal_->commit(std::move(begin));
  // A record the full local inbox ended since the view was read (admission runs off the gate)
  // refuses the whole transaction as stale: choose again at once.
  if (!begun.isOk() && begun.status().code() == StatusCode::kAborted) return true;
  if (!begun.isOk()) {
    log::warn("seat {}: could not begin a handoff: {}", profile_.principal.dotForm(),
              begun.status().toString());
    note("journal write failed: " + begun.status().toString());
    dispatchRetryAt_ = Clock_::now() + kDispatchRetry;
    return false;
  }
  std::vector<Handed> owners;
  for (size_t i = 0; i < rendered.size(); ++i) {
    const auto& r = begun->results[i].record;
    Handed h{rendered[i].id, r ? r->token : journal::OwnerToken{}, rendered[i].target, {}, {}, 0};
    if (replyTargets[i]) {
      std::tie(h.replyTarget, h.replyKey) = *replyTargets[i];
      h.replySeq = ledger_.reserve(h.replyKey);  // the runtime may see it from here on
    }
    owners.push_back(std::move(h));
  }

  runtime::StdinWrite wrote = driver_->handoff(handoff);
  if (!wrote.status.isOk()) {
    const std::string detail = fmt::format("{} ({} of {} bytes written)", wrote.status.toString(),
                                           wrote.bytesWritten, handoff.text.size());
    log::warn("seat {}: runtime generation {} retired: {}", profile_.principal.dotForm(),
              generation_, detail);
    accepting_ = false;  // the exit that follows (or the kill below) ends the generation
    if (wrote.bytesWritten == 0) {
      journal::Transaction back;
      for (const auto& o : owners)
        back.add(journal::Requeue{o.id, o.token, "the runtime took no byte"});
      auto requeued = journal_->commit(std::move(back));
      if (!requeued.isOk()) settleFailed(owners, "requeue-failed: " + requeued.status().toString());
    } else if (driver_->surfacedOnRead()) {
      // What the program read whole before it went is surfaced (the driver says how much,
      // at the end of the generation); the rest fails then, never replayed.
      unread_.push_back(ActiveHandoff{handoff.handoffId, std::move(owners), false, block.itemEnds});
    } else {
      settleFailed(owners,
                   "partial-stdin-write: the runtime may have read part of it; never "
                   "replayed");
    }
    event(WakeEvent{"wake-failed", generation_, "handoff failed: " + detail, {}, {}});
    driver_->kill(milliseconds(0));  // its kExited arrives and runs the exit path
    return false;
  }
  if (driver_->surfacedOnWrite()) {
    settleSurfaced(std::move(owners), "stdin-write: written to the runtime's stdin",
                   handoff.handoffId);
    return true;
  }
  journal::Transaction unknown;
  for (const auto& o : owners) {
    unknown.add(journal::MarkOutcomeUnknown{
        o.id, o.token, std::nullopt,
        driver_->surfacedOnRead()
            ? fmt::format("written to the runtime's stdin at {}; awaiting its {}",
                          formatTimestamp(static_cast<double>(wallMs())),
                          profile_.acks ? "acknowledgement on $SHOAL_ACK_FD" : "read")
            : "written; awaiting the runtime's acknowledgement of " + handoff.handoffId});
  }
  auto marked = journal_->commit(std::move(unknown));
  if (marked.isOk()) {
    for (size_t i = 0; i < owners.size(); ++i) {
      if (marked->results[i].record) owners[i].token = marked->results[i].record->token;
    }
  } else {
    log::warn("seat {}: recording a handoff as written: {}", profile_.principal.dotForm(),
              marked.status().toString());
  }
  if (driver_->surfacedOnRead()) {
    unread_.push_back(ActiveHandoff{handoff.handoffId, std::move(owners), false, block.itemEnds});
    return true;  // no turn: the next block may follow at once
  }
  if (steering) {
    steers_.push_back(ActiveHandoff{handoff.handoffId, std::move(owners), false, {}});
    return false;
  }
  handoff_ = ActiveHandoff{handoff.handoffId, std::move(owners), false, {}};
  presence([](mesh::PresencePublisher& p) { p.beginTurn(); });
  return false;
}

void Seat::Impl::turnEnded(const DriverEvent& e) {
  if (compacting_) {
    // The compaction's own end (nothing else was handed to the runtime while it ran).
    endCompaction(e.isError, e.detail);
    presence([](mesh::PresencePublisher& p) { (void)p.setStatus(wire::PresenceStatus::kIdle); });
    if (resumesSessions()) markResumeSafe();
    dispatch();
    return;
  }
  count(&SeatCounters::turns);
  std::optional<ActiveHandoff> carried;
  saveSession(driver_->sessionId());
  progressThisGeneration_ = true;
  crashesInARow_ = 0;
  if (handoff_) {
    std::vector<std::string> ids;
    for (const auto& o : handoff_->owners)
      ids.push_back(o.id);
    if (!handoff_->acked) {
      settleFailed(handoff_->owners,
                   "no-runtime-ack: the runtime ended its turn without acknowledging handoff " +
                       handoff_->id);
    }
    // A steer not acknowledged yet may have raced the turn's end: the driver then starts the
    // next turn with it. It is carried over as that turn's handoff, never failed here.
    for (auto& steer : steers_) {
      if (!steer.acked) {
        carried = std::move(steer);
        continue;
      }
      for (const auto& o : steer.owners)
        ids.push_back(o.id);
    }
    steers_.clear();
    event(WakeEvent{
        e.isError ? "wake-failed" : "turn-completed", generation_, e.detail, std::move(ids), {}});
    handoff_.reset();
  } else if (e.isError) {
    event(WakeEvent{"runtime-error", generation_, e.detail, {}, {}});
  }
  finalCheck(e.isError ? "the turn ended in an error: " + e.detail : "");
  if (e.isError) {
    note(e.detail);
    auto c = e.condition.value_or(wire::PresenceCondition{});
    presence([c](mesh::PresencePublisher& p) {
      (void)p.setStatus(wire::PresenceStatus::kIdle);
      p.setCondition(c);
    });
  } else {
    presence([](mesh::PresencePublisher& p) { (void)p.setStatus(wire::PresenceStatus::kIdle); });
  }
  if (carried) {
    handoff_ = std::move(carried);
    presence([](mesh::PresencePublisher& p) { p.beginTurn(); });
  } else if (resumesSessions()) {
    markResumeSafe();  // before dispatch: a handoff made next marks it unsafe again
  }
  dispatch();
}

void Seat::Impl::unexpectedExit(const DriverEvent& e) {
  accepting_ = false;
  interrupted_ = false;
  if (compacting_) {
    endCompaction(true, "context_compaction_failed: the runtime exited (" + exitText(e) +
                            ") before the compaction ended");
  }
  count(&SeatCounters::unexpectedExits);
  const std::string how = exitText(e);
  log::warn("seat {}: runtime generation {} exited unexpectedly: {}", profile_.principal.dotForm(),
            generation_, how);
  std::vector<std::string> ids;
  if (handoff_) {
    for (const auto& o : handoff_->owners)
      ids.push_back(o.id);
  }
  for (const auto& steer : steers_) {
    for (const auto& o : steer.owners)
      ids.push_back(o.id);
  }
  steers_.clear();
  drainLeases();
  if (driver_->reconciles()) {
    // Written, unacknowledged handoffs wait for the next generation to read the thread.
    for (const auto& record : journal_->view().live) {
      // Dispatching or written: either way only the thread can say whether it was read.
      if (!journal::isInflight(record.state) || leases_.holds(record.id)) continue;
      const auto slash = record.runtime.receipt.rfind('/');
      if (record.runtime.sessionId.empty() || slash == std::string::npos) continue;
      reconciling_.push_back(Reconciling{Handed{record.id, record.token, record.target, {}, {}, 0},
                                         record.runtime.receipt.substr(0, slash),
                                         record.runtime.sessionId});
    }
  }
  failUnread("exited (" + how + ")");
  failInflight("no-read-reconciliation: the runtime exited (" + how +
               ") before acknowledging it; it cannot say whether it read it");
  finalCheck("the runtime exited (" + how + ") before answering");
  event(WakeEvent{
      "exited-unexpectedly", generation_, e.detail, {}, e.exit ? e.exit->toString() : ""});
  if (!ids.empty()) {
    event(WakeEvent{"wake-failed",
                    generation_,
                    "the runtime exited (" + how + ") mid-turn",
                    std::move(ids),
                    {}});
  }
  handoff_.reset();
  driver_->kill(milliseconds(0));
  driver_.reset();
  wire::PresenceCondition c;
  c.code = wire::ConditionCode::kFailed;
  c.message = "runtime exited: " + how;
  presence([c](mesh::PresencePublisher& p) {
    (void)p.setStatus(wire::PresenceStatus::kWaiting);  // until a new runtime is ready
    p.setCondition(c);
  });
  note("runtime exited unexpectedly: " + how);
  const bool neverReady = readyDeadline_.has_value();
  readyDeadline_.reset();
  if (neverReady && resumedGeneration_ && !resumeFallbackUsed_) {
    // The runtime refused the saved session (e.g. its transcript is gone): once per seat life,
    // start a fresh session at once instead of counting a crash.
    resumeFallbackUsed_ = true;
    const std::string detail = fmt::format(
        "resuming session {} failed ({}); starting a fresh session", savedSession_, how);
    log::warn("seat {}: {}", profile_.principal.dotForm(), detail);
    event(WakeEvent{"runtime-error", generation_, detail, {}, {}});
    saveSession("");
    if (shouldRun()) restartAt_ = Clock_::now();
    return;
  }
  if (shouldRun()) scheduleRestart(how);
}

std::string Seat::Impl::sessionFingerprint() const {
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](std::string_view bytes) {
    for (unsigned char c : bytes) {
      h ^= c;
      h *= 1099511628211ULL;
    }
    h ^= 0xff;  // a separator no UTF-8 text contains
    h *= 1099511628211ULL;
  };
  mix(runtimeKindName(profile_.runtime));
  for (const auto& arg : profile_.command)
    mix(arg);
  mix(instructions_);
  return fmt::format("{:016x}", h);
}

void Seat::Impl::markResumeSafe() {
  auto view = journal_->view();
  if (!view.live.empty()) return;  // a queued or inflight owner: it stays unsafe
  const journal::ResumeSafety& now = view.resumeSafety;
  if (now.launchEpoch != launchEpoch_ || now.safe) return;
  auto marked =
      journal_->setResumeSafety(journal::SetResumeSafety{{true, launchEpoch_, now.version + 1}});
  if (!marked.isOk() && marked.status().code() != StatusCode::kAborted) {
    log::warn("seat {}: marking the session safe to resume: {}", profile_.principal.dotForm(),
              marked.status().toString());
  }
}

void Seat::Impl::markResumeUnsafe() {
  const journal::ResumeSafety now = journal_->view().resumeSafety;
  if (now.launchEpoch != launchEpoch_ || !now.safe) return;
  auto marked =
      journal_->setResumeSafety(journal::SetResumeSafety{{false, launchEpoch_, now.version + 1}});
  if (!marked.isOk() && marked.status().code() != StatusCode::kAborted) {
    log::warn("seat {}: marking the session unsafe to resume: {}", profile_.principal.dotForm(),
              marked.status().toString());
  }
}

// `shoal seat compact`: only at an idle boundary, and nothing is handed to the runtime until
// the compaction's turn ends (seed 004 §1.1: starting compaction marks the session unsafe;
// §3.3: an ambiguous compaction stays non-idle until an authoritative idle).
void Seat::Impl::startCompaction(GateEvent& e) {
  const std::string id = profile_.principal.dotForm();
  Status refused;
  if (retiring_ != Retiring::kNone || driver_ == nullptr || !accepting_) {
    refused = failedPrecondition(
        "seat-not-running", fmt::format("seat {} has no running runtime to compact ({}; `shoal "
                                        "seat start {}` runs it)",
                                        id, driver_ == nullptr ? "none" : "not ready", id));
  } else if (!driver_->compacts()) {
    refused = failedPrecondition(
        "compaction-unsupported",
        fmt::format("{} seats cannot be compacted on request (codex and opencode seats can)",
                    runtimeKindName(profile_.runtime)));
  } else if (compacting_) {
    refused = failedPrecondition("already-compacting", "seat " + id + " is compacting already");
  } else if (handoff_ || !reconciling_.empty()) {
    refused = failedPrecondition(
        "seat-busy", fmt::format("seat {} is {}; compact it once it is idle (`shoal seat show {}`)",
                                 id, handoff_ ? "in a turn" : "reconciling deliveries", id));
  }
  if (!refused.isOk()) {
    complete(e.done, std::move(refused));
    return;
  }
  if (resumesSessions()) markResumeUnsafe();
  if (Status started = driver_->compact(); !started.isOk()) {
    if (resumesSessions()) markResumeSafe();
    complete(e.done, std::move(started));
    return;
  }
  compacting_ = true;
  compactDeadline_ = Clock_::now() + options_.compactionTimeout;
  {
    MutexLock lock(mu_);
    snap_.compaction = SeatCompaction{"compacting", "", wallMs(), 0};
  }
  log::info("seat {}: compaction started (generation {})", id, generation_);
  complete(e.done, Status::ok());
}

// `shoal seat interrupt`: the runtime's own interrupt; the turn then ends as runtimes end turns.
void Seat::Impl::interruptTurn(GateEvent& e) {
  const std::string id = profile_.principal.dotForm();
  Status refused;
  if (retiring_ != Retiring::kNone || driver_ == nullptr || !accepting_) {
    refused = failedPrecondition("seat-not-running",
                                 "seat " + id + " has no running runtime to interrupt");
  } else if (!driver_->interrupts()) {
    refused = failedPrecondition(
        "interrupt-unsupported",
        fmt::format("{} seats cannot be interrupted (claude, codex and opencode seats can)",
                    runtimeKindName(profile_.runtime)));
  } else if (compacting_) {
    refused = failedPrecondition("compacting", "seat " + id +
                                                   " is compacting; a compaction is not "
                                                   "interrupted (it ends on its own or times out)");
  } else if (!handoff_) {
    refused = failedPrecondition("not-in-a-turn", "seat " + id + " is idle: no turn to interrupt");
  } else if (Status asked = driver_->interrupt(); !asked.isOk()) {
    refused = std::move(asked);
  }
  if (refused.isOk()) {
    interrupted_ = true;
    log::info("seat {}: interrupt asked (generation {}, handoff {})", id, generation_,
              handoff_->id);
  }
  complete(e.done, std::move(refused));
}

void Seat::Impl::endCompaction(bool failed, const std::string& detail) {
  compacting_ = false;
  compactDeadline_.reset();
  {
    MutexLock lock(mu_);
    snap_.compaction.state = failed ? "failed" : "compacted";
    snap_.compaction.detail = detail;
    snap_.compaction.endedAtMs = wallMs();
  }
  if (failed) {
    log::warn("seat {}: compaction failed: {}", profile_.principal.dotForm(), detail);
    note(detail);
  } else {
    log::info("seat {}: compaction completed", profile_.principal.dotForm());
  }
  event(WakeEvent{failed ? "compaction-failed" : "compacted", generation_, detail, {}, {}});
}

void Seat::Impl::saveSession(const std::string& id) {
  const bool adopted = id.empty() || savedFingerprint_ == sessionFingerprint();
  if (!resumesSessions() || (id == savedSession_ && adopted)) return;
  boost::json::object value{{"id", id}, {"fingerprint", id.empty() ? "" : sessionFingerprint()}};
  auto saved = journal_->setSection(journal::SetSection{
      std::string(kSessionSection), boost::json::serialize(value), std::nullopt});
  if (!saved.isOk()) {
    log::warn("seat {}: saving the runtime session: {}", profile_.principal.dotForm(),
              saved.status().toString());
    return;
  }
  savedSession_ = id;
  savedFingerprint_ = id.empty() ? "" : sessionFingerprint();
}

void Seat::Impl::scheduleRestart(const std::string& why, bool launchFailed) {
  // A generation that ran a turn or lived a while resets the count; a launch that failed never
  // does (a missing program must park the seat, not retry forever).
  const bool lived = !launchFailed && Clock_::now() - launchedAt_ >= kCrashWindow;
  if ((progressThisGeneration_ && !launchFailed) || lived) {
    crashesInARow_ = 1;
  } else {
    ++crashesInARow_;
  }
  if (crashesInARow_ >= options_.maxCrashesInARow) {
    parked_ = true;
    const std::string text = fmt::format(
        "parked after {} failed runtime starts in a row (last: {}); `shoal seat start {}` "
        "tries again",
        crashesInARow_, why, profile_.name);
    log::warn("seat {}: {}", profile_.principal.dotForm(), text);
    note(text);
    event(WakeEvent{"start-failed", generation_, text, {}, {}});
    return;
  }
  backoff_ = options_.restartBackoff * (1 << std::min(crashesInARow_ - 1, 16));
  if (backoff_ > options_.maxRestartBackoff) backoff_ = options_.maxRestartBackoff;
  restartAt_ = Clock_::now() + backoff_;
}

void Seat::Impl::beginRetire(Retiring kind, std::shared_ptr<Completion> done,
                             std::optional<TimePoint> deadline) {
  retiring_ = kind;
  accepting_ = false;  // no new handoff from here on
  leases_.close();     // nor a new inbox claim
  readyDeadline_.reset();
  retireWaiters_.push_back(std::move(done));
  retireDeadline_ = Clock_::now() + options_.stopGrace;
  if (deadline && *deadline < retireDeadline_) retireDeadline_ = *deadline;
  driver_->closeInput();  // the runtime may finish what it already read
}

void Seat::Impl::finishRetire() {
  readyDeadline_.reset();
  interrupted_ = false;
  if (compacting_) endCompaction(true, "the seat stopped before the compaction ended");
  if (driver_ != nullptr) {
    driver_->kill(milliseconds(0));
    drainLeases();
    reconciling_.clear();
    reconcileAt_.reset();
    reconcileReadDeadline_.reset();
    reconcileSince_.reset();
    failUnread("was stopped");
    failInflight("stopped-before-ack: the runtime was stopped before acknowledging it");
    finalCheck(handoff_ ? "the seat stopped before the turn ended" : "");
    if (handoff_) {
      std::vector<std::string> ids;
      for (const auto& o : handoff_->owners)
        ids.push_back(o.id);
      for (const auto& steer : steers_) {
        for (const auto& o : steer.owners)
          ids.push_back(o.id);
      }
      event(WakeEvent{"wake-failed", generation_, "the seat stopped mid-turn", std::move(ids), {}});
    }
    steers_.clear();
    handoff_.reset();
    driver_.reset();
    event(WakeEvent{
        "stopped", generation_, retiring_ == Retiring::kSleep ? "sleep" : "stop", {}, {}});
  }
  accepting_ = false;
  if (retiring_ == Retiring::kStop) {
    if (mcp_) mcp_->stop();                   // no tool call runs on the endpoint after this
    if (endpoint_) (void)endpoint_->close();  // presence offline, no admission after this
    stopped_ = true;
  } else {
    presence([](mesh::PresencePublisher& p) { (void)p.setStatus(wire::PresenceStatus::kIdle); });
    (void)endpoint_->setActivity("sleeping (a direct message wakes it)");
  }
  retiring_ = Retiring::kNone;
  for (auto& w : retireWaiters_)
    complete(w, Status::ok());
  retireWaiters_.clear();
  std::deque<GateEvent> deferred;
  deferred.swap(deferred_);
  if (stopped_) {
    for (auto& e : deferred)
      complete(e.done, failedPrecondition("seat-stopped", "the seat has stopped"));
    return;
  }
  for (auto& e : deferred)
    onCommand(e);
}

void Seat::Impl::readFromStdin(ActiveHandoff& h, std::optional<size_t> bytesRead) {
  // Whole messages the bytes read cover are surfaced; the rest stay unread (and fail when the
  // generation ends: the program saw, at most, part of them).
  std::vector<Handed> read;
  std::vector<Handed> rest;
  std::vector<size_t> restEnds;
  for (size_t i = 0; i < h.owners.size(); ++i) {
    const size_t end = i < h.ends.size() ? h.ends[i] : SIZE_MAX;
    if (!bytesRead || end <= *bytesRead) {
      read.push_back(std::move(h.owners[i]));
    } else {
      rest.push_back(std::move(h.owners[i]));
      restEnds.push_back(end);
    }
  }
  if (!read.empty()) {
    settleSurfaced(std::move(read),
                   "stdin-read: the runtime read it from its stdin (handoff " + h.id + ")", h.id);
  }
  h.owners = std::move(rest);
  h.ends = std::move(restEnds);
}

void Seat::Impl::acknowledged(ActiveHandoff& h, const std::string& ownerId) {
  for (size_t i = 0; i < h.owners.size(); ++i) {
    if (h.owners[i].id != ownerId) continue;
    std::vector<Handed> one;
    one.push_back(std::move(h.owners[i]));
    h.owners.erase(h.owners.begin() + static_cast<std::ptrdiff_t>(i));
    if (i < h.ends.size()) h.ends.erase(h.ends.begin() + static_cast<std::ptrdiff_t>(i));
    settleSurfaced(
        std::move(one),
        "runtime-ack: the program acknowledged it on $SHOAL_ACK_FD (handoff " + h.id + ")", h.id);
    return;
  }
}

void Seat::Impl::saveHistory(bool clean, bool force) {
  SeatHistory h;
  h.generation = generation_;
  {
    MutexLock lock(mu_);
    h.counters = snap_.counters;
  }
  const bool changed = h.counters != savedCounters_ || h.generation != savedGeneration_;
  if (!changed && !force) return;
  const TimePoint now = Clock_::now();
  if (!force && h.generation == savedGeneration_ && now - savedAt_ < std::chrono::seconds(1)) {
    historyDueAt_ = savedAt_ + std::chrono::seconds(1);
    return;
  }
  h.pid = ::getpid();
  h.startedAtMs = lifeStartedAtMs_;
  h.clean = clean;
  journal::Transaction txn;
  txn.add(journal::SetSection{std::string(kSeatHistorySection), h.toJson(), std::nullopt});
  if (!journal_->commit(std::move(txn)).isOk()) {
    historyDueAt_ = now + std::chrono::seconds(5);  // a poisoned journal says so elsewhere
    return;
  }
  savedCounters_ = h.counters;
  savedGeneration_ = h.generation;
  savedAt_ = now;
  historyDueAt_.reset();
}

void Seat::Impl::retryReceipts(bool force) {
  if (const size_t stored = wake_->retryOwed(wallMs()); stored > 0) {
    count(&SeatCounters::receipts, stored);
    log::info("seat {}: {} owed receipt(s) stored; {} still owed", profile_.principal.dotForm(),
              stored, wake_->owedCount());
  }
  const TimePoint now = Clock_::now();
  if (!force && now - receiptsSavedAt_ < kReceiptsSaveEvery) {
    if (wake_->outboxChanged()) receiptsDueAt_ = receiptsSavedAt_ + kReceiptsSaveEvery;
    return;
  }
  receiptsDueAt_.reset();
  auto section = wake_->outboxSection(wallMs());
  if (!section) return;
  journal::Transaction txn;
  txn.add(journal::SetSection{std::string(kReceiptsSection), *section, std::nullopt});
  (void)journal_->commit(std::move(txn));  // a poisoned journal says so elsewhere
  receiptsSavedAt_ = now;
}

void Seat::Impl::replayReceipts() {
  int64_t through = wallMs() - kReceiptReplayWindow.count();
  std::set<std::string> owedIds;
  const auto& sections = journal_->view().sections;
  if (auto it = sections.find(kReceiptsSection); it != sections.end()) {
    if (auto owed = parseOwedReceipts(it->second.valueJson); owed.isOk()) {
      through = owed->throughMs;
      for (const auto& r : owed->owed)
        owedIds.insert(r.outcome + "/" + r.id);
      if (!owed->owed.empty()) {
        log::info("seat {}: the previous daemon owed {} receipt(s); publishing them",
                  profile_.principal.dotForm(), owed->owed.size());
      }
      wake_->restoreOwed(std::move(owed->owed));
    } else {
      log::warn("seat {}: {}; republishing the receipts of the last {} s instead",
                profile_.principal.dotForm(), owed.status().toString(),
                kReceiptReplayWindow.count() / 1000);
    }
  }
  // A daemon that ended between a terminal journal write and its receipt's publish left the
  // sender without one: those are published again (the duplicate window, keyed
  // `rcpt-<outcome>-<seat>-<id>`, keeps exactly one of a receipt already stored).
  for (const auto& t : journal_->view().tombstones) {
    if (t.stateSinceMs < through || t.target.empty()) continue;
    const bool surfaced = t.state == journal::OwnerState::kSurfaced;
    if (owedIds.contains((surfaced ? "surfaced/" : "failed/") + t.id)) continue;
    if (surfaced) {
      (void)wake_->surfaced(t.id, t.target, t.stateSinceMs, evidenceKind(t.reason));
    } else {
      (void)wake_->failed(t.id, t.target, t.reason, t.stateSinceMs);
    }
  }
  (void)wake_->retryOwed(wallMs());
}

void Seat::Impl::failUnread(const std::string& how) {
  const std::string reason =
      profile_.acks ? "runtime-exited-before-ack: the runtime " + how +
                          " before acknowledging it on $SHOAL_ACK_FD (it may have read it); "
                          "never replayed"
                    : "runtime-exited-before-reading: the runtime " + how +
                          " before reading it from its stdin (its bytes were still in the "
                          "pipe); never replayed";
  for (auto& h : unread_)
    settleFailed(std::move(h.owners), reason);
  unread_.clear();
}

void Seat::Impl::failInflight(const std::string& reason) {
  std::vector<Handed> inflight;
  for (const auto& record : journal_->view().live) {
    // An inbox receipt is not the runtime's: its lease decides (a write still in flight may
    // prove it surfaced; else it fails at the lease's end). A handoff being reconciled waits
    // for the runtime's answer.
    const bool reconciling =
        std::any_of(reconciling_.begin(), reconciling_.end(),
                    [&](const Reconciling& r) { return r.owner.id == record.id; });
    if (journal::isInflight(record.state) && !leases_.holds(record.id) && !reconciling)
      inflight.push_back(Handed{record.id, record.token, record.target, {}, {}, 0});
  }
  if (!inflight.empty()) settleFailed(std::move(inflight), reason);
}

void Seat::Impl::settleSurfaced(std::vector<Handed> owners, const std::string& how,
                                const std::string& wakeToken) {
  journal::Transaction txn;
  for (const auto& o : owners) {
    txn.add(journal::MarkSurfaced{o.id, o.token, how});
    handoffs_.erase(o.id);
  }
  auto done = journal_->commit(std::move(txn));
  if (!done.isOk()) {
    log::warn("seat {}: recording surfaced: {}", profile_.principal.dotForm(),
              done.status().toString());
    return;
  }
  const int64_t now = wallMs();
  count(&SeatCounters::surfaced, owners.size());
  const std::string evidence = evidenceKind(how);
  if (auto byEvidence = surfacedCounter(evidence)) count(byEvidence, owners.size());
  std::vector<WakeResult> earlyReplies;
  for (const auto& o : owners) {
    if (wake_->surfaced(o.id, o.sender, now, evidence).isOk()) count(&SeatCounters::receipts);
    if (o.replyKey.empty()) continue;
    // Answered already (the reply beat this acknowledgement): its result is out at once.
    if (auto early = ledger_.add(ReplyRow{o.id, o.replyTarget, o.replyKey, o.replySeq, wakeToken}))
      earlyReplies.push_back(std::move(*early));
  }
  if (!earlyReplies.empty()) {
    uint64_t generation = 0;
    {
      MutexLock lock(mu_);
      generation = snap_.generation;
    }
    publishResults(earlyReplies, generation);
  }
}

void Seat::Impl::settleFailed(std::vector<Handed> owners, const std::string& reason) {
  journal::Transaction txn;
  for (const auto& o : owners) {
    txn.add(journal::MarkFailed{o.id, o.token, reason});
    handoffs_.erase(o.id);
  }
  auto done = journal_->commit(std::move(txn));
  if (!done.isOk()) {
    log::warn("seat {}: recording failed: {}", profile_.principal.dotForm(),
              done.status().toString());
    return;
  }
  const int64_t now = wallMs();
  count(&SeatCounters::failed, owners.size());
  for (const auto& o : owners) {
    if (wake_->failed(o.id, o.sender, reason, now).isOk()) count(&SeatCounters::receipts);
  }
}

// ---------------------------------------------------------------------------------------------
// Inbox pages and visible replies

mcp::ToolResult Seat::Impl::inboxPage(size_t limit) {
  auto request = std::make_shared<InboxRequest>();
  request->limit = std::clamp<size_t>(limit == 0 ? kInboxPageDefault : limit, 1, kInboxPageMax);
  GateEvent e;
  e.kind = GateEvent::Kind::kInbox;
  e.inbox = request;
  {
    MutexLock lock(mu_);
    if (closed_) return mcp::ToolResult::error("shoal_inbox: the seat has stopped");
    events_.push_back(std::move(e));
    cv_.notifyAll();
  }
  if (!request->done.wait(Clock_::now() + kInboxWait)) {
    MutexLock lock(request->mu);
    if (!request->taken) {
      request->abandoned = true;  // the gate will claim nothing for it
      return mcp::ToolResult::error("shoal_inbox: the seat is busy; try again in a moment");
    }
  }
  request->done.wait(std::nullopt);  // the claim began: it ends in moments
  return std::move(request->result);
}

void Seat::Impl::claimInbox(InboxRequest& request, int attempt) {
  if (driver_ == nullptr || retiring_ != Retiring::kNone || !leases_.accepting(generation_)) {
    request.result = mcp::ToolResult::error(
        "shoal_inbox: the seat's runtime is stopping or not running; nothing was taken");
    return;
  }
  std::vector<journal::OwnershipRecord> queued;
  for (auto& record : journal_->view().live) {
    if (record.state == journal::OwnerState::kQueued) queued.push_back(std::move(record));
  }
  std::sort(queued.begin(), queued.end(),
            [](const auto& a, const auto& b) { return a.seq < b.seq; });
  const size_t waiting = queued.size();
  if (queued.size() > request.limit) queued.resize(request.limit);

  const bool tracksReplies = !driver_->surfacedOnWrite() && !driver_->surfacedOnRead();
  PresentationInput input;
  std::vector<journal::OwnershipRecord> page;
  std::vector<InboxClaim> claims;
  std::vector<Handed> unreadable;
  const TimePoint deadline = Clock_::now() + options_.finalHopLease;
  for (auto& record : queued) {
    auto stored = decodeStoredDelivery(record.body);
    if (!stored.isOk()) {
      unreadable.push_back(Handed{record.id, record.token, record.target, {}, {}, 0});
      continue;
    }
    // A cryptographically random receipt; no randomness fails closed, the bodies stay queued.
    auto receipt = newHexToken(16);
    if (!receipt.isOk()) {
      request.result = mcp::ToolResult::error("shoal_inbox: no receipt could be minted (" +
                                              receipt.status().toString() +
                                              "); nothing was taken, your messages stay queued");
      return;
    }
    PresentationItem item = presentationItemFor(stored->kind, stored->message);
    item.historical = stored->historical;
    item.possibleRepeat = stored->redelivered;
    item.deliveryId = record.id;
    input.items.push_back(std::move(item));
    InboxClaim c;
    c.receipt = std::string(kInboxReceiptPrefix) + *receipt;
    c.id = record.id;
    c.token = record.token;
    c.sender = record.target;
    if (auto target = tracksReplies ? replyTargetOf(*stored, profile_.principal) : std::nullopt)
      std::tie(c.replyTarget, c.replyKey) = *target;
    c.generation = generation_;
    c.deadline = deadline;
    claims.push_back(std::move(c));
    page.push_back(std::move(record));
  }
  if (!unreadable.empty()) settleFailed(std::move(unreadable), "bad-journal-body");
  if (input.items.empty()) {
    request.result = mcp::ToolResult::ok("shoal_inbox: no new messages.");
    return;
  }
  SeatIdentity self{profile_.principal.dotForm(), profile_.name};
  RenderedBlock block = renderDeliveryBlock(input, self);
  claims.resize(block.taken);
  page.resize(block.taken);

  // The claim: queued → inflight(outcome_unknown) under its receipt, one transaction (a
  // receipt another record holds refuses all of it: the bodies stay queued).
  journal::Transaction txn;
  for (const auto& c : claims) {
    journal::RuntimeIdentity runtime;
    runtime.receipt = c.receipt;
    runtime.sessionId = driver_->sessionId();
    txn.add(journal::BeginInflight{
        c.id, c.token, journal::InflightPhase::kOutcomeUnknown, runtime,
        fmt::format("claimed by an inbox page of generation {}; awaiting its final hop",
                    generation_)});
  }
  auto committed = journal_->commit(std::move(txn));
  if (!committed.isOk() && committed.status().code() == StatusCode::kAborted &&
      attempt < kInboxAttempts) {
    // A record the full local inbox ended since the view was read: choose again.
    claimInbox(request, attempt + 1);
    return;
  }
  if (!committed.isOk()) {
    log::warn("seat {}: an inbox page could not claim its messages: {}",
              profile_.principal.dotForm(), committed.status().toString());
    request.result =
        mcp::ToolResult::error("shoal_inbox: nothing was taken (" + committed.status().toString() +
                               "); your messages stay queued");
    return;
  }
  for (size_t i = 0; i < claims.size(); ++i) {
    if (const auto& r = committed->results[i].record) claims[i].token = r->token;
    if (!claims[i].replyKey.empty()) claims[i].replySeq = ledger_.reserve(claims[i].replyKey);
  }
  std::vector<std::string> receipts;
  std::string markers;
  boost::json::array meta;
  for (const auto& c : claims) {
    receipts.push_back(c.receipt);
    markers += "[" + c.receipt + "]";
    meta.push_back(boost::json::object{{"receipt", c.receipt}, {"messageId", c.id}});
  }
  const size_t claimed = claims.size();
  const uint64_t generation = generation_;
  (void)leases_.add(std::move(claims));  // open for this generation: checked above, on the gate
  count(&SeatCounters::inboxClaimed, claimed);
  std::deque<std::string> stillForeground;
  for (const auto& id : foreground_) {
    if (std::none_of(page.begin(), page.end(), [&](const auto& r) { return r.id == id; }))
      stillForeground.push_back(id);
  }
  foreground_ = std::move(stillForeground);

  mcp::ToolResult result(
      fmt::format("shoal_inbox receipts {}\n{} message(s), oldest first{}:\n\n{}", markers, claimed,
                  waiting > claimed ? " (more are waiting: call again)" : "", block.text));
  result.meta["shoal/receipts"] = std::move(meta);
  result.onWritten = [this, receipts = std::move(receipts), generation](bool complete) {
    inboxWritten(receipts, generation, complete);
  };
  request.result = std::move(result);
}

void Seat::Impl::inboxWritten(const std::vector<std::string>& receipts, uint64_t generation,
                              bool complete) {
  std::vector<InboxClaim> acked = leases_.finishWrite(receipts, generation, complete);
  if (!complete) {
    log::warn(
        "seat {}: an inbox page ({} receipt(s)) was not written whole; no acknowledgement, "
        "its leases stay until they end",
        profile_.principal.dotForm(), receipts.size());
  } else if (acked.size() < receipts.size()) {
    log::warn(
        "seat {}: an inbox page of generation {} was written after that generation "
        "retired; not acknowledged",
        profile_.principal.dotForm(), generation);
  }
  if (!acked.empty()) {
    std::vector<Handed> owners;
    for (auto& c : acked)
      owners.push_back(Handed{c.id, c.token, c.sender, c.replyTarget, c.replyKey, c.replySeq});
    settleSurfaced(std::move(owners),
                   "inbox-page: an inbox page carrying its receipt was written whole",
                   "inbox:" + acked.front().receipt);
  }
  leases_.handled(receipts.size());  // the lifecycle-mutation lease ends here
}

void Seat::Impl::drainLeases() {
  leases_.close();
  if (!leases_.drain(Clock_::now() + kLeaseDrain)) {
    log::warn(
        "seat {}: an inbox page's write outcome did not arrive in {} ms; its receipts "
        "are no longer acknowledged and end at their lease",
        profile_.principal.dotForm(), kLeaseDrain.count());
  }
}

void Seat::Impl::replied(const std::string& targetKey, uint64_t seenUpTo,
                         const std::string& replyId) {
  auto results = ledger_.settle(targetKey, seenUpTo, replyId);
  uint64_t generation = 0;
  {
    MutexLock lock(mu_);
    generation = snap_.generation;
  }
  if (!results.empty()) publishResults(results, generation);
}

void Seat::Impl::finalCheck(const std::string& failedReason) {
  auto results = ledger_.finalCheck(failedReason);
  if (!results.empty()) publishResults(results, generation_);
}

void Seat::Impl::publishResults(const std::vector<WakeResult>& results, uint64_t generation) {
  const int64_t now = wallMs();
  for (const auto& r : results) {
    Status published = wake_->result(r, generation, now);
    if (!published.isOk()) {
      log::warn("seat {}: wake result for {} not stored: {}", profile_.principal.dotForm(),
                r.messageId, published.toString());
    }
  }
  MutexLock lock(mu_);
  for (const auto& r : results) {
    if (r.result == "replied") {
      ++snap_.counters.replied;
    } else if (r.result == "failed") {
      ++snap_.counters.replyFailed;
    } else {
      ++snap_.counters.noVisibleReply;
    }
    snap_.recentResults.push_back(
        SeatWakeResult{r.messageId, r.targetKey, r.result, r.replyId, r.reason, now});
  }
  if (snap_.recentResults.size() > kRecentResults) {
    snap_.recentResults.erase(snap_.recentResults.begin(),
                              snap_.recentResults.end() - static_cast<long>(kRecentResults));
  }
}

void Seat::Impl::event(WakeEvent e) {
  Status published = wake_->publish(e, wallMs());
  if (!published.isOk()) {
    log::warn("seat {}: lifecycle event {} not stored: {}", profile_.principal.dotForm(), e.kind,
              published.toString());
  }
}

void Seat::Impl::presence(std::function<void(mesh::PresencePublisher&)> change) {
  if (endpoint_ != nullptr && !stopped_) endpoint_->updatePresence(std::move(change));
}

void Seat::Impl::publishState() {
  std::string state;
  if (stopped_) {
    state = "stopped";
  } else if (retiring_ != Retiring::kNone) {
    state = "retiring";
  } else if (driver_ != nullptr) {
    state = compacting_                     ? "compacting"
            : handoff_                      ? "busy"
            : !accepting_ && readyDeadline_ ? "starting"  // its readiness handshake runs
                                            : "running";
  } else if (parked_) {
    state = "parked";
  } else if (restartAt_) {
    state = "restarting";
  } else if (!shouldRun()) {
    state = "sleeping";
  } else {
    state = "starting";
  }
  MutexLock lock(mu_);
  snap_.state = state;
  snap_.processRunning = driver_ != nullptr;
  snap_.generation = generation_;
  snap_.pid = driver_ != nullptr ? driver_->pid() : 0;
  snap_.session = resumesSessions() ? savedSession_ : "";
}

// ---------------------------------------------------------------------------------------------
// Seat

Seat::Seat(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Seat::~Seat() = default;

Result<std::unique_ptr<Seat>> Seat::open(const SeatProfile& profile, SeatOptions options) {
  SHOAL_RETURN_IF_ERROR(validateSeatProfile(profile));
  auto impl = std::make_unique<Impl>(profile, std::move(options));
  Status opened = impl->open();
  if (!opened.isOk()) {
    impl->stop();
    return opened;
  }
  return std::unique_ptr<Seat>(new Seat(std::move(impl)));
}

Status Seat::wake() {
  return impl_->command(GateEvent::Kind::kWake, std::nullopt, true);
}
Status Seat::sleep() {
  return impl_->command(GateEvent::Kind::kSleep, std::nullopt, true);
}
Status Seat::compact() {
  return impl_->command(GateEvent::Kind::kCompact, std::nullopt, true);
}
Status Seat::interrupt() {
  return impl_->command(GateEvent::Kind::kInterrupt, std::nullopt, true);
}
void Seat::stop() {
  impl_->stop();
}
void Seat::requestStop(std::chrono::steady_clock::time_point deadline) {
  impl_->requestStop(deadline);
}
bool Seat::waitStopped(std::chrono::steady_clock::time_point deadline) {
  return impl_->waitStopped(deadline);
}
const SeatProfile& Seat::profile() const {
  return impl_->profile_;
}
std::string Seat::runtimeLogPath() const {
  return impl_->runtimeLogPath();
}
std::string Seat::mcpConfigPath() const {
  return impl_->mcpConfigPath();
}
SeatSnapshot Seat::snapshot() const {
  return impl_->snapshot();
}

}  // namespace shoal::daemon
