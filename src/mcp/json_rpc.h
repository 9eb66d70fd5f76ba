// JSON-RPC 2.0 framing as MCP uses it: reading a POST body into messages, and building the
// response objects. Pure: no I/O, no MCP semantics (those live in mcp/http_handler.h).
//
// A message is one JSON object with "jsonrpc":"2.0" and
//   a request       "method" (string) and "id" (string or finite number, never null)
//   a notification  "method" and no "id"
//   a response      "id" and exactly one of "result" / "error", no "method"
// "params", when present, must be an object (MCP never uses positional params). Anything else
// is an Invalid Request (-32600); a body that is not JSON is a Parse error (-32700).
//
// A body may be a JSON array (a batch, MCP 2025-03-26 only; the caller decides whether to
// accept it). An empty batch, or a batch with any invalid element, is refused as a whole with
// -32600: this server never answers a batch partially.
//
// Thread safety: pure functions on values; call from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace shoal::mcp::jsonrpc {

// Standard JSON-RPC codes, and the server-defined range (-32000..-32099) this server uses for
// transport refusals that carry a JSON-RPC body (same codes as the MCP TypeScript SDK).
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kBadRequest = -32000;       // HTTP-level refusal (missing session, …)
inline constexpr int kSessionNotFound = -32001;  // unknown or ended Mcp-Session-Id

struct Error {
  int code = 0;
  std::string message;
  boost::json::value data;  // omitted when null
};

struct Message {
  enum class Kind { kRequest, kNotification, kResponse };
  Kind kind = Kind::kRequest;
  boost::json::value id;       // requests and responses; null for notifications
  std::string method;          // requests and notifications
  boost::json::object params;  // {} when absent
};

// A POST body read as JSON-RPC: one message (isBatch false) or a batch, or why not.
struct ParsedBody {
  std::vector<Message> messages;
  bool isBatch = false;
  std::optional<Error> error;  // set: refuse the body with errorResponse(errorId, *error)
  boost::json::value errorId;  // the offending request's id when it could be read, else null
};

ParsedBody parseBody(std::string_view body);

// {"jsonrpc":"2.0","id":id,"result":result}
boost::json::object resultResponse(const boost::json::value& id, boost::json::object result);
// {"jsonrpc":"2.0","id":id,"error":{"code","message","data"?}}; id may be null.
boost::json::object errorResponse(const boost::json::value& id, const Error& error);

}  // namespace shoal::mcp::jsonrpc
