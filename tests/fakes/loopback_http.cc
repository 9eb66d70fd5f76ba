#include "loopback_http.h"

#include <cerrno>
#include <charconv>

#include <arpa/inet.h>
#include <fmt/core.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace shoal::fakes {

bool sendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

std::string HttpRequest::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

std::string HttpRequest::param(std::string_view name) const {
  std::string_view rest = query;
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? "" : rest.substr(amp + 1);
    size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) {
      return eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1));
    }
  }
  return "";
}

std::string_view reasonOf(int status) {
  if (status == 200) return "OK";
  if (status == 204) return "No Content";
  if (status == 400) return "Bad Request";
  if (status == 404) return "Not Found";
  if (status == 411) return "Length Required";
  if (status == 413) return "Payload Too Large";
  if (status == 431) return "Request Header Fields Too Large";
  return status == 500 ? "Internal Server Error" : "Unknown";
}

bool writeResponse(int fd, const HttpResponse& r, bool keepAlive) {
  std::string head = fmt::format("HTTP/1.1 {} {}\r\n", r.status, reasonOf(r.status));
  if (r.status != 204) {
    head += fmt::format("Content-Type: application/json\r\nContent-Length: {}\r\n", r.body.size());
  }
  head += keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  return sendAll(fd, head) && (r.status == 204 || sendAll(fd, r.body));
}

RequestReader::Outcome RequestReader::next(HttpRequest& out, int& badStatus) {
  size_t end;
  while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
    if (buffer_.size() > kMaxHeaderBytes) {
      badStatus = 431;
      return Outcome::kBad;
    }
    if (!fill()) return Outcome::kClosed;
  }
  std::string_view head(buffer_.data(), end);
  size_t lineEnd = head.find("\r\n");
  std::string_view requestLine = head.substr(0, lineEnd);
  size_t sp1 = requestLine.find(' ');
  size_t sp2 = requestLine.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1) {
    badStatus = 400;
    return Outcome::kBad;
  }
  out = HttpRequest{};
  out.method = std::string(requestLine.substr(0, sp1));
  std::string_view target = requestLine.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = requestLine.substr(sp2 + 1);
  size_t q = target.find('?');
  out.path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) out.query = std::string(target.substr(q + 1));
  std::string_view rest = lineEnd == std::string_view::npos ? "" : head.substr(lineEnd + 2);
  while (!rest.empty()) {
    size_t nl = rest.find("\r\n");
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? "" : rest.substr(nl + 2);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    out.headers[lower(trim(line.substr(0, colon)))] = std::string(trim(line.substr(colon + 1)));
  }
  buffer_.erase(0, end + 4);
  const std::string connection = lower(out.header("connection"));
  out.keepAlive = version == "HTTP/1.1" ? connection != "close" : connection == "keep-alive";
  if (!out.header("transfer-encoding").empty()) {
    badStatus = 411;
    return Outcome::kBad;
  }
  size_t length = 0;
  if (std::string cl = out.header("content-length"); !cl.empty()) {
    auto [ptr, ec] = std::from_chars(cl.data(), cl.data() + cl.size(), length);
    if (ec != std::errc() || ptr != cl.data() + cl.size()) {
      badStatus = 400;
      return Outcome::kBad;
    }
    if (length > kMaxBodyBytes) {
      badStatus = 413;
      return Outcome::kBad;
    }
  }
  while (buffer_.size() < length) {
    if (!fill()) return Outcome::kClosed;
  }
  out.body = buffer_.substr(0, length);
  buffer_.erase(0, length);
  return Outcome::kRequest;
}

bool RequestReader::fill() {
  char chunk[16384];
  for (;;) {
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }
}

std::vector<std::string> splitPath(std::string_view path) {
  std::vector<std::string> out;
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    if (!part.empty()) out.emplace_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// Binds 127.0.0.1:`port` and listens; the socket, or -1 (errno set).
int listenOn(int port, int& boundPort) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, 128) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
  boundPort = ntohs(addr.sin_port);
  return fd;
}

}  // namespace shoal::fakes
