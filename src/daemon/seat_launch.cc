#include "daemon/seat_launch.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shoal::daemon {

runtime::LaunchSpec seatLaunchSpec(const SeatProfile& profile, const std::string& space) {
  runtime::LaunchSpec spec;
  spec.kind = profile.runtime;
  spec.command = profile.command;
  spec.cwd = profile.cwd;
  spec.envAllowList = profile.env;
  spec.env = {{"SHOAL_SEAT", profile.principal.dotForm()}, {"SHOAL_SPACE", space}};
  spec.seatId = profile.principal.dotForm();
  spec.acks = profile.acks;
  return spec;
}

runtime::RuntimeTraits seatRuntimeTraits(const SeatProfile& profile) {
  return runtime::runtimeTraits(profile.runtime, profile.acks);
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

}  // namespace shoal::daemon
