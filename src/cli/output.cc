#include "cli/output.h"

#include <cmath>
#include <cstdio>
#include <string>

#include <fmt/format.h>

namespace shoal::cli {

void printOk(std::string_view line) {
  std::printf("✓ %.*s\n", static_cast<int>(line.size()), line.data());
}
void printNote(std::string_view line) {
  std::printf("! %.*s\n", static_cast<int>(line.size()), line.data());
}
void printDetail(std::string_view line) {
  std::printf("  %.*s\n", static_cast<int>(line.size()), line.data());
}

int printFailure(std::string_view what, const Status& status) {
  std::string msg(status.message());
  if (msg.empty()) msg = status.toString();
  std::fflush(stdout);
  std::fprintf(stderr, "✗ %.*s: %s\n", static_cast<int>(what.size()), what.data(), msg.c_str());
  return 1;
}

std::string formatAge(std::optional<double> stampMs, int64_t nowMs) {
  if (!stampMs || !std::isfinite(*stampMs)) return "";
  auto s = static_cast<int64_t>((static_cast<double>(nowMs) - *stampMs) / 1000);
  if (s < 0) s = 0;
  if (s < 120) return fmt::format("{}s", s);
  if (s < 7200) return fmt::format("{}m", s / 60);
  if (s < 172800) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  return fmt::format("{}d", s / 86400);
}

}  // namespace shoal::cli
