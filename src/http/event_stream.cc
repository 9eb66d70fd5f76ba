#include "http/event_stream.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
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

constexpr size_t kMaxHeadBytes = 64 * 1024;
constexpr size_t kReadSlice = 16 * 1024;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

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
  std::string head;
  size_t end = std::string::npos;
  while ((end = head.find("\r\n\r\n")) == std::string::npos) {
    if (head.size() > kMaxHeadBytes) {
      ::close(fd);
      return failedPrecondition("not-an-event-stream", "the response head is over 64 KiB");
    }
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
    head.append(buf, static_cast<size_t>(n));
  }
  std::string body = head.substr(end + 4);
  head.resize(end);
  // Status line and the two headers that matter.
  const std::string headLower = lower(head);
  int status = 0;
  if (head.rfind("HTTP/1.", 0) == 0 && head.size() >= 12) status = std::atoi(head.c_str() + 9);
  const bool isStream = headLower.find("\r\ncontent-type: text/event-stream") != std::string::npos;
  const bool chunked = headLower.find("\r\ntransfer-encoding: chunked") != std::string::npos;
  if (status != 200 || !isStream) {
    ::close(fd);
    return failedPrecondition(
        "not-an-event-stream",
        fmt::format("GET {} answered {}{}: {}", target.target, status,
                    isStream ? "" : " without a text/event-stream body", body.substr(0, 200)));
  }
  return std::unique_ptr<EventStream>(new EventStream(fd, options, chunked, std::move(body)));
}

EventStream::EventStream(int fd, EventStreamOptions options, bool chunked, std::string body)
    : fd_(fd), options_(options), chunked_(chunked), bytes_(std::move(body)) {}

EventStream::~EventStream() {
  ::close(fd_);
}

void EventStream::close() {
  if (closed_.exchange(true)) return;
  ::shutdown(fd_, SHUT_RDWR);  // wakes a poll() in next()
}

Status EventStream::decode() {
  if (!chunked_) {
    sse_.feed(bytes_, ready_);
    bytes_.clear();
    return Status::ok();
  }
  std::string payload;
  const Status decoded = chunks_.decode(bytes_, payload);
  sse_.feed(payload, ready_);
  if (chunks_.ended()) ended_ = true;
  return decoded;
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
    if (!bytes_.empty() && !undecodable_) {
      // Bytes that came with the response head (or a partial chunk header: decode keeps it).
      const size_t before = bytes_.size();
      SHOAL_RETURN_IF_ERROR(decode());
      undecodable_ = bytes_.size() == before;
      if (readyAt_ < ready_.size()) continue;
    }
    if (ended_) {
      sse_.finish(ready_);
      if (!ready_.empty()) continue;
      return unavailable("event-stream-ended", "the server ended the event stream");
    }
    if (sse_.pendingBytes() + bytes_.size() > options_.maxEventBytes) {
      return resourceExhausted("event-too-large",
                               fmt::format("an event is over {} bytes", options_.maxEventBytes));
    }
    pollfd p{fd_, POLLIN, 0};
    const int wait = remainingMs(deadline);
    const int rc = ::poll(&p, 1, wait);
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
      if (chunked_ && !ended_) {
        return unavailable("event-stream-ended", "the server closed the event stream mid-body");
      }
      ended_ = true;
      continue;
    }
    bytes_.append(buf, static_cast<size_t>(n));
    undecodable_ = false;
    SHOAL_RETURN_IF_ERROR(decode());
  }
}

}  // namespace shoal::http
