#include "mcp/json_rpc.h"

#include <cmath>
#include <utility>

#include <boost/json.hpp>

namespace shoal::mcp::jsonrpc {
namespace json = boost::json;
namespace {

// A string or a number the response can carry back: Boost.JSON reads `1e999` as infinity and
// `0e400` as NaN, and would write them back as `Infinity` / `NaN`, which is not JSON.
bool isValidId(const json::value& id) {
  return id.is_string() || id.is_int64() || id.is_uint64() ||
         (id.is_double() && std::isfinite(id.as_double()));
}

// Reads one element; on failure sets `error` and, when readable, `errorId`.
std::optional<Message> readMessage(const json::value& v, ParsedBody& out) {
  auto refuse = [&](std::string message) -> std::optional<Message> {
    out.error = Error{kInvalidRequest, std::move(message), nullptr};
    return std::nullopt;
  };
  if (!v.is_object()) return refuse("Invalid Request: a JSON-RPC message must be an object");
  const json::object& o = v.as_object();
  const json::value* id = o.if_contains("id");
  if (id != nullptr && isValidId(*id)) out.errorId = *id;
  const json::value* version = o.if_contains("jsonrpc");
  if (version == nullptr || !version->is_string() || version->as_string() != "2.0") {
    return refuse("Invalid Request: \"jsonrpc\" must be \"2.0\"");
  }
  if (id != nullptr && !isValidId(*id)) {
    return refuse("Invalid Request: \"id\" must be a string or a number");
  }
  Message m;
  if (id != nullptr) m.id = *id;
  if (const json::value* method = o.if_contains("method")) {
    if (!method->is_string()) return refuse("Invalid Request: \"method\" must be a string");
    m.method = std::string(method->as_string());
    m.kind = id != nullptr ? Message::Kind::kRequest : Message::Kind::kNotification;
    if (const json::value* params = o.if_contains("params")) {
      if (!params->is_object()) return refuse("Invalid Request: \"params\" must be an object");
      m.params = params->as_object();
    }
    return m;
  }
  bool hasResult = o.contains("result");
  bool hasError = o.contains("error");
  if (id == nullptr || hasResult == hasError) {
    return refuse(
        "Invalid Request: a message needs \"method\" (request or notification) or \"id\" with "
        "exactly one of \"result\" / \"error\" (response)");
  }
  m.kind = Message::Kind::kResponse;
  return m;
}

}  // namespace

ParsedBody parseBody(std::string_view body) {
  ParsedBody out;
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec) {
    out.error = Error{kParseError, "Parse error: " + ec.message(), nullptr};
    return out;
  }
  if (!v.is_array()) {
    if (auto m = readMessage(v, out)) out.messages.push_back(std::move(*m));
    return out;
  }
  out.isBatch = true;
  const json::array& batch = v.as_array();
  if (batch.empty()) {
    out.error = Error{kInvalidRequest, "Invalid Request: empty batch", nullptr};
    return out;
  }
  for (const json::value& element : batch) {
    auto m = readMessage(element, out);
    if (!m) {
      out.messages.clear();
      out.errorId = nullptr;  // a batch is refused as a whole, not as one of its requests
      return out;
    }
    out.messages.push_back(std::move(*m));
  }
  out.errorId = nullptr;
  return out;
}

json::object resultResponse(const json::value& id, json::object result) {
  return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json::object errorResponse(const json::value& id, const Error& error) {
  json::object e{{"code", error.code}, {"message", error.message}};
  if (!error.data.is_null()) e["data"] = error.data;
  return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(e)}};
}

}  // namespace shoal::mcp::jsonrpc
