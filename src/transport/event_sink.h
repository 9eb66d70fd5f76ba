// EventSink: the state nats.c's connection callbacks reach (private to transport/).
//
// nats.c calls a connection's disconnected / reconnected / closed / error / reconnect-delay
// callbacks on its own threads, with an EventSink as the closure. The closed callback is NOT the
// last one: nats.c 3.4.1's ordered-consumer recreate thread (a KvWatcher's consumer, after a
// reconnect) can post an async error after it, handing over a subscription it has already freed
// (README, nats.c facts). Hence three rules:
//  - A sink is never freed. `Connection` disarms it after the closed callback and `retire()`s it
//    to a process-wide list: a deliberate, bounded leak of one small object per Connection,
//    kept reachable so leak checkers do not report it.
//  - Once disarmed, every callback is a no-op that touches only the sink's own members (its
//    mutex and flags): never the handler, the logger, the Connection or the natsConnection.
//  - The async-error callback never uses the subscription pointer it receives: it names the
//    subject from the sink's registry of live subscriptions, comparing pointer values only.
//    A subscription it does not know (a KvWatcher's, inside nats.c) is reported without one.
//    nats.c may reuse a freed subscription's address, so a late error can, at worst, be
//    attributed to a newer subscription's subject; it is never a memory error.
//
// Thread safety: every method may be called from any thread; the static callbacks run on nats.c
// threads. The handler runs outside the sink's lock, one callback at a time per nats.c thread.
// Lifetime: created by Connection::connect, never destroyed once handed to nats.c (retire()).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include <nats/nats.h>

#include "base/mutex.h"
#include "base/status.h"
#include "transport/connection.h"

namespace shoal::transport::detail {

class EventSink {
 public:
  EventSink(ConnectionEventHandler handler, int64_t reconnectWaitMs, int64_t reconnectWaitMaxMs);
  EventSink(const EventSink&) = delete;
  EventSink& operator=(const EventSink&) = delete;

  // nats.c callbacks; `closure` is the EventSink.
  static void onDisconnected(natsConnection* nc, void* closure);
  static void onReconnected(natsConnection* nc, void* closure);
  static void onClosed(natsConnection* nc, void* closure);
  static void onAsyncError(natsConnection* nc, natsSubscription* sub, natsStatus err,
                           void* closure);
  static int64_t reconnectDelay(natsConnection* nc, int attempts, void* closure);

  // The registry of live subscriptions: call remember once `sub` is created, and forget BEFORE
  // destroying it (so a reused address never carries a stale subject). `sub` is never
  // dereferenced. Both are no-ops once the sink is disarmed.
  void rememberSubject(const natsSubscription* sub, std::string subject);
  void forgetSubject(const natsSubscription* sub);

  ConnectionStats stats() const;
  Status lastAsyncError() const;

  // Waits up to `limit` for the closed callback; returns whether it has run.
  bool waitClosed(std::chrono::milliseconds limit);
  // From now on every callback is a no-op. Waits up to `limit` for callbacks already inside the
  // handler to return (not for the calling thread's own, if it is inside one), then drops the
  // handler and the registry. Returns false if one was still running at the limit (the handler
  // is then kept, since it is still in use). Idempotent.
  bool disarm(std::chrono::milliseconds limit);
  bool armed() const;

  // Keeps `sink` for the rest of the process, reachable from a global list (never freed: nats.c
  // may call into it at any time). Disarm it first.
  static void retire(std::unique_ptr<EventSink> sink);
  // How many sinks retire() has kept (for tests and diagnostics).
  static uint64_t retiredCount();

 private:
  class Visit;

  void emit(const ConnectionEvent& event);
  std::string subjectOf(const natsSubscription* sub) const;

  // Constant after construction.
  const int64_t reconnectWaitMs_;
  const int64_t reconnectWaitMaxMs_;

  // Set at construction; called only inside a Visit while armed; dropped by disarm() once no
  // Visit is running, so never written while a callback reads it.
  ConnectionEventHandler handler_;

  std::atomic<uint64_t> disconnects_{0};
  std::atomic<uint64_t> reconnects_{0};
  std::atomic<uint64_t> asyncErrors_{0};
  std::atomic<uint64_t> permissionViolations_{0};

  mutable Mutex mu_;
  CondVar cv_;  // notified on closed_ and when running_ drops
  bool armed_ SHOAL_GUARDED_BY(mu_) = true;
  int running_ SHOAL_GUARDED_BY(mu_) = 0;  // callbacks past the armed check (Visits)
  bool closed_ SHOAL_GUARDED_BY(mu_) = false;
  Status lastAsyncError_ SHOAL_GUARDED_BY(mu_);
  // Subscription pointer value → its subject. Keys are compared, never dereferenced.
  std::unordered_map<std::uintptr_t, std::string> subjects_ SHOAL_GUARDED_BY(mu_);

  EventSink* nextRetired_ = nullptr;  // the retired list (written once, by retire())
};

}  // namespace shoal::transport::detail
