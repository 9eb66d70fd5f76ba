// The `claude` runtime driver (claude_driver.cc): Claude Code headless stream-json.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "daemon/runtime_driver.h"

namespace shoal::daemon {

// The profile's command (default `claude`) plus `-p --input-format stream-json --output-format
// stream-json --verbose --replay-user-messages` and `--resume <session>` when resuming.
std::vector<std::string> claudeArgv(const SeatProfile& profile, const LaunchSpec& spec);

Result<std::unique_ptr<RuntimeDriver>> launchClaudeDriver(const SeatProfile& profile,
                                                          LaunchSpec spec);

}  // namespace shoal::daemon
