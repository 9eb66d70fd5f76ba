// The `exec` runtime driver (driver.cc): a raw-stdin program, one block per handoff. A block
// surfaces when the program has read its last byte from the pipe; with `acks`, only when the
// program acknowledges each message on fd 3 (ack_lines.h).
#pragma once

#include <memory>

#include "runtime/driver.h"

namespace shoal::runtime {

// Surfaced on read (and, with acks, on the program's acknowledgement); no turns, no sessions.
constexpr RuntimeTraits execTraits(bool acks) {
  return RuntimeTraits{.surfacedOnRead = true, .acksMessages = acks};
}

Result<std::unique_ptr<RuntimeDriver>> launchExecDriver(LaunchSpec spec);

}  // namespace shoal::runtime
