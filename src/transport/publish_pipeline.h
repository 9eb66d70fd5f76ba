// PublishPipeline: many JetStream publishes with a bounded window of unacknowledged ones in
// flight (nats.c asynchronous publishing), each still answered by its own acknowledgement.
//
// publishAll() sends every message without waiting for the one before, at most `window`
// unacknowledged at a time, then waits (at most `timeout` after the last send) for the rest.
// Each result is what the broker said about that message: its PubAck (stream, seq, duplicate),
// or a named failure — the broker's refusal (kAborted `wrong-last-sequence`, …), or
// kDeadlineExceeded (`publish-unacknowledged`) when no answer came in time: that one may or may
// not be stored, and republishing it with the same msgId finds out without duplicating.
// Nothing is reported stored that the broker did not acknowledge.
//
// Thread safety: publishAll() may be called from any thread; calls run one at a time.
// Lifetime: must not outlive its Connection; the destructor waits for no outstanding publish
// (publishAll() returns only when every message has its answer).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "transport/connection.h"
#include "transport/jetstream.h"

namespace shoal::transport {

struct OutgoingMessage {
  std::string subject;
  std::string data;
  PublishOptions options;  // msgId, expectations, headers (the per-message timeout is unused)
};

struct PublishPipelineOptions {
  int window = 256;
  std::chrono::milliseconds timeout{5000};
  std::string apiPrefix{};  // empty: "$JS.API"
  std::string domain{};
};

class PublishPipeline {
 public:
  static Result<std::unique_ptr<PublishPipeline>> create(
      Connection& connection, const PublishPipelineOptions& options = {});
  ~PublishPipeline();
  PublishPipeline(const PublishPipeline&) = delete;
  PublishPipeline& operator=(const PublishPipeline&) = delete;

  // One result per message, in order.
  std::vector<Result<PubAck>> publishAll(const std::vector<OutgoingMessage>& messages);

  struct Impl;

 private:
  explicit PublishPipeline(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shoal::transport
