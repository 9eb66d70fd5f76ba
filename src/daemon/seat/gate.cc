#include <algorithm>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/ids.h"
#include "base/log.h"
#include "daemon/presentation.h"
#include "daemon/reconcile_outcome.h"
#include "daemon/seat/seat_impl.h"
#include "daemon/seat_tools.h"

namespace shoal::daemon {
namespace {

std::string exitText(const runtime::DriverEvent& e) {
  std::string out = e.exit ? e.exit->toString() : std::string("exit status unknown");
  if (!e.detail.empty()) out += " after a transport fault: " + e.detail;
  return out;
}

}  // namespace

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
    refreshLane();
    publishState();
    saveHistory(stopped_, stopped_);
    retryReceipts(stopped_);
    for (auto& [done, status] : toFinish_)
      done->finish(std::move(status));
    toFinish_.clear();
    if (stopped_) {
      std::deque<GateEvent> left;
      {
        MutexLock lock(mu_);
        closed_ = true;
        left.swap(events_);
      }
      // What raced the stop ends here, as post() ends it on a closed gate: commands at once
      // (nothing finishes them later), a direct claim back to queued.
      for (auto& e : left)
        post(std::move(e));
      return;
    }
  }
}

void Seat::Impl::handle(GateEvent& e) {
  switch (e.kind) {
    case GateEvent::Kind::kAdmitted:
      if (e.direct) {
        directAdmitted(e);
        return;
      }
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
      restarts_.reset();
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
      runtime::DriverEvent timedOut;
      timedOut.kind = runtime::DriverEvent::Kind::kReconciled;
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
    runtime::DriverEvent failed;
    failed.threadId = thread;
    failed.detail = "thread/read could not be sent: " + st.toString();
    reconciled(failed);
  }
}

void Seat::Impl::reconciled(const runtime::DriverEvent& e) {
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

void Seat::Impl::onDriver(const runtime::DriverEvent& e) {
  if (driver_ == nullptr || e.generation != generation_) return;  // a retired generation
  switch (e.kind) {
    case runtime::DriverEvent::Kind::kAck:
      for (auto it = unread_.begin(); it != unread_.end(); ++it) {
        if (it->id == e.handoffId) {
          if (e.ackedId.empty()) {
            readFromStdin(*it, e.bytesRead);
          } else {
            acknowledged(*it, e.ackedId);
          }
          if (it->owners.empty()) unread_.erase(it);
          dispatch();  // what the window held back may go out now
          return;
        }
      }
      if (handoff_ && !handoff_->acked && e.handoffId == handoff_->id) {
        handoff_->acked = true;
        settleSurfaced(handoff_->owners,
                       "runtime-ack: the runtime acknowledged handoff " + handoff_->id,
                       handoff_->id);
        if (driver_->traits().steersMidTurn) dispatch();  // directed mail waiting may join the turn
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
    case runtime::DriverEvent::Kind::kTurnStarted:
      presence([](mesh::PresencePublisher& p) { p.beginTurn(); });
      return;
    case runtime::DriverEvent::Kind::kWork: {
      TimePoint now = Clock_::now();
      if (now - lastWorkEvent_ < kWorkEventEvery) return;
      lastWorkEvent_ = now;
      presence([](mesh::PresencePublisher& p) { p.recordWorkEvent(); });
      return;
    }
    case runtime::DriverEvent::Kind::kCondition:
      note(e.detail);
      if (e.condition) {
        auto c = *e.condition;
        presence([c](mesh::PresencePublisher& p) { p.setCondition(c); });
      }
      return;
    case runtime::DriverEvent::Kind::kTurnEnded: {
      // Only an error end is the interrupt's (a turn that finished first stays completed).
      if (!std::exchange(interrupted_, false) || !e.isError) {
        turnEnded(e);
        return;
      }
      // The turn `shoal seat interrupt` stopped: it failed, saying so.
      runtime::DriverEvent ended = e;
      ended.isError = true;
      ended.detail = "interrupted by `shoal seat interrupt`" +
                     (e.detail.empty() ? std::string() : " (" + e.detail + ")");
      turnEnded(ended);
      return;
    }
    case runtime::DriverEvent::Kind::kReady:
      if (!readyDeadline_) return;
      readyDeadline_.reset();
      if (retiring_ == Retiring::kNone) accepting_ = true;
      reconcileAttempts_ = 0;
      if (resumesSessions() && reconciling_.empty()) markResumeSafe();
      startReconcile();
      dispatch();
      return;
    case runtime::DriverEvent::Kind::kReconciled:
      reconciled(e);
      return;
    case runtime::DriverEvent::Kind::kExited:
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
  runtime::LaunchSpec spec = seatLaunchSpec(profile_, options_.space);
  spec.generation = generation;
  spec.runtimeLogPath = runtimeLogPath();
  spec.stdinWriteTimeout = options_.stdinWriteTimeout;
  spec.admissionWatchdog = options_.admissionWatchdog;
  spec.mcp = mcpAccess_;
  if (mcpAccess_) spec.allowedTools = seatToolNamesForClaude();
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
    launchEpoch_ = journal_->resumeSafety().launchEpoch + 1;
    auto baseline = journal_->setResumeSafety(journal::SetResumeSafety{{false, launchEpoch_, 0}});
    if (!baseline.isOk()) {
      const std::string detail =
          "recording the launch's resume-safety baseline: " + baseline.status().toString();
      log::warn("seat {}: runtime start failed ({}): {}", profile_.principal.dotForm(), why,
                detail);
      note("runtime start failed: " + detail);
      event(WakeEvent{"start-failed", generation, detail, {}, {}});
      scheduleRestart(detail, /*launchFailed=*/true);
      return baseline.status();
    }
  }
  if (resumedGeneration_) spec.resumeSession = savedSession_;
  spec.sink = [this](runtime::DriverEvent e) {
    GateEvent g;
    g.kind = GateEvent::Kind::kDriver;
    g.driver = std::move(e);
    post(std::move(g));
  };
  auto driver = runtime::launchRuntime(std::move(spec));
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
    const std::vector<std::string> argv =
        runtime::runtimeArgv(seatLaunchSpec(profile_, options_.space));
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
  accepting_ = !driver_->traits().needsReady;
  readyDeadline_.reset();
  if (!accepting_) readyDeadline_ = Clock_::now() + kReadyTimeout;
  restarts_.started(Clock_::now());
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
  // A claim of the direct lane on its way to the gate goes first (direct_lane.h).
  while (driver_ != nullptr && accepting_ && !compacting_ && (!handoff_ || canSteer()) &&
         unreadOwners() < kMaxUnreadOwners && !lane_.busy() && dispatchOne()) {
  }
}

size_t Seat::Impl::unreadOwners() const {
  size_t n = 0;
  for (const auto& h : unread_)
    n += h.owners.size();
  return n;
}

// Busy-turn continuation (seed 004 §3): with a driver that steers, directed arrivals go into the
// running turn once its own handoff was acknowledged, one unacknowledged steer at a time.
bool Seat::Impl::canSteer() const {
  if (!handoff_ || !handoff_->acked || !driver_->traits().steersMidTurn) return false;
  if (steers_.size() >= kMaxSteersPerTurn) return false;
  return std::all_of(steers_.begin(), steers_.end(),
                     [](const ActiveHandoff& h) { return h.acked; });
}

// What an owner handed to the current generation says while it is inflight(dispatching).
std::string Seat::Impl::handingReason() const {
  if (!driver_->traits().surfacedOnRead)
    return "handing to generation " + std::to_string(generation_);
  return fmt::format("handed to generation {}'s stdin; surfaced when it {}", generation_,
                     profile_.acks ? "acknowledges it on $SHOAL_ACK_FD" : "reads it");
}

// One handoff. False when nothing more can go out now.
bool Seat::Impl::dispatchOne() {
  const bool steering = handoff_.has_value();
  const bool tracksReplies =
      !driver_->traits().surfacedOnWrite && !driver_->traits().surfacedOnRead;
  // The owner bound (seed 004 §3.1): with this many replies outstanding, nothing more goes in
  // until a turn end settles them.
  if (tracksReplies && ledger_.full()) return false;
  // Attention: ambient posts go out in `open`, ride along with directed ones in `dnd`, and
  // wait for an inbox page in `focus`; directed deliveries always go out.
  const wire::Attention attention = attention_.load();
  std::vector<journal::OwnershipRecord> queued =
      journal_->live([&](const journal::OwnershipRecord& record) {
        if (record.state != journal::OwnerState::kQueued) return false;
        if (record.wake == kPullOnlyWake) return false;  // only an inbox page takes it
        const bool ambient = record.wake == kAmbientWake;
        if (steering && ambient) return false;  // only directed input goes into a running turn
        return !(ambient && attention == wire::Attention::kFocus);
      });
  const bool directed =
      std::any_of(queued.begin(), queued.end(),
                  [](const journal::OwnershipRecord& r) { return r.wake != kAmbientWake; });
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

  auto handoffId = newUuidV7(Clock::real());
  auto prepared = prepareHandoff(std::move(chosen),
                                 handoffId.isOk() ? *handoffId : fmt::format("h-{}", generation_));
  if (!prepared) return true;

  // Ownership moves to inflight(dispatching) before the first byte reaches the runtime.
  journal::Transaction begin;
  for (size_t i = 0; i < prepared->owners.size(); ++i) {
    journal::RuntimeIdentity runtime;
    runtime.receipt = fmt::format("{}/{}", prepared->handoff.handoffId, i);
    runtime.sessionId = driver_->sessionId();
    begin.add(journal::BeginInflight{prepared->owners[i].id, prepared->owners[i].token,
                                     journal::InflightPhase::kDispatching, runtime,
                                     handingReason()});
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
  roomMade();  // they left the queue
  std::vector<journal::OwnershipRecord> records;
  for (size_t i = 0; i < prepared->owners.size(); ++i) {
    journal::OwnershipRecord r = prepared->owners[i];
    if (const auto& now = begun->results[i].record) r.token = now->token;
    records.push_back(std::move(r));
  }
  return writeHandoff(std::move(*prepared), std::move(records), steering);
}

// Renders `chosen` into one block (as much of it as fits; the rest stays queued). Owners that
// cannot go out — handed too often, or with an unreadable body — end failed here. nullopt when
// nothing is left to hand.
std::optional<PreparedHandoff> Seat::Impl::prepareHandoff(
    std::vector<journal::OwnershipRecord> chosen, std::string handoffId) {
  const bool tracksReplies =
      !driver_->traits().surfacedOnWrite && !driver_->traits().surfacedOnRead;
  PreparedHandoff p;
  PresentationInput input;
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
    p.replyTargets.push_back(tracksReplies ? replyTargetOf(*stored, profile_.principal)
                                           : std::nullopt);
    PresentationItem item = presentationItemFor(stored->kind, stored->message);
    item.historical = stored->historical;
    item.possibleRepeat = stored->redelivered;
    item.deliveryId = record.id;
    input.items.push_back(std::move(item));
    p.owners.push_back(std::move(record));
  }
  if (!unreadable.empty()) settleFailed(std::move(unreadable), "bad-journal-body");
  if (!poison.empty()) {
    settleFailed(std::move(poison),
                 fmt::format("poison: handed to the runtime {} times and each time given back "
                             "unread (the runtime ended before reading it); not handed again",
                             kMaxHandoffs));
  }
  if (input.items.empty()) return std::nullopt;
  SeatIdentity self{profile_.principal.dotForm(), profile_.name};
  RenderedBlock block = renderDeliveryBlock(input, self);
  p.owners.resize(block.taken);  // the rest stay queued for the next block (the first always fits)
  p.replyTargets.resize(block.taken);
  for (const auto& record : p.owners)
    ++handoffs_[record.id];
  p.handoff = runtime::Handoff{std::move(handoffId), std::move(block.text), {}};
  for (size_t i = 0; i < p.owners.size(); ++i)
    p.handoff.items.push_back(runtime::HandoffItem{p.owners[i].id, block.itemIds[i]});
  p.itemEnds = std::move(block.itemEnds);
  return p;
}

// Writes a prepared block whose owners (`begun`, with their current tokens) are
// inflight(dispatching), and records what the write proved. False when nothing more can go out
// now.
bool Seat::Impl::writeHandoff(PreparedHandoff p, std::vector<journal::OwnershipRecord> begun,
                              bool steering) {
  std::vector<Handed> owners;
  for (size_t i = 0; i < begun.size(); ++i) {
    Handed h{begun[i].id, begun[i].token, begun[i].target, {}, {}, 0};
    if (p.replyTargets[i]) {
      std::tie(h.replyTarget, h.replyKey) = *p.replyTargets[i];
      h.replySeq = ledger_.reserve(h.replyKey);  // the runtime may see it from here on
    }
    owners.push_back(std::move(h));
  }
  const runtime::Handoff& handoff = p.handoff;
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
    } else if (driver_->traits().surfacedOnRead) {
      // What the program read whole before it went is surfaced (the driver says how much,
      // at the end of the generation); the rest fails then, never replayed.
      unread_.push_back(ActiveHandoff{handoff.handoffId, std::move(owners), false, p.itemEnds});
    } else {
      settleFailed(owners,
                   "partial-stdin-write: the runtime may have read part of it; never "
                   "replayed");
    }
    event(WakeEvent{"wake-failed", generation_, "handoff failed: " + detail, {}, {}});
    driver_->kill(milliseconds(0));  // its kExited arrives and runs the exit path
    return false;
  }
  if (driver_->traits().surfacedOnWrite) {
    settleSurfaced(std::move(owners), "stdin-write: written to the runtime's stdin",
                   handoff.handoffId);
    return true;
  }
  if (driver_->traits().surfacedOnRead) {
    // Raw stdin has no read-back: the inflight(dispatching) made durable before the write is
    // all a restart may act on (it reopens as outcome_unknown and fails, never replayed), so no
    // second chain records the write; the read, the acknowledgement or the exit settles it.
    unread_.push_back(ActiveHandoff{handoff.handoffId, std::move(owners), false, p.itemEnds});
    return true;  // no turn: the next block may follow at once
  }
  journal::Transaction unknown;
  for (const auto& o : owners) {
    unknown.add(journal::MarkOutcomeUnknown{
        o.id, o.token, std::nullopt,
        "written; awaiting the runtime's acknowledgement of " + handoff.handoffId});
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
  if (steering) {
    steers_.push_back(ActiveHandoff{handoff.handoffId, std::move(owners), false, {}});
    return false;
  }
  handoff_ = ActiveHandoff{handoff.handoffId, std::move(owners), false, {}};
  presence([](mesh::PresencePublisher& pub) { pub.beginTurn(); });
  return false;
}

// The gate's side of the direct lane: an owner admitted inflight(dispatching) for the idle
// generation goes out now, with no second commit; a runtime that stopped being idle (or
// stopped being that generation) since gets nothing, and the owner goes back to `queued`.
void Seat::Impl::directAdmitted(GateEvent& e) {
  const DirectLane::Claim& claim = *e.direct;
  lane_.release(claim.id);
  auto record = journal_->find(claim.id);
  const bool stillOurs = record && record->state == journal::OwnerState::kDispatching &&
                         record->runtime.receipt == claim.handoffId + "/0";
  if (!stillOurs) {
    dispatch();  // settled meanwhile (a journal reclaim): whatever is queued may go
    return;
  }
  if (idleForDirect() && generation_ == claim.generation &&
      driver_->sessionId() == claim.sessionId) {
    auto prepared = prepareHandoff({*record}, claim.handoffId);
    if (prepared) {
      count(&SeatCounters::direct);
      (void)writeHandoff(std::move(*prepared), {*record}, false);
    }
    dispatch();  // what queued behind it, as far as the runtime takes more
    return;
  }
  journal::Transaction back;
  back.add(journal::Requeue{record->id, record->token,
                            "not handed: the runtime was no longer idle when it came"});
  auto requeued = journal_->commit(std::move(back));
  if (!requeued.isOk()) {
    settleFailed({Handed{record->id, record->token, record->target, {}, {}, 0}},
                 "requeue-failed: " + requeued.status().toString());
  } else {
    count(&SeatCounters::directRequeued);
    if (e.fresh) foreground_.push_back(claim.id);
  }
  if (driver_ != nullptr) dispatch();
}

// A generation that can take a DM at once: accepting, nothing in hand, nothing being settled.
bool Seat::Impl::idleForDirect() const {
  if (driver_ == nullptr || !accepting_ || compacting_ || handoff_ || !steers_.empty() ||
      !unread_.empty() || retiring_ != Retiring::kNone || !reconciling_.empty() || parked_)
    return false;
  const bool tracksReplies =
      !driver_->traits().surfacedOnWrite && !driver_->traits().surfacedOnRead;
  return !(tracksReplies && ledger_.full());
}

// After every gate pass: the lane is open exactly while the generation is idle and nothing
// waits in the queue (a queued owner goes first).
void Seat::Impl::refreshLane() {
  if (idleForDirect() && !lane_.busy() && journal_->stats().queued == 0) {
    lane_.open(generation_, driver_->sessionId(), handingReason());
  } else {
    lane_.close();
  }
}

void Seat::Impl::turnEnded(const runtime::DriverEvent& e) {
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
  restarts_.progressed();
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

void Seat::Impl::unexpectedExit(const runtime::DriverEvent& e) {
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
  if (driver_->traits().reconciles) {
    // Written, unacknowledged handoffs wait for the next generation to read the thread.
    for (const auto& record :
         journal_->live([](const auto& r) { return journal::isInflight(r.state); })) {
      // Dispatching or written: either way only the thread can say whether it was read.
      if (!journal::isInflight(record.state) || leases_.holds(record.id) ||
          lane_.pending(record.id))
        continue;  // a direct claim not handed yet is no handoff of this generation
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

}  // namespace shoal::daemon
