// launchRuntime: the one place that knows every runtime driver — it starts generation
// `spec.generation` of `spec.kind`'s runtime, and answers what that runtime's protocol can do
// before any Process exists.
//
// Errors: the driver's (spawn failures name the program; `runtime-log-unwritable`,
// `bad-mcp-url`, `bad-opencode-config`), or `runtime-not-built` for a kind with no driver.
// Thread safety: pure dispatch; each driver documents its own.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "runtime/driver.h"

namespace shoal::runtime {

Result<std::unique_ptr<RuntimeDriver>> launchRuntime(LaunchSpec spec);

// The traits a driver of `kind` will have (`acks`: an exec program that acknowledges).
RuntimeTraits runtimeTraits(RuntimeKind kind, bool acks);

// The argv `spec` runs: its command (or the runtime's default) plus the protocol flags known
// before launch (OpenCode's port is chosen at launch and is not included).
std::vector<std::string> runtimeArgv(const LaunchSpec& spec);

}  // namespace shoal::runtime
