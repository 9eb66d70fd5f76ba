#include "daemon/runtime_driver.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

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

namespace {

std::string_view installHint(RuntimeKind kind) {
  switch (kind) {
    case RuntimeKind::kClaude:
      return "install Claude Code (`npm install -g @anthropic-ai/claude-code`)";
    case RuntimeKind::kCodex:
      return "install the Codex CLI (`npm install -g @openai/codex`)";
    case RuntimeKind::kOpenCode:
      return "install OpenCode (`npm install -g opencode-ai`)";
    case RuntimeKind::kExec:
      break;
  }
  return "install it";
}

bool executable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

Status checkRuntimeProgram(const SeatProfile& profile, std::string_view pathEnv) {
  // A runtime's default program is its own name (claude, codex, opencode).
  std::string program = !profile.command.empty() ? profile.command.front()
                        : profile.runtime == RuntimeKind::kExec
                            ? std::string()
                            : std::string(runtimeKindName(profile.runtime));
  if (program.empty()) return Status::ok();  // validateSeatProfile names a missing command
  if (program.find('/') != std::string::npos) {
    std::string path = program.front() == '/' ? program : profile.cwd + "/" + program;
    if (executable(path)) return Status::ok();
    return failedPrecondition(
        "runtime-missing",
        fmt::format("seat {} would run {}, which is not an executable file; {}, or give the "
                    "program's path after `--`",
                    profile.name, path, installHint(profile.runtime)));
  }
  size_t start = 0;
  while (start <= pathEnv.size()) {
    size_t end = pathEnv.find(':', start);
    if (end == std::string_view::npos) end = pathEnv.size();
    std::string dir(pathEnv.substr(start, end - start));
    if (!dir.empty() && executable(dir + "/" + program)) return Status::ok();
    start = end + 1;
  }
  return failedPrecondition(
      "runtime-missing",
      fmt::format("seat {} would run `{}`, which is not on the daemon's PATH; {}, or give the "
                  "program's path after `--` (the daemon's PATH is the one `shoal up` had)",
                  profile.name, program, installHint(profile.runtime)));
}

std::vector<std::string> runtimeArgv(const SeatProfile& profile, const LaunchSpec& spec) {
  if (profile.runtime == RuntimeKind::kClaude) return claudeArgv(profile, spec);
  if (profile.runtime == RuntimeKind::kCodex) return codexArgv(profile);  // MCP flags: at launch
  if (profile.runtime == RuntimeKind::kOpenCode)
    return openCodeArgv(profile, 0);  // port: at launch
  return profile.command;
}

}  // namespace shoal::daemon
