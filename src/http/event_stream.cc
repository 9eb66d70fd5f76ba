#include "http/event_stream.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http/client.h"

namespace shoal::http {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr size_t kReadSlice = 16 * 1024;

int remainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<long long>(0, left));
}

// A non-blocking TCP connection to host:port within `timeout`; -1 with `why` on failure.
int connectTo(const HttpUrl& url, milliseconds timeout, std::string& why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(url.host.c_str(), url.port.c_str(), &hints, &found); rc != 0) {
    why = fmt::format("cannot resolve {}: {}", url.host, ::gai_strerror(rc));
    return -1;
  }
  const auto deadline = Clock::now() + timeout;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = ::poll(&p, 1, remainingMs(deadline)) == 1 ? 0 : -1;
      int err = rc == 0 ? 0 : ETIMEDOUT;
      socklen_t len = sizeof(err);
      if (rc == 0) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        errno = err;
        rc = -1;
      }
    }
    if (rc != 0) {
      why = fmt::format("cannot connect to {}:{}: {}", url.host, url.port, std::strerror(errno));
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

bool sendAll(int fd, std::string_view bytes, Clock::time_point deadline) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, remainingMs(deadline)) != 1) return false;
      continue;
    }
    return false;
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<EventStream>> EventStream::open(std::string_view url,
                                                       EventStreamOptions options) {
  SHOAL_ASSIGN_OR_RETURN(HttpUrl target, parseHttpUrl(url));
  std::string why;
  const int fd = connectTo(target, options.connectTimeout, why);
  if (fd < 0) return unavailable("http-connect-failed", why);
  const auto deadline = Clock::now() + options.headTimeout;
  std::string request = fmt::format(
      "GET {} HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n",
      target.target, target.hostHeader);
  for (const auto& [name, value] : options.headers) {
    if ((name + value).find_first_of("\r\n") != std::string::npos) {
      ::close(fd);
      return invalidArgument("bad-header", "a request header contains CR or LF: " + name);
    }
    request += name + ": " + value + "\r\n";
  }
  request += "\r\n";
  if (!sendAll(fd, request, deadline)) {
    ::close(fd);
    return unavailable("http-connect-failed",
                       fmt::format("could not send the request for {}", target.target));
  }
  // The head, and whatever of the body came with it, through Beast's parser.
  auto parser = std::make_unique<StreamParser>();
  std::string bytes;
  std::vector<std::string> events;
  while (!parser->headDone()) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, remainingMs(deadline));
    if (ready == 0) {
      ::close(fd);
      return deadlineExceeded("http-timeout",
                              fmt::format("no response to GET {} within {} ms", target.target,
                                          options.headTimeout.count()));
    }
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      ::close(fd);
      return unavailable(
          "http-connect-failed",
          fmt::format("the connection closed before a response to GET {}", target.target));
    }
    bytes.append(buf, static_cast<size_t>(n));
    if (Status parsed = parser->feed(bytes, events); !parsed.isOk()) {
      ::close(fd);
      return parsed;
    }
  }
  if (parser->status() != 200 || !parser->eventStream()) {
    ::close(fd);
    return failedPrecondition(
        "not-an-event-stream",
        fmt::format("GET {} answered {}{}: {}", target.target, parser->status(),
                    parser->eventStream() ? "" : " without a text/event-stream body",
                    parser->bodyStart()));
  }
  return std::unique_ptr<EventStream>(
      new EventStream(fd, options, std::move(parser), std::move(bytes), std::move(events)));
}

EventStream::EventStream(int fd, EventStreamOptions options, std::unique_ptr<StreamParser> parser,
                         std::string bytes, std::vector<std::string> events)
    : fd_(fd),
      options_(std::move(options)),
      parser_(std::move(parser)),
      bytes_(std::move(bytes)),
      ready_(std::move(events)) {}

EventStream::~EventStream() {
  ::close(fd_);
}

void EventStream::close() {
  if (closed_.exchange(true)) return;
  ::shutdown(fd_, SHUT_RDWR);  // wakes a poll() in next()
}

Result<std::optional<std::string>> EventStream::next(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    if (closed_.load()) return cancelled("event-stream-closed", "the event stream was closed");
    if (readyAt_ < ready_.size()) {
      std::string event = std::move(ready_[readyAt_++]);
      if (readyAt_ == ready_.size()) {
        ready_.clear();
        readyAt_ = 0;
      }
      return std::optional<std::string>(std::move(event));
    }
    if (parser_->ended())
      return unavailable("event-stream-ended", "the server ended the event stream");
    if (parser_->pendingBytes() + bytes_.size() > options_.maxEventBytes) {
      return resourceExhausted("event-too-large",
                               fmt::format("an event is over {} bytes", options_.maxEventBytes));
    }
    pollfd p{fd_, POLLIN, 0};
    const int rc = ::poll(&p, 1, remainingMs(deadline));
    if (rc < 0 && errno == EINTR) continue;
    if (rc == 0) return std::optional<std::string>();
    if (closed_.load()) return cancelled("event-stream-closed", "the event stream was closed");
    char buf[kReadSlice];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n < 0) {
      return unavailable("event-stream-failed",
                         std::string("reading the event stream: ") + std::strerror(errno));
    }
    if (n == 0) {
      SHOAL_RETURN_IF_ERROR(parser_->eof(ready_));  // a sized or chunked body cut short
      continue;                                     // what the end dispatched, then the end
    }
    bytes_.append(buf, static_cast<size_t>(n));
    SHOAL_RETURN_IF_ERROR(parser_->feed(bytes_, ready_));
  }
}

}  // namespace shoal::http
