#include "transport/connection.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <boost/json.hpp>

#include "base/file_system.h"
#include "base/ids.h"
#include "base/log.h"
#include "transport/event_sink.h"
#include "transport/nats_internal.h"
#include "transport/nkey.h"
#include "transport/server_probe.h"
#include "transport/status_map.h"

namespace shoal::transport {

// ---------------------------------------------------------------------------------------------
// Helpers shared by the transport .cc files (declared in nats_internal.h).

namespace detail {

Status natsError(natsStatus s, std::string_view operation, jsErrCode js) {
  // nats.c keeps the last error per thread and some calls fail without setting it: use the
  // text only when it belongs to this failure, never a stale one from an earlier call.
  natsStatus lastStatus = NATS_OK;
  const char* text = nats_GetLastError(&lastStatus);
  std::string_view usable;
  if (text != nullptr && lastStatus == s) usable = text;
  return statusFromNats(static_cast<int>(s), static_cast<int>(js), operation, usable);
}

int64_t timeoutMs(std::chrono::milliseconds d) {
  return std::max<int64_t>(1, d.count());
}

std::string nulTerminated(std::string_view s) {
  return std::string(s);
}

Headers readHeaders(natsMsg* msg) {
  Headers out;
  const char** keys = nullptr;
  int keyCount = 0;
  if (natsMsgHeader_Keys(msg, &keys, &keyCount) != NATS_OK || keys == nullptr) return out;
  for (int i = 0; i < keyCount; ++i) {
    const char** values = nullptr;
    int valueCount = 0;
    if (natsMsgHeader_Values(msg, keys[i], &values, &valueCount) == NATS_OK && values) {
      for (int j = 0; j < valueCount; ++j)
        out.emplace_back(keys[i], values[j] ? values[j] : "");
      free(static_cast<void*>(values));
    }
  }
  free(static_cast<void*>(keys));
  return out;
}

Message toMessage(natsMsg* msg) {
  Message m;
  if (const char* s = natsMsg_GetSubject(msg)) m.subject = s;
  if (const char* r = natsMsg_GetReply(msg)) m.reply = r;
  const char* data = natsMsg_GetData(msg);
  int len = natsMsg_GetDataLength(msg);
  if (data != nullptr && len > 0) m.data.assign(data, static_cast<size_t>(len));
  m.headers = readHeaders(msg);
  return m;
}

Result<MsgPtr> makeMsg(std::string_view subject, std::string_view reply, std::string_view data,
                       const Headers& headers) {
  if (data.size() > static_cast<size_t>(INT32_MAX)) {
    return resourceExhausted("max-payload", "payload larger than 2 GiB");
  }
  std::string subj(subject);
  std::string rep(reply);
  natsMsg* raw = nullptr;
  natsStatus s = natsMsg_Create(&raw, subj.c_str(), rep.empty() ? nullptr : rep.c_str(),
                                data.data(), static_cast<int>(data.size()));
  if (s != NATS_OK) return natsError(s, "building a message for '" + subj + "'");
  MsgPtr msg(raw);
  for (const auto& [name, value] : headers) {
    s = natsMsgHeader_Add(msg.get(), name.c_str(), value.c_str());
    if (s != NATS_OK) return natsError(s, "adding header '" + name + "'");
  }
  return msg;
}

}  // namespace detail

std::optional<std::string> findHeader(const Headers& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (k == name) return v;
  }
  return std::nullopt;
}

std::string_view connectionEventKindName(ConnectionEventKind kind) {
  switch (kind) {
    case ConnectionEventKind::kDisconnected:
      return "disconnected";
    case ConnectionEventKind::kReconnected:
      return "reconnected";
    case ConnectionEventKind::kClosed:
      return "closed";
    case ConnectionEventKind::kAsyncError:
      return "async-error";
  }
  return "unknown";
}

std::string_view connectionStateName(ConnectionState state) {
  switch (state) {
    case ConnectionState::kDisconnected:
      return "disconnected";
    case ConnectionState::kConnecting:
      return "connecting";
    case ConnectionState::kConnected:
      return "connected";
    case ConnectionState::kClosed:
      return "closed";
    case ConnectionState::kReconnecting:
      return "reconnecting";
    case ConnectionState::kDraining:
      return "draining";
  }
  return "unknown";
}

namespace {

using detail::EventSink;
using detail::natsError;
using detail::timeoutMs;

// How long a destructor waits for nats.c to confirm that no callback will run any more. Past
// it, the callback state is deliberately leaked rather than freed under a running callback.
constexpr std::chrono::seconds kCallbackDrainLimit{10};

// Owns a natsOptions for the duration of connect().
struct OptionsDeleter {
  void operator()(natsOptions* o) const { natsOptions_Destroy(o); }
};

}  // namespace

struct Connection::Impl {
  natsConnection* nc = nullptr;
  std::string connId;
  std::string inboxPrefix;
  // The state nats.c's callbacks reach. Never freed: ~Connection disarms and retires it.
  std::unique_ptr<EventSink> sink;
  std::atomic<uint64_t> inboxCounter{0};
};

natsConnection* detail::NatsAccess::connection(const Connection& c) {
  return c.impl_->nc;
}

EventSink* detail::NatsAccess::sink(const Connection& c) {
  return c.impl_->sink.get();
}

Connection::Connection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Connection::~Connection() {
  if (!impl_) return;
  natsConnection_Close(impl_->nc);
  // Wait for the closed callback (onEvent sees kClosed), then disarm: the closed callback is not
  // nats.c's last call into the sink (event_sink.h), so every later callback must find it
  // disarmed, and the sink is kept for the rest of the process instead of being freed.
  const bool closed = impl_->sink->waitClosed(kCallbackDrainLimit);
  const bool drained = impl_->sink->disarm(kCallbackDrainLimit);
  natsConnection_Destroy(impl_->nc);
  if (!closed) {
    log::warn("transport: connection {} did not report closed within {} s", impl_->connId,
              kCallbackDrainLimit.count());
  }
  if (!drained) {
    log::warn("transport: an event handler of connection {} was still running after {} s",
              impl_->connId, kCallbackDrainLimit.count());
  }
  EventSink::retire(std::move(impl_->sink));
}

namespace {

constexpr int kNkeyConnectAttempts = 4;

// The public key of the seed stored in `path`, named failures otherwise.
Result<std::string> nkeyPublicOfFile(const std::string& path) {
  auto text = FileSystem::posix().readFile(path);
  if (!text.isOk()) {
    return Status(
        text.status().code(), "nkey-unreadable",
        "reading the broker secret " + path + ": " + std::string(text.status().message()));
  }
  auto pair = nkeyFromSeed(*text);
  if (!pair.isOk()) {
    return invalidArgument("bad-nkey-seed", "the broker secret " + path +
                                                " does not hold an nkey seed (" +
                                                std::string(pair.status().message()) + ")");
  }
  return pair->publicKey;
}

}  // namespace

Result<std::unique_ptr<Connection>> Connection::connect(ConnectOptions options) {
  natsOptions* rawOpts = nullptr;
  natsStatus s = natsOptions_Create(&rawOpts);
  if (s != NATS_OK) return natsError(s, "creating connection options");
  std::unique_ptr<natsOptions, OptionsDeleter> opts(rawOpts);

  auto impl = std::make_unique<Impl>();
  SHOAL_ASSIGN_OR_RETURN(std::string hex, newHexToken(16));
  impl->connId = "ibx" + hex;
  impl->inboxPrefix = options.inboxPrefix.empty() ? "_INBOX_" + impl->connId : options.inboxPrefix;

  if (options.servers.empty()) options.servers.push_back("nats://127.0.0.1:4222");
  std::vector<const char*> servers;
  for (const auto& url : options.servers)
    servers.push_back(url.c_str());
  std::string serverList;
  for (const auto& url : options.servers)
    serverList += (serverList.empty() ? "" : ",") + url;
  const std::string what = "connecting to " + serverList;

  auto sink = std::make_unique<EventSink>(std::move(options.onEvent), options.reconnectWait.count(),
                                          options.reconnectWaitMax.count());

  auto check = [&](natsStatus st, const char* step) -> Status {
    if (st == NATS_OK) return Status::ok();
    return natsError(st, what + " (" + step + ")");
  };
  SHOAL_RETURN_IF_ERROR(
      check(natsOptions_SetServers(opts.get(), servers.data(), static_cast<int>(servers.size())),
            "servers"));
  natsOptions_SetNoRandomize(opts.get(), true);
  if (!options.name.empty()) {
    SHOAL_RETURN_IF_ERROR(check(natsOptions_SetName(opts.get(), options.name.c_str()), "name"));
  }
  SHOAL_RETURN_IF_ERROR(check(
      natsOptions_SetCustomInboxPrefix(opts.get(), impl->inboxPrefix.c_str()), "inbox prefix"));
  if (!options.user.empty()) {
    SHOAL_RETURN_IF_ERROR(
        check(natsOptions_SetUserInfo(opts.get(), options.user.c_str(), options.password.c_str()),
              "user"));
  }
  if (!options.credentialsFile.empty()) {
    SHOAL_RETURN_IF_ERROR(check(natsOptions_SetUserCredentialsFromFiles(
                                    opts.get(), options.credentialsFile.c_str(), nullptr),
                                "credentials"));
  }
  if (!options.nkeySeedFile.empty()) {
    SHOAL_ASSIGN_OR_RETURN(std::string publicKey, nkeyPublicOfFile(options.nkeySeedFile));
    SHOAL_RETURN_IF_ERROR(check(
        natsOptions_SetNKeyFromSeed(opts.get(), publicKey.c_str(), options.nkeySeedFile.c_str()),
        "nkey"));
  }
  if (!options.tlsCaFile.empty()) {
    SHOAL_RETURN_IF_ERROR(check(natsOptions_SetSecure(opts.get(), true), "tls"));
    SHOAL_RETURN_IF_ERROR(check(
        natsOptions_LoadCATrustedCertificates(opts.get(), options.tlsCaFile.c_str()), "tls ca"));
    if (!options.servers.empty()) {
      SHOAL_ASSIGN_OR_RETURN(auto hostPort, parseServerUrl(options.servers.front()));
      SHOAL_RETURN_IF_ERROR(
          check(natsOptions_SetExpectedHostname(opts.get(), hostPort.first.c_str()), "tls host"));
    }
  }
  SHOAL_RETURN_IF_ERROR(check(natsOptions_SetSendAsap(opts.get(), options.sendAsap), "send asap"));
  SHOAL_RETURN_IF_ERROR(
      check(natsOptions_SetTimeout(opts.get(), timeoutMs(options.connectTimeout)), "timeout"));
  SHOAL_RETURN_IF_ERROR(
      check(natsOptions_SetAllowReconnect(opts.get(), options.allowReconnect), "allow reconnect"));
  SHOAL_RETURN_IF_ERROR(
      check(natsOptions_SetMaxReconnect(opts.get(), options.maxReconnect), "max reconnect"));
  SHOAL_RETURN_IF_ERROR(
      check(natsOptions_SetCustomReconnectDelay(opts.get(), &EventSink::reconnectDelay, sink.get()),
            "reconnect delay"));
  SHOAL_RETURN_IF_ERROR(check(natsOptions_SetFailRequestsOnDisconnect(opts.get(), true),
                              "fail requests on disconnect"));
  SHOAL_RETURN_IF_ERROR(
      check(natsOptions_SetErrorHandler(opts.get(), &EventSink::onAsyncError, sink.get()),
            "error handler"));
  SHOAL_RETURN_IF_ERROR(
      check(natsOptions_SetDisconnectedCB(opts.get(), &EventSink::onDisconnected, sink.get()),
            "disconnected"));
  SHOAL_RETURN_IF_ERROR(
      check(natsOptions_SetReconnectedCB(opts.get(), &EventSink::onReconnected, sink.get()),
            "reconnected"));
  SHOAL_RETURN_IF_ERROR(
      check(natsOptions_SetClosedCB(opts.get(), &EventSink::onClosed, sink.get()), "closed"));
  if (options.retryOnFailedConnect) {
    SHOAL_RETURN_IF_ERROR(
        check(natsOptions_SetRetryOnFailedConnect(opts.get(), true, nullptr, nullptr), "retry"));
  }

  natsConnection* nc = nullptr;
  s = natsConnection_Connect(&nc, opts.get());
  // nats-server 2.9 refuses a correctly signed nonce now and then (measured: 6–11 of 2,000
  // connects, with nats.c's signer and with OpenSSL's): an nkey or a `.creds` refusal is tried
  // again a few times before it counts; a wrong key or a revoked or expired user is refused
  // every time. The retry also reads a `.creds` file again, which nats.c reads twice per
  // handshake (the JWT, then the seed): a file replaced by a fresh mint between the two reads
  // pairs one mint's JWT with another's seed.
  const bool signs = !options.nkeySeedFile.empty() || !options.credentialsFile.empty();
  for (int attempt = 1; s == NATS_CONNECTION_AUTH_FAILED && signs && attempt < kNkeyConnectAttempts;
       ++attempt) {
    log::debug("transport: {} refused the nkey signature (attempt {}); trying again", serverList,
               attempt);
    nc = nullptr;
    // A broker that has just started in operator mode refuses users for a few milliseconds.
    std::this_thread::sleep_for(std::chrono::milliseconds(25 * attempt));
    s = natsConnection_Connect(&nc, opts.get());
  }
  if (s != NATS_OK) {
    Status failed = natsError(s, what);
    // With retries, nats.c may still call back after a failed connect: disarm the sink and keep
    // it (the caller's handler must not run once connect() has returned).
    if (options.retryOnFailedConnect) {
      (void)sink->disarm(kCallbackDrainLimit);
      EventSink::retire(std::move(sink));
    }
    return failed;
  }
  impl->nc = nc;
  impl->sink = std::move(sink);
  return std::unique_ptr<Connection>(new Connection(std::move(impl)));
}

const std::string& Connection::connId() const {
  return impl_->connId;
}
const std::string& Connection::inboxPrefix() const {
  return impl_->inboxPrefix;
}

std::string Connection::newInbox() const {
  return impl_->inboxPrefix + "." +
         std::to_string(impl_->inboxCounter.fetch_add(1, std::memory_order_relaxed) + 1);
}

ConnectionState Connection::state() const {
  switch (natsConnection_Status(impl_->nc)) {
    case NATS_CONN_STATUS_DISCONNECTED:
      return ConnectionState::kDisconnected;
    case NATS_CONN_STATUS_CONNECTING:
      return ConnectionState::kConnecting;
    case NATS_CONN_STATUS_CONNECTED:
      return ConnectionState::kConnected;
    case NATS_CONN_STATUS_CLOSED:
      return ConnectionState::kClosed;
    case NATS_CONN_STATUS_RECONNECTING:
      return ConnectionState::kReconnecting;
    case NATS_CONN_STATUS_DRAINING_SUBS:
    case NATS_CONN_STATUS_DRAINING_PUBS:
      return ConnectionState::kDraining;
  }
  return ConnectionState::kDisconnected;
}

ConnectionStats Connection::stats() const {
  return impl_->sink->stats();
}

Status Connection::lastAsyncError() const {
  return impl_->sink->lastAsyncError();
}

std::string Connection::lastViolationText() const {
  const char* text = nullptr;
  if (natsConnection_GetLastError(impl_->nc, &text) != NATS_NOT_PERMITTED || text == nullptr) {
    return "";
  }
  return text;
}

Status Connection::flush(std::chrono::milliseconds timeout) {
  natsStatus s = natsConnection_FlushTimeout(impl_->nc, timeoutMs(timeout));
  if (s != NATS_OK) return natsError(s, "flush");
  return Status::ok();
}

Result<ServerInfo> Connection::serverInfo() {
  ServerInfo info;
  char buf[512];
  natsStatus s = natsConnection_GetConnectedServerId(impl_->nc, buf, sizeof(buf));
  if (s != NATS_OK) return natsError(s, "reading the connected server id");
  info.serverId = buf;
  s = natsConnection_GetConnectedUrl(impl_->nc, buf, sizeof(buf));
  if (s != NATS_OK) return natsError(s, "reading the connected url");
  info.connectedUrl = buf;
  info.maxPayload = natsConnection_GetMaxPayload(impl_->nc);
  info.headers = natsConnection_HasHeaderSupport(impl_->nc) == NATS_OK;

  // nats.c does not expose the server version: read it from the server's INFO line.
  if (auto hostPort = parseServerUrl(info.connectedUrl); hostPort.isOk()) {
    auto probed = probeServer(hostPort->first, hostPort->second, std::chrono::seconds(2));
    if (probed.isOk()) {
      info.version = probed->version;
      info.serverName = probed->serverName;
    }
  }

  // JetStream as this connection's account sees it.
  auto reply = request("$JS.API.INFO", "", std::chrono::seconds(2));
  if (reply.isOk()) {
    boost::json::error_code ec;
    auto v = boost::json::parse(reply->data, ec);
    info.jetstream = !ec && v.is_object() && !v.as_object().contains("error");
  } else if (reply.status().reason() != "no-responders" &&
             reply.status().code() != StatusCode::kDeadlineExceeded) {
    return reply.status().withContext("asking the server about JetStream");
  }
  return info;
}

Result<std::chrono::nanoseconds> Connection::rtt() {
  int64_t ns = 0;
  natsStatus s = natsConnection_GetRTT(impl_->nc, &ns);
  if (s != NATS_OK) return natsError(s, "measuring rtt");
  return std::chrono::nanoseconds(ns);
}

Status Connection::publish(std::string_view subject, std::string_view data,
                           const Headers& headers) {
  return publishRequest(subject, "", data, headers);
}

Status Connection::publishRequest(std::string_view subject, std::string_view reply,
                                  std::string_view data, const Headers& headers) {
  SHOAL_ASSIGN_OR_RETURN(auto msg, detail::makeMsg(subject, reply, data, headers));
  natsStatus s = natsConnection_PublishMsg(impl_->nc, msg.get());
  if (s != NATS_OK) return natsError(s, "publish to '" + std::string(subject) + "'");
  return Status::ok();
}

Result<Message> Connection::request(std::string_view subject, std::string_view data,
                                    std::chrono::milliseconds timeout, const Headers& headers) {
  SHOAL_ASSIGN_OR_RETURN(auto msg, detail::makeMsg(subject, "", data, headers));
  natsMsg* reply = nullptr;
  natsStatus s = natsConnection_RequestMsg(&reply, impl_->nc, msg.get(), timeoutMs(timeout));
  if (s != NATS_OK) return natsError(s, "request to '" + std::string(subject) + "'");
  detail::MsgPtr owned(reply);
  return detail::toMessage(owned.get());
}

Status Connection::respond(const Message& request, std::string_view data, const Headers& headers) {
  if (request.reply.empty()) {
    return invalidArgument("no-reply-subject",
                           "the request on '" + request.subject + "' has no reply subject");
  }
  return publish(request.reply, data, headers);
}

// ---------------------------------------------------------------------------------------------
// Subscription

struct Subscription::State {
  natsSubscription* sub = nullptr;
  EventSink* sink = nullptr;  // not owned; sinks are never freed (event_sink.h)
  std::string subject;
  MessageHandler handler;

  std::mutex mu;
  std::condition_variable cv;
  bool complete = false;  // guarded by mu: nats.c will not call the handler again
  bool orphaned = false;  // guarded by mu: the owner is gone; onComplete frees this state
};

namespace {

// The subscription whose handler runs on this thread right now (self-destroy detection).
thread_local const Subscription::State* tRunningHandler = nullptr;

void onSubscriptionMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* state = static_cast<Subscription::State*>(closure);
  detail::MsgPtr owned(msg);
  Message m = detail::toMessage(owned.get());
  owned.reset();
  tRunningHandler = state;
  try {
    state->handler(std::move(m));
  } catch (const std::exception& e) {
    log::error("transport: handler for '{}' threw: {}", state->subject, e.what());
  } catch (...) {
    log::error("transport: handler for '{}' threw a non-exception", state->subject);
  }
  tRunningHandler = nullptr;
}

void onSubscriptionComplete(void* closure) {
  auto* state = static_cast<Subscription::State*>(closure);
  std::unique_lock lock(state->mu);
  state->complete = true;
  if (state->orphaned) {
    lock.unlock();
    delete state;
    return;
  }
  state->cv.notify_all();
}

Result<Subscription::State*> startSubscription(const Connection& conn, std::string_view subject,
                                               std::string_view queue, MessageHandler handler) {
  if (!handler) return invalidArgument("no-handler", "a subscription needs a message handler");
  natsConnection* nc = detail::NatsAccess::connection(conn);
  auto state = std::make_unique<Subscription::State>();
  state->sink = detail::NatsAccess::sink(conn);
  state->subject = std::string(subject);
  state->handler = std::move(handler);
  std::string q(queue);
  natsStatus s;
  if (q.empty()) {
    s = natsConnection_Subscribe(&state->sub, nc, state->subject.c_str(), &onSubscriptionMessage,
                                 state.get());
  } else {
    s = natsConnection_QueueSubscribe(&state->sub, nc, state->subject.c_str(), q.c_str(),
                                      &onSubscriptionMessage, state.get());
  }
  if (s != NATS_OK) return natsError(s, "subscribe to '" + state->subject + "'");
  s = natsSubscription_SetOnCompleteCB(state->sub, &onSubscriptionComplete, state.get());
  if (s != NATS_OK) {
    Status failed = natsError(s, "subscribe to '" + state->subject + "'");
    natsSubscription_Unsubscribe(state->sub);
    natsSubscription_Destroy(state->sub);
    // The handler may have run already and the delivery thread may still hold the closure.
    (void)state.release();
    return failed;
  }
  // For the async-error handler, which must not ask nats.c for the subject (event_sink.h).
  state->sink->rememberSubject(state->sub, state->subject);
  return state.release();
}

}  // namespace

Result<Subscription> Connection::subscribe(std::string_view subject, MessageHandler handler) {
  SHOAL_ASSIGN_OR_RETURN(auto* state, startSubscription(*this, subject, "", std::move(handler)));
  return Subscription(std::unique_ptr<Subscription::State>(state));
}

Result<Subscription> Connection::queueSubscribe(std::string_view subject, std::string_view queue,
                                                MessageHandler handler) {
  if (queue.empty()) return invalidArgument("empty-queue", "a queue subscription needs a queue");
  SHOAL_ASSIGN_OR_RETURN(auto* state, startSubscription(*this, subject, queue, std::move(handler)));
  return Subscription(std::unique_ptr<Subscription::State>(state));
}

Subscription::Subscription(std::unique_ptr<State> state) : state_(std::move(state)) {}
Subscription::Subscription(Subscription&&) noexcept = default;
Subscription& Subscription::operator=(Subscription&& other) noexcept {
  if (this != &other) {
    unsubscribe();
    state_ = std::move(other.state_);
  }
  return *this;
}
Subscription::~Subscription() {
  unsubscribe();
}

const std::string& Subscription::subject() const {
  static const std::string kEmpty;
  return state_ ? state_->subject : kEmpty;
}

uint64_t Subscription::dropped() const {
  if (!state_) return 0;
  int64_t n = 0;
  if (natsSubscription_GetDropped(state_->sub, &n) != NATS_OK) return 0;
  return static_cast<uint64_t>(n);
}

Status Subscription::setPendingLimits(int messages, int bytes) {
  if (!state_) return failedPrecondition("unsubscribed", "the subscription has ended");
  natsStatus s = natsSubscription_SetPendingLimits(state_->sub, messages, bytes);
  if (s != NATS_OK) return natsError(s, "set pending limits on '" + state_->subject + "'");
  return Status::ok();
}

void Subscription::unsubscribe() {
  if (!state_) return;
  State* state = state_.get();
  // Forget it before the pointer can be freed (and its address reused).
  state->sink->forgetSubject(state->sub);
  natsSubscription_Unsubscribe(state->sub);  // fails harmlessly if the connection closed
  if (tRunningHandler == state) {
    // Called from inside our own handler: it cannot wait for itself. onComplete frees the state
    // once the handler has returned.
    natsSubscription_Destroy(state->sub);
    std::lock_guard lock(state->mu);
    if (!state->complete) {
      state->orphaned = true;
      (void)state_.release();
      return;
    }
  } else {
    bool drained;
    {
      std::unique_lock lock(state->mu);
      drained = state->cv.wait_for(lock, kCallbackDrainLimit, [&] { return state->complete; });
      if (!drained) state->orphaned = true;
    }
    natsSubscription_Destroy(state->sub);
    if (!drained) {
      log::warn("transport: handler for '{}' still running after {} s; leaking its state",
                state->subject, kCallbackDrainLimit.count());
      (void)state_.release();
      return;
    }
  }
  state_.reset();
}

}  // namespace shoal::transport
