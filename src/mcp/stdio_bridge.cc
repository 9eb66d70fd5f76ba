#include "mcp/stdio_bridge.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/log.h"

namespace shoal::mcp {
namespace {

namespace json = boost::json;

constexpr int kParseErrorCode = -32700;
constexpr std::chrono::milliseconds kDeleteTimeout{5000};

std::string_view trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && space(s.back()))
    s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

json::object errorResponse(const json::value& id, int code, std::string message,
                           int httpStatus = 0) {
  json::object error{{"code", code}, {"message", std::move(message)}};
  if (httpStatus != 0) error["data"] = json::object{{"httpStatus", httpStatus}};
  return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

// A request expects an answer: it has a method and an id.
bool isRequest(const json::value& v) {
  return v.is_object() && v.as_object().contains("method") && v.as_object().contains("id");
}

std::vector<json::value> requestIds(const json::value& message) {
  std::vector<json::value> ids;
  if (isRequest(message)) ids.push_back(message.at("id"));
  if (message.is_array()) {
    for (const auto& m : message.as_array()) {
      if (isRequest(m)) ids.push_back(m.at("id"));
    }
  }
  return ids;
}

bool isInitialize(const json::value& message) {
  if (!message.is_object()) return false;
  const json::value* method = message.as_object().if_contains("method");
  return method != nullptr && method->is_string() && method->as_string() == "initialize";
}

// The ids of the responses in `v` (an object with id and result or error, or an array of them).
void collectAnswered(const json::value& v, std::vector<json::value>& ids) {
  if (v.is_array()) {
    for (const auto& m : v.as_array())
      collectAnswered(m, ids);
    return;
  }
  if (!v.is_object()) return;
  const json::object& o = v.as_object();
  if (o.contains("id") && (o.contains("result") || o.contains("error"))) ids.push_back(o.at("id"));
}

// An error response whose id is null or missing (src/mcp answers its 4xx refusals so).
bool isAnonymousError(const json::value& v) {
  if (!v.is_object() || !v.as_object().contains("error")) return false;
  const json::value* id = v.as_object().if_contains("id");
  return id == nullptr || id->is_null();
}

std::string errorMessageOf(const json::value& v) {
  const json::value* error = v.as_object().if_contains("error");
  if (error == nullptr || !error->is_object()) return "";
  const json::value* message = error->as_object().if_contains("message");
  return message != nullptr && message->is_string() ? std::string(message->as_string()) : "";
}

// What an HTTP refusal most likely means for the person reading the client's log.
std::string refusalHint(int status) {
  switch (status) {
    case 401:
      return " (the bearer token was refused: a seat mints a new one each time it opens, so the "
             "config is stale; restart this bridge)";
    case 403:
      return " (the endpoint refused this client's Host or Origin)";
    case 404:
      return " (the endpoint does not know this session or path: the seat may have reopened; "
             "restart this bridge)";
    case 413:
      return " (the message is larger than the endpoint accepts)";
    default:
      return status >= 500 ? " (the endpoint failed)" : "";
  }
}

// What a failed exchange means for the request (whether it may have run).
std::string exchangeFailure(const Status& status) {
  const std::string message(status.message());
  if (status.reason() == "http-connect-failed")
    return "cannot reach the seat's endpoint: " + message;
  if (status.reason() == "http-exchange-failed") {
    return "the exchange with the seat's endpoint broke after the request was sent (it may have "
           "run): " +
           message;
  }
  if (status.reason() == "http-timeout") {
    return "the seat's endpoint did not answer in time (the request may still run): " + message;
  }
  if (status.reason() == "http-cancelled") {
    return "shoal mcp is stopping; the request was abandoned (it may still run)";
  }
  return "the seat's endpoint could not be used: " + message;
}

// The JSON messages in a response body: the body itself, or each SSE event's data. Pieces that
// are not JSON are logged and dropped.
std::vector<json::value> bodyMessages(const http::HttpReply& reply) {
  std::vector<std::string> pieces;
  if (lower(reply.header("Content-Type")).rfind("text/event-stream", 0) == 0) {
    pieces = http::sseEventData(reply.body);
  } else if (!trim(reply.body).empty()) {
    pieces.emplace_back(reply.body);
  }
  std::vector<json::value> out;
  for (const auto& piece : pieces) {
    boost::system::error_code ec;
    json::value v = json::parse(piece, ec);
    if (ec) {
      log::warn("shoal mcp: dropped a part of the endpoint's answer that is not JSON ({} bytes)",
                piece.size());
      continue;
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace

McpBridge::McpBridge(McpEndpoint endpoint, HttpSend send)
    : endpoint_(std::move(endpoint)), send_(std::move(send)) {}

std::vector<http::HttpHeader> McpBridge::requestHeaders(bool inSession) const {
  std::vector<http::HttpHeader> headers = endpoint_.headers;
  headers.push_back({"Content-Type", "application/json"});
  headers.push_back({"Accept", "application/json, text/event-stream"});
  if (inSession && !sessionId_.empty()) headers.push_back({"Mcp-Session-Id", sessionId_});
  if (inSession && !protocolVersion_.empty()) {
    headers.push_back({"MCP-Protocol-Version", protocolVersion_});
  }
  return headers;
}

std::vector<std::string> McpBridge::relay(std::string_view line) {
  const std::string_view text = trim(line);
  if (text.empty()) return {};
  boost::system::error_code ec;
  json::value message = json::parse(text, ec);
  if (ec) {
    log::warn("shoal mcp: a line on stdin is not JSON ({}); answered with a parse error",
              ec.message());
    return {json::serialize(errorResponse(
        nullptr, kParseErrorCode, "shoal mcp: the line is not JSON (" + ec.message() + ")"))};
  }
  const bool batch = message.is_array();
  const std::vector<json::value> ids = requestIds(message);
  const bool initialize = isInitialize(message);
  if (initialize) endSession();  // a client that initializes again starts over

  http::HttpCall call;
  call.method = "POST";
  call.headers = requestHeaders(/*inSession=*/!initialize);
  call.body = std::string(text);
  Result<http::HttpReply> reply = send_(call);

  std::vector<std::string> out;
  std::vector<json::value> answered;
  std::string failure;  // why a request left unanswered gets an error
  int httpStatus = 0;
  if (!reply.isOk()) {
    failure = exchangeFailure(reply.status());
  } else if (httpStatus = reply->status; httpStatus >= 200 && httpStatus < 300) {
    for (const auto& m : bodyMessages(*reply)) {
      collectAnswered(m, answered);
      out.push_back(json::serialize(m));
      if (initialize && m.is_object() && m.as_object().contains("result")) {
        const json::value* version = m.at("result").is_object()
                                         ? m.at("result").as_object().if_contains("protocolVersion")
                                         : nullptr;
        if (version != nullptr && version->is_string()) {
          protocolVersion_ = std::string(version->as_string());
        }
      }
    }
    if (initialize) sessionId_ = reply->header("Mcp-Session-Id");
    failure = fmt::format("the seat's endpoint answered HTTP {} without a response to the request",
                          httpStatus);
  } else {
    failure = fmt::format("the seat's endpoint refused the request: HTTP {}{}", httpStatus,
                          refusalHint(httpStatus));
    for (auto& m : bodyMessages(*reply)) {
      if (isAnonymousError(m)) {
        // The refusal of this very message: the request's id goes on it so the client can match
        // it; for a notification or a batch it feeds the errors written below.
        std::string why = errorMessageOf(m);
        if (!why.empty()) failure += ": " + why;
        if (batch || ids.size() != 1) continue;
        json::object& o = m.as_object();
        o["id"] = ids.front();
        if (o["error"].is_object()) {
          json::object& error = o["error"].as_object();
          error["message"] = "shoal mcp: " + failure;
          if (!error.contains("data")) error["data"] = json::object{{"httpStatus", httpStatus}};
        }
      }
      collectAnswered(m, answered);
      out.push_back(json::serialize(m));
    }
  }

  std::vector<json::value> missing;
  for (const auto& id : ids) {
    if (std::find(answered.begin(), answered.end(), id) == answered.end()) missing.push_back(id);
  }
  if (!missing.empty()) {
    log::warn("shoal mcp: {} (answered {} request(s) with an error)", failure, missing.size());
    if (batch) {
      json::array errors;
      for (const auto& id : missing)
        errors.push_back(errorResponse(id, kBridgeErrorCode, "shoal mcp: " + failure, httpStatus));
      out.push_back(json::serialize(errors));
    } else {
      out.push_back(json::serialize(
          errorResponse(missing.front(), kBridgeErrorCode, "shoal mcp: " + failure, httpStatus)));
    }
  } else if (ids.empty() && (httpStatus < 200 || httpStatus >= 300)) {
    log::warn("shoal mcp: a notification or response was not delivered: {}", failure);
  }
  return out;
}

void McpBridge::endSession() {
  if (sessionId_.empty()) return;
  http::HttpCall call;
  call.method = "DELETE";
  call.headers = endpoint_.headers;
  call.headers.push_back({"Mcp-Session-Id", sessionId_});
  if (!protocolVersion_.empty()) {
    call.headers.push_back({"MCP-Protocol-Version", protocolVersion_});
  }
  call.timeout = kDeleteTimeout;
  auto reply = send_(call);
  if (!reply.isOk()) {
    log::info("shoal mcp: ending session {}: {}", sessionId_, reply.status().toString());
  } else {
    log::info("shoal mcp: ended session {} (HTTP {})", sessionId_, reply->status);
  }
  sessionId_.clear();
  protocolVersion_.clear();
}

void McpBridge::finish() {
  endSession();
}

}  // namespace shoal::mcp
