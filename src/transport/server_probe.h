// Server probe: opens a plain TCP connection to a NATS server, reads the INFO line the server
// sends first, and closes. It answers "is a NATS server accepting connections here, which one,
// which version, with JetStream?" without a client library connection.
//
// Used by LocalBroker to wait for a started nats-server, by Connection::serverInfo() for the
// server version (nats.c does not expose it), and by `shoal status`.
//
// A refused or timed-out connection is kUnavailable (reason `server-unreachable`); a peer that
// does not speak NATS is kFailedPrecondition (reason `not-a-nats-server`).
//
// Thread safety: may be called from any thread. Blocks for at most `timeout`.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "base/result.h"

namespace shoal::transport {

struct ProbedServerInfo {
  std::string serverId{};
  std::string serverName{};
  std::string version{};
  bool jetstream = false;  // the server runs JetStream (its INFO says so)
  int64_t maxPayload = 0;
  bool headers = false;
  bool authRequired = false;
  bool tlsRequired = false;
};

Result<ProbedServerInfo> probeServer(const std::string& host, int port,
                                     std::chrono::milliseconds timeout);

// The same probe, with the socket left open after the INFO line so the caller can go on with
// the protocol (a TLS handshake: tls_identity.h). The socket is non-blocking; the object owns
// it (move-only; the destructor closes it).
class ProbedSocket {
 public:
  explicit ProbedSocket(int fd) : fd_(fd) {}
  ProbedSocket(ProbedSocket&& other) noexcept;
  ProbedSocket& operator=(ProbedSocket&&) = delete;
  ProbedSocket(const ProbedSocket&) = delete;
  ProbedSocket& operator=(const ProbedSocket&) = delete;
  ~ProbedSocket();

  int fd() const { return fd_; }
  ProbedServerInfo info{};

 private:
  int fd_ = -1;
};
Result<ProbedSocket> probeServerKeepingSocket(const std::string& host, int port,
                                              std::chrono::milliseconds timeout);

// Splits "nats://host:port" (scheme optional, default port 4222) into host and port.
Result<std::pair<std::string, int>> parseServerUrl(const std::string& url);

}  // namespace shoal::transport
