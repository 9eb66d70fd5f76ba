#include "base/assert.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace shoal::detail {

void assertionFailed(const char* tier, const char* expr, const char* file, int line,
                     const char* fmt, ...) {
  std::fprintf(stderr, "shoal: %s failed at %s:%d: %s\n  ", tier, file, line, expr);
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fputs("\n  this is a bug in shoal; please report it with the lines above\n", stderr);
  std::fflush(stderr);
  std::abort();
}

}  // namespace shoal::detail
