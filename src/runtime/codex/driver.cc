#include "runtime/codex/driver.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "base/log.h"
#include "base/mutex.h"
#include "runtime/child_driver.h"
#include "runtime/codex/compaction_latch.h"
#include "runtime/codex/rpc.h"

namespace shoal::runtime {
namespace {

// Turn ids remembered as ended (their late frames are dropped).
constexpr size_t kEndedTurnsKept = 64;

class CodexDriver final : public ChildDriver {
 public:
  explicit CodexDriver(LaunchSpec spec) : ChildDriver(std::move(spec), kCodexTraits) {}
  ~CodexDriver() override { stopChild(); }  // the reader uses this class's members
  using ChildDriver::spawn;
  void setMcpToken(const std::string& token) {
    extraEnv_.emplace_back(std::string(kCodexMcpTokenVariable), token);
  }

  Status reconcile(const std::string& threadId) override {
    int64_t id = 0;
    {
      MutexLock lock(mu_);
      id = nextId_++;
      reads_[id] = threadId;
    }
    return write(codexThreadRead(id, threadId)).status;
  }

  // thread/compact/start: the compaction runs as a turn of its own; its completion (through
  // the latch) is the one turn end the seat sees for it.
  Status compact() override {
    int64_t id = 0;
    std::string thread;
    {
      MutexLock lock(mu_);
      if (threadId_.empty()) {
        return failedPrecondition("seat-not-running", "codex app-server has no thread yet");
      }
      if (!activeTurn_.empty()) {
        return failedPrecondition("seat-busy", "codex is in turn " + activeTurn_);
      }
      id = compactReqId_ = nextId_++;
      thread = threadId_;
      latch_.request(spec_.generation);
    }
    return write(codexThreadCompactStart(id, thread)).status;
  }

  // turn/interrupt of the running turn; it ends with turn/completed `interrupted`.
  Status interrupt() override {
    int64_t id = 0;
    std::string thread, turn;
    {
      MutexLock lock(mu_);
      if (activeTurn_.empty()) {
        return failedPrecondition("not-in-a-turn", "codex has no turn running (yet)");
      }
      id = nextId_++;
      thread = threadId_;
      turn = activeTurn_;
    }
    return write(codexTurnInterrupt(id, thread, turn)).status;
  }

  Status beginHandshake() {
    int64_t id = 0;
    {
      MutexLock lock(mu_);
      id = initId_ = nextId_++;
    }
    return write(codexInitialize(id)).status;
  }

  StdinWrite handoff(const Handoff& handoff) override {
    MutexLock writing(writeMu_);
    return ChildDriver::handoff(handoff);
  }

  std::string sessionId() const override {
    MutexLock lock(mu_);
    return threadId_;
  }

 private:
  struct Pending {
    bool steer = false;
    std::string clientId;
    std::string text;
  };

  std::string frame(const Handoff& handoff) const override {
    MutexLock lock(mu_);
    const int64_t id = nextId_++;
    pendingAcks_.push_back(handoff.handoffId);
    const bool steer = !activeTurn_.empty();
    requests_[id] = Pending{steer, handoff.handoffId, handoff.text};
    return steer ? codexTurnSteer(id, threadId_, activeTurn_, handoff.handoffId, handoff.text)
                 : codexTurnStart(id, threadId_, handoff.handoffId, handoff.text);
  }

  StdinWrite write(const std::string& line) {
    MutexLock writing(writeMu_);
    return child_->writeStdin(line, spec_.stdinWriteTimeout);
  }

  std::string readOutput(UniqueFd out) override {
    return readLines(std::move(out),
                     "stdout of codex app-server (pid " + std::to_string(pid()) + ")",
                     [this](const std::string& line) {
                       auto parsed = parseCodexLine(line);
                       if (!parsed.isOk()) return parsed.status().toString();
                       handle(*parsed);
                       return std::string();
                     });
  }

  bool ended(const std::string& turnId) const SHOAL_REQUIRES(mu_) {
    return endedTurns_.count(turnId) != 0;
  }

  void markEnded(const std::string& turnId) SHOAL_REQUIRES(mu_) {
    endedTurns_.insert(turnId);
    endedOrder_.push_back(turnId);
    if (endedOrder_.size() > kEndedTurnsKept) {
      endedTurns_.erase(endedOrder_.front());
      endedOrder_.pop_front();
    }
  }

  void turnEnded(const std::string& turnId, bool isError, std::string detail,
                 std::optional<wire::PresenceCondition> condition) {
    {
      MutexLock lock(mu_);
      if (!turnId.empty()) {
        if (ended(turnId)) return;
        markEnded(turnId);
      }
      if (turnId.empty() || activeTurn_ == turnId) activeTurn_.clear();
    }
    DriverEvent e;
    e.kind = DriverEvent::Kind::kTurnEnded;
    e.isError = isError;
    e.detail = std::move(detail);
    e.condition = std::move(condition);
    emit(std::move(e));
  }

  void handle(const CodexLine& line) {
    switch (line.kind) {
      case CodexLine::Kind::kResponse:
        return onResponse(line);
      case CodexLine::Kind::kErrorResponse:
        return onErrorResponse(line);
      case CodexLine::Kind::kServerRequest: {
        (void)write(codexDecline(line.requestId, line.method));
        DriverEvent e;
        e.kind = DriverEvent::Kind::kCondition;
        e.detail = "declined " + line.method + " (Shoal does not approve on the model's behalf)";
        wire::PresenceCondition c;
        c.code = wire::ConditionCode::kApproval;
        c.source = line.method;
        c.message = e.detail;
        e.condition = c;
        return emit(std::move(e));
      }
      case CodexLine::Kind::kTurnStarted: {
        {
          MutexLock lock(mu_);
          if (ended(line.turnId)) return;
          activeTurn_ = line.turnId;
          if (latch_.started(spec_.generation, line.turnId)) {
            log::info("codex app-server (pid {}): compaction runs as turn {}", pid(), line.turnId);
          }
        }
        DriverEvent e;
        e.kind = DriverEvent::Kind::kTurnStarted;
        return emit(std::move(e));
      }
      case CodexLine::Kind::kTurnCompleted: {
        const bool failed = line.turnStatus != "completed";
        std::string detail = line.detail;
        if (line.turnStatus == "interrupted") detail = "the turn was interrupted";
        CompactionLatch::Completion c = CompactionLatch::Completion::kNotOurs;
        {
          MutexLock lock(mu_);
          c = latch_.complete(spec_.generation, line.turnId);
        }
        if (c == CompactionLatch::Completion::kDuplicate) return;
        if (c == CompactionLatch::Completion::kEnds && failed) {
          detail = "context_compaction_failed: " +
                   (detail.empty() ? "the compaction turn ended " + line.turnStatus : detail);
        }
        return turnEnded(line.turnId, failed, detail, line.condition);
      }
      case CodexLine::Kind::kThreadStatus: {
        // Advisory: never a turn boundary. An idle before the compaction turn's completion is
        // recorded by the latch (seed 004 §1.2) and ends nothing.
        if (line.threadStatus != "idle") return;
        MutexLock lock(mu_);
        if (latch_.upstreamIdle(spec_.generation, activeTurn_)) {
          log::info("codex app-server (pid {}): idle reported before compaction turn {} completed",
                    pid(), activeTurn_);
        }
        return;
      }
      case CodexLine::Kind::kUserMessage: {
        std::string acked;
        {
          MutexLock lock(mu_);
          auto it = std::find(pendingAcks_.begin(), pendingAcks_.end(), line.clientId);
          if (!line.clientId.empty() && it != pendingAcks_.end()) {
            acked = *it;
            pendingAcks_.erase(it);
          } else if (line.clientId.empty() && !pendingAcks_.empty()) {
            acked = pendingAcks_.front();  // an old Codex echoes no clientId: FIFO
            pendingAcks_.pop_front();
          }
        }
        if (acked.empty()) return;  // a repeat (item/completed after item/started) or not ours
        DriverEvent e;
        e.kind = DriverEvent::Kind::kAck;
        e.handoffId = acked;
        return emit(std::move(e));
      }
      case CodexLine::Kind::kError: {
        if (!line.willRetry) {
          std::string turn = line.turnId;
          std::string detail = line.detail;
          {
            MutexLock lock(mu_);
            if (turn.empty()) turn = activeTurn_;
            if (latch_.complete(spec_.generation, turn) == CompactionLatch::Completion::kEnds) {
              detail = "context_compaction_failed: " + detail;
            }
          }
          // Terminal: the turn is over now, whatever comes after.
          return turnEnded(turn, true, detail, line.condition);
        }
        DriverEvent e;
        e.kind = DriverEvent::Kind::kCondition;
        e.detail = line.detail;
        wire::PresenceCondition c = line.condition.value_or(wire::PresenceCondition{});
        c.code = wire::ConditionCode::kRetrying;
        e.condition = c;
        return emit(std::move(e));
      }
      case CodexLine::Kind::kWork: {
        {
          MutexLock lock(mu_);
          if (!line.turnId.empty() && ended(line.turnId)) return;  // a stale turn's activity
        }
        DriverEvent e;
        e.kind = DriverEvent::Kind::kWork;
        return emit(std::move(e));
      }
      case CodexLine::Kind::kOther:
        return;
    }
  }

  void onResponse(const CodexLine& line) {
    std::string next;
    bool ready = false;
    std::optional<DriverEvent> reconciled;
    {
      MutexLock lock(mu_);
      if (line.id == initId_) {
        threadReqId_ = nextId_++;
        next = codexInitialized() +
               (spec_.resumeSession.empty()
                    ? codexThreadStart(threadReqId_, spec_.cwd)
                    : codexThreadResume(threadReqId_, spec_.resumeSession, spec_.cwd));
      } else if (line.id == threadReqId_) {
        threadId_ = line.threadId;
        ready = !threadId_.empty();
      } else if (auto read = reads_.find(line.id); read != reads_.end()) {
        DriverEvent e;
        e.kind = DriverEvent::Kind::kReconciled;
        e.threadId = read->second;
        CodexReadSnapshot snapshot = codexReadSnapshot(line, read->second);
        e.clientIds = std::move(snapshot.clientIds);
        e.markers = std::move(snapshot.markers);
        e.complete = snapshot.complete;  // only this proves an identity absent
        e.pending = snapshot.pending;
        reads_.erase(read);
        reconciled = std::move(e);
      } else if (auto it = requests_.find(line.id); it != requests_.end()) {
        requests_.erase(it);
      }
    }
    if (reconciled) emit(std::move(*reconciled));
    if (!next.empty()) (void)write(next);
    if (ready) {
      DriverEvent e;
      e.kind = DriverEvent::Kind::kReady;
      emit(std::move(e));
    }
  }

  void onErrorResponse(const CodexLine& line) {
    std::string next;
    std::optional<DriverEvent> report;
    bool fatal = false;
    std::string failedHandoff;
    std::string compactRefused;
    {
      MutexLock lock(mu_);
      if (line.id == threadReqId_ && !spec_.resumeSession.empty() && !fellBack_ &&
          codexThreadLost(line)) {
        // Seed 004 §2: the typed not-found / no-rollout error authorises one fresh thread.
        fellBack_ = true;
        threadReqId_ = nextId_++;
        next = codexThreadStart(threadReqId_, spec_.cwd);
        DriverEvent e;
        e.kind = DriverEvent::Kind::kCondition;
        e.detail = "provider_session_fresh_fallback: " + line.detail;
        wire::PresenceCondition c;
        c.code = wire::ConditionCode::kRetrying;
        c.source = "provider_session_fresh_fallback";
        c.message = e.detail;
        e.condition = c;
        report = std::move(e);
      } else if (auto read = reads_.find(line.id); read != reads_.end()) {
        DriverEvent e;
        e.kind = DriverEvent::Kind::kReconciled;
        e.threadId = read->second;
        e.detail = "thread/read refused: " + line.detail;
        reads_.erase(read);
        report = std::move(e);
      } else if (line.id == compactReqId_ && latch_.requested()) {
        latch_ = CompactionLatch();
        compactRefused = "context_compaction_failed: thread/compact/start refused: " + line.detail;
      } else if (line.id == initId_ || line.id == threadReqId_) {
        fatal = true;
        DriverEvent e;
        e.kind = DriverEvent::Kind::kCondition;
        e.detail = "codex app-server refused the session: " + line.detail;
        report = std::move(e);
      } else if (auto it = requests_.find(line.id); it != requests_.end()) {
        Pending p = it->second;
        requests_.erase(it);
        if (p.steer) {
          // The turn ended between our look and the steer: start a turn with it instead.
          const int64_t id = nextId_++;
          requests_[id] = Pending{false, p.clientId, p.text};
          activeTurn_.clear();
          next = codexTurnStart(id, threadId_, p.clientId, p.text);
        } else {
          failedHandoff = p.clientId;
          pendingAcks_.erase(std::remove(pendingAcks_.begin(), pendingAcks_.end(), p.clientId),
                             pendingAcks_.end());
        }
      }
    }
    if (report) emit(std::move(*report));
    if (!next.empty()) (void)write(next);
    if (fatal) {
      log::warn("codex app-server (pid {}): {}", pid(), line.detail);
      closeInput();  // the process ends; kExited closes the generation
    }
    if (!failedHandoff.empty()) {
      turnEnded("", true, "codex app-server refused turn/start: " + line.detail, std::nullopt);
    }
    if (!compactRefused.empty()) turnEnded("", true, compactRefused, std::nullopt);
  }

  Mutex writeMu_;  // stdin: handoffs (gate thread) and protocol lines (reader thread)
  mutable Mutex mu_;
  mutable int64_t nextId_ SHOAL_GUARDED_BY(mu_) = 1;
  int64_t initId_ SHOAL_GUARDED_BY(mu_) = -1;
  int64_t threadReqId_ SHOAL_GUARDED_BY(mu_) = -1;
  int64_t compactReqId_ SHOAL_GUARDED_BY(mu_) = -1;
  CompactionLatch latch_ SHOAL_GUARDED_BY(mu_);
  bool fellBack_ SHOAL_GUARDED_BY(mu_) = false;
  std::string threadId_ SHOAL_GUARDED_BY(mu_);
  std::string activeTurn_ SHOAL_GUARDED_BY(mu_);
  mutable std::deque<std::string> pendingAcks_ SHOAL_GUARDED_BY(mu_);
  mutable std::map<int64_t, Pending> requests_ SHOAL_GUARDED_BY(mu_);
  std::map<int64_t, std::string> reads_ SHOAL_GUARDED_BY(mu_);  // thread/read id → thread
  std::set<std::string> endedTurns_ SHOAL_GUARDED_BY(mu_);
  std::deque<std::string> endedOrder_ SHOAL_GUARDED_BY(mu_);
};

}  // namespace

std::vector<std::string> codexArgv(const LaunchSpec& spec) {
  std::vector<std::string> argv = spec.command;
  if (argv.empty()) argv = {"codex", "app-server"};
  if (spec.mcp) {
    // TOML strings: the URL is ours (http://127.0.0.1:<port>/…); launchCodexDriver refuses one
    // with a quote or a backslash.
    for (const std::string& setting :
         {"mcp_servers.shoal.url=\"" + spec.mcp->url + "\"",
          "mcp_servers.shoal.bearer_token_env_var=\"" + std::string(kCodexMcpTokenVariable) + "\"",
          std::string("mcp_servers.shoal.default_tools_approval_mode=\"approve\"")}) {
      argv.emplace_back("-c");
      argv.push_back(setting);
    }
  }
  return argv;
}

Result<std::unique_ptr<RuntimeDriver>> launchCodexDriver(LaunchSpec spec) {
  if (spec.mcp && spec.mcp->url.find_first_of("\"\\") != std::string::npos) {
    return invalidArgument("bad-mcp-url",
                           "the seat's MCP URL cannot be written as TOML: " + spec.mcp->url);
  }
  auto argv = codexArgv(spec);
  const std::string token = spec.mcp ? spec.mcp->bearerToken : "";
  auto driver = std::make_unique<CodexDriver>(std::move(spec));
  if (!token.empty()) driver->setMcpToken(token);
  SHOAL_RETURN_IF_ERROR(driver->spawn(std::move(argv)));
  (void)driver->beginHandshake();  // a failed write: the process is gone, kExited says so
  return std::unique_ptr<RuntimeDriver>(std::move(driver));
}

}  // namespace shoal::runtime
