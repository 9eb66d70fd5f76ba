// Connection: one RAII connection to a NATS server (nats.c underneath), with core messaging.
//
// `Connection::connect` opens it; the destructor closes it, waits for nats.c's "closed" callback
// (delivered to onEvent) and for any handler call in progress, and returns with the callback
// state disarmed: no handler of this connection runs afterwards, even when nats.c calls back
// late (it can, after "closed": README, nats.c facts).
// Core messaging lives here: publish, subscribe / queueSubscribe (RAII `Subscription`), request
// / respond. JetStream, pull consumers and KV build on it (jetstream.h, pull_consumer.h, kv.h).
//
// Asynchronous events. nats.c reports disconnects, reconnects, the final close and
// *asynchronous errors* on its own threads. The error handler is always installed: a publish or
// subscribe refused by the server's permissions is reported ONLY there (the call itself
// returned OK). Each one becomes a `ConnectionEvent` with a Status — kPermissionDenied, reason
// `permission-violation`, naming the subject when the server's text has it — handed to
// `ConnectOptions::onEvent`, and is also counted and kept as `lastAsyncError()`. Those events
// run on nats.c's callback thread and may come after a `flush()` that followed the refused
// operation has returned; nats.c records the refusal's text before it posts the event, so a
// subscribe is known to be accepted once `flush()` returned and `lastViolationText()` does not
// name its subject.
// When several refusals arrive together, nats.c keeps only the latest error text, so each of
// their events may name the latest refusal's subject: count refusals, or flush after each
// operation, when the subject matters (planes/grants_test.cc does).
//
// Inbox: every connection has an id `ibx` + 32 hex chars; its reply inbox prefix defaults to
// `_INBOX_<connId>` so permissions can grant one connection exactly its own inbox.
//
// Reconnect: on by default with an exponential delay (reconnectWait doubling up to
// reconnectWaitMax, ±10 % jitter), unlimited attempts (maxReconnect = -1). Pending requests
// fail with kUnavailable on a disconnect instead of waiting out their timeout.
//
// Thread safety: every method may be called from any thread. Handlers (onEvent, subscription
// callbacks) run on nats.c threads: they must be cheap and thread-safe, receive owned copies,
// and should only hand the data to their owner's executor. A subscription's handler calls are
// serialized (one at a time, in order).
// Lifetime: a Connection must outlive every Subscription, JetStream, PullConsumer, KeyValue and
// KvWatcher made from it. Destroying it closes the connection: their calls then fail with
// kUnavailable (`connection-closed`), they are never left dangling in memory.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "transport/message.h"

namespace shoal::transport {

namespace detail {
struct NatsAccess;
}

enum class ConnectionEventKind {
  kDisconnected,  // the link dropped; nats.c is reconnecting (if allowed)
  kReconnected,   // back on a server; subscriptions were re-sent
  kClosed,        // final: no more events, the connection is unusable
  kAsyncError,    // an asynchronous error (permission violation, slow consumer, …)
};

std::string_view connectionEventKindName(ConnectionEventKind kind);

struct ConnectionEvent {
  ConnectionEventKind kind = ConnectionEventKind::kAsyncError;
  // kAsyncError: the error (e.g. kPermissionDenied / `permission-violation`). Others: OK.
  Status status{};
  // The subject concerned, when known (the denied subject, or the subject of a Subscription or
  // PullConsumer of this connection; empty for subscriptions made inside nats.c, e.g. a
  // KvWatcher's).
  std::string subject{};
};

using ConnectionEventHandler = std::function<void(const ConnectionEvent&)>;

struct ConnectOptions {
  // Server URLs ("nats://127.0.0.1:4222"). Empty: nats://127.0.0.1:4222.
  std::vector<std::string> servers{};
  // Connection name shown by the server (monitoring, logs).
  std::string name{};
  // Reply inbox prefix; empty: "_INBOX_" + connId().
  std::string inboxPrefix{};
  // User/password authentication (empty: none).
  std::string user{};
  std::string password{};
  // A NATS .creds file (user JWT + seed) for decentralized auth (empty: none).
  std::string credentialsFile{};
  // A file holding a user nkey seed (`SU…`, nkey.h): the client signs the server's nonce with
  // it at every (re)connect; the seed never leaves this process. The local mesh's secret.
  std::string nkeySeedFile{};
  // A PEM file of the certificate authorities to trust. Non-empty: the connection requires TLS,
  // verifies the server's certificate against these roots only, and checks that it names the
  // first URL's host (tls_identity.h). A plaintext server is refused (`tls-required`).
  std::string tlsCaFile{};
  // Flush every publish immediately instead of batching (responders: replies leave at once).
  bool sendAsap = false;
  // Keep retrying an initial connect that fails (using the reconnect settings) instead of
  // failing at once.
  bool retryOnFailedConnect = false;
  bool allowReconnect = true;
  int maxReconnect = -1;  // -1: forever
  std::chrono::milliseconds reconnectWait{3000};
  std::chrono::milliseconds reconnectWaitMax{60000};
  std::chrono::milliseconds connectTimeout{2000};
  // Receives disconnected / reconnected / closed / async-error events (see the contract above).
  ConnectionEventHandler onEvent{};
};

enum class ConnectionState {
  kDisconnected,
  kConnecting,
  kConnected,
  kClosed,
  kReconnecting,
  kDraining
};

std::string_view connectionStateName(ConnectionState state);

// Counters kept by the connection itself (readable without an onEvent handler).
struct ConnectionStats {
  uint64_t disconnects = 0;
  uint64_t reconnects = 0;
  uint64_t asyncErrors = 0;
  uint64_t permissionViolations = 0;
};

struct ServerInfo {
  std::string serverId{};
  std::string serverName{};
  std::string version{};  // empty if the INFO probe could not run (e.g. TLS)
  std::string connectedUrl{};
  bool jetstream = false;  // this connection's account can use JetStream ($JS.API.INFO)
  int64_t maxPayload = 0;
  bool headers = false;
};

// Called for each message of a subscription, on a nats.c thread (see contract above).
using MessageHandler = std::function<void(Message)>;

class Subscription;

class Connection {
 public:
  static Result<std::unique_ptr<Connection>> connect(ConnectOptions options);

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // `ibx` + 32 hex chars, fixed for the life of this object.
  const std::string& connId() const;
  const std::string& inboxPrefix() const;
  // A fresh unique reply subject under inboxPrefix().
  std::string newInbox() const;

  ConnectionState state() const;
  ConnectionStats stats() const;
  // The most recent asynchronous error (OK if none yet).
  Status lastAsyncError() const;
  // nats.c's text of the latest permission violation on this connection ("" if none), e.g.
  // `Permissions Violation for Subscription to "a.b"`: current for everything sent before a
  // flush() that returned, as nats.c records it on its reader thread.
  std::string lastViolationText() const;

  // Round trip to the server: returns once it has processed everything sent before.
  Status flush(std::chrono::milliseconds timeout);
  Result<ServerInfo> serverInfo();
  Result<std::chrono::nanoseconds> rtt();

  Status publish(std::string_view subject, std::string_view data, const Headers& headers = {});
  // Publishes with a reply subject.
  Status publishRequest(std::string_view subject, std::string_view reply, std::string_view data,
                        const Headers& headers = {});
  Result<Subscription> subscribe(std::string_view subject, MessageHandler handler);
  Result<Subscription> queueSubscribe(std::string_view subject, std::string_view queue,
                                      MessageHandler handler);
  // Sends a request and waits for the first reply. No responder: kUnavailable, reason
  // `no-responders`. No reply in time: kDeadlineExceeded.
  Result<Message> request(std::string_view subject, std::string_view data,
                          std::chrono::milliseconds timeout, const Headers& headers = {});
  // Publishes `data` to `request.reply`. kInvalidArgument (`no-reply-subject`) if it has none.
  Status respond(const Message& request, std::string_view data, const Headers& headers = {});

  struct Impl;

 private:
  explicit Connection(std::unique_ptr<Impl> impl);
  friend struct detail::NatsAccess;
  std::unique_ptr<Impl> impl_;
};

// A core (at-most-once) subscription. The destructor unsubscribes and waits until the handler
// is no longer running; after it returns the handler is never called again. Destroying a
// Subscription from inside its own handler is allowed (it then does not wait for itself).
// Thread safety: the object is used by one thread at a time; its handler runs on nats.c's.
// Lifetime: move-only; must not outlive its Connection.
class Subscription {
 public:
  Subscription(Subscription&&) noexcept;
  Subscription& operator=(Subscription&&) noexcept;
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;
  ~Subscription();

  const std::string& subject() const;
  // Messages dropped because the handler fell behind (nats.c slow-consumer drops).
  uint64_t dropped() const;
  // How many messages / bytes may wait for the handler before nats.c drops (and reports a
  // `slow-consumer` async error). nats.c's default is 65536 messages / 64 MiB.
  Status setPendingLimits(int messages, int bytes);
  // Unsubscribes now (idempotent); waits like the destructor.
  void unsubscribe();

  struct State;

 private:
  explicit Subscription(std::unique_ptr<State> state);
  friend class Connection;
  std::unique_ptr<State> state_;
};

}  // namespace shoal::transport
