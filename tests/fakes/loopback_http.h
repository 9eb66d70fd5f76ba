// The plain HTTP/1.1 a loopback fake server speaks (fake_opencode): requests read off one
// connection with bounded headers and bodies (no chunked request bodies: 411), responses
// written whole, and a listener on 127.0.0.1. Test support only; a real server would use a
// real HTTP library.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace shoal::fakes {

inline constexpr size_t kMaxHeaderBytes = size_t{64} * 1024;
inline constexpr size_t kMaxBodyBytes = size_t{16} * 1024 * 1024;

// Writes all of `data` (MSG_NOSIGNAL); false when the peer is gone.
bool sendAll(int fd, std::string_view data);
std::string lower(std::string_view text);
std::string_view trim(std::string_view text);

struct HttpRequest {
  std::string method;
  std::string path;                            // the target without its query
  std::string query;                           // after '?', undecoded
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  bool keepAlive = true;

  std::string header(const std::string& name) const;
  // The query parameter `name` ("" when absent).
  std::string param(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string body;  // JSON; empty for 204
};

std::string_view reasonOf(int status);
// Writes `r` as application/json (no body for 204).
bool writeResponse(int fd, const HttpResponse& r, bool keepAlive);

// Reads requests from one connection. `buffer_` keeps what came after the last request.
class RequestReader {
 public:
  explicit RequestReader(int fd) : fd_(fd) {}

  enum class Outcome { kRequest, kClosed, kBad };

  // The next request into `out`; kBad leaves the status to answer with in `badStatus`.
  Outcome next(HttpRequest& out, int& badStatus);

 private:
  bool fill();

  const int fd_;
  std::string buffer_;
};

// "/a//b/" → {"a", "b"}.
std::vector<std::string> splitPath(std::string_view path);

// Binds 127.0.0.1:`port` and listens; the socket, or -1 (errno set). `boundPort`: the port.
int listenOn(int port, int& boundPort);

}  // namespace shoal::fakes
