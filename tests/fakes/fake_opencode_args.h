// fake_opencode's command line: the flags `opencode serve` takes (accepted, mostly ignored)
// and the fake's own switches (timings, the summarize outcome, its event log and state file).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace shoal::fakes {

// The bound on every --*-ms switch.
inline constexpr int kMaxMarkerMs = 600'000;

// How a POST /session/:id/summarize's summary request goes (the --summarize-* switches).
enum class SummarizeMode { kSucceed, kFail, kNoCompacted, kRetry, kHang };

struct Options {
  std::string logPath;
  std::string statePath;
  int port = 0;
  int listenDelayMs = 0;
  int turnMs = 30;
  int heartbeatMs = 10000;
  int summarizeMs = 30;
  SummarizeMode summarize = SummarizeMode::kSucceed;
};

struct ParsedArgs {
  Options options;
  std::string error;  // non-empty: refuse to start (exit 2)
  std::vector<std::string> notes;
};

// `text` as an int in [min, max], or nullopt.
std::optional<int> parseInt(const std::string& text, int min, int max);
ParsedArgs parseArgs(int argc, char** argv);

}  // namespace shoal::fakes
