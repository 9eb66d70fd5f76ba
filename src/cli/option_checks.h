// Range checks for numeric command-line options, so a value no command could honour (a timeout
// of 0, -1 or 1e308 seconds) is a usage error that says the range, not a failure later with a
// misleading message.
//
// Thread safety: builds CLI11 validators; no state.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace shoal::cli {

// Seconds in (0, max]: more than zero, at most `max`, a finite number.
CLI::Validator secondsUpTo(double max);
// Seconds in [0, max] (0 meaning "do not wait").
CLI::Validator secondsOrZeroUpTo(double max);

// The longest wait any command takes: an hour.
inline constexpr double kMaxWaitSeconds = 3600;

}  // namespace shoal::cli
