// ToolSpec / ToolResult: one tool an MCP server offers, and what a call of it returns.
//
// A ToolSpec is data plus one function. The server lists it on `tools/list` (name, title,
// description, inputSchema) and, on `tools/call`, checks the arguments against inputSchema
// (mcp/schema_check.h) BEFORE calling `call`: a tool only ever sees arguments that name
// declared properties, carry every required one and have the declared basic types. Integral
// numbers for `integer` properties arrive as int64/uint64, never as double.
//
// inputSchema is the restricted JSON Schema that schema_check.h accepts:
//   {"type":"object","properties":{NAME:{"type":T,...},...},"required":[NAME,...],
//    "additionalProperties":false}
// with T one of string, integer, number, boolean, object, or array with
// "items":{"type":"string"}. Extra keywords (description, enum on strings, ...) are kept and
// listed. Server::start refuses a schema outside this subset.
//
// ToolResult is a tool's answer as the model sees it: `text` becomes the single text content
// item; `isError` marks a tool failure the model should read and act on (bad input, a refusal,
// a failed send), never a protocol error. `meta`, when not empty, is emitted as the result's
// `_meta` (keys should be prefixed, e.g. "shoal/receipt"; MCP reserves the
// `io.modelcontextprotocol/` and `mcp` prefixes).
//
// `onWritten`, when set, learns the fate of the HTTP response that carries this result: it is
// called exactly once, on the network thread, with `complete` = every byte of that response
// was written to the socket without error. It is called with false when the write failed or
// timed out, when the connection closed before the response could be written, and when the
// server stopped first. A complete write is not proof the client read it; a failed one is not
// proof it did not (seed 004 §2.1: the final-hop boundary of inbox receipts). It must not block.
//
// Thread safety: `call` runs on the server's tool worker thread, never on the network thread.
// With ServerOptions::toolThreads == 1 (the default) calls of all tools of one server run one
// at a time; with more threads they may run concurrently and `call` must be thread-safe.
// An exception thrown by `call` becomes an isError result carrying its what(); it never
// reaches the network thread.
// Lifetime: the server keeps its own copies of the specs; whatever a `call` captures must stay
// valid until Server::stop returns (no call starts after that).
#pragma once

#include <functional>
#include <string>
#include <utility>

#include <boost/json/object.hpp>

namespace shoal::mcp {

struct ToolResult {
  ToolResult() = default;
  ToolResult(std::string text_, bool isError_ = false, boost::json::object meta_ = {})
      : text(std::move(text_)), isError(isError_), meta(std::move(meta_)) {}

  std::string text;
  bool isError = false;
  boost::json::object meta;  // emitted as `_meta` when not empty
  std::function<void(bool complete)> onWritten;

  static ToolResult ok(std::string text) { return ToolResult(std::move(text)); }
  static ToolResult error(std::string text) { return ToolResult(std::move(text), true); }
};

struct ToolSpec {
  // [A-Za-z0-9_.-]{1,128}, unique within a server (MCP 2025-11-25 tool-name rules).
  std::string name;
  std::string title;  // optional display name; listed from protocol 2025-06-18 on
  std::string description;
  boost::json::object inputSchema;
  std::function<ToolResult(const boost::json::object& args)> call;
};

}  // namespace shoal::mcp
