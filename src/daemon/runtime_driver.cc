#include "daemon/runtime_driver.h"

#include <fmt/format.h>

#include "daemon/claude_driver.h"
#include "daemon/codex_driver.h"
#include "daemon/exec_driver.h"
#include "daemon/opencode_driver.h"

namespace shoal::daemon {

Result<std::unique_ptr<RuntimeDriver>> launchRuntime(const SeatProfile& profile, LaunchSpec spec) {
  switch (profile.runtime) {
    case RuntimeKind::kExec:
      return launchExecDriver(profile, std::move(spec));
    case RuntimeKind::kClaude:
      return launchClaudeDriver(profile, std::move(spec));
    case RuntimeKind::kCodex:
      return launchCodexDriver(profile, std::move(spec));
    case RuntimeKind::kOpenCode:
      return launchOpenCodeDriver(profile, std::move(spec));
  }
  return failedPrecondition(
      "runtime-not-built",
      fmt::format("seat {} uses the {} runtime, which has no driver", profile.principal.dotForm(),
                  runtimeKindName(profile.runtime)));
}

std::vector<std::string> runtimeArgv(const SeatProfile& profile, const LaunchSpec& spec) {
  if (profile.runtime == RuntimeKind::kClaude) return claudeArgv(profile, spec);
  if (profile.runtime == RuntimeKind::kCodex) return codexArgv(profile);  // MCP flags: at launch
  if (profile.runtime == RuntimeKind::kOpenCode)
    return openCodeArgv(profile, 0);  // port: at launch
  return profile.command;
}

}  // namespace shoal::daemon
