#include <algorithm>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/log.h"
#include "daemon/seat/seat_impl.h"

namespace shoal::daemon {

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
  if (journal_->stats().liveRecords > 0) return;  // a queued or inflight owner: it stays unsafe
  const journal::ResumeSafety now = journal_->resumeSafety();
  if (now.launchEpoch != launchEpoch_ || now.safe) return;
  auto marked =
      journal_->setResumeSafety(journal::SetResumeSafety{{true, launchEpoch_, now.version + 1}});
  if (!marked.isOk() && marked.status().code() != StatusCode::kAborted) {
    log::warn("seat {}: marking the session safe to resume: {}", profile_.principal.dotForm(),
              marked.status().toString());
  }
}

void Seat::Impl::markResumeUnsafe() {
  const journal::ResumeSafety now = journal_->resumeSafety();
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
  } else if (!driver_->traits().compacts) {
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
  } else if (!driver_->traits().interrupts) {
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
  // A generation that ran a turn or lived a while starts a new streak; a launch that failed
  // never does (a missing program must park the seat, not retry forever). base/restart_policy.h.
  if (!restarts_.crashed(Clock_::now(), launchFailed)) {
    parked_ = true;
    const std::string text = fmt::format(
        "parked after {} failed runtime starts in a row (last: {}); `shoal seat start {}` "
        "tries again",
        restarts_.crashesInARow(), why, profile_.name);
    log::warn("seat {}: {}", profile_.principal.dotForm(), text);
    note(text);
    event(WakeEvent{"start-failed", generation_, text, {}, {}});
    return;
  }
  restartAt_ = restarts_.nextStartAt();
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
    closing_.store(true);                     // an admission waiting for room gives up
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

}  // namespace shoal::daemon
