// DurablePump: one thread that keeps fetching from a bound durable consumer (a DM durable, a
// role's svc durable) and hands each message to its owner, who acks, naks or terms it.
//
// The loop: fetch up to `batch` messages, waiting at most `wait`; hand each to `admit` in
// stream order (or the whole batch to `admitBatch`, for an owner that makes a batch durable in
// one write); repeat until stop(). A failed fetch is reported on `onProblem` once when the
// problem starts (and once with OK when fetching works again), then retried after `retryDelay`
// — a broker restart or a deleted durable never ends the pump silently and never spins.
// Messages of a batch still unhanded when stop() is called are nak'ed (redelivered at once to
// the next binder, not after the 60 s ack wait).
//
// Thread safety: `admit` and `onProblem` run on the pump's thread. stop() may be called from
// any thread except the pump's own.
// Lifetime: the destructor stops and joins the thread (at most `wait` plus one admit).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "transport/pull_consumer.h"

namespace shoal::mesh {

struct DurablePumpOptions {
  int batch = 64;
  std::chrono::milliseconds wait{500};
  std::chrono::milliseconds retryDelay{500};
};

class DurablePump {
 public:
  using Admit = std::function<void(transport::JsMessage&)>;
  using AdmitBatch = std::function<void(std::vector<transport::JsMessage>&)>;
  using ProblemHandler = std::function<void(const Status&)>;

  DurablePump(transport::PullConsumer consumer, Admit admit, ProblemHandler onProblem,
              DurablePumpOptions options = {});
  DurablePump(transport::PullConsumer consumer, AdmitBatch admitBatch, ProblemHandler onProblem,
              DurablePumpOptions options = {});
  ~DurablePump();
  DurablePump(const DurablePump&) = delete;
  DurablePump& operator=(const DurablePump&) = delete;

  const std::string& durable() const { return durable_; }
  // Stops fetching and joins the thread. Idempotent.
  void stop();
  uint64_t fetched() const { return fetched_.load(); }

 private:
  void run();

  transport::PullConsumer consumer_;
  const std::string durable_;
  Admit admit_;  // one of these two is set
  AdmitBatch admitBatch_;
  ProblemHandler onProblem_;
  const DurablePumpOptions options_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> fetched_{0};
  std::thread thread_;
};

}  // namespace shoal::mesh
