// FUZZ_REQUIRE(cond): a property every input must satisfy; on failure print it and trap, so
// libFuzzer records the input as a crash and saves a reproducer.
#pragma once

#include <cstdio>

#define FUZZ_REQUIRE(cond)                                                                   \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "fuzz property failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      __builtin_trap();                                                                      \
    }                                                                                        \
  } while (false)
