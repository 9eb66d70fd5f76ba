// Rejoining a seat's channels when it opens, and ending the memberships of those it dropped. A seat
// remembers, in its journal section `seat.durable_channels` (["<channel>",…]), the channels on
// which its lifecycle holds a durable membership. Each rejoin passes that memory on
// (mesh::JoinOptions::heldDurably), so a rejoin the delivery plane cannot answer — a whole-mesh
// crash that restarts the daemon before the plane — continues the membership and replays no
// history: the posts taken in before are not handed over again as historical (their tombstones may
// be pruned), and the plane sends the copies of the posts made meanwhile once it is back.
//
// Thread safety: free functions over values; joinSeatChannels uses the endpoint as it allows.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "mesh/endpoint.h"

namespace shoal::daemon {

inline constexpr std::string_view kDurableChannelsSection = "seat.durable_channels";

// Joins each of `channels`, logging (as seat `who`) a join that fails. Returns the channels held
// durably now: those the plane confirmed or took to continue, and those remembered in `held`
// whose join failed outright (nothing says the membership ended).
std::set<std::string> joinSeatChannels(mesh::Endpoint& endpoint,
                                       const std::vector<std::string>& channels,
                                       const std::set<std::string>& held, std::string_view who);

// Ends the durable memberships remembered in `held` whose channel is no longer among `channels`
// (`shoal seat channels --remove`), so the plane stops sending their copies. Returns those whose
// end failed: they stay remembered, and the seat's next open tries again.
std::set<std::string> endDroppedMemberships(mesh::Endpoint& endpoint,
                                            const std::vector<std::string>& channels,
                                            const std::set<std::string>& held,
                                            std::string_view who);

// The section's value; anything but an array of strings is `bad-durable-channels`.
Result<std::set<std::string>> parseDurableChannels(std::string_view json);
std::string durableChannelsJson(const std::set<std::string>& channels);

}  // namespace shoal::daemon
