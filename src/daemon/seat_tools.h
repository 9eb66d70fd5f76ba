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
//   shoal_status             {status?, activity?}     my presence: idle | working | waiting
//   shoal_channels           {}                       the channels I have joined
//   shoal_join / shoal_leave {channel}
//   shoal_connection_status  {}                       broker and roster view health
// Receipts are facts ("stored seq 12 in DM_main; bob was idle at send"), never "delivered".
// Failures are tool errors (`isError`) with the reason and the remedy, so the model can act.
//
// Not built yet (issue 6): shoal_inbox with inbox receipts, shoal_channel_mode, attention
// (issue 7), visible-reply settlement.
//
// Thread safety: the tools run on the MCP server's thread; every call they make on the
// endpoint is thread-safe. Lifetime: the tools must not outlive `endpoint` (the seat stops its
// MCP server before it closes the endpoint).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "daemon/seat_profile.h"
#include "mcp/tool.h"

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
};

std::vector<mcp::ToolSpec> seatTools(SeatToolContext context);

// `mcp__shoal__<tool>` for every tool: what Claude's --allowedTools needs.
std::vector<std::string> seatToolNamesForClaude();

}  // namespace shoal::daemon
