// The OpenCode driver (driver_impl.h): the Runner machine — admission, activity, idle, messages
// and parts, the admission watchdog.
#include <fmt/format.h>

#include "base/log.h"
#include "runtime/opencode/driver_impl.h"

namespace shoal::runtime::opencode_detail {

void OpenCodeDriver::watchdog() {
  std::string why;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!runner_ || runner_->admitted || Clock::now() < runner_->admitBy) return;
    why = fmt::format("no run took prompt {} within {} s (no busy, retry or answering assistant)",
                      runner_->messageId, spec_.admissionWatchdog.count() / 1000);
  }
  retire(why);
}

void OpenCodeDriver::on(const OpenCodeEvent& e) {
  using K = OpenCodeEvent::Kind;
  std::vector<DriverEvent> out;
  std::string retireWhy;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!e.sessionId.empty() && e.sessionId != session_) return;  // another (child) session
    if (e.kind == K::kMessage && !e.providerId.empty() && !e.modelId.empty()) {
      providerId_ = e.providerId;  // the model the session runs (summarize needs it)
      modelId_ = e.modelId;
    }
    // OpenCode sends the deprecated session.idle right after every idle status: one idle.
    const bool echo = e.kind == K::kIdle && idleEcho_;
    if (e.kind != K::kHeartbeat) idleEcho_ = e.kind == K::kStatus && e.status == "idle";
    if (echo) {
      // the idle status just handled
    } else if (summarize_) {
      retireWhy = onSummarize(e, out);
    } else {
      retireWhy = onRunner(e, out);
    }
  }
  for (auto& d : out)
    emit(std::move(d));
  if (!retireWhy.empty()) retire(retireWhy);
}

std::string OpenCodeDriver::onRunner(const OpenCodeEvent& e, std::vector<DriverEvent>& out) {
  using K = OpenCodeEvent::Kind;
  std::string retireWhy;
  switch (e.kind) {
    case K::kStatus:
      if (e.status == "idle") {
        retireWhy = idle(out);
      } else {
        retireWhy = active(e, out);
      }
      break;
    case K::kIdle:
      retireWhy = idle(out);
      break;
    case K::kMessage:
      message(e, out);
      break;
    case K::kPart:
      part(e, out);
      break;
    case K::kError: {
      const std::string text = e.errorName + (e.errorMessage.empty() ? "" : ": " + e.errorMessage);
      // The abort's own cleanup, which can come after the next prompt went out (seen on
      // 1.18.33): drained until a fresh run is admitted.
      if (abortDrain_ && (!runner_ || !runner_->admitted)) break;
      if (!runner_) {
        retireWhy = "it reported an error after the turn was over (" + text + ")";
        break;
      }
      runner_->errorCandidate = text;
      DriverEvent c;
      c.kind = DriverEvent::Kind::kCondition;
      c.detail = "opencode reported " + text + " (final only if it survives to idle)";
      c.condition = condition(wire::ConditionCode::kRetrying, "session.error", c.detail);
      out.push_back(std::move(c));
      break;
    }
    case K::kCompacted:
      if (runner_ && runner_->admitted) out.push_back(work());
      break;
    case K::kDisposed:
      retireWhy = "it disposed its instance";
      break;
    case K::kConnected:
    case K::kHeartbeat:
    case K::kOther:
      break;
  }
  return retireWhy;
}

DriverEvent OpenCodeDriver::work() {
  DriverEvent w;
  w.kind = DriverEvent::Kind::kWork;
  return w;
}

void OpenCodeDriver::admit(std::vector<DriverEvent>& out) {
  runner_->admitted = true;
  abortDrain_ = false;  // a fresh run: the last abort's cleanup is over
  if (runner_->started) return;
  runner_->started = true;
  DriverEvent s;
  s.kind = DriverEvent::Kind::kTurnStarted;
  out.push_back(std::move(s));
}

std::string OpenCodeDriver::active(const OpenCodeEvent& e, std::vector<DriverEvent>& out) {
  if (!runner_) return "";  // a Runner we did not start (or background work): not ours
  admit(out);
  if (e.status != "retry") return "";
  if (runner_->retries++ == 0) runner_->firstRetry = Clock::now();
  const std::string text = fmt::format("opencode is retrying the model (attempt {}): {}",
                                       e.retryAttempt, e.errorMessage);
  DriverEvent c;
  c.kind = DriverEvent::Kind::kCondition;
  c.detail = text;
  c.condition = condition(wire::ConditionCode::kRetrying, "session.status", text);
  out.push_back(std::move(c));
  if (runner_->retries < kMaxRetries && Clock::now() - runner_->firstRetry < kMaxRetrying) {
    return "";
  }
  // OpenCode would retry forever: the turn fails here and the server is replaced.
  const std::string why = fmt::format(
      "runtime-retry-bounded: opencode retried the model {} times over {} s (last: {})",
      runner_->retries,
      std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - runner_->firstRetry).count(),
      e.errorMessage);
  DriverEvent end;
  end.kind = DriverEvent::Kind::kTurnEnded;
  end.isError = true;
  end.detail = why;
  end.condition = condition(wire::ConditionCode::kFailed, "runtime-retry-bounded", why);
  out.push_back(std::move(end));
  runner_.reset();
  return why;
}

std::string OpenCodeDriver::idle(std::vector<DriverEvent>& out) {
  if (!runner_ || !runner_->admitted) return "";  // before admission: proves nothing
  if (runner_->aborting && !(runner_->answered && runner_->assistantError.empty())) {
    // The abort's idles: the first one may come before the aborted assistant (the
    // processor's); only an idle after it ends the turn. Prompting earlier can get the next
    // run aborted too (seen on 1.18.33).
    if (!runner_->abortedSeen) return "";
    DriverEvent end;
    end.kind = DriverEvent::Kind::kTurnEnded;
    end.isError = true;
    end.detail = runner_->assistantError;
    out.push_back(std::move(end));
    runner_.reset();
    abortDrain_ = true;
    // OpenCode 1.18.33 also aborts a run started soon after an abort (its cancellation
    // outlives the idles), and nothing it publishes says when that is over: the seed's
    // "strict interruption" — a fresh server takes the session on.
    return "interrupted: OpenCode aborts runs started right after an abort, so a fresh "
           "server takes the next prompt";
  }
  if (runner_->acked &&
      (isOverflow(runner_->errorCandidate) || isOverflow(runner_->assistantError))) {
    if (!runner_->overflowDrain) {
      runner_->overflowDrain = true;  // the processor's idle: cleanup follows
      return "";
    }
    if (runner_->overflowCleaned) {
      // The Runner's idle after the proven cleanup: the turn ends in error, the server and
      // its session stay (a summarize can free the context).
      DriverEvent end;
      end.kind = DriverEvent::Kind::kTurnEnded;
      end.isError = true;
      end.detail = "context_overflow: " + runner_->assistantError +
                   " (OpenCode's automatic compaction is off: `shoal seat compact` "
                   "summarizes the session)";
      end.condition = condition(wire::ConditionCode::kFailed, "context_overflow", end.detail);
      out.push_back(std::move(end));
      runner_.reset();
      return "";
    }
    // A second idle without the errored assistant: nothing proved the cleanup.
  }
  if (!runner_->acked) {
    std::string why = "its run went idle without an answer to prompt " + runner_->messageId;
    if (!runner_->errorCandidate.empty()) why += " (" + runner_->errorCandidate + ")";
    runner_.reset();
    return why;
  }
  std::string error = runner_->assistantError;
  if (error.empty()) error = runner_->errorCandidate;
  DriverEvent end;
  end.kind = DriverEvent::Kind::kTurnEnded;
  end.isError = !error.empty();
  end.detail = error;
  if (end.isError) {
    end.condition = condition(wire::ConditionCode::kFailed, "opencode", error);
  }
  out.push_back(std::move(end));
  runner_.reset();
  // An error that survived to idle: OpenCode may still publish its outer error after this
  // idle, so the next prompt gets a fresh server.
  return error.empty() ? "" : "its turn ended with an error (" + error + ")";
}

void OpenCodeDriver::message(const OpenCodeEvent& e, std::vector<DriverEvent>& out) {
  if (!runner_ || e.role != "assistant") return;        // a user row is persistence evidence only
  if (runner_->parents.count(e.parentId) == 0) return;  // stale or another Runner's
  runner_->assistants.insert(e.messageId);
  admit(out);
  if (!runner_->acked) {
    runner_->acked = true;
    DriverEvent ack;
    ack.kind = DriverEvent::Kind::kAck;
    ack.handoffId = runner_->handoffId;
    out.push_back(std::move(ack));
  }
  if (!e.errorName.empty()) {
    runner_->assistantError = (e.summary ? "context_compaction_failed: " : "") + e.errorName +
                              (e.errorMessage.empty() ? "" : ": " + e.errorMessage);
    if (runner_->overflowDrain && e.completed && isOverflow(runner_->assistantError)) {
      runner_->overflowCleaned = true;
    }
    if (runner_->aborting && e.completed && e.errorName == kAborted) {
      runner_->abortedSeen = true;
    }
  } else {
    runner_->errorCandidate.clear();  // correlated positive activity
    if (e.completed && e.finish != "tool-calls" && e.finish != "unknown") {
      runner_->assistantError.clear();
      runner_->answered = true;
    }
  }
  out.push_back(work());
}

void OpenCodeDriver::part(const OpenCodeEvent& e, std::vector<DriverEvent>& out) {
  if (!runner_) return;
  if (e.partType == "compaction" && e.compactionAuto && runner_->admitted) {
    // An automatic compaction of the admitted Runner: its summary answers our prompt.
    runner_->parents.insert(e.messageId);
    return;
  }
  if (e.pruned || runner_->assistants.count(e.messageId) == 0) return;  // stale frames
  runner_->errorCandidate.clear();
  out.push_back(work());
}

}  // namespace shoal::runtime::opencode_detail
