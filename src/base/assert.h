// Assertion tiers, for Shoal's own invariants only. Never assert on the outside world
// (network input, child output, file contents): validate it and return a Status instead.
//
//   SHOAL_CHECK(cond, fmt, ...)    always on. A broken invariant that would corrupt state or
//                                  lose data if execution went on: log and abort.
//   SHOAL_DCHECK(cond, fmt, ...)   on in debug and sanitizer builds (NDEBUG unset or
//                                  SHOAL_DCHECK_ALWAYS): cheap sanity checks on hot paths.
//   SHOAL_PARANOID(cond, fmt, ...) only with SHOAL_PARANOID_CHECKS: expensive whole-structure
//                                  checks (e.g. re-validating a journal after every commit).
//
// Thread safety: may be used from any thread. The failure path writes to stderr and aborts.
#pragma once

namespace shoal::detail {
[[noreturn]] void assertionFailed(const char* tier, const char* expr, const char* file, int line,
                                  const char* fmt, ...) __attribute__((format(printf, 5, 6)));
}  // namespace shoal::detail

#define SHOAL_CHECK(cond, ...)                                                           \
  do {                                                                                   \
    if (!(cond)) [[unlikely]]                                                            \
      ::shoal::detail::assertionFailed("CHECK", #cond, __FILE__, __LINE__, __VA_ARGS__); \
  } while (false)

#if !defined(NDEBUG) || defined(SHOAL_DCHECK_ALWAYS)
#define SHOAL_DCHECK_ENABLED 1
#define SHOAL_DCHECK(cond, ...)                                                           \
  do {                                                                                    \
    if (!(cond)) [[unlikely]]                                                             \
      ::shoal::detail::assertionFailed("DCHECK", #cond, __FILE__, __LINE__, __VA_ARGS__); \
  } while (false)
#else
#define SHOAL_DCHECK_ENABLED 0
#define SHOAL_DCHECK(cond, ...) \
  do {                          \
    (void)sizeof(!(cond));      \
  } while (false)
#endif

#if defined(SHOAL_PARANOID_CHECKS)
#define SHOAL_PARANOID(cond, ...)                                                           \
  do {                                                                                      \
    if (!(cond)) [[unlikely]]                                                               \
      ::shoal::detail::assertionFailed("PARANOID", #cond, __FILE__, __LINE__, __VA_ARGS__); \
  } while (false)
#else
#define SHOAL_PARANOID(cond, ...) \
  do {                            \
  } while (false)
#endif
