#include "transport/local_broker.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/file_system.h"
#include "base/ids.h"
#include "transport/server_probe.h"

namespace shoal::transport {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kEphemeralAttempts = 5;
constexpr milliseconds kProbeTimeout{250};
constexpr milliseconds kProbePause{20};

bool isExecutable(const std::string& path) {
  return ::access(path.c_str(), X_OK) == 0;
}

// Binds a TCP socket to host:port (port 0: the kernel picks) with SO_REUSEADDR, as the server
// will. Returns the bound port, or 0 if the bind failed.
int tryBind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return 0;
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> list(found, &freeaddrinfo);
  int bound = 0;
  for (const addrinfo* ai = list.get(); ai != nullptr && bound == 0; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
      sockaddr_storage addr{};
      socklen_t len = sizeof(addr);
      if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
        if (addr.ss_family == AF_INET) {
          bound = ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
        } else if (addr.ss_family == AF_INET6) {
          bound = ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
        }
      }
    }
    ::close(fd);
  }
  return bound;
}

std::string readTail(const std::string& path, size_t maxBytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff start = size > static_cast<std::streamoff>(maxBytes)
                             ? size - static_cast<std::streamoff>(maxBytes)
                             : 0;
  in.seekg(start);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool mentionsAddressInUse(const std::string& text) {
  return text.find("address already in use") != std::string::npos;
}

}  // namespace

Result<std::string> LocalBroker::findServerBinary(const std::string& serverBinary) {
  const std::string remedy =
      "install it with scripts/bootstrap (Debian package nats-server), or pass its path";
  if (!serverBinary.empty() && serverBinary.find('/') != std::string::npos) {
    if (isExecutable(serverBinary)) return serverBinary;
    return failedPrecondition("nats-server-missing",
                              "nats-server not found at '" + serverBinary + "': " + remedy);
  }
  const std::string name = serverBinary.empty() ? "nats-server" : serverBinary;
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':')) {
      if (!dir.empty()) dirs.push_back(dir);
    }
  }
  for (const char* dir : {"/usr/sbin", "/usr/local/bin", "/usr/bin"})
    dirs.emplace_back(dir);
  for (const auto& dir : dirs) {
    std::string candidate = dir + "/" + name;
    if (isExecutable(candidate)) return candidate;
  }
  return failedPrecondition("nats-server-missing", "'" + name +
                                                       "' not found on PATH or in /usr/sbin, "
                                                       "/usr/local/bin, /usr/bin: " +
                                                       remedy);
}

Result<std::unique_ptr<LocalBroker>> LocalBroker::start(LocalBrokerOptions options) {
  if (options.storeDir.empty()) {
    return invalidArgument("no-store-dir", "a local broker needs a store directory");
  }
  if (options.logPath.empty()) options.logPath = options.storeDir + "/nats-server.log";
  if (options.serverName.empty()) {
    // A name unique to this broker lets the readiness probe tell our server from any other.
    SHOAL_ASSIGN_OR_RETURN(std::string token, newHexToken(6));
    options.serverName = "shoal-" + token;
  }
  SHOAL_ASSIGN_OR_RETURN(std::string binary, findServerBinary(options.serverBinary));
  SHOAL_RETURN_IF_ERROR(FileSystem::posix().createDirs(options.storeDir).status());

  std::unique_ptr<LocalBroker> broker(new LocalBroker(std::move(options)));
  broker->binary_ = std::move(binary);
  SHOAL_RETURN_IF_ERROR(broker->launchOnSomePort());
  return broker;
}

LocalBroker::~LocalBroker() {
  if (!released_) (void)stop();
}

std::string LocalBroker::url() const {
  std::string host = options_.host;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  const char* scheme = options_.tlsCertFile.empty() ? "nats://" : "tls://";
  return scheme + host + ":" + std::to_string(port_);
}

pid_t LocalBroker::pid() const {
  return process_ ? process_->pid() : -1;
}

bool LocalBroker::running() {
  if (!process_ || released_) return false;
  auto polled = process_->poll();
  return polled.isOk() && !polled->has_value();
}

std::string LocalBroker::logTail(size_t maxBytes) const {
  return readTail(options_.logPath, maxBytes);
}

Result<std::vector<std::string>> LocalBroker::buildArgv(int port) {
  std::vector<std::string> argv = {
      binary_, "-a", options_.host, "-p", std::to_string(port), "-n", options_.serverName};
  if (options_.jetstream) {
    argv.insert(argv.end(), {"-js", "-sd", options_.storeDir});
  }
  const bool tls = !options_.tlsCertFile.empty();
  if (options_.maxPayload || !options_.extraConfig.empty() || tls) {
    std::string config = "# Written by shoal (LocalBroker); regenerated on every start.\n";
    if (options_.maxPayload)
      config += "max_payload: " + std::to_string(*options_.maxPayload) + "\n";
    if (tls) {
      // A `tls` block makes TLS required of every client; the handshake may take a loaded
      // machine more than the default half second.
      config += "tls {\n  cert_file: \"" + options_.tlsCertFile + "\"\n  key_file: \"" +
                options_.tlsKeyFile + "\"\n  timeout: 5\n}\n";
    }
    config += options_.extraConfig;
    config += "\n";
    std::string path = options_.storeDir + "/nats-server.conf";
    SHOAL_RETURN_IF_ERROR(writeFileAtomically(FileSystem::posix(), path, config));
    argv.insert(argv.end(), {"-c", path});
  }
  argv.insert(argv.end(), options_.extraArgs.begin(), options_.extraArgs.end());
  return argv;
}

Status LocalBroker::launch(int port) {
  SHOAL_ASSIGN_OR_RETURN(auto argv, buildArgv(port));
  SpawnOptions spawn;
  spawn.argv = std::move(argv);
  spawn.cwd = options_.storeDir;
  spawn.stdoutTarget = StdioTarget::appendTo(options_.logPath);
  spawn.stderrTarget = StdioTarget::appendTo(options_.logPath);
  spawn.newSession = options_.newSession;
  SHOAL_ASSIGN_OR_RETURN(Subprocess child, Subprocess::spawn(spawn));
  process_.emplace(std::move(child));
  port_ = port;
  released_ = false;
  Status ready = waitUntilReady(port);
  if (!ready.isOk() && process_->running()) (void)process_->terminate(options_.stopGrace);
  return ready;
}

Status LocalBroker::waitUntilReady(int port) {
  const auto deadline = SteadyClock::now() + options_.startTimeout;
  const std::string where = options_.host + ":" + std::to_string(port);
  Status lastProbe = Status::ok();
  for (;;) {
    auto exited = process_->poll();
    if (!exited.isOk()) return exited.status();
    if (exited->has_value()) {
      std::string tail = logTail(2048);
      std::string message = "nats-server on " + where + " exited during start (" +
                            (*exited)->toString() + "); log " + options_.logPath + ":\n" + tail;
      if (mentionsAddressInUse(tail)) return unavailable("port-in-use", message);
      return unavailable("broker-start-failed", message);
    }
    auto probed = probeServer(options_.host, port, kProbeTimeout);
    if (probed.isOk() && probed->serverName == options_.serverName &&
        (!options_.jetstream || probed->jetstream)) {
      return Status::ok();
    }
    if (probed.isOk() && probed->serverName != options_.serverName) {
      // Another server owns this port; ours will fail to bind and exit.
      lastProbe = unavailable(
          "port-in-use", "another NATS server ('" + probed->serverName + "') answers on " + where);
    } else if (!probed.isOk()) {
      lastProbe = probed.status();
    }
    if (SteadyClock::now() >= deadline) {
      return deadlineExceeded("broker-start-timeout",
                              "nats-server on " + where + " did not accept connections within " +
                                  std::to_string(options_.startTimeout.count()) + " ms (" +
                                  lastProbe.toString() + "); log " + options_.logPath + ":\n" +
                                  logTail(2048));
    }
    // Pause between probes by waiting on the child's exit, which also ends the wait early if
    // the server dies.
    auto waited = process_->wait(kProbePause);
    (void)waited;
  }
}

Status LocalBroker::launchOnSomePort() {
  if (options_.port > 0) return launch(options_.port);
  Status last = unavailable("no-free-port", "no free port found on " + options_.host);
  if (options_.preferredPort > 0) {
    for (int p = options_.preferredPort;
         p < options_.preferredPort + std::max(1, options_.portSearchSpan) && p <= 65535; ++p) {
      if (tryBind(options_.host, p) != p) continue;
      last = launch(p);
      if (last.isOk() || last.reason() != "port-in-use") return last;
    }
    return last;
  }
  for (int attempt = 0; attempt < kEphemeralAttempts; ++attempt) {
    int p = tryBind(options_.host, 0);
    if (p <= 0) {
      return unavailable("no-free-port", "cannot bind any port on " + options_.host);
    }
    last = launch(p);
    if (last.isOk() || last.reason() != "port-in-use") return last;
  }
  return last;
}

Status LocalBroker::stop() {
  if (!process_ || released_ || !process_->running()) return Status::ok();
  auto ended = process_->terminate(options_.stopGrace);
  if (!ended.isOk()) return ended.status().withContext("stopping nats-server");
  return Status::ok();
}

Status LocalBroker::kill9() {
  if (!process_ || released_ || !process_->running()) {
    return failedPrecondition("not-running", "nats-server is not running");
  }
  SHOAL_RETURN_IF_ERROR(process_->signal(SIGKILL));
  auto ended = process_->wait();
  if (!ended.isOk()) return ended.status().withContext("reaping nats-server");
  return Status::ok();
}

Status LocalBroker::restart() {
  SHOAL_RETURN_IF_ERROR(stop());
  return launch(port_);
}

void LocalBroker::release() {
  if (process_) process_->release();
  released_ = true;
}

}  // namespace shoal::transport
