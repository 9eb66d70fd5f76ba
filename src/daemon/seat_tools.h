// SeatTools: the agent tool surface of one seat (issue 6 point 2; seed 000 "Attention"; the
// tools an agent calls through the seat's MCP endpoint, mcp/server.h). Identity always comes
// from the seat: no tool takes a sender, and the MCP server refuses any argument a tool does
// not declare (an identity-like key with a specific message).
//
//   shoal_orientation        {}                       who am I, space, role, channels, who is
//                                                     present, my status, queued deliveries
//   shoal_roster             {}                       every peer: status, activity, condition,
//                                                     ages; labelled last-known when the view
//                                                     is not current
//   shoal_dm                 {to, text}               receipt: stored seq + status at send
//   shoal_send               {text, channel?, mentions?}   a channel post (channel defaults to
//                                                     the seat's only joined channel)
//   shoal_anycast            {role, text}             work for whoever holds the role
//   shoal_inbox              {limit?}                 a page of the deliveries waiting for me
//                                                     (inbox receipts, seat.h / inbox_leases.h)
//   shoal_status             {status?, attention?, activity?}   my presence: idle | working |
//                                                     waiting; attention open | dnd | focus
//   shoal_channels           {}                       the channels I have joined, with modes
//   shoal_channel_mode       {channel, mode}          normal | quiet (inbox only) | muted
//   shoal_join / shoal_leave {channel}
//   shoal_connection_status  {}                       broker and roster view health
// Receipts are facts ("stored seq 12 in DM_main; bob was idle at send"), never "delivered".
// Failures are tool errors (`isError`) with the reason and the remedy, so the model can act.
// A shoal_dm / shoal_send that was stored settles the visible-reply obligations of its target
// up to the frontier observed before sending (reply_ledger.h).

//
// Thread safety: the tools run on the MCP server's thread; every call they make on the
// endpoint is thread-safe. Lifetime: the tools must not outlive `endpoint` (the seat stops its
// MCP server before it closes the endpoint).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "daemon/seat_profile.h"
#include "mcp/tool.h"
#include "wire/presence.h"

namespace shoal::mesh {
class Endpoint;
}

namespace shoal::daemon {

struct SeatToolContext {
  mesh::Endpoint* endpoint = nullptr;
  SeatProfile profile;
  std::string space;
  // Deliveries queued for this seat right now (orientation's unread count).
  std::function<size_t()> queued;
  // The seat's inbox page (seat.h); unset: shoal_inbox says the seat has no inbox.
  std::function<mcp::ToolResult(size_t limit)> inbox;
  // Visible-reply settlement (reply_ledger.h); unset: no settlement.
  std::function<uint64_t(const std::string& targetKey)> replyFrontier;
  std::function<void(const std::string& targetKey, uint64_t seenUpTo, const std::string& replyId)>
      replied;
  // Per-channel attention; unset: shoal_channel_mode is refused.
  std::function<Status(const std::string& channel, const std::string& mode)> setChannelMode;
  std::function<std::map<std::string, std::string>()> channelModes;
  // Global attention (open | dnd | focus); unset: shoal_status refuses `attention`.
  std::function<void(wire::Attention)> setAttention;
  std::function<wire::Attention()> attention;
};

std::vector<mcp::ToolSpec> seatTools(SeatToolContext context);

// `mcp__shoal__<tool>` for every tool: what Claude's --allowedTools needs.
std::vector<std::string> seatToolNamesForClaude();

}  // namespace shoal::daemon
