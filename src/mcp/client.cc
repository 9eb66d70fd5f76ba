#include "mcp/client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/file_system.h"

namespace shoal::mcp {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;

constexpr std::chrono::seconds kConnectTimeout{5};
constexpr std::chrono::minutes kRequestTimeout{10};

// The JSON-RPC message of a response body: the body itself, or its first SSE `data:` event.
Result<json::object> messageOf(const Client::HttpReply& reply) {
  std::string payload = reply.body;
  if (reply.contentType.rfind("text/event-stream", 0) == 0) {
    payload.clear();
    size_t pos = 0;
    while (pos < reply.body.size()) {
      size_t end = reply.body.find('\n', pos);
      if (end == std::string::npos) end = reply.body.size();
      std::string_view line(reply.body.data() + pos, end - pos);
      if (line.rfind("data:", 0) == 0) {
        line.remove_prefix(5);
        if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
        payload += line;
      } else if (line.empty() && !payload.empty()) {
        break;  // the end of the first event
      }
      pos = end + 1;
    }
  }
  boost::system::error_code ec;
  json::value v = json::parse(payload, ec);
  if (ec || !v.is_object()) {
    return internalError("mcp-bad-response", "the MCP server's answer is not a JSON-RPC message: " +
                                                 payload.substr(0, 200));
  }
  return v.as_object();
}

}  // namespace

Client::Client(std::string url, std::string bearerToken)
    : url_(std::move(url)), token_(std::move(bearerToken)) {
  // http://HOST:PORT/PATH
  std::string rest = url_.rfind("http://", 0) == 0 ? url_.substr(7) : url_;
  size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  target_ = slash == std::string::npos ? "/" : rest.substr(slash);
  size_t colon = authority.rfind(':');
  host_ = authority.substr(0, colon);
  port_ = colon == std::string::npos ? "80" : authority.substr(colon + 1);
  if (host_.size() > 2 && host_.front() == '[') host_ = host_.substr(1, host_.size() - 2);
}

Result<Client> Client::fromConfigFile(const std::string& path) {
  SHOAL_ASSIGN_OR_RETURN(std::string text, FileSystem::posix().readFile(path));
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  auto bad = [&](const std::string& what) {
    return invalidArgument("bad-mcp-config", path + ": " + what);
  };
  if (ec || !v.is_object()) return bad("not a JSON object");
  const json::value* servers = v.as_object().if_contains("mcpServers");
  if (servers == nullptr || !servers->is_object()) return bad("no mcpServers");
  const json::value* shoal = servers->as_object().if_contains("shoal");
  if (shoal == nullptr || !shoal->is_object()) return bad("no mcpServers.shoal");
  const json::value* url = shoal->as_object().if_contains("url");
  if (url == nullptr || !url->is_string()) return bad("mcpServers.shoal has no url");
  std::string token;
  if (const json::value* h = shoal->as_object().if_contains("headers"); h && h->is_object()) {
    if (const json::value* a = h->as_object().if_contains("Authorization"); a && a->is_string()) {
      std::string auth(a->as_string());
      if (auth.rfind("Bearer ", 0) == 0) token = auth.substr(7);
    }
  }
  if (token.empty()) return bad("mcpServers.shoal has no `Authorization: Bearer` header");
  return Client(std::string(url->as_string()), token);
}

Result<Client::HttpReply> Client::post(const std::string& body) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  beast::error_code ec;
  tcp::resolver resolver(io);
  auto endpoints = resolver.resolve(host_, port_, ec);
  if (ec) return unavailable("mcp-unreachable", fmt::format("{}: {}", url_, ec.message()));
  stream.expires_after(kConnectTimeout);
  stream.connect(endpoints, ec);
  if (ec) return unavailable("mcp-unreachable", fmt::format("{}: {}", url_, ec.message()));
  http::request<http::string_body> req(http::verb::post, target_, 11);
  req.set(http::field::host, host_ + ":" + port_);
  req.set(http::field::authorization, "Bearer " + token_);
  req.set(http::field::content_type, "application/json");
  req.set(http::field::accept, "application/json, text/event-stream");
  if (!sessionId_.empty()) req.set("Mcp-Session-Id", sessionId_);
  if (!version_.empty()) req.set("MCP-Protocol-Version", version_);
  req.body() = body;
  req.prepare_payload();
  stream.expires_after(kRequestTimeout);
  http::write(stream, req, ec);
  if (ec) return unavailable("mcp-unreachable", fmt::format("{}: {}", url_, ec.message()));
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(std::uint64_t{64} * 1024 * 1024);
  http::read(stream, buffer, parser, ec);
  if (ec) return unavailable("mcp-unreachable", fmt::format("{}: {}", url_, ec.message()));
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  const auto& res = parser.get();
  HttpReply out;
  out.status = static_cast<int>(res.result_int());
  out.contentType = std::string(res[http::field::content_type]);
  out.sessionId = std::string(res["Mcp-Session-Id"]);
  out.body = res.body();
  return out;
}

Result<json::object> Client::request(const std::string& method, json::object params) {
  const int64_t id = nextId_++;
  json::object message{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  message["params"] = std::move(params);
  SHOAL_ASSIGN_OR_RETURN(HttpReply reply, post(json::serialize(message)));
  if (reply.status < 200 || reply.status > 299) {
    return failedPrecondition(
        fmt::format("mcp-http-{}", reply.status),
        fmt::format("{} answered HTTP {}: {}", url_, reply.status, reply.body.substr(0, 300)));
  }
  SHOAL_ASSIGN_OR_RETURN(json::object answer, messageOf(reply));
  if (const json::value* error = answer.if_contains("error"); error && error->is_object()) {
    return aborted("mcp-rpc-error", json::serialize(*error));
  }
  const json::value* result = answer.if_contains("result");
  if (result == nullptr || !result->is_object()) {
    return internalError("mcp-bad-response", "a JSON-RPC response without a result object");
  }
  if (method == "initialize" && !reply.sessionId.empty()) sessionId_ = reply.sessionId;
  return result->as_object();
}

Result<json::object> Client::initialize(const std::string& protocolVersion) {
  json::object params{{"protocolVersion", protocolVersion},
                      {"capabilities", json::object{}},
                      {"clientInfo", json::object{{"name", "shoal-mcp-client"}, {"version", "1"}}}};
  SHOAL_ASSIGN_OR_RETURN(json::object result, request("initialize", std::move(params)));
  if (const json::value* v = result.if_contains("protocolVersion"); v && v->is_string())
    version_ = std::string(v->as_string());
  json::object note{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}};
  SHOAL_ASSIGN_OR_RETURN(HttpReply ack, post(json::serialize(note)));
  if (ack.status != 202) {
    return failedPrecondition(fmt::format("mcp-http-{}", ack.status),
                              "notifications/initialized was not accepted: " + ack.body);
  }
  return result;
}

Result<json::object> Client::callTool(const std::string& name, json::object arguments) {
  return request("tools/call", json::object{{"name", name}, {"arguments", std::move(arguments)}});
}

std::string Client::textOf(const json::object& callResult) {
  std::string out;
  const json::value* content = callResult.if_contains("content");
  if (content == nullptr || !content->is_array()) return out;
  for (const auto& item : content->as_array()) {
    if (!item.is_object()) continue;
    const json::value* text = item.as_object().if_contains("text");
    if (text == nullptr || !text->is_string()) continue;
    if (!out.empty()) out += "\n";
    out += std::string(text->as_string());
  }
  return out;
}

}  // namespace shoal::mcp
