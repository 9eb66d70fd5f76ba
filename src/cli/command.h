// How a command group plugs into the `shoal` App: each group's register function adds its
// subcommands to the App and sets their callbacks; a callback runs the command and stores its
// exit code in the shared CommandResult. app.cc only lists the groups.
//
// Thread safety: CLI thread only.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace shoal::cli {

struct CommandResult {
  int exitCode = 0;
};

// Local mesh lifecycle: up, status, down (mesh_commands.cc).
void registerMeshCommands(CLI::App& app, CommandResult& result);
// `shoal creds mint|list|revoke` (creds_command.cc).
void registerCredsCommands(CLI::App& app, CommandResult& result);

// The roster: endpoints (endpoints_command.cc).
void registerEndpointsCommands(CLI::App& app, CommandResult& result);

// Sending: send dm|msg|ask (send_command.cc).
void registerSendCommands(CLI::App& app, CommandResult& result);

// Delivery state: deliver pending (deliver_command.cc).
void registerDeliverCommands(CLI::App& app, CommandResult& result);

// Channel history: history (history_command.cc).
void registerHistoryCommands(CLI::App& app, CommandResult& result);

// Live stream of presence and traffic: watch (watch_command.cc).
void registerWatchCommands(CLI::App& app, CommandResult& result);

// Interactive peer: join (join_command.cc).
void registerJoinCommands(CLI::App& app, CommandResult& result);

// The seat daemon and its registry: daemon run|status, seat add|list|show|start|sleep|stop|rm
// (daemon_commands.cc).
void registerDaemonCommands(CLI::App& app, CommandResult& result);
// `shoal space init`: a space on a NATS server Shoal does not run.
void registerSpaceCommands(CLI::App& app, CommandResult& result);
// `shoal invite` and `shoal daemon join` (after registerDaemonCommands: it adds to `daemon`).
void registerInviteCommands(CLI::App& app, CommandResult& result);
// `seat events`, added to the `seat` group (seat_events_command.cc).
void addSeatEventsCommand(CLI::App* seat, CommandResult& result);
// `shoal seat forget` (seat_forget_command.cc).
void addSeatForgetCommand(CLI::App* seat, CommandResult& result);

// The channel registry: channels list|set|default (channels_command.cc).
void registerChannelsCommands(CLI::App& app, CommandResult& result);

// The daemon's seats as processes, with their wake results: ps (ps_command.cc).
void registerPsCommand(CLI::App& app, CommandResult& result);

// The stdio bridge to a seat's MCP endpoint: mcp (mcp_command.cc).
void registerMcpCommands(CLI::App& app, CommandResult& result);

// Space planes: serve, probe (plane_commands.cc).
void registerPlaneCommands(CLI::App& app, CommandResult& result);

// The operator's own mail: inbox, read, reply (inbox_commands.cc).
void registerInboxCommands(CLI::App& app, CommandResult& result);

// help [command…|topic] (help_command.cc), completion bash|zsh|fish and the hidden
// `__complete` the scripts call (completion.cc).
void registerHelpCommands(CLI::App& app, CommandResult& result);
void addCompletionCommands(CLI::App& app, CommandResult& result);
// `shoal __complete WORD…` (answered before parsing: its words are partial).
int runCompletionQuery(const CLI::App& root, std::vector<std::string> words);

// `shoal --version [--json]`: version, commit, protocol, and the broker it finds.
int runVersion();

}  // namespace shoal::cli
