// HttpClient: a small synchronous HTTP/1.1 client for one plain-http URL — what mcp::Client
// and `shoal mcp` (mcp/stdio_bridge.h) use to reach a seat's MCP endpoint on 127.0.0.1. Not a
// general client: no TLS, no redirects, no proxies, no connection reuse.
//
// Each send() opens a fresh TCP connection, writes one request (`Host` from the URL,
// `Connection: close`), reads the whole response and closes. A fresh connection per request
// means a request is never retried behind the caller's back: when an exchange fails, the
// caller knows it was sent at most once. Boost.Asio/Beast stay in http_client.cc.
//
// Timeouts: connecting (name lookup included) `connectTimeout`; from the first byte written to
// the last byte of the response `responseTimeout` (a tool call may take minutes), or the
// call's own `timeout` when set. `cancelled`, when set, is polled about every 100 ms while an
// exchange runs; true abandons it.
//
// Errors: kInvalidArgument `bad-url` (forUrl); kUnavailable `http-connect-failed` (nothing
// was sent: refused, unreachable, lookup failed), `http-exchange-failed` (the connection broke
// after the request was written: it may have been acted on); kDeadlineExceeded `http-timeout`;
// kResourceExhausted `http-response-too-large`; kCancelled `http-cancelled`.
//
// Thread safety: send() is const and keeps no state between calls; distinct calls may run on
// distinct threads. `cancelled` runs on the thread that called send().
// Lifetime: a value; holds no connection between calls.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace shoal::http {

struct HttpHeader {
  std::string name;
  std::string value;
};

struct HttpCall {
  std::string method = "POST";  // any HTTP method token
  std::vector<HttpHeader> headers;
  std::string body;
  std::chrono::milliseconds timeout{0};  // 0: the client's responseTimeout
};

struct HttpReply {
  int status = 0;
  std::vector<HttpHeader> headers;
  std::string body;

  // The value of the first header called `name` (case-insensitive); empty when absent.
  std::string header(std::string_view name) const;
};

// An http:// URL split for a request: host (without brackets for IPv6), port (default 80),
// the request target (path and query, default "/") and the `Host` header value.
struct HttpUrl {
  std::string host;
  std::string port;
  std::string target;
  std::string hostHeader;
};

// The `data` of each event in a text/event-stream body, in order (multi-line data joined with
// "\n"; events with no or empty data — comments, priming events — skipped).
std::vector<std::string> sseEventData(std::string_view body);

// kInvalidArgument `bad-url` naming what is wrong (https is refused: seats serve plain http on
// loopback).
Result<HttpUrl> parseHttpUrl(std::string_view url);

struct HttpClientOptions {
  std::chrono::milliseconds connectTimeout{5000};
  std::chrono::milliseconds responseTimeout{std::chrono::minutes(10)};
  size_t maxResponseBytes = size_t{64} * 1024 * 1024;
  std::function<bool()> cancelled;  // optional; see above
};

class HttpClient {
 public:
  static Result<HttpClient> forUrl(std::string_view url, HttpClientOptions options = {});

  // One request to the URL's target; the reply whatever its status (4xx/5xx are replies).
  Result<HttpReply> send(const HttpCall& call) const;

  const HttpUrl& url() const { return url_; }

 private:
  HttpClient(HttpUrl url, HttpClientOptions options)
      : url_(std::move(url)), options_(std::move(options)) {}

  HttpUrl url_;
  HttpClientOptions options_;
};

}  // namespace shoal::http
