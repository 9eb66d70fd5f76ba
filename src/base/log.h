// Logging: one process-wide logger (spdlog underneath), kept out of widely included headers.
//
// Logs are for people reading what happened; tests never use them as the oracle. Lines go to
// stderr; `initLogging` picks the level ("trace".."error", "off") and an optional file.
//
// Thread safety: every function may be called from any thread.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace shoal::log {

enum class Level { kTrace, kDebug, kInfo, kWarn, kError, kOff };

// Parses "trace", "debug", "info", "warn", "error", "off"; returns false on anything else.
bool parseLevel(std::string_view name, Level* out);
void initLogging(Level level, const std::string& filePath = "");
void write(Level level, std::string_view message);
bool enabled(Level level);

template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::kDebug)) write(Level::kDebug, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::kInfo)) write(Level::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::kWarn)) write(Level::kWarn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::kError)) write(Level::kError, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace shoal::log
