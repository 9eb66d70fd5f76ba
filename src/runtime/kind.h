// RuntimeKind: which runtime a seat runs — a raw-stdin program (`exec`), Claude Code, the Codex
// app server or OpenCode — and its name as profiles and the CLI spell it.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

namespace shoal::runtime {

enum class RuntimeKind { kExec, kClaude, kCodex, kOpenCode };

std::string_view runtimeKindName(RuntimeKind kind);  // "exec" | "claude" | "codex" | "opencode"
std::optional<RuntimeKind> parseRuntimeKind(std::string_view name);

}  // namespace shoal::runtime
