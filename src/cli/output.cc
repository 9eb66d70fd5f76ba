#include "cli/output.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "cli/refusals.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

bool gJson = false;  // CLI thread only; set before parsing

}  // namespace

void setJsonOutput(bool on) {
  gJson = on;
}
bool jsonOutput() {
  return gJson;
}

void printOk(std::string_view line) {
  if (gJson) return;
  std::printf("✓ %.*s\n", static_cast<int>(line.size()), line.data());
}
void printNote(std::string_view line) {
  if (gJson) return;
  std::printf("! %.*s\n", static_cast<int>(line.size()), line.data());
}
void printDetail(std::string_view line) {
  if (gJson) return;
  std::printf("  %.*s\n", static_cast<int>(line.size()), line.data());
}

void printJson(const json::value& value) {
  std::printf("%s\n", json::serialize(value).c_str());
  std::fflush(stdout);
}

void printResult(json::value value, std::string_view arrayKey) {
  if (value.is_array()) {
    json::object wrapped;
    wrapped["ok"] = true;
    wrapped[arrayKey] = std::move(value);
    printJson(wrapped);
    return;
  }
  if (value.is_object() && !value.as_object().contains("ok")) {
    json::object out;
    out["ok"] = true;
    for (auto& [k, v] : value.as_object())
      out[k] = std::move(v);
    printJson(out);
    return;
  }
  printJson(value);
}

json::object errorObject(const Status& status) {
  json::object error;
  error["code"] = std::string(statusCodeName(status.code()));
  error["reason"] = std::string(status.reason());
  error["message"] = std::string(status.message());
  const Refusal* known = findRefusal(status.reason());
  error["remedy"] = known != nullptr ? json::value(std::string(known->remedy)) : json::value();
  return error;
}

int printFailure(std::string_view what, const Status& status, int exitCode) {
  if (gJson) {
    json::object out;
    out["ok"] = false;
    out["error"] = errorObject(status);
    printJson(out);
    return exitCode;
  }
  std::string msg(status.message());
  if (msg.empty()) msg = status.toString();
  std::string reason(status.reason());
  std::string tail = reason.empty() ? "" : " (" + reason + ")";
  std::fflush(stdout);
  std::fprintf(stderr, "✗ %.*s: %s%s\n", static_cast<int>(what.size()), what.data(), msg.c_str(),
               tail.c_str());
  return exitCode;
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

std::string formatClock(int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  return fmt::format("{:02}:{:02}:{:02}.{:03}", tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
}

std::string formatDateTime(int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

json::value stampJson(std::optional<double> stampMs) {
  if (!stampMs || !std::isfinite(*stampMs)) return nullptr;
  return static_cast<int64_t>(std::llround(*stampMs));
}

}  // namespace shoal::cli
