// The `exec` runtime driver (exec_driver.cc): a raw-stdin program, one block per handoff.
#pragma once

#include <memory>

#include "daemon/runtime_driver.h"

namespace shoal::daemon {

Result<std::unique_ptr<RuntimeDriver>> launchExecDriver(const SeatProfile& profile,
                                                        LaunchSpec spec);

}  // namespace shoal::daemon
