// Rendering conventions shared by every subcommand (DESIGN.md §9): human lines start with
// `✓` (done), `!` (worth knowing) or `✗` (failed; the message names the remedy).
//
// Thread safety: writes to stdout/stderr; call from the CLI's one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace shoal::cli {

void printOk(std::string_view line);
void printNote(std::string_view line);
void printDetail(std::string_view line);  // indented continuation, no marker
// Prints `✗ <what>: <status message>` to stderr and returns exit code 1.
int printFailure(std::string_view what, const Status& status);
// "40s", "12m", "3h05m", "2d": the age of an epoch-ms stamp at `nowMs` (a stamp in the future
// reads "0s"); empty for an absent or non-finite stamp.
std::string formatAge(std::optional<double> stampMs, int64_t nowMs);

}  // namespace shoal::cli
