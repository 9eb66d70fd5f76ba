// The `claude` runtime driver (claude_driver.cc): Claude Code headless stream-json.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "daemon/runtime_driver.h"

namespace shoal::daemon {

// The profile's command (default `claude`) plus `-p --input-format stream-json --output-format
// stream-json --verbose --replay-user-messages`, `--resume <session>` when resuming, and
// `--mcp-config <path> --strict-mcp-config --allowedTools <the seat tools>` with an MCP config.
std::vector<std::string> claudeArgv(const SeatProfile& profile, const LaunchSpec& spec);

Result<std::unique_ptr<RuntimeDriver>> launchClaudeDriver(const SeatProfile& profile,
                                                          LaunchSpec spec);

}  // namespace shoal::daemon
