#include "base/log.h"

#include <atomic>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace shoal::log {
namespace {

std::atomic<int> gLevel{static_cast<int>(Level::kWarn)};

spdlog::level::level_enum toSpd(Level level) {
  switch (level) {
    case Level::kTrace:
      return spdlog::level::trace;
    case Level::kDebug:
      return spdlog::level::debug;
    case Level::kInfo:
      return spdlog::level::info;
    case Level::kWarn:
      return spdlog::level::warn;
    case Level::kError:
      return spdlog::level::err;
    case Level::kOff:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

std::shared_ptr<spdlog::logger>& logger() {
  // shared_ptr: spdlog's registry API hands loggers out this way.
  static std::shared_ptr<spdlog::logger> l = spdlog::stderr_color_mt("shoal");
  return l;
}

}  // namespace

bool parseLevel(std::string_view name, Level* out) {
  static constexpr std::pair<std::string_view, Level> kNames[] = {
      {"trace", Level::kTrace}, {"debug", Level::kDebug}, {"info", Level::kInfo},
      {"warn", Level::kWarn},   {"error", Level::kError}, {"off", Level::kOff}};
  for (const auto& [n, l] : kNames) {
    if (n == name) {
      *out = l;
      return true;
    }
  }
  return false;
}

void initLogging(Level level, const std::string& filePath) {
  gLevel.store(static_cast<int>(level));
  if (!filePath.empty()) {
    auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(filePath);
    logger()->sinks().push_back(sink);
  }
  logger()->set_level(toSpd(level));
  logger()->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  logger()->flush_on(spdlog::level::warn);
}

bool enabled(Level level) {
  return static_cast<int>(level) >= gLevel.load(std::memory_order_relaxed);
}

void write(Level level, std::string_view message) {
  logger()->log(toSpd(level), message);
}

}  // namespace shoal::log
