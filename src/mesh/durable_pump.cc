#include "mesh/durable_pump.h"

#include <utility>

namespace shoal::mesh {

DurablePump::DurablePump(transport::PullConsumer consumer, Admit admit, ProblemHandler onProblem,
                         DurablePumpOptions options)
    : consumer_(std::move(consumer)),
      durable_(consumer_.durable()),
      admit_(std::move(admit)),
      onProblem_(std::move(onProblem)),
      options_(options) {
  thread_ = std::thread([this] { run(); });
}

DurablePump::DurablePump(transport::PullConsumer consumer, AdmitBatch admitBatch,
                         ProblemHandler onProblem, DurablePumpOptions options)
    : consumer_(std::move(consumer)),
      durable_(consumer_.durable()),
      admitBatch_(std::move(admitBatch)),
      onProblem_(std::move(onProblem)),
      options_(options) {
  thread_ = std::thread([this] { run(); });
}

DurablePump::~DurablePump() {
  stop();
}

void DurablePump::stop() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
}

void DurablePump::run() {
  bool troubled = false;
  while (!stopping_.load()) {
    auto batch = consumer_.fetch(options_.batch, options_.wait);
    if (!batch.isOk()) {
      if (!troubled && onProblem_) {
        onProblem_(batch.status().withContext("fetching from durable " + durable_));
      }
      troubled = true;
      // Sleep in slices so stop() is prompt.
      auto until = std::chrono::steady_clock::now() + options_.retryDelay;
      while (!stopping_.load() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      continue;
    }
    if (troubled && onProblem_) onProblem_(Status::ok());
    troubled = false;
    if (admitBatch_ && !stopping_.load()) {
      fetched_.fetch_add(batch->size());
      admitBatch_(*batch);
      continue;
    }
    for (auto& message : *batch) {
      fetched_.fetch_add(1);
      if (stopping_.load()) {
        // Not handed over: let the broker redeliver it at once rather than after ack_wait.
        (void)message.nak();
        continue;
      }
      admit_(message);
    }
  }
}

}  // namespace shoal::mesh
