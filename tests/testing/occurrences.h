// occurrences(haystack, needle): how many times `needle` appears in `haystack`, overlapping
// ones included — what a test counts in a runtime log to prove "exactly once".
#pragma once

#include <cstddef>
#include <string_view>

namespace shoal::testing {

inline size_t occurrences(std::string_view haystack, std::string_view needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string_view::npos;
       at = haystack.find(needle, at + 1))
    ++n;
  return n;
}

}  // namespace shoal::testing
