#include "mcp/client.h"

#include <boost/json.hpp>
#include <fmt/format.h>

namespace shoal::mcp {
namespace {

namespace json = boost::json;

// The JSON-RPC message of a response body: the body itself, or its first SSE event's data.
Result<json::object> messageOf(const http::HttpReply& reply) {
  std::string payload = reply.body;
  if (reply.header("Content-Type").rfind("text/event-stream", 0) == 0) {
    auto events = http::sseEventData(reply.body);
    payload = events.empty() ? std::string() : events.front();
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

Result<Client> Client::connect(McpEndpoint endpoint) {
  SHOAL_ASSIGN_OR_RETURN(http::HttpClient http, http::HttpClient::forUrl(endpoint.url));
  return Client(std::move(endpoint), std::move(http));
}

Result<Client> Client::fromConfigFile(const std::string& path) {
  SHOAL_ASSIGN_OR_RETURN(McpEndpoint endpoint, readMcpClientConfig(FileSystem::posix(), path));
  return connect(std::move(endpoint));
}

Result<http::HttpReply> Client::post(const std::string& body) {
  http::HttpCall call;
  call.headers = endpoint_.headers;
  call.headers.push_back({"Content-Type", "application/json"});
  call.headers.push_back({"Accept", "application/json, text/event-stream"});
  if (!sessionId_.empty()) call.headers.push_back({"Mcp-Session-Id", sessionId_});
  if (!version_.empty()) call.headers.push_back({"MCP-Protocol-Version", version_});
  call.body = body;
  return http_.send(call);
}

Result<json::object> Client::request(const std::string& method, json::object params) {
  const int64_t id = nextId_++;
  json::object message{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  message["params"] = std::move(params);
  SHOAL_ASSIGN_OR_RETURN(http::HttpReply reply, post(json::serialize(message)));
  if (reply.status < 200 || reply.status > 299) {
    return failedPrecondition(fmt::format("mcp-http-{}", reply.status),
                              fmt::format("{} answered HTTP {}: {}", endpoint_.url, reply.status,
                                          reply.body.substr(0, 300)));
  }
  SHOAL_ASSIGN_OR_RETURN(json::object answer, messageOf(reply));
  if (const json::value* error = answer.if_contains("error"); error && error->is_object()) {
    return aborted("mcp-rpc-error", json::serialize(*error));
  }
  const json::value* result = answer.if_contains("result");
  if (result == nullptr || !result->is_object()) {
    return internalError("mcp-bad-response", "a JSON-RPC response without a result object");
  }
  if (method == "initialize") sessionId_ = reply.header("Mcp-Session-Id");
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
  SHOAL_ASSIGN_OR_RETURN(http::HttpReply ack, post(json::serialize(note)));
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
