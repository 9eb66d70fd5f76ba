// The `claude` runtime driver (driver.cc): Claude Code in headless stream-json mode
// (stream.h). Each handoff is one `type:user` stdin line whose `uuid` is the handoff id; the
// runtime acknowledges it by replaying that uuid (or, on 2.1.332+, `command_lifecycle`
// started) and ends each turn with one `result`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/driver.h"

namespace shoal::runtime {

// Acknowledged handoffs, a readiness handshake (initialize), native interrupt, resumable
// sessions; no input mid-turn.
inline constexpr RuntimeTraits kClaudeTraits{
    .needsReady = true, .interrupts = true, .resumesSessions = true};

// The command (default `claude`) plus `-p --input-format stream-json --output-format
// stream-json --verbose --replay-user-messages`, `--resume <session>` when resuming, and
// `--mcp-config <path> --strict-mcp-config --allowedTools <spec.allowedTools>` with an MCP
// endpoint.
std::vector<std::string> claudeArgv(const LaunchSpec& spec);

Result<std::unique_ptr<RuntimeDriver>> launchClaudeDriver(LaunchSpec spec);

}  // namespace shoal::runtime
