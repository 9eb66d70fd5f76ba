#include "mcp/server.h"

#include <array>
#include <chrono>
#include <optional>
#include <thread>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "base/log.h"
#include "mcp/http_handler.h"

namespace shoal::mcp {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t kMaxBodyBytes = std::size_t{4} * 1024 * 1024;
constexpr std::uint32_t kMaxHeaderBytes = 16 * 1024;
// A request's header must arrive within kHeaderTimeout of the previous response (so an idle
// keep-alive connection is closed after it; clients reconnect), its body within kBodyTimeout.
constexpr std::chrono::seconds kHeaderTimeout{30};
constexpr std::chrono::seconds kBodyTimeout{30};
constexpr std::chrono::seconds kWriteTimeout{30};
// After refusing an oversized body, how long to read and discard what the client still sends,
// so that closing does not reset the connection before it has read the 413.
constexpr std::chrono::seconds kDrainTimeout{2};
constexpr std::chrono::milliseconds kAcceptRetry{100};
constexpr std::size_t kDrainChunkBytes = std::size_t{16} * 1024;

HttpRequest toHttpRequest(http::request<http::string_body>&& req) {
  HttpRequest out;
  out.method = std::string(req.method_string());
  out.target = std::string(req.target());
  for (const auto& field : req) {
    out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  out.body = std::move(req.body());
  return out;
}

// Shared: the response must live until async_write completes.
std::shared_ptr<http::response<http::string_body>> toBeast(HttpResponse&& response,
                                                           unsigned version, bool keepAlive) {
  auto res = std::make_shared<http::response<http::string_body>>(
      static_cast<http::status>(response.status), version);
  for (auto& [name, value] : response.headers) {
    res->set(name, value);
  }
  res->body() = std::move(response.body);
  res->keep_alive(keepAlive);
  res->prepare_payload();
  return res;
}

// One client connection. Lives as long as an operation on it is pending: every async handler
// holds a shared_ptr to it (shared ownership is the Asio idiom for that). All of its members are
// touched only on the network thread; a tool call hands its response back through post().
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, HttpHandler& handler, asio::thread_pool& tools)
      : stream_(std::move(socket)), handler_(handler), tools_(tools) {}

  void start() { readRequest(); }

 private:
  void readRequest() {
    parser_.emplace();
    parser_->body_limit(kMaxBodyBytes);
    parser_->header_limit(kMaxHeaderBytes);
    stream_.expires_after(kHeaderTimeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (!self->refuseOnError(ec)) self->readBody();
                            });
  }

  void readBody() {
    stream_.expires_after(kBodyTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (!self->refuseOnError(ec)) self->onRequest();
                     });
  }

  // On a read error: closes, or answers the error and closes. Returns whether it did.
  bool refuseOnError(beast::error_code ec) {
    if (!ec) return false;
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
        ec == asio::error::eof) {
      close();
    } else if (ec == http::error::body_limit) {
      writeFinal(refusal(413, jsonrpc::kBadRequest,
                         fmt::format("Payload Too Large: a request body may be at most {} bytes",
                                     kMaxBodyBytes)),
                 /*drain=*/true);
    } else if (ec == http::error::header_limit) {
      writeFinal(refusal(431, jsonrpc::kBadRequest, "Request Header Fields Too Large"),
                 /*drain=*/false);
    } else {
      log::debug("mcp: unreadable HTTP request: {}", ec.message());
      writeFinal(refusal(400, jsonrpc::kBadRequest,
                         fmt::format("Bad Request: malformed HTTP ({})", ec.message())),
                 /*drain=*/false);
    }
    return true;
  }

  void onRequest() {
    http::request<http::string_body> req = parser_->release();
    keepAlive_ = req.keep_alive();
    version_ = req.version();
    requestLine_ =
        fmt::format("{} {}", std::string_view(req.method_string()), std::string_view(req.target()));
    HttpHandler::Reply reply = handler_.handle(toHttpRequest(std::move(req)));
    if (!reply.work) return write(std::move(reply.response));
    // A tool call: run it on a worker, then write its response back here.
    asio::post(tools_, [self = shared_from_this(), work = std::move(reply.work)]() mutable {
      HttpResponse response = work();
      asio::any_io_executor io = self->stream_.get_executor();
      asio::post(io, [self = std::move(self), response = std::move(response)]() mutable {
        self->write(std::move(response));
      });
    });
  }

  void write(HttpResponse response) {
    log::debug("mcp: {} -> {}", requestLine_, response.status);
    bool keepAlive = keepAlive_ && !response.close;
    std::shared_ptr<WriteNotice> written = std::move(response.written);
    auto res = toBeast(std::move(response), version_, keepAlive);
    stream_.expires_after(kWriteTimeout);
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res, written](beast::error_code ec, std::size_t) {
                        // Every byte went to the socket, or the write failed part way.
                        if (written) written->fire(!ec);
                        if (ec) return self->close();
                        if (res->keep_alive()) return self->readRequest();
                        self->shutdown();
                      });
  }

  // Writes `response` and ends the connection; with `drain`, reads and discards what the client
  // still sends for a short while first.
  void writeFinal(HttpResponse response, bool drain) {
    auto res = toBeast(std::move(response), 11, /*keepAlive=*/false);
    stream_.expires_after(kWriteTimeout);
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res, drain](beast::error_code ec, std::size_t) {
                        if (ec) return self->close();
                        self->shutdown();
                        if (drain) self->drain();
                      });
  }

  void drain() {
    stream_.expires_after(kDrainTimeout);
    stream_.async_read_some(asio::buffer(discard_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->close();
                              self->drain();
                            });
  }

  void shutdown() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpHandler& handler_;
  asio::thread_pool& tools_;
  bool keepAlive_ = true;
  unsigned version_ = 11;
  std::string requestLine_;  // "POST /mcp", for the debug log
  std::array<char, kDrainChunkBytes> discard_{};
};

}  // namespace

struct Server::Impl {
  // Constant after start().
  std::unique_ptr<HttpHandler> handler;
  std::string host;
  uint16_t port = 0;
  int sendBufferBytes = 0;

  // Owned by the network thread once it runs; stop() tears them down in this order: network
  // thread, tool workers, then the acceptor and the context (whose destruction frees every
  // connection still waiting on an operation).
  std::unique_ptr<asio::io_context> io;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unique_ptr<asio::steady_timer> acceptRetry;  // backs off after a failed accept (EMFILE…)
  std::unique_ptr<asio::thread_pool> tools;
  std::thread thread;

  Mutex stopMu;
  bool stopped SHOAL_GUARDED_BY(stopMu) = false;

  void accept() {
    acceptor->async_accept(asio::make_strand(*io), [this](beast::error_code ec, tcp::socket s) {
      if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
      if (ec) {
        log::warn("mcp: accept failed: {}; retrying in {} ms", ec.message(), kAcceptRetry.count());
        acceptRetry->expires_after(kAcceptRetry);
        acceptRetry->async_wait([this](beast::error_code waitEc) {
          if (!waitEc) accept();
        });
        return;
      }
      if (sendBufferBytes > 0) {
        beast::error_code ignored;
        s.set_option(asio::socket_base::send_buffer_size(sendBufferBytes), ignored);
      }
      std::make_shared<Connection>(std::move(s), *handler, *tools)->start();
      accept();
    });
  }
};

Result<std::unique_ptr<Server>> Server::start(ServerOptions options, std::vector<ToolSpec> tools) {
  auto impl = std::make_unique<Impl>();
  impl->host = options.host;
  impl->sendBufferBytes = options.sendBufferBytes;
  impl->io = std::make_unique<asio::io_context>(1);
  beast::error_code ec;
  auto address = asio::ip::make_address(options.host, ec);
  if (ec) {
    return invalidArgument(
        "bad-host", fmt::format("ServerOptions.host `{}` is not an IP address ({})", options.host,
                                ec.message()));
  }
  impl->acceptor = std::make_unique<tcp::acceptor>(*impl->io);
  impl->acceptRetry = std::make_unique<asio::steady_timer>(*impl->io);
  tcp::endpoint endpoint(address, options.port);
  auto failed = [&](const char* what) -> Status {
    return unavailable("mcp-bind-failed",
                       fmt::format("cannot {} {}:{} for the MCP server: {}", what, options.host,
                                   options.port, ec.message()));
  };
  if (impl->acceptor->open(endpoint.protocol(), ec); ec) return failed("open");
  if (impl->acceptor->set_option(asio::socket_base::reuse_address(true), ec); ec) {
    return failed("configure");
  }
  if (impl->acceptor->bind(endpoint, ec); ec) return failed("bind");
  if (impl->acceptor->listen(asio::socket_base::max_listen_connections, ec); ec) {
    return failed("listen on");
  }
  impl->port = impl->acceptor->local_endpoint().port();

  SHOAL_ASSIGN_OR_RETURN(impl->handler, HttpHandler::create(options, impl->port, std::move(tools)));
  impl->tools = std::make_unique<asio::thread_pool>(options.toolThreads);
  impl->accept();
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->io->run(); });
  log::info("mcp: serving {} tool(s) on http://{}:{}/mcp", raw->handler->toolCount(), raw->host,
            raw->port);
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  stop();
}

uint16_t Server::port() const {
  return impl_->port;
}

std::string Server::url() const {
  bool v6 = impl_->host.find(':') != std::string::npos;
  return v6 ? fmt::format("http://[{}]:{}/mcp", impl_->host, impl_->port)
            : fmt::format("http://{}:{}/mcp", impl_->host, impl_->port);
}

void Server::stop() {
  // Held throughout, so that a concurrent stop() returns only once everything has stopped.
  MutexLock lock(impl_->stopMu);
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->io->stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->tools->stop();
  impl_->tools->join();
  impl_->tools.reset();
  impl_->acceptRetry.reset();
  impl_->acceptor.reset();
  impl_->io.reset();
  log::debug("mcp: server on port {} stopped", impl_->port);
}

}  // namespace shoal::mcp
