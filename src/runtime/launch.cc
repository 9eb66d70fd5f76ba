#include "runtime/launch.h"

#include <fmt/format.h>

#include "runtime/claude/driver.h"
#include "runtime/codex/driver.h"
#include "runtime/exec/driver.h"
#include "runtime/opencode/driver.h"

namespace shoal::runtime {

Result<std::unique_ptr<RuntimeDriver>> launchRuntime(LaunchSpec spec) {
  switch (spec.kind) {
    case RuntimeKind::kExec:
      return launchExecDriver(std::move(spec));
    case RuntimeKind::kClaude:
      return launchClaudeDriver(std::move(spec));
    case RuntimeKind::kCodex:
      return launchCodexDriver(std::move(spec));
    case RuntimeKind::kOpenCode:
      return launchOpenCodeDriver(std::move(spec));
  }
  return failedPrecondition("runtime-not-built",
                            fmt::format("seat {} uses a runtime that has no driver", spec.seatId));
}

RuntimeTraits runtimeTraits(RuntimeKind kind, bool acks) {
  switch (kind) {
    case RuntimeKind::kExec:
      return execTraits(acks);
    case RuntimeKind::kClaude:
      return kClaudeTraits;
    case RuntimeKind::kCodex:
      return kCodexTraits;
    case RuntimeKind::kOpenCode:
      return kOpenCodeTraits;
  }
  return RuntimeTraits{};
}

std::vector<std::string> runtimeArgv(const LaunchSpec& spec) {
  switch (spec.kind) {
    case RuntimeKind::kClaude:
      return claudeArgv(spec);
    case RuntimeKind::kCodex:
      return codexArgv(spec);
    case RuntimeKind::kOpenCode:
      return openCodeArgv(spec, 0);
    case RuntimeKind::kExec:
      break;
  }
  return spec.command;
}

}  // namespace shoal::runtime
