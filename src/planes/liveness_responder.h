// LivenessResponder: one plane's answer to liveness probes (seed 000 "Plane liveness";
// Cotal SPEC §6.1), and responderFromLease, the delivery plane's self-grading rule.
//
// The responder serves `cotal.<space>.live.<plane>.*.*` in the queue group `live.<plane>` (one
// probe, one answer) and replies `{"plane":…,"responder":<grader()>,"instance":<token>}` to
// the request's reply subject. A request whose reply subject is not exactly
// `<request subject>.reply.<token>` is dropped with a warning and counted; the responder keeps
// serving. The instance token is opaque (random hex), minted when the responder binds and
// minted again by onReconnected(): nats.c re-sends the subscription on a reconnect, and the new
// token tells a caller it is talking to a new binding. A replacement Connection needs a new
// LivenessResponder (which mints its own token).
//
// The responder's connection should be made with ConnectOptions::sendAsap so answers leave at
// once.
//
// Thread safety: the handler runs on a nats.c thread; instance(), counters and onReconnected()
// may be called from any thread. The grader is called on the nats.c thread and must be cheap
// and thread-safe.
// Lifetime: must not outlive the Connection; the destructor unsubscribes and waits for a running
// handler.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "transport/connection.h"
#include "wire/liveness.h"
#include "wire/plane.h"

namespace shoal::planes {

// Delivery-plane self-grading from its own shard lease row (cotal_delivery_<space> `lease.0`,
// value {holder, since, ready, incarnation?}):
//   no row (nullopt), or ready != true                    → unbound
//   ready row held by another holder or incarnation       → stale
//   ready row with holder == ownHolder and incarnation == ownIncarnation → bound
//   a value that does not parse as a lease row            → unknown
// A caller whose KV read itself failed answers unknown without calling this.
wire::Responder responderFromLease(const std::optional<std::string>& leaseValue,
                                   std::string_view ownHolder, std::string_view ownIncarnation);

class LivenessResponder {
 public:
  using Grader = std::function<wire::Responder()>;

  // Subscribes and flushes (so the binding is in place when this returns).
  static Result<std::unique_ptr<LivenessResponder>> bind(transport::Connection& conn,
                                                         std::string_view space, wire::Plane plane,
                                                         Grader grader);

  LivenessResponder(const LivenessResponder&) = delete;
  LivenessResponder& operator=(const LivenessResponder&) = delete;
  ~LivenessResponder();

  // Mints a new instance token (call on the connection's kReconnected event).
  Status onReconnected();
  std::string instance() const;
  uint64_t answered() const { return answered_.load(); }
  uint64_t dropped() const { return dropped_.load(); }

 private:
  LivenessResponder(transport::Connection& conn, wire::Plane plane, Grader grader);
  void handle(const transport::Message& request);

  transport::Connection& conn_;
  const wire::Plane plane_;
  const Grader grader_;
  mutable std::mutex mu_;
  std::string instance_;  // guarded by mu_
  std::atomic<uint64_t> answered_{0};
  std::atomic<uint64_t> dropped_{0};
  std::optional<transport::Subscription> sub_;  // set once in bind(); reset first on destroy
};

}  // namespace shoal::planes
