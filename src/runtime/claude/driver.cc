// The `claude` driver: Claude Code in headless stream-json mode (claude_stream.h). Each handoff
// is one `type:user` stdin line whose `uuid` is the handoff id; the runtime acknowledges it by
// replaying that uuid (or, on 2.1.332+, `command_lifecycle` started) and ends each turn with
// one `result`. Every stdout line is appended to the runtime log verbatim.
#include "runtime/claude/driver.h"

#include <algorithm>

#include "base/mutex.h"
#include "runtime/child_driver.h"
#include "runtime/claude/stream.h"

namespace shoal::runtime {
namespace {

class ClaudeDriver final : public ChildDriver {
 public:
  explicit ClaudeDriver(LaunchSpec spec) : ChildDriver(std::move(spec), kClaudeTraits) {}
  using ChildDriver::extraEnv_;
  using ChildDriver::spawn;
  // The readiness handshake: an initialize control request, answered once the CLI is up.
  Status beginHandshake() {
    StdinWrite wrote =
        child_->writeStdin(claudeInitializeRequest(readyId()), spec_.stdinWriteTimeout);
    return wrote.status;
  }
  std::string sessionId() const override {
    MutexLock lock(mu_);
    return session_;
  }
  Status interrupt() override {
    const std::string id = "shoal-interrupt-" + std::to_string(++interrupts_);
    return child_->writeStdin(claudeInterruptRequest(id), spec_.stdinWriteTimeout).status;
  }

 private:
  std::string frame(const Handoff& handoff) const override {
    return claudeUserLine(handoff.handoffId, handoff.text);
  }

  std::string readOutput(UniqueFd out) override {
    return readLines(std::move(out), "stdout of claude (pid " + std::to_string(pid()) + ")",
                     [this](const std::string& line) {
                       auto parsed = parseClaudeLine(line);
                       if (!parsed.isOk()) return parsed.status().toString();
                       handle(*parsed);
                       return std::string();
                     });
  }

  void handle(const ClaudeLine& line) {
    if (!line.sessionId.empty()) {
      MutexLock lock(mu_);
      session_ = line.sessionId;
    }
    DriverEvent e;
    switch (line.kind) {
      case ClaudeLine::Kind::kInit:
        e.kind = DriverEvent::Kind::kTurnStarted;
        break;
      case ClaudeLine::Kind::kReplay:
      case ClaudeLine::Kind::kAckStarted:
        e.kind = DriverEvent::Kind::kAck;
        e.handoffId = line.uuid;
        break;
      case ClaudeLine::Kind::kResult:
        e.kind = DriverEvent::Kind::kTurnEnded;
        e.isError = line.isError;
        e.detail = line.detail;
        e.condition = line.condition;
        break;
      case ClaudeLine::Kind::kRetry:
        e.kind = DriverEvent::Kind::kCondition;
        e.detail = line.detail;
        e.condition = line.condition;
        break;
      case ClaudeLine::Kind::kWork:
        e.kind = DriverEvent::Kind::kWork;
        break;
      case ClaudeLine::Kind::kControlResponse:
        if (line.uuid != readyId()) return;
        e.kind = DriverEvent::Kind::kReady;
        break;
      case ClaudeLine::Kind::kOther:
        return;
    }
    emit(std::move(e));
  }

  std::string readyId() const { return "shoal-ready-" + std::to_string(spec_.generation); }

  mutable Mutex mu_;
  std::string session_ SHOAL_GUARDED_BY(mu_);
  uint64_t interrupts_ = 0;  // gate thread only
};

}  // namespace

std::vector<std::string> claudeArgv(const LaunchSpec& spec) {
  std::vector<std::string> argv = spec.command;
  if (argv.empty()) argv = {"claude"};
  for (const char* flag : {"-p", "--input-format", "stream-json", "--output-format", "stream-json",
                           "--verbose", "--replay-user-messages"})
    argv.emplace_back(flag);
  if (!spec.resumeSession.empty()) {
    argv.emplace_back("--resume");
    argv.push_back(spec.resumeSession);
  }
  if (spec.mcp) {
    // Only the seat's own MCP server, with its tools allowed (no permission prompt headless).
    argv.emplace_back("--mcp-config");
    argv.push_back(spec.mcp->configPath);
    argv.emplace_back("--strict-mcp-config");
    argv.emplace_back("--allowedTools");
    std::string allowed;
    for (const auto& name : spec.allowedTools)
      allowed += (allowed.empty() ? "" : ",") + name;
    argv.push_back(allowed);
  }
  return argv;
}

Result<std::unique_ptr<RuntimeDriver>> launchClaudeDriver(LaunchSpec spec) {
  auto argv = claudeArgv(spec);
  const bool toolSearchSet = std::find(spec.envAllowList.begin(), spec.envAllowList.end(),
                                       "ENABLE_TOOL_SEARCH") != spec.envAllowList.end();
  auto driver = std::make_unique<ClaudeDriver>(std::move(spec));
  // Claude 2.1.332+ hides MCP tools behind tool search unless this is off (docs/daemon.md).
  if (!toolSearchSet) driver->extraEnv_.emplace_back("ENABLE_TOOL_SEARCH", "false");
  SHOAL_RETURN_IF_ERROR(driver->spawn(std::move(argv)));
  // A failed handshake write means the process is already gone: its kExited tells the seat.
  (void)driver->beginHandshake();
  return std::unique_ptr<RuntimeDriver>(std::move(driver));
}

}  // namespace shoal::runtime
