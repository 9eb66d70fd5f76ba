// Client: a synchronous MCP client over Streamable HTTP — one session against one endpoint, for
// Shoal's own callers: the tests that play a runtime against a seat, and the demo agent, which
// answers on the mesh through its seat's tools. Not a general SDK: no server-initiated messages,
// no resumption. (`shoal mcp`, the stdio bridge, relays raw messages: mcp/stdio_bridge.h.)
//
//   auto c = Client::fromConfigFile(getenv("SHOAL_MCP_CONFIG"));  // <cwd>/.shoal/mcp.json
//   c->initialize();      // negotiates; keeps Mcp-Session-Id and the version for later requests
//   auto r = c->callTool("shoal_dm", {{"to", "alice"}, {"text", "hi"}});  // the CallToolResult
//
// Each request is one POST (http/client.h: a fresh connection, never retried) with the
// endpoint's headers (the bearer token), `Content-Type: application/json`,
// `Accept: application/json, text/event-stream`, and after initialize `Mcp-Session-Id` and
// `MCP-Protocol-Version`. A JSON or SSE response body is accepted.
// Errors: those of http::HttpClient (unreachable, timeout …); kFailedPrecondition
// `mcp-http-<status>` (a non-2xx answer, its body in the message); kInternal `mcp-bad-response`
// (not JSON-RPC); kAborted `mcp-rpc-error` (a JSON-RPC error: its code and message).
//
// Thread safety: one thread at a time per Client.
#pragma once

#include <cstdint>
#include <string>

#include <boost/json/object.hpp>

#include "base/result.h"
#include "http/client.h"
#include "mcp/client_config.h"

namespace shoal::mcp {

class Client {
 public:
  // kInvalidArgument `bad-url` for an endpoint URL http::HttpClient cannot reach.
  static Result<Client> connect(McpEndpoint endpoint);
  // The endpoint of an MCP client config file (mcp/client_config.h).
  static Result<Client> fromConfigFile(const std::string& path);

  // initialize + notifications/initialized. Returns the InitializeResult.
  Result<boost::json::object> initialize(const std::string& protocolVersion = "2025-11-25");
  // tools/call → the CallToolResult object ({"content":[…],"isError":…,"_meta"?}).
  Result<boost::json::object> callTool(const std::string& name, boost::json::object arguments);
  // Any request → its result object.
  Result<boost::json::object> request(const std::string& method, boost::json::object params);

  // The text of a CallToolResult's text content items, joined by newlines.
  static std::string textOf(const boost::json::object& callResult);

  const McpEndpoint& endpoint() const { return endpoint_; }
  const std::string& sessionId() const { return sessionId_; }
  const std::string& protocolVersion() const { return version_; }

 private:
  Client(McpEndpoint endpoint, http::HttpClient http)
      : endpoint_(std::move(endpoint)), http_(std::move(http)) {}
  Result<http::HttpReply> post(const std::string& body);

  McpEndpoint endpoint_;
  http::HttpClient http_;
  std::string sessionId_;
  std::string version_;
  int64_t nextId_ = 1;
};

}  // namespace shoal::mcp
