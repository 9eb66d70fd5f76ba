// Long-running CLI commands (`watch`, `join`) end on SIGINT / SIGTERM with a graceful leave.
//
// blockStopSignals() blocks SIGINT and SIGTERM in the calling thread; call it first thing, so
// every thread created afterwards (nats.c's, the endpoint's) inherits the mask and the signal
// can only be taken by waitForStopSignal(), never kill the process mid-leave.
//
// Thread safety: call both from the CLI's main thread.
#pragma once

#include <chrono>
#include <optional>

namespace shoal::cli {

void blockStopSignals();
// Waits up to `timeout` for SIGINT or SIGTERM; returns the signal number, or nullopt on timeout.
std::optional<int> waitForStopSignal(std::chrono::milliseconds timeout);

}  // namespace shoal::cli
