// The daemon's local control socket: a Unix stream socket the CLI talks to (issue 5).
//
// Where: `$XDG_RUNTIME_DIR/shoal/<space>.sock` when XDG_RUNTIME_DIR is set, else
// `<state dir>/run/<space>.sock`; the directory is created 0700 and the socket made 0600, so
// only the owner can connect (and the server re-checks the peer's uid with SO_PEERCRED).
//
// Protocol: one request per connection. The client writes one JSON object and a newline
// (at most kMaxControlRequestBytes); the server answers one JSON object and a newline, then
// closes (the messages are daemon/control_protocol.h):
//   request   {"op":"seat.list","args":{…}}
//   reply     {"ok":true,"result":…}  |  {"ok":false,"error":{"code","reason","message"}}
// A request that is too large, not JSON, or from another uid gets an error reply (or, for
// another uid, a close) and changes nothing.
//
// ControlServer: binds the path (refusing, with `daemon-running`, when a live server already
// answers there; removing a stale socket file left by a dead one), then accepts on its own
// thread and reads each connection's request on a thread of its own (at most
// kMaxControlConnections at once; more get `control-busy`), so a client that connects and
// sends nothing delays nobody: it gets `control-idle` after kControlFirstByte, and a request
// must be complete within 5 s. Parsed requests go to the handler one at a time. The optional
// `tick` runs about every 500 ms, never during a request (the daemon's retries).
// controlRequest: the client side, with a timeout.
//
// Thread safety: the handler and the tick run under one lock, never two at once (on the
// accept thread and the connection threads).
// Lifetime: the destructor stops the thread, closes the socket and unlinks the path.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "daemon/control_protocol.h"

namespace shoal::daemon {

inline constexpr size_t kMaxControlRequestBytes = 1024 * 1024;
inline constexpr size_t kMaxControlConnections = 32;
inline constexpr std::chrono::milliseconds kControlFirstByte{1000};

// The socket path for `space` (see above). Creates nothing.
Result<std::string> controlSocketPath(std::string_view space);

// The handler answers with a result (compact JSON text) or a Status (sent as the error).
using ControlHandler = std::function<Result<std::string>(const ControlRequest&)>;

class ControlServer {
 public:
  static Result<std::unique_ptr<ControlServer>> start(std::string path, ControlHandler handler,
                                                      std::function<void()> tick = {});
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  const std::string& path() const { return path_; }
  uint64_t served() const { return served_.load(); }

 private:
  ControlServer(std::string path, int fd, ControlHandler handler, std::function<void()> tick);
  void run();
  void serveOne(int client);
  void reapConnections();  // joins the connection threads that finished (accept thread)

  struct Connection {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  const std::string path_;
  int fd_;
  int wakeFd_[2] = {-1, -1};  // a pipe that ends the accept loop
  ControlHandler handler_;
  std::function<void()> tick_;
  std::mutex handlerMu_;                 // the handler and the tick, one at a time
  std::vector<Connection> connections_;  // accept thread only
  std::atomic<uint64_t> served_{0};
  std::thread thread_;
};

// Sends one request and returns the result JSON text, or the server's error as a Status.
// No server: kUnavailable `daemon-not-running`, naming `shoal daemon`.
Result<std::string> controlRequest(const std::string& path, const ControlRequest& request,
                                   std::chrono::milliseconds timeout);

}  // namespace shoal::daemon
