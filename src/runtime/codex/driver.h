// The `codex` runtime driver (driver.cc): `codex app-server`, JSON-RPC over stdio
// (rpc.h; docs/daemon.md, Runtimes; seed 004 §1.1, §2, §3).
//
// Launch: `initialize` → `initialized` → `thread/resume` of the seat's saved thread (or
// `thread/start`); the thread's result is the readiness handshake (kReady). A resume refused
// because the thread is lost (codexThreadLost) falls back to one fresh thread, at most once per
// generation, reported as a `retrying` condition `provider_session_fresh_fallback`; any other
// resume failure ends the generation.
//
// Handoffs: idle → `turn/start`, a turn in progress → `turn/steer` with `expectedTurnId`, each
// with `clientUserMessageId` = the handoff id. A handoff is acknowledged (kAck) only by the
// `userMessage` item echoing that `clientId` (an old Codex that echoes none: the oldest
// unacknowledged handoff). A steer refused because its turn ended meanwhile is sent again as a
// `turn/start`. `turn/started` / `turn/completed` are the only busy / idle boundaries; a
// non-retrying `error` is terminal: the driver reports the turn's end at once and drops the
// later `turn/completed` of that turn; activity of an ended turn is dropped. Server requests
// (approvals, tool calls) are declined (codexDecline) and reported as a condition.
//
// Compaction (`shoal seat compact`): `thread/compact/start` at an idle boundary; the compaction
// runs as a turn of its own, and its completion through the two-event latch
// (compaction_latch.h) is the one turn end the seat sees — an early `thread/status/changed`
// idle ends nothing; a failed compaction ends with `context_compaction_failed: …`.
// Interrupt (`shoal seat interrupt`): `turn/interrupt` of the running turn; it ends with
// turn/completed `interrupted`.
// Reconciliation: reconcile() sends `thread/read {includeTurns}`; the answer lists the
// userMessage clientIds and the inbox receipt markers of tool items (kReconciled). Inbox
// receipts are one hop (decision 010).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/driver.h"

namespace shoal::runtime {

// Acknowledged handoffs, a readiness handshake, steering mid-turn, reconciliation against the
// thread, compaction, interrupt, resumable threads.
inline constexpr RuntimeTraits kCodexTraits{.needsReady = true,
                                            .steersMidTurn = true,
                                            .reconciles = true,
                                            .compacts = true,
                                            .interrupts = true,
                                            .resumesSessions = true};

// The command (default `codex app-server`), plus, with the seat's MCP endpoint, the `-c`
// overrides that give Codex the seat's tools for this run only:
//   mcp_servers.shoal.url="<url>", mcp_servers.shoal.bearer_token_env_var="SHOAL_MCP_TOKEN"
//   (Codex refuses an inline token; the driver sets that variable), and
//   mcp_servers.shoal.default_tools_approval_mode="approve" (the seat's own tools need no
//   approval; without it an `approval_policy = "never"` Codex refuses every call).
std::vector<std::string> codexArgv(const LaunchSpec& spec);
inline constexpr std::string_view kCodexMcpTokenVariable = "SHOAL_MCP_TOKEN";

Result<std::unique_ptr<RuntimeDriver>> launchCodexDriver(LaunchSpec spec);

}  // namespace shoal::runtime
