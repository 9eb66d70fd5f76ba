#include "base/log_throttle.h"

#include <algorithm>

#include <fmt/format.h>

namespace shoal::log {

std::optional<uint64_t> LogThrottle::admit(std::string_view key) {
  const int64_t now = clock_.monotonicNs();
  MutexLock lock(mu_);
  auto it = windows_.find(key);
  if (it != windows_.end()) {
    Window& w = it->second;
    if (now - w.openedNs < intervalNs_) {
      ++w.held;
      return std::nullopt;
    }
    const uint64_t held = w.held;
    w = Window{now, 0};
    return held;
  }
  if (windows_.size() >= maxKeys_) {
    auto oldest = std::min_element(
        windows_.begin(), windows_.end(),
        [](const auto& a, const auto& b) { return a.second.openedNs < b.second.openedNs; });
    windows_.erase(oldest);
  }
  windows_.emplace(std::string(key), Window{now, 0});
  return uint64_t{0};
}

std::string heldBackSuffix(uint64_t held) {
  if (held == 0) return "";
  return fmt::format(" (and {} more like it since the last report)", held);
}

}  // namespace shoal::log
