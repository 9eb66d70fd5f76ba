// HttpHandler: the rules of one MCP Streamable HTTP endpoint, as a function from an HTTP
// request to its HTTP response. No sockets: mcp/server.cc carries the bytes (and enforces the
// body size limit, 413); tests drive the rules directly. Internal to mcp/.
//
// In order, for every request:
//   path        only `/mcp` (a query string is ignored), else 404
//   Host        must be 127.0.0.1:PORT, localhost:PORT or the bound HOST:PORT (DNS-rebinding
//               protection), else 403; missing, 400
//   Origin      when present, http://127.0.0.1 or http://localhost with any port, else 403
//   auth        `Authorization: Bearer <token>`, compared in constant time; else 401 with
//               `WWW-Authenticate: Bearer`
//   method      POST; DELETE ends the session (200; 404 unknown); GET and the rest 405
//   POST        Content-Type, when present, application/json (else 415); Accept must allow
//               application/json or text/event-stream (absent allows both; else 406)
//   body        JSON-RPC (mcp/json_rpc.h): not JSON → 400 with -32700; not a message → 400
//               with -32600
//   session     `initialize` mints a session: its id (32 hex characters from the OS CSPRNG) in
//               the `Mcp-Session-Id` response header. Everything else needs that header:
//               missing → 400 (but a request for a method this server lacks gets -32601 even
//               without a session: a client probing with `server/discover` falls back to
//               `initialize` on it), unknown or ended → 404. At most kMaxSessions live; the
//               least recently used is ended to make room.
//   version     with a session, `MCP-Protocol-Version` when present must equal the negotiated
//               revision (400 otherwise); absent is taken as the negotiated one
//   batch       a JSON array body only in a session negotiated at 2025-03-26 (without
//               `initialize` in it); otherwise 400 with -32600
//   answer      notifications and client responses → 202, no body. Requests → 200 with
//               application/json, or with text/event-stream (one `event: message` per
//               response, then the end of the body) when ServerOptions::preferSse is set and
//               the client accepts it, or when it accepts only that.
// Refusals carry a JSON-RPC error body with a null id.
//
// MCP methods: initialize (version negotiated: the client's if supported, else the latest),
// ping, tools/list, tools/call; others -32601. Notifications (notifications/initialized,
// notifications/cancelled, …) are accepted and need no action: requests are answered whether
// or not `initialized` has arrived, and a cancelled tool call still runs to its end. tools/call:
// unknown tool → -32602; arguments not an object → -32602; arguments failing the schema → an
// isError result (no call); a call that throws → an isError result with the exception's text.
//
// Thread safety: handle() and the Reply::work it returns may run on any threads concurrently;
// the session table is guarded by a mutex that is never held while a tool runs.
// Lifetime: a Reply::work refers to this handler; run it (or drop it) before destroying it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/result.h"
#include "mcp/json_rpc.h"
#include "mcp/server.h"
#include "mcp/tool.h"

namespace shoal::mcp {

// Protocol revisions served, newest first.
inline constexpr std::string_view kLatestProtocolVersion = "2025-11-25";
bool isSupportedProtocolVersion(std::string_view version);

inline constexpr size_t kMaxSessions = 64;

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // "POST", "GET", …
  std::string target;  // "/mcp", "/mcp?x=1"
  HttpHeaders headers;
  std::string body;

  // The first header named `name` (case-insensitive), or "" when absent.
  std::string_view header(std::string_view name) const;
  bool hasHeader(std::string_view name) const;
};

// The ToolResult::onWritten callbacks of one response: fire(complete) calls each once; a
// notice dropped without firing (the connection or the server went first) fires false.
class WriteNotice {
 public:
  explicit WriteNotice(std::vector<std::function<void(bool)>> callbacks)
      : callbacks_(std::move(callbacks)) {}
  ~WriteNotice() { fire(false); }
  WriteNotice(const WriteNotice&) = delete;
  WriteNotice& operator=(const WriteNotice&) = delete;
  void fire(bool complete);

 private:
  std::vector<std::function<void(bool)>> callbacks_;
};

struct HttpResponse {
  int status = 200;
  HttpHeaders headers;  // Content-Type included when there is a body
  std::string body;
  bool close = false;                    // close the connection after writing
  std::shared_ptr<WriteNotice> written;  // set when a tool result asked to hear of the write

  std::string_view header(std::string_view name) const;
};

// A refusal: `status` with a JSON-RPC error body (null id).
HttpResponse refusal(int status, int code, std::string message);

class HttpHandler {
 public:
  struct Reply {
    HttpResponse response;               // the answer, unless `work` is set
    std::function<HttpResponse()> work;  // a tool call: run it off the network thread
  };

  // Validates options and tools as Server::start documents. `port` is the bound port.
  static Result<std::unique_ptr<HttpHandler>> create(const ServerOptions& options, uint16_t port,
                                                     std::vector<ToolSpec> tools);

  Reply handle(const HttpRequest& request);

  size_t toolCount() const { return tools_.size(); }
  size_t sessionCountForTest() const;

  struct Tool {
    ToolSpec spec;  // spec.inputSchema normalized
  };
  struct Session {
    std::string version;  // negotiated
    uint64_t lastUse = 0;
  };

 private:
  HttpHandler(const ServerOptions& options, uint16_t port, std::vector<Tool> tools);

  enum class Mode { kJson, kSse };
  // A response to render, or a tool call to run first.
  struct Pending {
    boost::json::value id;
    const Tool* tool = nullptr;  // set: call it with `args`
    boost::json::object args;
    boost::json::object response;  // when tool is null
  };

  // How to answer requests (JSON or SSE), or nullopt when the client accepts neither.
  static std::optional<Mode> responseMode(const HttpRequest& request, bool preferSse);
  // The refusal of a batch, unless the session is at 2025-03-26 and it has no initialize.
  static std::optional<HttpResponse> refuseBatch(const std::vector<jsonrpc::Message>& messages,
                                                 const std::string& version);
  std::optional<HttpResponse> checkAccess(const HttpRequest& request) const;
  HttpResponse handleDelete(const HttpRequest& request);
  Reply handlePost(const HttpRequest& request);
  HttpResponse initialize(const jsonrpc::Message& m, Mode mode);
  // Resolves the request's session (id and negotiated version), or returns the refusal.
  std::optional<HttpResponse> useSession(const HttpRequest& request, std::string* sessionId,
                                         std::string* version);
  Pending answer(const jsonrpc::Message& m, const std::string& version);
  static boost::json::object runTool(const Tool& tool, const boost::json::value& id,
                                     const boost::json::object& args,
                                     std::vector<std::function<void(bool)>>& onWritten);
  static HttpResponse render(std::vector<boost::json::object> responses, bool batch, Mode mode);

  // Constant after construction.
  const ServerOptions options_;
  const std::vector<std::string> allowedHosts_;  // lower-case "host:port"
  const std::vector<Tool> tools_;

  mutable Mutex mu_;
  std::map<std::string, Session> sessions_ SHOAL_GUARDED_BY(mu_);
  uint64_t useCounter_ SHOAL_GUARDED_BY(mu_) = 0;
};

}  // namespace shoal::mcp
