// McpBridge (the stdio bridge): the MCP stdio transport on one side, a Streamable HTTP
// endpoint on the other —
// what `shoal mcp` runs, so that a runtime that launches only stdio MCP servers can use a
// seat's tools (docs/cli.md "shoal mcp", src/mcp/README.md for the server's rules).
//
// Stdio side (MCP basic/transports "stdio"): one JSON-RPC message (or a batch array) per line,
// no embedded newlines. relay() takes one line read from stdin and returns the lines to write
// to stdout, each a compact JSON text without its newline.
//
// HTTP side: each message is one POST to the endpoint's URL with the config's headers
// (`Authorization: Bearer …`), `Content-Type: application/json` and
// `Accept: application/json, text/event-stream`; after initialize also `Mcp-Session-Id` (from
// the initialize response) and `MCP-Protocol-Version` (the version its result negotiated).
// An application/json body becomes one line; a text/event-stream body one line per event's
// `data`; 202 (or any empty body) nothing. A batch is forwarded as is.
//
// The client never waits forever: every request (a message with `method` and `id`) gets an
// answer line. When the endpoint cannot be reached, refuses the request (4xx/5xx) or answers
// without a response to it, the bridge writes a JSON-RPC error for that id (code
// kBridgeErrorCode, message "shoal mcp: …" saying what happened, `data.httpStatus` when there
// was one). A refusal that carries a JSON-RPC error with a null id (src/mcp answers 4xx that
// way) is passed on with the request's id. A line that is not JSON gets a -32700 error with id
// null; neither ends the bridge. Failures are also logged (stderr), never written to stdout.
//
// Re-initialize: an `initialize` message ends the previous session first (DELETE) and starts a
// new one. finish() (at stdin EOF) ends the session with DELETE, ignoring failures.
//
// Thread safety: one thread at a time (the command's loop); messages are relayed in order, one
// HTTP exchange at a time.
// Lifetime: holds the send function; whatever it captures must outlive the bridge.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_system.h"
#include "base/result.h"
#include "http/client.h"
#include "mcp/client_config.h"

namespace shoal::mcp {

// JSON-RPC "server error" (the implementation-defined range): the endpoint was not reachable or
// did not answer the request.
inline constexpr int kBridgeErrorCode = -32000;

// One HTTP exchange with the endpoint (http::HttpClient::send in production, a fake in tests).
using HttpSend = std::function<Result<http::HttpReply>(const http::HttpCall&)>;

class McpBridge {
 public:
  McpBridge(McpEndpoint endpoint, HttpSend send);

  // One stdin line → the stdout lines it produces (see above). A blank line produces nothing.
  std::vector<std::string> relay(std::string_view line);

  // Ends the session, if any (DELETE with a 5 s timeout; failures ignored).
  void finish();

  const std::string& sessionId() const { return sessionId_; }
  const std::string& protocolVersion() const { return protocolVersion_; }

 private:
  std::vector<http::HttpHeader> requestHeaders(bool inSession) const;
  void endSession();

  const McpEndpoint endpoint_;
  const HttpSend send_;
  std::string sessionId_;        // from the last initialize response; empty before
  std::string protocolVersion_;  // what that initialize result negotiated
};

}  // namespace shoal::mcp
