#include "daemon/channel_rejoin.h"

#include <algorithm>

#include <boost/json.hpp>

#include "base/log.h"

namespace shoal::daemon {

namespace json = boost::json;

std::set<std::string> joinSeatChannels(mesh::Endpoint& endpoint,
                                       const std::vector<std::string>& channels,
                                       const std::set<std::string>& held, std::string_view who) {
  std::set<std::string> now;
  for (const auto& channel : channels) {
    mesh::JoinOptions options;
    options.heldDurably = held.count(channel) != 0;
    auto joined = endpoint.join(channel, options);
    if (!joined.isOk()) {
      log::warn("seat {}: joining #{}: {}", who, channel, joined.status().toString());
      if (options.heldDurably) now.insert(channel);
      continue;
    }
    if (joined->durable || joined->continued) now.insert(channel);
  }
  return now;
}

std::set<std::string> endDroppedMemberships(mesh::Endpoint& endpoint,
                                            const std::vector<std::string>& channels,
                                            const std::set<std::string>& held,
                                            std::string_view who) {
  std::set<std::string> failed;
  for (const auto& channel : held) {
    if (std::find(channels.begin(), channels.end(), channel) != channels.end()) continue;
    Status ended = endpoint.endDurableMembership(channel);
    if (ended.isOk()) {
      log::info("seat {}: left #{} (no longer among its channels)", who, channel);
    } else {
      log::warn("seat {}: {}; retried at its next start", who, ended.toString());
      failed.insert(channel);
    }
  }
  return failed;
}

Result<std::set<std::string>> parseDurableChannels(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_array()) {
    return dataLoss("bad-durable-channels", "the seat's remembered channels are not a JSON array");
  }
  std::set<std::string> out;
  for (const auto& c : v.as_array()) {
    if (!c.is_string()) {
      return dataLoss("bad-durable-channels",
                      "the seat's remembered channels hold something other than a name");
    }
    out.emplace(c.as_string());
  }
  return out;
}

std::string durableChannelsJson(const std::set<std::string>& channels) {
  json::array a;
  for (const auto& c : channels)
    a.emplace_back(c);
  return json::serialize(a);
}

}  // namespace shoal::daemon
