// `shoal mcp [--seat NAME|ID] [--config PATH]`: a stdio MCP server that relays every message to
// a seat's MCP endpoint (Streamable HTTP on 127.0.0.1), for runtimes that launch only stdio MCP
// servers. The relay rules are mcp/stdio_bridge.h; this file finds the endpoint and runs the
// stdin → HTTP → stdout loop.
//
// Which endpoint: --config PATH (an MCP client config), else --seat (the daemon's `seat.mcp`
// op says where that seat's config is), else $SHOAL_MCP_CONFIG (set for a seat's runtime).
// Nothing usable ⇒ exit 2 with the remedy on stderr. Stdout carries only protocol lines.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <poll.h>
#include <unistd.h>

#include "base/log.h"
#include "cli/command.h"
#include "cli/mesh_target.h"
#include "cli/output.h"
#include "cli/seat_id.h"
#include "cli/signal_wait.h"
#include "daemon/control_socket.h"
#include "http/client.h"
#include "mcp/client_config.h"
#include "mcp/stdio_bridge.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct McpArgs {
  MeshTargetArgs target;
  std::string seat;
  std::string config;
};

constexpr int kNoEndpointExit = 2;
constexpr std::chrono::milliseconds kInputPoll{200};

constexpr const char* kFooter =
    "A stdio MCP server for runtimes that launch only stdio servers: each JSON-RPC line read on\n"
    "stdin is POSTed to the seat's MCP endpoint (Streamable HTTP on 127.0.0.1, with its bearer\n"
    "token and session headers) and each answer is written to stdout as one line. Logs go to\n"
    "stderr. End of input ends the session and exits 0.\n"
    "\n"
    "The endpoint: --config PATH, else --seat (asks the running daemon for that seat's\n"
    "<cwd>/.shoal/mcp.json), else $SHOAL_MCP_CONFIG (which the daemon sets for a seat's\n"
    "runtime). Exit 2 when none is usable.\n"
    "\n"
    "A client entry: \"shoal\": {\"command\": \"shoal\", \"args\": [\"mcp\", \"--seat\",\n"
    "\"Reviewer\"]}. Started by a seat's runtime that passes its environment on, `shoal mcp`\n"
    "alone uses $SHOAL_MCP_CONFIG.\n";

// The config path of `seat`, from the daemon serving `target.space`.
Result<std::string> seatConfigPath(const McpArgs& args) {
  SHOAL_ASSIGN_OR_RETURN(std::string socket, daemon::controlSocketPath(args.target.space));
  daemon::ControlRequest request{
      "seat.mcp",
      json::serialize(json::object{{"id", seatId(args.seat, seatOwnerOf(args.target))}})};
  SHOAL_ASSIGN_OR_RETURN(std::string result,
                         daemon::controlRequest(socket, request, args.target.timeout()));
  boost::system::error_code ec;
  json::value v = json::parse(result, ec);
  const json::value* config = !ec && v.is_object() ? v.as_object().if_contains("config") : nullptr;
  if (config == nullptr || !config->is_string()) {
    return internalError("bad-control-reply", "the daemon's seat.mcp reply has no config path");
  }
  return std::string(config->as_string());
}

// Where the endpoint's config is, by the precedence above; the remedy when there is none.
Result<std::string> configPath(const McpArgs& args) {
  if (!args.config.empty()) return args.config;
  if (!args.seat.empty()) return seatConfigPath(args);
  if (const char* env = std::getenv("SHOAL_MCP_CONFIG"); env != nullptr && *env != '\0') {
    return std::string(env);
  }
  return invalidArgument("no-mcp-endpoint",
                         "no MCP endpoint to bridge: name a seat with --seat NAME, an MCP client "
                         "config with --config PATH, or set SHOAL_MCP_CONFIG");
}

// Writes one line and flushes; false when stdout is gone.
bool writeLine(const std::string& line) {
  if (std::fwrite(line.data(), 1, line.size(), stdout) != line.size()) return false;
  if (std::fputc('\n', stdout) == EOF) return false;
  return std::fflush(stdout) == 0;
}

int runMcp(const McpArgs& args) {
  const std::string what = "shoal mcp";
  auto path = configPath(args);
  if (!path.isOk()) {
    (void)printFailure(what, path.status());
    return kNoEndpointExit;
  }
  auto endpoint = mcp::readMcpClientConfig(FileSystem::posix(), *path);
  if (!endpoint.isOk()) {
    (void)printFailure(what, endpoint.status());
    return kNoEndpointExit;
  }

  // SIGINT / SIGTERM end the bridge like end of input (the session is ended), also during a
  // long tool call; a closed stdout is an error return, not SIGPIPE.
  blockStopSignals();
  std::signal(SIGPIPE, SIG_IGN);
  bool stopping = false;
  bool finishing = false;
  auto stopRequested = [&] {
    if (!stopping) stopping = waitForStopSignal(std::chrono::milliseconds(0)).has_value();
    return stopping;
  };
  http::HttpClientOptions options;
  options.cancelled = [&] { return !finishing && stopRequested(); };
  auto client = http::HttpClient::forUrl(endpoint->url, options);
  if (!client.isOk()) {
    (void)printFailure(what, client.status().withContext(*path));
    return kNoEndpointExit;
  }
  log::info("shoal mcp: relaying stdio to {} (config {})", endpoint->url, *path);
  mcp::McpBridge bridge(std::move(endpoint).value(),
                        [&client](const http::HttpCall& call) { return client->send(call); });

  int exitCode = 0;
  std::string buffer;
  bool inputOpen = true;
  auto relay = [&](std::string_view line) {
    for (const auto& out : bridge.relay(line)) {
      if (!writeLine(out)) {
        log::warn("shoal mcp: stdout is closed; ending");
        exitCode = 1;
        return false;
      }
    }
    return true;
  };
  while (inputOpen && exitCode == 0 && !stopRequested()) {
    pollfd fd{STDIN_FILENO, POLLIN, 0};
    int ready = ::poll(&fd, 1, static_cast<int>(kInputPoll.count()));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    char chunk[65536];
    ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      inputOpen = false;
      if (!buffer.empty()) (void)relay(buffer);  // a last line without its newline
      break;
    }
    buffer.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t newline; (newline = buffer.find('\n', start)) != std::string::npos;) {
      if (!relay(std::string_view(buffer).substr(start, newline - start))) break;
      start = newline + 1;
      if (stopRequested()) break;
    }
    buffer.erase(0, start);
  }
  finishing = true;
  bridge.finish();
  return exitCode;
}

}  // namespace

void registerMcpCommands(CLI::App& app, CommandResult& result) {
  auto args = std::make_shared<McpArgs>();
  CLI::App* cmd = app.add_subcommand(
      "mcp", "a stdio MCP server that relays to a seat's MCP endpoint (for stdio-only runtimes)");
  cmd->footer(kFooter);
  CLI::Option* seat =
      cmd->add_option("--seat", args->seat, "the seat whose endpoint to use (its id or name)");
  cmd->add_option("--config", args->config,
                  "an MCP client config naming the endpoint (a seat's <cwd>/.shoal/mcp.json)")
      ->excludes(seat);
  addMeshTargetOptions(cmd, args->target, "the daemon's reply (--seat)");
  cmd->callback([args, &result] { result.exitCode = runMcp(*args); });
}

}  // namespace shoal::cli
