// Server: an MCP server over the Streamable HTTP transport, on one loopback port, offering a
// fixed list of tools (mcp/tool.h). Each Shoal seat gets one, with its own bearer token; the
// seat's runtime (Claude Code, Codex, OpenCode) is its only client.
//
// The endpoint is `url()` = http://HOST:PORT/mcp. Protocol revisions 2025-03-26, 2025-06-18
// and 2025-11-25 are served; methods initialize, notifications/initialized, ping, tools/list
// and tools/call; everything else is -32601. Every rule (auth, Host/Origin, sessions,
// MCP-Protocol-Version, JSON vs SSE responses, batches, limits) is listed in
// mcp/http_handler.h and src/mcp/README.md. Not built: server-initiated messages (GET gets
// 405), resumable streams (Last-Event-ID), OAuth.
//
// Threads: one network thread (Boost.Asio) reads and writes every connection; tool calls run
// on `toolThreads` worker threads, so a slow tool never stalls other connections, pings or
// tools/list.
//
// Thread safety: port(), url() and stop() may be called from any thread, except stop() from
// inside a tool's `call` (it waits for the tool workers: a deadlock).
// Lifetime: stop() (also run by the destructor) closes the listener and every connection, lets
// a running tool call finish, drops queued ones (their clients see the connection close) and
// joins every thread; afterwards no ToolSpec::call runs again. Idempotent.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "mcp/tool.h"

namespace shoal::mcp {

struct ServerOptions {
  std::string host = "127.0.0.1";  // the address to bind; loopback unless you mean otherwise
  uint16_t port = 0;               // 0 = an ephemeral port; read it back with port()
  // Required, non-empty. Every request must carry `Authorization: Bearer <token>`, else 401.
  std::string bearerToken;
  std::string name = "shoal";  // serverInfo.name
  std::string version;         // serverInfo.version; required, non-empty
  std::string instructions;    // InitializeResult.instructions when not empty
  // Answer requests with an SSE stream (one `message` event, then the end of the response)
  // when the client accepts text/event-stream; otherwise with application/json.
  bool preferSse = false;
  size_t toolThreads = 1;  // worker threads for tool calls; >1 runs calls concurrently
  // SO_SNDBUF of accepted connections; 0 leaves it to the kernel's autotuning. A small buffer
  // bounds what a client that stops reading pins in the kernel.
  int sendBufferBytes = 0;
};

class Server {
 public:
  // Validates the options and tools (names, unique, inputSchema in the subset of
  // mcp/schema_check.h, a callable `call`), binds, and serves. kInvalidArgument for bad options
  // or tools (reason names the rule), kUnavailable when the address cannot be bound.
  static Result<std::unique_ptr<Server>> start(ServerOptions options, std::vector<ToolSpec> tools);

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server();

  uint16_t port() const;
  std::string url() const;  // http://HOST:PORT/mcp (an IPv6 host in brackets)
  void stop();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shoal::mcp
