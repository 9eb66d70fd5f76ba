#include "mcp/http_handler.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <exception>
#include <set>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/ids.h"
#include "base/log.h"
#include "mcp/schema_check.h"

namespace shoal::mcp {
namespace json = boost::json;
namespace {

constexpr std::array<std::string_view, 3> kSupportedVersions = {"2025-11-25", "2025-06-18",
                                                                "2025-03-26"};
// The only revision whose Streamable HTTP transport carries JSON-RPC batches.
constexpr std::string_view kBatchVersion = "2025-03-26";
constexpr size_t kSessionIdBytes = 16;  // 32 hex characters

// Request methods this server implements (others get -32601, with or without a session).
bool isKnownRequestMethod(std::string_view method) {
  return method == "initialize" || method == "ping" || method == "tools/list" ||
         method == "tools/call";
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && lower(a) == lower(b);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

// The media type of a Content-Type / Accept element, lower-case, without parameters.
std::string mediaType(std::string_view element) {
  return lower(trim(element.substr(0, element.find(';'))));
}

// A request header's value as refusal text: printable ASCII as it is, any other byte as \xNN.
// HTTP allows any byte above 0x7f in a field value (obs-text), and a refusal that quoted one
// verbatim would not be valid UTF-8, so not JSON.
std::string printable(std::string_view value) {
  std::string out;
  for (char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      out += fmt::format("\\x{:02x}", byte);
    }
  }
  return out;
}

// Compares in time that depends only on the lengths, never on where the bytes differ.
bool constantTimeEquals(std::string_view a, std::string_view b) {
  size_t n = std::max(a.size(), b.size());
  unsigned diff = a.size() == b.size() ? 0U : 1U;
  for (size_t i = 0; i < n; ++i) {
    auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff |= static_cast<unsigned>(x ^ y);
  }
  return diff == 0;
}

bool isAllowedOrigin(std::string_view origin) {
  std::string o = lower(origin);
  for (std::string_view base :
       {std::string_view("http://127.0.0.1"), std::string_view("http://localhost")}) {
    if (o.compare(0, base.size(), base) != 0) continue;
    std::string_view rest = std::string_view(o).substr(base.size());
    if (rest.empty()) return true;
    if (rest.front() != ':' || rest.size() == 1 || rest.size() > 6) continue;
    rest.remove_prefix(1);
    if (std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return true;
    }
  }
  return false;
}

bool isValidToolName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
  });
}

std::string hostPort(std::string_view host, uint16_t port) {
  bool v6 = host.find(':') != std::string_view::npos;
  return v6 ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

std::vector<std::string> allowedHosts(const ServerOptions& options, uint16_t port) {
  std::vector<std::string> hosts = {hostPort("127.0.0.1", port), hostPort("localhost", port)};
  std::string own = lower(hostPort(options.host, port));
  if (std::find(hosts.begin(), hosts.end(), own) == hosts.end()) hosts.push_back(own);
  return hosts;
}

HttpResponse emptyResponse(int status) {
  HttpResponse r;
  r.status = status;
  return r;
}

json::object toolResultObject(const ToolResult& result) {
  json::object out{{"content", json::array{json::object{{"type", "text"}, {"text", result.text}}}},
                   {"isError", result.isError}};
  if (!result.meta.empty()) out["_meta"] = result.meta;
  return out;
}

}  // namespace

void WriteNotice::fire(bool complete) {
  std::vector<std::function<void(bool)>> callbacks;
  callbacks.swap(callbacks_);
  for (auto& callback : callbacks) {
    try {
      callback(complete);
    } catch (const std::exception& e) {
      log::warn("mcp: a write callback threw: {}", e.what());
    }
  }
}

bool isSupportedProtocolVersion(std::string_view version) {
  return std::find(kSupportedVersions.begin(), kSupportedVersions.end(), version) !=
         kSupportedVersions.end();
}

std::string_view HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (equalsIgnoreCase(k, name)) return v;
  }
  return {};
}

bool HttpRequest::hasHeader(std::string_view name) const {
  return std::any_of(headers.begin(), headers.end(),
                     [&](const auto& kv) { return equalsIgnoreCase(kv.first, name); });
}

std::string_view HttpResponse::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (equalsIgnoreCase(k, name)) return v;
  }
  return {};
}

HttpResponse refusal(int status, int code, std::string message) {
  HttpResponse r;
  r.status = status;
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = json::serialize(jsonrpc::errorResponse(nullptr, {code, std::move(message), nullptr}));
  return r;
}

Result<std::unique_ptr<HttpHandler>> HttpHandler::create(const ServerOptions& options,
                                                         uint16_t port,
                                                         std::vector<ToolSpec> specs) {
  if (options.bearerToken.empty()) {
    return invalidArgument("no-bearer-token",
                           "ServerOptions.bearerToken is empty: every MCP endpoint needs one "
                           "(mint it with newHexToken)");
  }
  if (options.name.empty() || options.version.empty()) {
    return invalidArgument("no-server-info",
                           "ServerOptions.name and .version must be set (they are serverInfo)");
  }
  if (options.toolThreads == 0) {
    return invalidArgument("no-tool-threads", "ServerOptions.toolThreads must be at least 1");
  }
  std::vector<Tool> tools;
  std::set<std::string> names;
  for (ToolSpec& spec : specs) {
    if (!isValidToolName(spec.name)) {
      return invalidArgument(
          "bad-tool-name",
          fmt::format("tool name `{}` must match [A-Za-z0-9_.-]{{1,128}}", spec.name));
    }
    if (!names.insert(spec.name).second) {
      return invalidArgument("duplicate-tool", fmt::format("tool `{}` is listed twice", spec.name));
    }
    if (!spec.call) {
      return invalidArgument("tool-without-call",
                             fmt::format("tool `{}` has no call function", spec.name));
    }
    auto schema = normalizeInputSchema(std::move(spec.inputSchema));
    if (!schema.isOk()) return schema.status().withContext(fmt::format("tool `{}`", spec.name));
    spec.inputSchema = std::move(schema).value();
    tools.push_back(Tool{std::move(spec)});
  }
  return std::unique_ptr<HttpHandler>(new HttpHandler(options, port, std::move(tools)));
}

HttpHandler::HttpHandler(const ServerOptions& options, uint16_t port, std::vector<Tool> tools)
    : options_(options), allowedHosts_(allowedHosts(options, port)), tools_(std::move(tools)) {}

size_t HttpHandler::sessionCountForTest() const {
  MutexLock lock(mu_);
  return sessions_.size();
}

std::optional<HttpResponse> HttpHandler::checkAccess(const HttpRequest& request) const {
  std::string_view target = request.target;
  if (target.substr(0, target.find('?')) != "/mcp") {
    return refusal(404, jsonrpc::kBadRequest, "Not Found: the MCP endpoint is /mcp");
  }
  if (!request.hasHeader("host")) {
    return refusal(400, jsonrpc::kBadRequest, "Bad Request: missing Host header");
  }
  std::string host = lower(trim(request.header("host")));
  if (std::find(allowedHosts_.begin(), allowedHosts_.end(), host) == allowedHosts_.end()) {
    return refusal(403, jsonrpc::kBadRequest,
                   fmt::format("Forbidden: Host `{}` is not this server (use {})", printable(host),
                               allowedHosts_.front()));
  }
  if (request.hasHeader("origin") && !isAllowedOrigin(trim(request.header("origin")))) {
    return refusal(403, jsonrpc::kBadRequest,
                   fmt::format("Forbidden: Origin `{}` is not allowed (only http://127.0.0.1 "
                               "and http://localhost)",
                               printable(request.header("origin"))));
  }
  std::string_view auth = trim(request.header("authorization"));
  bool authorized = false;
  if (auth.size() > 7 && equalsIgnoreCase(auth.substr(0, 7), "bearer ")) {
    authorized = constantTimeEquals(trim(auth.substr(7)), options_.bearerToken);
  }
  if (!authorized) {
    HttpResponse r = refusal(
        401, jsonrpc::kBadRequest,
        auth.empty() ? "Unauthorized: send `Authorization: Bearer <token>` (the seat's MCP token)"
                     : "Unauthorized: the bearer token is not this endpoint's");
    r.headers.emplace_back("WWW-Authenticate", auth.empty() ? "Bearer realm=\"shoal\""
                                                            : "Bearer realm=\"shoal\", "
                                                              "error=\"invalid_token\"");
    return r;
  }
  return std::nullopt;
}

HttpHandler::Reply HttpHandler::handle(const HttpRequest& request) {
  if (auto refused = checkAccess(request)) return Reply{std::move(*refused), {}};
  if (request.method == "POST") return handlePost(request);
  if (request.method == "DELETE") return Reply{handleDelete(request), {}};
  HttpResponse r = refusal(405, jsonrpc::kBadRequest,
                           request.method == "GET"
                               ? "Method Not Allowed: this server sends no server-initiated "
                                 "messages (no GET stream)"
                               : "Method Not Allowed: use POST (or DELETE to end a session)");
  r.headers.emplace_back("Allow", "POST, DELETE");
  return Reply{std::move(r), {}};
}

std::optional<HttpResponse> HttpHandler::useSession(const HttpRequest& request,
                                                    std::string* sessionId, std::string* version) {
  if (!request.hasHeader("mcp-session-id")) {
    return refusal(400, jsonrpc::kBadRequest,
                   "Bad Request: Mcp-Session-Id header is required (send initialize first)");
  }
  *sessionId = std::string(trim(request.header("mcp-session-id")));
  {
    MutexLock lock(mu_);
    auto it = sessions_.find(*sessionId);
    if (it == sessions_.end()) {
      return refusal(404, jsonrpc::kSessionNotFound,
                     "Session not found: it ended or never existed; send initialize again");
    }
    it->second.lastUse = ++useCounter_;
    *version = it->second.version;
  }
  if (request.hasHeader("mcp-protocol-version")) {
    std::string_view asked = trim(request.header("mcp-protocol-version"));
    if (!isSupportedProtocolVersion(asked)) {
      return refusal(400, jsonrpc::kBadRequest,
                     fmt::format("Bad Request: unsupported MCP-Protocol-Version `{}` (supported: "
                                 "2025-11-25, 2025-06-18, 2025-03-26)",
                                 printable(asked)));
    }
    if (asked != *version) {
      return refusal(400, jsonrpc::kBadRequest,
                     fmt::format("Bad Request: MCP-Protocol-Version `{}` differs from the "
                                 "version negotiated for this session, `{}`",
                                 asked, *version));
    }
  }
  return std::nullopt;
}

HttpResponse HttpHandler::handleDelete(const HttpRequest& request) {
  std::string sessionId, version;
  if (auto refused = useSession(request, &sessionId, &version)) return std::move(*refused);
  MutexLock lock(mu_);
  sessions_.erase(sessionId);
  log::debug("mcp: session {}… ended by the client", sessionId.substr(0, 8));
  return emptyResponse(200);
}

std::optional<HttpHandler::Mode> HttpHandler::responseMode(const HttpRequest& request,
                                                           bool preferSse) {
  bool acceptsJson = true, acceptsSse = true;
  if (request.hasHeader("accept")) {
    acceptsJson = acceptsSse = false;
    std::string_view accept = request.header("accept");
    while (!accept.empty()) {
      size_t comma = accept.find(',');
      std::string type = mediaType(accept.substr(0, comma));
      accept = comma == std::string_view::npos ? std::string_view() : accept.substr(comma + 1);
      acceptsJson =
          acceptsJson || type == "application/json" || type == "application/*" || type == "*/*";
      acceptsSse = acceptsSse || type == "text/event-stream" || type == "text/*" || type == "*/*";
    }
  }
  if (!acceptsJson && !acceptsSse) return std::nullopt;
  return (acceptsSse && (preferSse || !acceptsJson)) ? Mode::kSse : Mode::kJson;
}

std::optional<HttpResponse> HttpHandler::refuseBatch(const std::vector<jsonrpc::Message>& messages,
                                                     const std::string& version) {
  if (version != kBatchVersion) {
    return refusal(400, jsonrpc::kInvalidRequest,
                   fmt::format("Invalid Request: JSON-RPC batches are not supported in protocol "
                               "version {} (only {}); send one message per POST",
                               version, kBatchVersion));
  }
  for (const jsonrpc::Message& m : messages) {
    if (m.method == "initialize") {
      return refusal(400, jsonrpc::kInvalidRequest,
                     "Invalid Request: initialize must not be part of a batch");
    }
  }
  return std::nullopt;
}

HttpHandler::Reply HttpHandler::handlePost(const HttpRequest& request) {
  if (request.hasHeader("content-type") &&
      mediaType(request.header("content-type")) != "application/json") {
    return Reply{refusal(415, jsonrpc::kBadRequest,
                         "Unsupported Media Type: POST a JSON-RPC message as application/json"),
                 {}};
  }
  std::optional<Mode> chosen = responseMode(request, options_.preferSse);
  if (!chosen) {
    return Reply{refusal(406, jsonrpc::kBadRequest,
                         "Not Acceptable: accept application/json and text/event-stream"),
                 {}};
  }
  Mode mode = *chosen;

  jsonrpc::ParsedBody parsed = jsonrpc::parseBody(request.body);
  if (parsed.error) {
    HttpResponse r;
    r.status = 400;
    r.headers.emplace_back("Content-Type", "application/json");
    r.body = json::serialize(jsonrpc::errorResponse(parsed.errorId, *parsed.error));
    return Reply{std::move(r), {}};
  }
  const std::vector<jsonrpc::Message>& messages = parsed.messages;
  const jsonrpc::Message& first = messages.front();
  bool isRequest = first.kind == jsonrpc::Message::Kind::kRequest;
  if (!parsed.isBatch && isRequest && first.method == "initialize") {
    return Reply{initialize(first, mode), {}};
  }
  if (!parsed.isBatch && isRequest && !isKnownRequestMethod(first.method) &&
      !request.hasHeader("mcp-session-id")) {
    // No session yet, and none needed to learn that the method does not exist here.
    return Reply{
        render({jsonrpc::errorResponse(
                   first.id, {jsonrpc::kMethodNotFound,
                              fmt::format("Method not found: {}", first.method), nullptr})},
               false, mode),
        {}};
  }

  std::string sessionId, version;
  if (auto refused = useSession(request, &sessionId, &version)) {
    return Reply{std::move(*refused), {}};
  }
  if (parsed.isBatch) {
    if (auto refused = refuseBatch(messages, version)) return Reply{std::move(*refused), {}};
  }

  std::vector<Pending> pending;
  bool callsTool = false;
  for (const jsonrpc::Message& m : messages) {
    // Notifications (initialized, cancelled, …) and client responses need nothing from us.
    if (m.kind != jsonrpc::Message::Kind::kRequest) continue;
    pending.push_back(answer(m, version));
    callsTool = callsTool || pending.back().tool != nullptr;
  }
  if (pending.empty()) return Reply{emptyResponse(202), {}};

  auto finish = [pending = std::move(pending), batch = parsed.isBatch, mode]() mutable {
    std::vector<json::object> responses;
    std::vector<std::function<void(bool)>> onWritten;
    for (Pending& p : pending) {
      responses.push_back(p.tool != nullptr ? runTool(*p.tool, p.id, p.args, onWritten)
                                            : std::move(p.response));
    }
    HttpResponse r = render(std::move(responses), batch, mode);
    if (!onWritten.empty()) r.written = std::make_shared<WriteNotice>(std::move(onWritten));
    return r;
  };
  if (!callsTool) return Reply{finish(), {}};
  return Reply{{}, std::move(finish)};
}

HttpResponse HttpHandler::initialize(const jsonrpc::Message& m, Mode mode) {
  const json::value* asked = m.params.if_contains("protocolVersion");
  if (asked == nullptr || !asked->is_string()) {
    return render(
        {jsonrpc::errorResponse(
            m.id, {jsonrpc::kInvalidParams,
                   "Invalid params: initialize needs params.protocolVersion (a string)", nullptr})},
        false, mode);
  }
  std::string version = isSupportedProtocolVersion(asked->as_string())
                            ? std::string(asked->as_string())
                            : std::string(kLatestProtocolVersion);
  auto id = newHexToken(kSessionIdBytes);
  if (!id.isOk()) {
    log::error("mcp: cannot mint a session id: {}", id.status().toString());
    return render({jsonrpc::errorResponse(
                      m.id, {jsonrpc::kInternalError,
                             "Internal error: no session id (the OS has no randomness)", nullptr})},
                  false, mode);
  }
  {
    MutexLock lock(mu_);
    if (sessions_.size() >= kMaxSessions) {
      auto oldest = std::min_element(sessions_.begin(), sessions_.end(), [](auto& a, auto& b) {
        return a.second.lastUse < b.second.lastUse;
      });
      log::warn("mcp: {} sessions live; ending the least recently used, {}…", sessions_.size(),
                oldest->first.substr(0, 8));
      sessions_.erase(oldest);
    }
    sessions_[*id] = Session{version, ++useCounter_};
  }
  log::debug("mcp: session {}… initialized at protocol {} (client asked {})", id->substr(0, 8),
             version, std::string_view(asked->as_string()));

  json::object result{
      {"protocolVersion", version},
      {"capabilities", json::object{{"tools", json::object{{"listChanged", false}}}}},
      {"serverInfo", json::object{{"name", options_.name}, {"version", options_.version}}}};
  if (!options_.instructions.empty()) result["instructions"] = options_.instructions;
  HttpResponse r = render({jsonrpc::resultResponse(m.id, std::move(result))}, false, mode);
  r.headers.emplace_back("Mcp-Session-Id", *id);
  return r;
}

HttpHandler::Pending HttpHandler::answer(const jsonrpc::Message& m, const std::string& version) {
  auto error = [&](int code, std::string message) {
    return Pending{
        m.id, nullptr, {}, jsonrpc::errorResponse(m.id, {code, std::move(message), nullptr})};
  };
  auto result = [&](json::object r) {
    return Pending{m.id, nullptr, {}, jsonrpc::resultResponse(m.id, std::move(r))};
  };
  if (m.method == "ping") return result({});
  if (m.method == "tools/list") {
    json::array list;
    for (const Tool& t : tools_) {
      json::object entry{{"name", t.spec.name}};
      if (!t.spec.title.empty() && version != "2025-03-26") entry["title"] = t.spec.title;
      entry["description"] = t.spec.description;
      entry["inputSchema"] = t.spec.inputSchema;
      list.push_back(std::move(entry));
    }
    return result({{"tools", std::move(list)}});
  }
  if (m.method == "initialize") {
    return error(jsonrpc::kInvalidRequest, "Invalid Request: initialize inside a session");
  }
  if (m.method != "tools/call") {
    return error(jsonrpc::kMethodNotFound, fmt::format("Method not found: {}", m.method));
  }
  const json::value* name = m.params.if_contains("name");
  if (name == nullptr || !name->is_string()) {
    return error(jsonrpc::kInvalidParams,
                 "Invalid params: tools/call needs params.name (a string)");
  }
  auto tool = std::find_if(tools_.begin(), tools_.end(),
                           [&](const Tool& t) { return t.spec.name == name->as_string(); });
  if (tool == tools_.end()) {
    return error(jsonrpc::kInvalidParams,
                 fmt::format("Unknown tool: {}", std::string_view(name->as_string())));
  }
  json::object args;
  if (const json::value* a = m.params.if_contains("arguments"); a != nullptr && !a->is_null()) {
    if (!a->is_object()) {
      return error(jsonrpc::kInvalidParams,
                   "Invalid params: tools/call arguments must be an object");
    }
    args = a->as_object();
  }
  auto checked = checkArguments(tool->spec.inputSchema, args);
  if (!checked.isOk()) {
    return result(toolResultObject(ToolResult::error(std::string(checked.status().message()))));
  }
  return Pending{m.id, &*tool, std::move(checked).value(), {}};
}

json::object HttpHandler::runTool(const Tool& tool, const json::value& id, const json::object& args,
                                  std::vector<std::function<void(bool)>>& onWritten) {
  ToolResult out;
  try {
    out = tool.spec.call(args);
  } catch (const std::exception& e) {
    log::warn("mcp: tool {} threw: {}", tool.spec.name, e.what());
    out = ToolResult::error(fmt::format("tool `{}` failed: {}", tool.spec.name, e.what()));
  } catch (...) {
    log::warn("mcp: tool {} threw a non-standard exception", tool.spec.name);
    out = ToolResult::error(fmt::format("tool `{}` failed with an unknown error", tool.spec.name));
  }
  if (out.onWritten) onWritten.push_back(std::move(out.onWritten));
  return jsonrpc::resultResponse(id, toolResultObject(out));
}

HttpResponse HttpHandler::render(std::vector<json::object> responses, bool batch, Mode mode) {
  HttpResponse r;
  if (mode == Mode::kSse) {
    r.headers.emplace_back("Content-Type", "text/event-stream");
    r.headers.emplace_back("Cache-Control", "no-cache");
    for (const json::object& response : responses) {
      // serialize() escapes control characters, so the data is one line.
      r.body += "event: message\ndata: " + json::serialize(response) + "\n\n";
    }
    return r;
  }
  r.headers.emplace_back("Content-Type", "application/json");
  if (batch) {
    json::array all;
    for (json::object& response : responses) {
      all.emplace_back(std::move(response));
    }
    r.body = json::serialize(all);
  } else {
    r.body = json::serialize(responses.front());
  }
  return r;
}

}  // namespace shoal::mcp
