// Client: a small synchronous MCP client over Streamable HTTP — one session against one
// endpoint, for Shoal's own callers (the tests that play a runtime against a seat, tools that
// talk to a seat's endpoint). Not a general SDK: no server-initiated messages, no resumption.
//
//   auto c = Client::fromConfigFile("<seat cwd>/.shoal/mcp.json");   // or Client(url, token)
//   c->initialize();                         // negotiates, keeps Mcp-Session-Id + the version
//   auto r = c->callTool("shoal_dm", {{"to","alice"},{"text","hi"}});  // the tools/call result
//
// Each request is one HTTP/1.1 POST on a fresh loopback connection, with the bearer token,
// `Accept: application/json, text/event-stream`, and after initialize the session id and
// `MCP-Protocol-Version`. A JSON or an SSE (`data:` lines) response body is accepted.
// Errors: kUnavailable `mcp-unreachable` (connect/IO), kFailedPrecondition `mcp-http-<status>`
// (a non-2xx answer, its body in the message), kInternal `mcp-bad-response` (not JSON-RPC),
// kAborted `mcp-rpc-error` (a JSON-RPC error response: its code and message).
//
// Thread safety: one thread at a time per Client.
#pragma once

#include <cstdint>
#include <string>

#include <boost/json/object.hpp>

#include "base/result.h"

namespace shoal::mcp {

class Client {
 public:
  Client(std::string url, std::string bearerToken);

  // The `shoal` server of an MCP client config file
  // ({"mcpServers":{"shoal":{"url":…,"headers":{"Authorization":"Bearer …"}}}}), as a seat
  // writes it. kNotFound / kInvalidArgument `bad-mcp-config` name what is missing.
  static Result<Client> fromConfigFile(const std::string& path);

  // initialize + notifications/initialized. Returns the InitializeResult.
  Result<boost::json::object> initialize(const std::string& protocolVersion = "2025-11-25");
  // tools/call → the CallToolResult object ({"content":[…],"isError":…,"_meta"?}).
  Result<boost::json::object> callTool(const std::string& name, boost::json::object arguments);
  // Any request → its result object.
  Result<boost::json::object> request(const std::string& method, boost::json::object params);

  // The text of a CallToolResult's text content items, joined by newlines.
  static std::string textOf(const boost::json::object& callResult);

  const std::string& url() const { return url_; }
  const std::string& bearerToken() const { return token_; }
  const std::string& sessionId() const { return sessionId_; }
  const std::string& protocolVersion() const { return version_; }

  struct HttpReply {
    int status = 0;
    std::string contentType;
    std::string sessionId;  // Mcp-Session-Id, when sent
    std::string body;
  };
  // One raw POST of `body` with the session's headers.
  Result<HttpReply> post(const std::string& body);

 private:
  std::string url_;
  std::string token_;
  std::string host_;
  std::string port_;
  std::string target_;
  std::string sessionId_;
  std::string version_;
  int64_t nextId_ = 1;
};

}  // namespace shoal::mcp
