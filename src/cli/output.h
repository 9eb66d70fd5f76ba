// Rendering conventions shared by every subcommand: human lines start with `✓` (done), `!`
// (worth knowing) or `✗` (failed: the message names the remedy and ends with its reason token,
// `… (seat-exists)`, which scripts may match). With `--json` anywhere on the command line the
// run speaks the parse contract instead: one JSON value per line on stdout, failures included
// as `{"ok":false,"error":{"code","reason","message","remedy"}}` (docs/cli.md); exit codes are
// the same in both modes. Stamps are integer epoch milliseconds, durations integer ms (or µs
// where the key says `Us`).
//
// Thread safety: writes to stdout/stderr; call from the CLI's one thread (the JSON mode is set
// once, before parsing).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "base/status.h"

namespace shoal::cli {

// This run's output mode (app.cc sets it from the command line before parsing).
void setJsonOutput(bool on);
bool jsonOutput();

void printOk(std::string_view line);
void printNote(std::string_view line);
void printDetail(std::string_view line);  // indented continuation, no marker
// One JSON value on one line of stdout (flushed: NDJSON streams are read as they come).
void printJson(const boost::json::value& value);

// A command's successful result: an object gets `"ok":true` (when it has no `ok` of its own);
// an array is wrapped as {"ok":true,"<arrayKey>":[…]}.
void printResult(boost::json::value value, std::string_view arrayKey = "items");

// The contract's error object for `status`: {"code","reason","message","remedy"}; `remedy` is
// the refusal table's (refusals.h) or null.
boost::json::object errorObject(const Status& status);

// A failed command: `✗ <what>: <message> (<reason>)` on stderr, or the JSON error object on
// stdout. Returns `exitCode` (default 1).
int printFailure(std::string_view what, const Status& status, int exitCode = 1);

// "40s", "12m", "3h05m", "2d": the age of an epoch-ms stamp at `nowMs` (a stamp in the future
// reads "0s"); empty for an absent or non-finite stamp.
std::string formatAge(std::optional<double> stampMs, int64_t nowMs);

// Local wall-clock renderings of an epoch-ms stamp: "22:18:53.838" and "2026-12-01 22:18:53".
std::string formatClock(int64_t ms);
std::string formatDateTime(int64_t ms);

// A stamp as the contract writes it: integer epoch ms, or null.
boost::json::value stampJson(std::optional<double> stampMs);

}  // namespace shoal::cli
