// Message: one core NATS message as an owned value (subject, reply, payload, headers).
//
// Headers keep their order and may repeat a name (NATS headers are a multimap); `header()`
// returns the first value of a name, compared exactly as NATS does (case-sensitive).
//
// Thread safety: a value type; distinct objects may be used from any thread.
// Lifetime: owns its strings; nothing points into nats.c memory.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shoal::transport {

using Headers = std::vector<std::pair<std::string, std::string>>;

// The first value of `name` in `headers`, if any.
std::optional<std::string> findHeader(const Headers& headers, std::string_view name);

struct Message {
  std::string subject{};
  std::string reply{};  // empty when the sender expects no reply
  std::string data{};
  Headers headers{};

  std::optional<std::string> header(std::string_view name) const {
    return findHeader(headers, name);
  }
};

}  // namespace shoal::transport
