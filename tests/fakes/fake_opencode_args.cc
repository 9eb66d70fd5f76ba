#include "fake_opencode_args.h"

#include <algorithm>
#include <charconv>
#include <map>

#include <fmt/core.h>

namespace shoal::fakes {

std::optional<int> parseInt(const std::string& text, int min, int max) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return std::nullopt;
  }
  return value;
}

ParsedArgs parseArgs(int argc, char** argv) {
  ParsedArgs out;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.empty() || arg[0] != '-') {
      if (arg != "serve") out.notes.push_back("ignoring argument '" + arg + "'");
      continue;
    }
    std::optional<std::string> value;
    if (size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    }
    static const std::map<std::string, SummarizeMode> kSummarizeModes{
        {"--summarize-fail", SummarizeMode::kFail},
        {"--summarize-no-compacted", SummarizeMode::kNoCompacted},
        {"--summarize-retry", SummarizeMode::kRetry},
        {"--summarize-hang", SummarizeMode::kHang}};
    if (auto mode = kSummarizeModes.find(arg); mode != kSummarizeModes.end()) {
      out.options.summarize = mode->second;  // the last one wins; a `=value` is ignored
      continue;
    }
    static const std::vector<std::string> kWithValue{
        "--port",     "--hostname",        "--cors",    "--log-level",    "--state",
        "--fake-log", "--listen-delay-ms", "--turn-ms", "--heartbeat-ms", "--summarize-ms"};
    if (std::find(kWithValue.begin(), kWithValue.end(), arg) == kWithValue.end()) {
      if (arg != "--mdns" && arg != "--print-logs") {
        out.notes.push_back("ignoring unknown flag " + arg);
      }
      continue;
    }
    if (!value) {
      if (i + 1 >= argc) {
        out.error = "fake_opencode: " + arg + " needs a value";
        return out;
      }
      value = argv[++i];
    }
    auto number = [&](int min, int max, int& into) {
      std::optional<int> n = parseInt(*value, min, max);
      if (!n) {
        out.error = fmt::format("fake_opencode: {} wants a number in [{}, {}], got '{}'", arg, min,
                                max, *value);
      } else {
        into = *n;
      }
    };
    if (arg == "--port") number(0, 65535, out.options.port);
    if (arg == "--listen-delay-ms") number(0, kMaxMarkerMs, out.options.listenDelayMs);
    if (arg == "--turn-ms") number(0, kMaxMarkerMs, out.options.turnMs);
    if (arg == "--heartbeat-ms") number(1, kMaxMarkerMs, out.options.heartbeatMs);
    if (arg == "--summarize-ms") number(0, kMaxMarkerMs, out.options.summarizeMs);
    if (arg == "--state") out.options.statePath = *value;
    if (arg == "--fake-log") out.options.logPath = *value;
    if (arg == "--hostname" && *value != "127.0.0.1" && *value != "localhost") {
      out.error = fmt::format(
          "fake_opencode: only loopback is served (127.0.0.1 or localhost), "
          "got --hostname '{}'",
          *value);
    }
    if (!out.error.empty()) return out;
  }
  return out;
}

}  // namespace shoal::fakes
