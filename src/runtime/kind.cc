#include "runtime/kind.h"

namespace shoal::runtime {

std::string_view runtimeKindName(RuntimeKind kind) {
  switch (kind) {
    case RuntimeKind::kExec:
      return "exec";
    case RuntimeKind::kClaude:
      return "claude";
    case RuntimeKind::kCodex:
      return "codex";
    case RuntimeKind::kOpenCode:
      return "opencode";
  }
  return "exec";
}

std::optional<RuntimeKind> parseRuntimeKind(std::string_view name) {
  for (RuntimeKind k :
       {RuntimeKind::kExec, RuntimeKind::kClaude, RuntimeKind::kCodex, RuntimeKind::kOpenCode}) {
    if (runtimeKindName(k) == name) return k;
  }
  return std::nullopt;
}

}  // namespace shoal::runtime
