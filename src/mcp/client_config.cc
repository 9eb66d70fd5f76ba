#include "mcp/client_config.h"

#include <boost/json.hpp>
#include <fmt/format.h>

namespace shoal::mcp {
namespace {

namespace json = boost::json;

Status badConfig(std::string_view why) {
  return invalidArgument("bad-mcp-config", fmt::format("not a usable MCP client config: {}", why));
}

}  // namespace

Result<McpEndpoint> parseMcpClientConfig(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) return badConfig("it is not JSON (" + ec.message() + ")");
  const json::value* servers = v.is_object() ? v.as_object().if_contains("mcpServers") : nullptr;
  if (servers == nullptr || !servers->is_object()) return badConfig("no `mcpServers` object");
  const json::object& all = servers->as_object();
  const json::value* server = all.if_contains("shoal");
  if (server == nullptr && all.size() == 1) server = &all.begin()->value();
  if (server == nullptr) {
    return badConfig(all.empty() ? "`mcpServers` is empty"
                                 : "`mcpServers` has no `shoal` server and more than one other");
  }
  if (!server->is_object()) return badConfig("the server entry is not an object");
  const json::object& s = server->as_object();
  if (const json::value* type = s.if_contains("type"); type != nullptr) {
    std::string t = type->is_string() ? std::string(type->as_string()) : "";
    if (t != "http" && t != "streamable-http" && t != "streamableHttp") {
      return badConfig("the server's type is `" + t +
                       "`; shoal mcp bridges an http (Streamable HTTP) server");
    }
  }
  const json::value* url = s.if_contains("url");
  if (url == nullptr || !url->is_string()) {
    return badConfig(s.contains("command") ? "the server is a stdio server (a `command`), not http"
                                           : "the server has no `url`");
  }
  McpEndpoint out;
  out.url = std::string(url->as_string());
  if (auto parsed = http::parseHttpUrl(out.url); !parsed.isOk()) {
    return badConfig(parsed.status().message());
  }
  if (const json::value* headers = s.if_contains("headers"); headers != nullptr) {
    if (!headers->is_object()) return badConfig("`headers` is not an object");
    for (const auto& [name, value] : headers->as_object()) {
      if (!value.is_string()) {
        return badConfig("header `" + std::string(name) + "` is not a string");
      }
      out.headers.push_back(http::HttpHeader{std::string(name), std::string(value.as_string())});
    }
  }
  return out;
}

Result<McpEndpoint> readMcpClientConfig(FileSystem& fs, const std::string& path) {
  auto text = fs.readFile(path);
  if (!text.isOk()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return notFound("no-mcp-config", "no MCP client config at " + path);
    }
    return text.status().withContext("reading " + path);
  }
  auto endpoint = parseMcpClientConfig(*text);
  if (!endpoint.isOk()) return endpoint.status().withContext(path);
  return endpoint;
}

}  // namespace shoal::mcp
