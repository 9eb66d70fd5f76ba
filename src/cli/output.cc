#include "cli/output.h"

#include <cstdio>
#include <string>

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

}  // namespace shoal::cli
