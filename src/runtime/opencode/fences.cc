// The OpenCode driver (driver_impl.h): the fences that end a turn on request — native interrupt
// (decision 012) and the summarize fence of `shoal seat compact` (decision 011).
#include <fmt/format.h>

#include "base/log.h"
#include "runtime/opencode/driver_impl.h"

namespace shoal::runtime::opencode_detail {

Status OpenCodeDriver::interrupt() {
  std::string session, messageId;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!runner_) return failedPrecondition("not-in-a-turn", "no OpenCode run is active");
    if (!runner_->admitted || !runner_->acked) {
      return failedPrecondition("interrupt-not-safe-yet",
                                "OpenCode has not taken prompt " + runner_->messageId +
                                    " into a run yet; an abort now could be lost — try again");
    }
    session = session_;
    messageId = runner_->messageId;
    runner_->aborting = true;  // before the request: its events may come first
  }
  auto reply = request("POST", "/session/" + session + "/abort");
  Status refused;
  if (!reply.isOk()) {
    refused = reply.status().withContext("POST /abort");
  } else if (reply->status != 200) {
    refused = unavailable(
        "opencode-abort-refused",
        fmt::format("/abort answered HTTP {}: {}", reply->status, reply->body.substr(0, 200)));
  }
  if (!refused.isOk()) {
    std::lock_guard<std::mutex> lock(mu_);
    // The turn ended meanwhile (the abort's events can beat its answer, and the retirement
    // that follows can cut that answer off): it took effect.
    if (!runner_ || runner_->messageId != messageId) return Status::ok();
    runner_->aborting = false;
  }
  return refused;
}

Status OpenCodeDriver::compact() {
  std::string session, provider, model;
  uint64_t seq = 0;
  std::thread previous;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ready_ || retired_) {
      return failedPrecondition("seat-not-running", "the OpenCode server is not ready");
    }
    if (runner_) {
      return failedPrecondition(
          "seat-busy", "prompt " + runner_->messageId + " has not been answered; compact after it");
    }
    if (summarize_) return failedPrecondition("already-compacting", "a summarize runs");
    if (modelId_.empty() || providerId_.empty()) {
      return failedPrecondition("nothing-to-compact",
                                "the OpenCode session has not answered a prompt yet, so there "
                                "is nothing to compact (and no model to summarize with)");
    }
    Summarize f;
    f.seq = seq = ++summarizeSeq_;
    summarize_ = std::move(f);
    session = session_;
    provider = providerId_;
    model = modelId_;
    previous = std::move(summarizeThread_);
  }
  if (previous.joinable()) previous.join();  // its call has answered: the fence saw that
  appendToLog(fmt::format("[shoal] summarize session {} with {}/{}\n", session, provider, model));
  summarizeThread_ = std::thread([this, session, provider, model, seq] {
    auto reply = request("POST", "/session/" + session + "/summarize",
                         openCodeSummarizeBody(provider, model), kSummarizeTimeout);
    std::vector<DriverEvent> out;
    std::string retireWhy;
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Settled already, or the server is going: nothing may follow its exit.
      if (!summarize_ || summarize_->seq != seq || stopping_) return;
      std::string body = reply.isOk() ? reply->body : "";
      while (!body.empty() && std::isspace(static_cast<unsigned char>(body.back())))
        body.pop_back();
      summarize_->http = reply.isOk() && reply->status == 200 && body == "true";
      if (!*summarize_->http) {
        summarize_->httpDetail = reply.isOk()
                                     ? fmt::format("summarize answered HTTP {}: {}", reply->status,
                                                   reply->body.substr(0, 300))
                                     : "summarize failed: " + reply.status().toString();
      }
      retireWhy = settleSummarize(out);
    }
    for (auto& d : out)
      emit(std::move(d));
    if (!retireWhy.empty()) retire(retireWhy);
  });
  return Status::ok();
}

std::string OpenCodeDriver::onSummarize(const OpenCodeEvent& e, std::vector<DriverEvent>& out) {
  using K = OpenCodeEvent::Kind;
  Summarize& f = *summarize_;
  auto begin = [&] {
    if (f.started) return;
    f.started = true;
    DriverEvent s;
    s.kind = DriverEvent::Kind::kTurnStarted;
    out.push_back(std::move(s));
  };
  switch (e.kind) {
    case K::kStatus:
    case K::kIdle:
      if (e.kind == K::kIdle || e.status == "idle") {
        if (f.compacted) {
          f.idleAfterCompacted = true;
        } else if (f.started) {
          return failSummarize("it went idle without session.compacted", out);
        }
        break;
      }
      begin();
      if (e.status == "retry") {
        if (f.retries++ == 0) f.firstRetry = Clock::now();
        if (f.retries >= kMaxRetries || Clock::now() - f.firstRetry >= kMaxRetrying) {
          return failSummarize(
              fmt::format("runtime-retry-bounded: opencode retried the summary {} times (last: "
                          "{})",
                          f.retries, e.errorMessage),
              out);
        }
      }
      break;
    case K::kMessage:
      if (e.role != "assistant" || !e.summary || f.userId.empty() || e.parentId != f.userId) {
        break;  // the compaction user's own echo, or not this summarize's
      }
      f.assistantId = e.messageId;
      begin();
      if (!e.errorName.empty()) {
        return failSummarize("its summary failed: " + e.errorName +
                                 (e.errorMessage.empty() ? "" : ": " + e.errorMessage),
                             out);
      }
      if (e.completed) f.summaryDone = true;
      out.push_back(work());
      break;
    case K::kPart:
      if (e.partType == "compaction" && !e.compactionAuto && f.userId.empty()) {
        f.userId = e.messageId;
      } else if (!f.assistantId.empty() && e.messageId == f.assistantId) {
        out.push_back(work());  // summary text stays internal: activity only
      }
      break;
    case K::kError:
      return failSummarize(
          "it reported " + e.errorName + (e.errorMessage.empty() ? "" : ": " + e.errorMessage),
          out);
    case K::kCompacted:
      f.compacted = true;
      break;
    case K::kDisposed:
      return failSummarize("it disposed its instance", out);
    case K::kConnected:
    case K::kHeartbeat:
    case K::kOther:
      break;
  }
  return settleSummarize(out);
}

std::string OpenCodeDriver::settleSummarize(std::vector<DriverEvent>& out) {
  if (!summarize_) return "";
  const Summarize& f = *summarize_;
  if (f.http && !*f.http) return failSummarize(f.httpDetail, out);
  if (!f.http || !f.summaryDone || !f.compacted || !f.idleAfterCompacted) return "";
  DriverEvent end;
  end.kind = DriverEvent::Kind::kTurnEnded;
  out.push_back(std::move(end));
  summarize_.reset();
  return "";
}

std::string OpenCodeDriver::failSummarize(const std::string& why, std::vector<DriverEvent>& out) {
  DriverEvent end;
  end.kind = DriverEvent::Kind::kTurnEnded;
  end.isError = true;
  end.detail = "context_compaction_failed: " + why;
  end.condition = condition(wire::ConditionCode::kFailed, "context_compaction_failed", end.detail);
  out.push_back(std::move(end));
  summarize_.reset();
  // A failed or aborted summarize can leave OpenCode compacting instead of answering the
  // next prompt (observed on 1.18.33): a fresh server takes the session on.
  return "its summarize did not complete (" + why + ")";
}

}  // namespace shoal::runtime::opencode_detail
