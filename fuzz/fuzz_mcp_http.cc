// fuzz_mcp_http: arbitrary bytes as one HTTP request to a seat's MCP endpoint, through every
// transport and lifecycle rule (mcp/http_handler.h, HttpHandler::handle) with the sample tools
// (echo, fail, boom). No sockets: the handler is request → response.
//
// Input: a request line `METHOD TARGET [SSE]` (SSE: the server prefers SSE answers), header
// lines `Name: value`, a blank line, the body (lines end with LF, an optional CR dropped).
// Before the request the harness opens two sessions on a fresh handler (bearer token
// `fuzz-token`, port 8080): `$SID2` in a header value becomes the id of one at 2025-11-25,
// `$SID` the id of one at 2025-03-26 (where batches are allowed).
//
// Properties (besides "no crash, no sanitizer report"):
// - the status is one the handler documents; 202 has no body; a body has a Content-Type, and
//   is JSON-RPC responses — one JSON object or a batch array, or SSE `message` events each
//   holding one; 401 carries WWW-Authenticate; a tool call is deferred to `work`;
// - nothing gets past the Host check without an allowed host, nor past auth without the
//   token: such requests are refused with 400, 401, 403 or 404;
// - a minted session id is 32 lowercase hex digits, and never more than kMaxSessions live.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "base/log.h"
#include "fuzz_check.h"
#include "http/sse_decoder.h"
#include "mcp/http_handler.h"
#include "mcp/sample_tools.h"

namespace shoal::mcp {
namespace {

namespace json = boost::json;

constexpr std::string_view kToken = "fuzz-token";
constexpr uint16_t kPort = 8080;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view takeLine(std::string_view& in) {
  const size_t nl = in.find('\n');
  std::string_view line = in.substr(0, nl);
  in = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

void replaceAll(std::string& s, std::string_view from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

std::unique_ptr<HttpHandler> newHandler(bool preferSse) {
  ServerOptions options;
  options.bearerToken = std::string(kToken);
  options.version = "0.0.0-fuzz";
  options.instructions = "fuzzing";
  options.preferSse = preferSse;
  auto handler = HttpHandler::create(options, kPort, sampleToolsForTest());
  FUZZ_REQUIRE(handler.isOk());
  return std::move(handler).value();
}

// A session at `version`, opened the way a client does; its id.
std::string openSession(HttpHandler& handler, std::string_view version) {
  HttpRequest r;
  r.method = "POST";
  r.target = "/mcp";
  r.headers = {{"Host", "127.0.0.1:8080"}, {"Authorization", "Bearer fuzz-token"}};
  r.body = json::serialize(json::object{{"jsonrpc", "2.0"},
                                        {"id", 0},
                                        {"method", "initialize"},
                                        {"params", json::object{{"protocolVersion", version}}}});
  const HttpHandler::Reply reply = handler.handle(r);
  FUZZ_REQUIRE(reply.response.status == 200);
  return std::string(reply.response.header("mcp-session-id"));
}

// One JSON-RPC response object as the handler writes them.
bool isResponse(const json::value& v) {
  if (!v.is_object()) return false;
  const json::object& o = v.as_object();
  const json::value* version = o.if_contains("jsonrpc");
  if (version == nullptr || !version->is_string() || version->as_string() != "2.0") return false;
  if (!o.contains("id") || o.contains("result") == o.contains("error")) return false;
  if (const json::value* e = o.if_contains("error")) {
    if (!e->is_object()) return false;
    const json::value* code = e->as_object().if_contains("code");
    const json::value* message = e->as_object().if_contains("message");
    return code != nullptr && code->is_int64() && message != nullptr && message->is_string();
  }
  return o.at("result").is_object();
}

json::value parsed(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  FUZZ_REQUIRE(!ec);
  return v;
}

void checkResponse(const HttpResponse& r) {
  static constexpr int kStatuses[] = {200, 202, 400, 401, 403, 404, 405, 406, 415};
  FUZZ_REQUIRE(std::find(std::begin(kStatuses), std::end(kStatuses), r.status) !=
               std::end(kStatuses));
  if (r.status == 202) FUZZ_REQUIRE(r.body.empty());
  if (r.status == 401) FUZZ_REQUIRE(!r.header("www-authenticate").empty());
  if (const std::string_view sid = r.header("mcp-session-id"); !sid.empty()) {
    FUZZ_REQUIRE(r.status == 200 && sid.size() == 32);
    for (char c : sid)
      FUZZ_REQUIRE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  }
  if (r.body.empty()) return;
  const std::string_view type = r.header("content-type");
  if (type == "application/json") {
    const json::value body = parsed(r.body);
    if (body.is_array()) {
      FUZZ_REQUIRE(!body.as_array().empty());
      for (const json::value& element : body.as_array())
        FUZZ_REQUIRE(isResponse(element));
    } else {
      FUZZ_REQUIRE(isResponse(body));
    }
    return;
  }
  FUZZ_REQUIRE(type == "text/event-stream");
  FUZZ_REQUIRE(r.status == 200);
  http::SseDecoder decoder;
  std::vector<std::string> events;
  decoder.feed(r.body, events);
  decoder.finish(events);
  FUZZ_REQUIRE(!events.empty());
  for (const std::string& e : events)
    FUZZ_REQUIRE(isResponse(parsed(e)));
}

void run(std::string_view in) {
  std::string_view requestLine = takeLine(in);
  HttpRequest request;
  request.method = std::string(requestLine.substr(0, requestLine.find(' ')));
  requestLine.remove_prefix(std::min(requestLine.size(), request.method.size() + 1));
  request.target = std::string(requestLine.substr(0, requestLine.find(' ')));
  const bool preferSse = requestLine.substr(request.target.size()) == " SSE";

  const std::unique_ptr<HttpHandler> handler = newHandler(preferSse);
  const std::string latest = openSession(*handler, "2025-11-25");
  const std::string batching = openSession(*handler, "2025-03-26");

  bool anyToken = false, anyHost = false;
  while (!in.empty()) {
    const std::string_view line = takeLine(in);
    if (line.empty()) break;
    const size_t colon = line.find(':');
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    std::string v(value);
    replaceAll(v, "$SID2", latest);
    replaceAll(v, "$SID", batching);
    anyToken = anyToken || v.find(kToken) != std::string::npos;
    const std::string l = lower(v);
    anyHost = anyHost || l.find("127.0.0.1:8080") != std::string::npos ||
              l.find("localhost:8080") != std::string::npos;
    request.headers.emplace_back(std::string(line.substr(0, colon)), std::move(v));
  }
  request.body = std::string(in);

  HttpHandler::Reply reply = handler->handle(request);
  if (reply.work) {
    FUZZ_REQUIRE(reply.response.body.empty() && reply.response.headers.empty());
    reply.response = reply.work();
    FUZZ_REQUIRE(reply.response.status == 200);
  }
  checkResponse(reply.response);
  if (!anyHost || !anyToken) {
    const int s = reply.response.status;
    FUZZ_REQUIRE(s == 400 || s == 401 || s == 403 || s == 404);
  }
  FUZZ_REQUIRE(handler->sessionCountForTest() <= kMaxSessions);
}

}  // namespace
}  // namespace shoal::mcp

extern "C" int LLVMFuzzerInitialize(int*, char***) {  // NOLINT(readability-identifier-naming)
  shoal::log::initLogging(shoal::log::Level::kOff);   // a tool that throws logs a warning
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data,  // NOLINT(readability-identifier-naming)
                                      size_t size) {
  shoal::mcp::run(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
