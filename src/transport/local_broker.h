// LocalBroker: one nats-server process on this machine, started, watched and stopped by us.
//
// `shoal up` uses it for the embedded broker (127.0.0.1, port 4222 or the next
// free one, JetStream store under the data dir); the test harness uses it for a throw-away
// server on a free port. It runs `nats-server -a <host> -p <port> [-js -sd <storeDir>]
// [-c <generated config>]`, appends the server's stdout/stderr to `logPath`, and returns from
// start() only once the server accepts connections (its INFO line is read over TCP and, with
// JetStream, says so). A server that exits or stays silent until the deadline fails the start
// with the tail of its log.
//
// Port choice: `port` > 0 is used as is; `port` == 0 tries `preferredPort` and the next
// `portSearchSpan` ports, or, without a preferred port, a free ephemeral port chosen by the
// kernel. A port lost to a race between our probe and the server's bind is retried.
//
// restart() brings the server back on the same host, port and store (after stop() or kill9()),
// so JetStream data written before survives.
//
// Thread safety: one thread at a time. Lifetime: move-only (held by unique_ptr); the destructor
// stops a running server (SIGTERM, then SIGKILL after the grace) unless release() was called.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "base/result.h"
#include "base/status.h"
#include "base/subprocess.h"

namespace shoal::transport {

struct LocalBrokerOptions {
  // Path of nats-server; empty: `nats-server` on PATH, then /usr/sbin, /usr/local/bin, /usr/bin.
  std::string serverBinary{};
  std::string host = "127.0.0.1";
  int port = 0;           // > 0: exactly this port
  int preferredPort = 0;  // with port == 0: try this one first, then the next ones
  int portSearchSpan = 100;
  // The server's working directory: the JetStream store lives in it, and the generated config
  // (when one is needed) and the default log are written there. Required.
  std::string storeDir{};
  std::string logPath{};  // empty: <storeDir>/nats-server.log
  bool jetstream = true;
  std::optional<int64_t> maxPayload{};
  // Extra nats-server configuration (e.g. an `authorization { … }` block), written to the
  // generated config file.
  std::string extraConfig{};
  std::vector<std::string> extraArgs{};
  // A PEM certificate chain and its key (tls_identity.h): the server then requires TLS of every
  // client, and url() is `tls://…`. Empty: plaintext.
  std::string tlsCertFile{};
  std::string tlsKeyFile{};
  std::string serverName{};  // empty: nats-server's default
  std::chrono::milliseconds startTimeout{15000};
  std::chrono::milliseconds stopGrace{5000};
  // Run the server in its own session (survives the terminal of whoever started it).
  bool newSession = false;
};

class LocalBroker {
 public:
  static Result<std::unique_ptr<LocalBroker>> start(LocalBrokerOptions options);

  // The nats-server binary that `serverBinary` (or the default search) resolves to, or
  // kFailedPrecondition (`nats-server-missing`) naming scripts/bootstrap.
  static Result<std::string> findServerBinary(const std::string& serverBinary = "");

  LocalBroker(const LocalBroker&) = delete;
  LocalBroker& operator=(const LocalBroker&) = delete;
  ~LocalBroker();

  // "nats://127.0.0.1:<port>" ("tls://…" with a certificate).
  std::string url() const;
  const std::string& host() const { return options_.host; }
  int port() const { return port_; }
  pid_t pid() const;
  bool running();
  const std::string& logPath() const { return options_.logPath; }
  const std::string& storeDir() const { return options_.storeDir; }
  // The last `maxBytes` of the server's log.
  std::string logTail(size_t maxBytes = 4096) const;

  // SIGTERM, wait up to stopGrace, then SIGKILL. Idempotent.
  Status stop();
  // SIGKILL now (a crash), and reap.
  Status kill9();
  // Starts again on the same host, port and store, after stop() or kill9() (or stops first).
  Status restart();
  // Leaves the server running and forgets it (the destructor will not stop it).
  void release();

 private:
  explicit LocalBroker(LocalBrokerOptions options) : options_(std::move(options)) {}
  Status launch(int port);
  Status launchOnSomePort();
  Status waitUntilReady(int port);
  Result<std::vector<std::string>> buildArgv(int port);

  LocalBrokerOptions options_;
  std::string binary_;
  int port_ = 0;
  std::optional<Subprocess> process_;
  bool released_ = false;
};

}  // namespace shoal::transport
