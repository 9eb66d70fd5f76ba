#include "cli/option_checks.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace shoal::cli {
namespace {

CLI::Validator seconds(double min, bool minIncluded, double max) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        const bool number = end != text.c_str() && *end == '\0' && std::isfinite(v);
        const bool inRange = number && (minIncluded ? v >= min : v > min) && v <= max;
        if (inRange) return "";
        return fmt::format("`{}` is not a number of seconds {} {} and at most {}", text,
                           minIncluded ? "from" : "more than", min, max);
      },
      fmt::format("SECONDS ({}{}..{})", minIncluded ? "" : ">", min, max));
}

}  // namespace

CLI::Validator secondsUpTo(double max) {
  return seconds(0, false, max);
}

CLI::Validator secondsOrZeroUpTo(double max) {
  return seconds(0, true, max);
}

}  // namespace shoal::cli
