#include "daemon/control_socket.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/file_system.h"
#include "base/log.h"
#include "supervisor/mesh_paths.h"
#include "wire/token.h"

namespace shoal::daemon {
namespace {

Status errnoStatus(std::string_view op, const std::string& path) {
  return statusFromErrno(errno, op, path);
}

Result<sockaddr_un> addressOf(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return invalidArgument("socket-path-too-long",
                           "the control socket path is longer than a Unix socket allows: " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// Writes all of `data` (the peer may read slowly); false on failure.
bool writeAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

struct ReadBounds {
  size_t limit = kMaxControlRequestBytes;
  std::chrono::milliseconds timeout{5000};  // for the whole line
  std::chrono::milliseconds firstByte{0};   // 0: no separate bound
  int cancelFd = -1;                        // readable: give up (server shutdown)
};

// Reads up to a newline (exclusive) within the bounds.
Result<std::string> readLine(int fd, const ReadBounds& bounds) {
  std::string line;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + bounds.timeout;
  const auto firstDeadline = start + bounds.firstByte;
  bool anyByte = false;
  char buf[4096];
  while (true) {
    const auto now = std::chrono::steady_clock::now();
    if (!anyByte && bounds.firstByte.count() > 0 && now >= firstDeadline) {
      return deadlineExceeded("control-idle",
                              "nothing arrived within " + std::to_string(bounds.firstByte.count()) +
                                  " ms of connecting (a control client sends its request at "
                                  "once)");
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    if (!anyByte && bounds.firstByte.count() > 0) {
      left = std::min(left,
                      std::chrono::duration_cast<std::chrono::milliseconds>(firstDeadline - now));
    }
    if (left.count() <= 0)
      return deadlineExceeded("control-timeout", "no complete message in time");
    pollfd p[2] = {{fd, POLLIN, 0}, {bounds.cancelFd, POLLIN, 0}};
    int ready = ::poll(p, bounds.cancelFd >= 0 ? 2 : 1, static_cast<int>(left.count()) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (bounds.cancelFd >= 0 && (p[1].revents & POLLIN) != 0) {
      return cancelled("control-shutdown", "the daemon is shutting down");
    }
    if (ready <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return unavailable("control-read-failed", std::strerror(errno));
    anyByte = true;
    if (n == 0) {
      if (line.empty()) return unavailable("control-closed", "the other side closed");
      return line;  // a final line without its newline
    }
    std::string_view chunk(buf, static_cast<size_t>(n));
    size_t nl = chunk.find('\n');
    line.append(chunk.substr(0, nl));
    if (line.size() > bounds.limit) {
      return resourceExhausted(
          "control-message-too-large",
          "a control message is at most " + std::to_string(bounds.limit) + " bytes");
    }
    if (nl != std::string_view::npos) return line;
  }
}

}  // namespace

Result<std::string> controlSocketPath(std::string_view space) {
  SHOAL_RETURN_IF_ERROR(wire::validateSpace(space));
  SHOAL_ASSIGN_OR_RETURN(auto paths, supervisor::MeshPaths::resolve(space));
  return paths.controlSocket;
}

Result<std::unique_ptr<ControlServer>> ControlServer::start(std::string path,
                                                            ControlHandler handler,
                                                            std::function<void()> tick) {
  SHOAL_ASSIGN_OR_RETURN(sockaddr_un addr, addressOf(path));
  std::string dir = path.substr(0, path.rfind('/'));
  SHOAL_RETURN_IF_ERROR(FileSystem::posix().createDirs(dir).status());
  ::chmod(dir.c_str(), 0700);

  // A live server answers a connect; a dead one's socket file refuses it and may be replaced.
  if (FileSystem::posix().exists(path)) {
    int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool live =
        probe >= 0 && ::connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    if (probe >= 0) ::close(probe);
    if (live) {
      return failedPrecondition("daemon-running",
                                "a daemon already serves " + path + " (see `shoal daemon status`)");
    }
    ::unlink(path.c_str());
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errnoStatus("socket", path);
  mode_t old = ::umask(0177);  // the socket is created 0600
  int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  ::umask(old);
  if (bound != 0 || ::listen(fd, 16) != 0) {
    Status s = errnoStatus("bind", path);
    ::close(fd);
    return s;
  }
  return std::unique_ptr<ControlServer>(
      new ControlServer(std::move(path), fd, std::move(handler), std::move(tick)));
}

ControlServer::ControlServer(std::string path, int fd, ControlHandler handler,
                             std::function<void()> tick)
    : path_(std::move(path)), fd_(fd), handler_(std::move(handler)), tick_(std::move(tick)) {
  if (::pipe2(wakeFd_, O_CLOEXEC) != 0) {
    wakeFd_[0] = wakeFd_[1] = -1;
  }
  thread_ = std::thread([this] { run(); });
}

ControlServer::~ControlServer() {
  if (wakeFd_[1] >= 0) {
    char x = 'x';
    (void)!::write(wakeFd_[1], &x, 1);
  }
  if (thread_.joinable()) thread_.join();
  ::close(fd_);
  ::unlink(path_.c_str());
  for (int w : wakeFd_)
    if (w >= 0) ::close(w);
}

void ControlServer::run() {
  auto last = std::chrono::steady_clock::now();
  while (true) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wakeFd_[0], POLLIN, 0}};
    int ready = ::poll(fds, wakeFd_[0] >= 0 ? 2 : 1, 500);
    if (ready < 0 && errno != EINTR) break;
    if (wakeFd_[0] >= 0 && (fds[1].revents & POLLIN) != 0) break;
    reapConnections();
    if (tick_ && std::chrono::steady_clock::now() - last >= std::chrono::milliseconds(500)) {
      last = std::chrono::steady_clock::now();
      std::lock_guard lock(handlerMu_);
      tick_();
    }
    if (ready <= 0 || (fds[0].revents & POLLIN) == 0) continue;
    int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    if (connections_.size() >= kMaxControlConnections) {
      (void)writeAll(client, controlErrorReply(unavailable(
                                 "control-busy", "the daemon is serving " +
                                                     std::to_string(kMaxControlConnections) +
                                                     " control connections; try again")));
      ::close(client);
      continue;
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    connections_.push_back(Connection{std::thread([this, client, done] {
                                        serveOne(client);
                                        ::close(client);
                                        done->store(true);
                                      }),
                                      done});
  }
  for (auto& c : connections_)
    c.thread.join();
  connections_.clear();
}

void ControlServer::reapConnections() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = connections_.erase(it);
    } else {
      ++it;
    }
  }
}

void ControlServer::serveOne(int client) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(client, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != ::getuid()) {
    log::warn("daemon: refused a control connection from uid {}", cred.uid);
    return;
  }
  ReadBounds bounds;
  bounds.firstByte = kControlFirstByte;
  bounds.cancelFd = wakeFd_[0];
  auto line = readLine(client, bounds);
  std::string reply;
  if (!line.isOk()) {
    reply = controlErrorReply(line.status());
  } else if (auto request = parseControlRequest(*line); !request.isOk()) {
    reply = controlErrorReply(request.status());
  } else {
    // Requests are read concurrently; they are handled one at a time, and never during a tick.
    Result<std::string> result = [&] {
      std::lock_guard lock(handlerMu_);
      return handler_(*request);
    }();
    if (result.isOk()) {
      reply = controlResultReply(*result);
    } else {
      reply = controlErrorReply(result.status());
    }
  }
  served_.fetch_add(1);
  (void)writeAll(client, reply);
}

Result<std::string> controlRequest(const std::string& path, const ControlRequest& request,
                                   std::chrono::milliseconds timeout) {
  SHOAL_ASSIGN_OR_RETURN(sockaddr_un addr, addressOf(path));
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errnoStatus("socket", path);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return unavailable("daemon-not-running",
                       "no seat daemon answers on " + path +
                           "; `shoal up` runs one (or `shoal daemon run` in a terminal)");
  }
  Result<std::string> line = encodeControlRequest(request);
  if (!line.isOk()) {
    ::close(fd);
    return line.status();
  }
  if (!writeAll(fd, *line)) {
    ::close(fd);
    return unavailable("control-write-failed", "the daemon closed the control connection");
  }
  ReadBounds bounds;
  bounds.limit = 64 * kMaxControlRequestBytes;
  bounds.timeout = timeout;
  auto reply = readLine(fd, bounds);
  ::close(fd);
  if (!reply.isOk()) return reply.status();
  return parseControlReply(*reply);
}

}  // namespace shoal::daemon
