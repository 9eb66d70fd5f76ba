#include "http/client.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "http/sse_decoder.h"

namespace shoal::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kPollSlice{100};
constexpr std::uint32_t kMaxHeaderBytes = 64 * 1024;

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

Status badUrl(std::string_view url, std::string_view why) {
  return invalidArgument("bad-url", fmt::format("`{}` is not a usable URL: {}", url, why));
}

}  // namespace

std::string HttpReply::header(std::string_view name) const {
  for (const auto& h : headers) {
    if (equalsIgnoringCase(h.name, name)) return h.value;
  }
  return "";
}

Result<HttpUrl> parseHttpUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.size() >= 8 && equalsIgnoringCase(url.substr(0, 8), "https://")) {
    return badUrl(url, "https is not supported (a seat's endpoint is plain http on 127.0.0.1)");
  }
  if (url.size() < kScheme.size() || !equalsIgnoringCase(url.substr(0, kScheme.size()), kScheme)) {
    return badUrl(url, "it does not start with http://");
  }
  std::string_view rest = url.substr(kScheme.size());
  size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  std::string_view target = end == std::string_view::npos ? "" : rest.substr(end);
  if (size_t hash = target.find('#'); hash != std::string_view::npos) {
    target = target.substr(0, hash);
  }
  if (authority.empty()) return badUrl(url, "no host");
  if (authority.find('@') != std::string_view::npos) {
    return badUrl(url, "credentials in the URL are not supported (use a header)");
  }
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return badUrl(url, "it contains a space or a control character");
    }
  }
  HttpUrl out;
  std::string_view portText;
  if (authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return badUrl(url, "an IPv6 host without `]`");
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return badUrl(url, "junk after the IPv6 host");
      portText = after.substr(1);
    }
  } else {
    size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) portText = authority.substr(colon + 1);
  }
  if (out.host.empty()) return badUrl(url, "no host");
  if (portText.empty()) {
    out.port = "80";
  } else {
    if (portText.size() > 5 || !std::all_of(portText.begin(), portText.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c)) != 0;
        })) {
      return badUrl(url, "the port is not a number");
    }
    int port = std::stoi(std::string(portText));
    if (port < 1 || port > 65535) return badUrl(url, "the port is out of range");
    out.port = std::to_string(port);
  }
  out.target = target.empty() ? "/" : std::string(target);
  if (out.target.front() == '?') out.target.insert(0, "/");
  out.hostHeader = std::string(authority);
  return out;
}

Result<HttpClient> HttpClient::forUrl(std::string_view url, HttpClientOptions options) {
  SHOAL_ASSIGN_OR_RETURN(HttpUrl parsed, parseHttpUrl(url));
  return HttpClient(std::move(parsed), std::move(options));
}

Result<HttpReply> HttpClient::send(const HttpCall& call) const {
  http::request<http::string_body> req;
  if (http::verb verb = http::string_to_verb(call.method); verb != http::verb::unknown) {
    req.method(verb);
  } else {
    req.method_string(call.method);
  }
  req.target(url_.target);
  req.version(11);
  req.set(http::field::host, url_.hostHeader);
  req.set(http::field::user_agent, "shoal-mcp");
  for (const auto& h : call.headers)
    req.set(h.name, h.value);
  req.keep_alive(false);
  req.body() = call.body;
  if (!call.body.empty() || req.method() == http::verb::post) req.prepare_payload();

  asio::io_context io;
  tcp::resolver resolver(io);
  tcp::socket socket(io);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(options_.maxResponseBytes);
  parser.header_limit(kMaxHeaderBytes);

  enum class Stage { kConnect, kExchange };
  Stage stage = Stage::kConnect;
  bool done = false;
  beast::error_code failure;
  Clock::time_point deadline = Clock::now() + options_.connectTimeout;
  const auto exchangeTimeout = call.timeout.count() > 0 ? call.timeout : options_.responseTimeout;

  resolver.async_resolve(
      url_.host, url_.port, [&](beast::error_code ec, const tcp::resolver::results_type& results) {
        if (ec) {
          failure = ec;
          done = true;
          return;
        }
        asio::async_connect(
            socket, results, [&](beast::error_code connectEc, const tcp::endpoint&) {
              if (connectEc) {
                failure = connectEc;
                done = true;
                return;
              }
              stage = Stage::kExchange;
              deadline = Clock::now() + exchangeTimeout;
              http::async_write(socket, req, [&](beast::error_code writeEc, std::size_t) {
                if (writeEc) {
                  failure = writeEc;
                  done = true;
                  return;
                }
                http::async_read(socket, buffer, parser,
                                 [&](beast::error_code readEc, std::size_t) {
                                   failure = readEc;
                                   done = true;
                                 });
              });
            });
      });

  // Runs the exchange in slices, so that the deadline and `cancelled` are checked while it runs;
  // abandoning it closes the socket and lets the pending handlers finish (aborted).
  bool timedOut = false;
  bool wasCancelled = false;
  while (!done) {
    io.run_for(kPollSlice);
    if (done) break;
    if (io.stopped()) {
      return internalError("http-client-stalled", "the HTTP exchange ended without an outcome");
    }
    timedOut = Clock::now() >= deadline;
    wasCancelled = !timedOut && options_.cancelled && options_.cancelled();
    if (timedOut || wasCancelled) {
      resolver.cancel();
      beast::error_code ignored;
      socket.close(ignored);
      io.run();  // the handlers complete with operation_aborted
      break;
    }
  }
  beast::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);

  const std::string where = fmt::format("http://{}{}", url_.hostHeader, url_.target);
  if (wasCancelled)
    return cancelled("http-cancelled", "the request to " + where + " was abandoned");
  if (timedOut) {
    return deadlineExceeded(
        "http-timeout",
        stage == Stage::kConnect
            ? fmt::format("could not connect to {} within {} ms", where,
                          options_.connectTimeout.count())
            : fmt::format("{} did not answer within {} s", where, exchangeTimeout.count() / 1000));
  }
  if (failure) {
    if (failure == http::error::body_limit) {
      return resourceExhausted("http-response-too-large",
                               fmt::format("the response from {} is larger than {} bytes", where,
                                           options_.maxResponseBytes));
    }
    if (stage == Stage::kConnect) {
      return unavailable("http-connect-failed",
                         fmt::format("cannot connect to {}: {}", where, failure.message()));
    }
    if (failure == http::error::end_of_stream) {
      return unavailable("http-exchange-failed",
                         where + " closed the connection without answering");
    }
    return unavailable("http-exchange-failed",
                       fmt::format("the exchange with {} failed: {}", where, failure.message()));
  }

  http::response<http::string_body> res = parser.release();
  HttpReply reply;
  reply.status = static_cast<int>(res.result_int());
  for (const auto& field : res) {
    reply.headers.push_back(
        HttpHeader{std::string(field.name_string()), std::string(field.value())});
  }
  reply.body = std::move(res.body());
  return reply;
}

std::vector<std::string> sseEventData(std::string_view body) {
  std::vector<std::string> events;
  SseDecoder decoder;
  decoder.feed(body, events);
  decoder.finish(events);  // a last event without its blank line (a body that just ends)
  return events;
}

}  // namespace shoal::http
