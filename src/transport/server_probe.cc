#include "transport/server_probe.h"

#include <string_view>
#include <utility>

#include <boost/json.hpp>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

namespace shoal::transport {
namespace {

using SteadyClock = std::chrono::steady_clock;

int msLeft(SteadyClock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

Status unreachable(const std::string& where, const std::string& why) {
  return unavailable("server-unreachable", "no NATS server answering at " + where + ": " + why);
}

// Connects to one resolved address before the deadline; returns the fd or -1 with errno text.
int connectBefore(const addrinfo* ai, SteadyClock::time_point deadline, std::string* why) {
  int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
  if (fd < 0) {
    *why = strerrordesc_np(errno);
    return -1;
  }
  if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) return fd;
  if (errno != EINPROGRESS) {
    *why = strerrordesc_np(errno);
    ::close(fd);
    return -1;
  }
  struct pollfd pfd = {fd, POLLOUT, 0};
  int r;
  do {
    r = ::poll(&pfd, 1, msLeft(deadline));
  } while (r < 0 && errno == EINTR);
  if (r <= 0) {
    *why = r == 0 ? "connect timed out" : strerrordesc_np(errno);
    ::close(fd);
    return -1;
  }
  int err = 0;
  socklen_t len = sizeof(err);
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) {
    *why = strerrordesc_np(err);
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string jsonString(const boost::json::object& o, std::string_view key) {
  auto it = o.find(key);
  if (it == o.end() || !it->value().is_string()) return "";
  return std::string(it->value().as_string());
}

bool jsonBool(const boost::json::object& o, std::string_view key) {
  auto it = o.find(key);
  return it != o.end() && it->value().is_bool() && it->value().as_bool();
}

}  // namespace

Result<std::pair<std::string, int>> parseServerUrl(const std::string& url) {
  std::string_view rest(url);
  if (auto scheme = rest.find("://"); scheme != std::string_view::npos) {
    rest.remove_prefix(scheme + 3);
  }
  if (auto at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);
  if (auto slash = rest.find('/'); slash != std::string_view::npos) rest = rest.substr(0, slash);
  std::string host;
  std::string_view portText;
  if (!rest.empty() && rest.front() == '[') {
    auto close = rest.find(']');
    if (close == std::string_view::npos) {
      return invalidArgument("malformed-url", "unbalanced '[' in server URL '" + url + "'");
    }
    host = std::string(rest.substr(1, close - 1));
    rest.remove_prefix(close + 1);
    if (!rest.empty() && rest.front() == ':') portText = rest.substr(1);
  } else if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = std::string(rest.substr(0, colon));
    portText = rest.substr(colon + 1);
  } else {
    host = std::string(rest);
  }
  if (host.empty()) return invalidArgument("malformed-url", "no host in server URL '" + url + "'");
  int port = 4222;
  if (!portText.empty()) {
    port = 0;
    for (char c : portText) {
      if (c < '0' || c > '9' || port > 65535) {
        return invalidArgument("malformed-url", "bad port in server URL '" + url + "'");
      }
      port = port * 10 + (c - '0');
    }
    if (port <= 0 || port > 65535) {
      return invalidArgument("malformed-url", "bad port in server URL '" + url + "'");
    }
  }
  return std::make_pair(host, port);
}

Result<ProbedSocket> probeServerKeepingSocket(const std::string& host, int port,
                                              std::chrono::milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  const std::string where = host + ":" + std::to_string(port);

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int gai = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (gai != 0) return unreachable(where, gai_strerror(gai));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> list(found, &freeaddrinfo);

  std::string why = "no address";
  int raw = -1;
  for (const addrinfo* ai = list.get(); ai != nullptr && raw < 0; ai = ai->ai_next) {
    raw = connectBefore(ai, deadline, &why);
  }
  if (raw < 0) return unreachable(where, why);
  ProbedSocket probed(raw);
  const int fd = probed.fd();

  // The server speaks first: "INFO {json}\r\n".
  std::string line;
  char buf[4096];
  while (line.find('\n') == std::string::npos) {
    if (line.size() > 64 * 1024) break;
    struct pollfd pfd = {fd, POLLIN, 0};
    int r = ::poll(&pfd, 1, msLeft(deadline));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return unreachable(where, r == 0 ? "no INFO before the deadline" : "poll failed");
    // Nothing follows the INFO line until the client speaks, so no byte of a later frame
    // (a TLS handshake) is consumed here.
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return unreachable(where, "connection closed before INFO");
    line.append(buf, static_cast<size_t>(n));
  }
  auto nl = line.find('\n');
  if (nl == std::string::npos || line.rfind("INFO ", 0) != 0) {
    return failedPrecondition("not-a-nats-server",
                              where + " answered, but not with a NATS INFO line");
  }
  std::string_view json(line.data() + 5, nl - 5);
  while (!json.empty() && (json.back() == '\r' || json.back() == ' '))
    json.remove_suffix(1);

  boost::json::error_code ec;
  boost::json::value v = boost::json::parse(json, ec);
  if (ec || !v.is_object()) {
    return failedPrecondition("not-a-nats-server", where + " sent an INFO line that is not JSON");
  }
  const auto& o = v.as_object();
  ProbedServerInfo& info = probed.info;
  info.serverId = jsonString(o, "server_id");
  info.serverName = jsonString(o, "server_name");
  info.version = jsonString(o, "version");
  info.jetstream = jsonBool(o, "jetstream");
  info.headers = jsonBool(o, "headers");
  info.authRequired = jsonBool(o, "auth_required");
  info.tlsRequired = jsonBool(o, "tls_required");
  if (auto it = o.find("max_payload"); it != o.end() && it->value().is_number()) {
    boost::json::error_code numberError;
    int64_t n = it->value().to_number<int64_t>(numberError);
    if (!numberError) info.maxPayload = n;
  }
  return probed;
}

Result<ProbedServerInfo> probeServer(const std::string& host, int port,
                                     std::chrono::milliseconds timeout) {
  SHOAL_ASSIGN_OR_RETURN(ProbedSocket probed, probeServerKeepingSocket(host, port, timeout));
  return probed.info;
}

ProbedSocket::ProbedSocket(ProbedSocket&& other) noexcept
    : info(std::move(other.info)), fd_(std::exchange(other.fd_, -1)) {}

ProbedSocket::~ProbedSocket() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace shoal::transport
