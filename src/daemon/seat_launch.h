// What a seat's profile means to the runtime layer: the launch value its runtime starts from,
// the traits that runtime will have, and whether its program can run at all. The runtime
// drivers (runtime/) never see a SeatProfile; this is where one becomes a LaunchSpec.
//
// Thread safety: pure functions (checkRuntimeProgram reads the file system).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "daemon/seat_profile.h"
#include "runtime/launch.h"

namespace shoal::daemon {

// The profile's part of a launch: kind, command, cwd, the env allow-list, SHOAL_SEAT and
// SHOAL_SPACE, the seat's id and (exec) whether the program acknowledges. The seat adds the
// generation, the log, the sink, the session to resume, its MCP endpoint and tools.
runtime::LaunchSpec seatLaunchSpec(const SeatProfile& profile, const std::string& space);

// runtime::runtimeTraits for the profile's runtime.
runtime::RuntimeTraits seatRuntimeTraits(const SeatProfile& profile);

// Whether the program `profile` would run exists and is executable for this process: a path
// (relative ones against the seat's cwd), or a name found on PATH. kFailedPrecondition
// `runtime-missing` naming the program and how to install it otherwise.
Status checkRuntimeProgram(const SeatProfile& profile, std::string_view pathEnv);

}  // namespace shoal::daemon
