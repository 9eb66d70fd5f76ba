// PullConsumer: a pull subscription BOUND to an existing durable consumer, and JsMessage, one
// fetched JetStream message with its acknowledgement verbs.
//
// Binding never creates anything: `bind` names the stream and the durable (nats.c's
// jsSubOptions.Stream + .Consumer); if the durable does not exist the result is kNotFound with
// reason `durable-missing` and the server is left unchanged (provisioning is someone else's
// job: the manager plane's). Destruction never deletes the durable: nats.c's Unsubscribe on a
// JetStream subscription may delete the consumer, so this class only ever calls
// natsSubscription_Destroy.
//
// Acks (ack, nak, nakWithDelay, inProgress, term) are fire-and-forget publishes; `ackSync` waits
// for the server's confirmation (a "double ack"). `term` is a plain terminate: nats-server
// 2.9.10 does not understand terminate-with-reason.
//
// Thread safety: a PullConsumer is used by one thread at a time (fetch is a blocking call); a
// JsMessage likewise. Distinct objects may be used from different threads.
// Lifetime: move-only. A JsMessage keeps its subscription alive, so it may outlive the
// PullConsumer it came from and still be acked; neither may outlive the Connection.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "transport/jetstream.h"
#include "transport/message.h"

namespace shoal::transport {

struct JsMetadata {
  std::string stream{};
  std::string consumer{};
  uint64_t streamSeq = 0;
  uint64_t consumerSeq = 0;
  uint64_t numDelivered = 0;  // 1 on first delivery
  uint64_t numPending = 0;    // messages left for the consumer after this one
  int64_t timestampMs = 0;    // when the stream stored it (Unix epoch ms)
};

class JsMessage {
 public:
  JsMessage(JsMessage&&) noexcept;
  JsMessage& operator=(JsMessage&&) noexcept;
  JsMessage(const JsMessage&) = delete;
  JsMessage& operator=(const JsMessage&) = delete;
  ~JsMessage();

  const std::string& subject() const;
  const std::string& data() const;
  const Headers& headers() const;
  std::optional<std::string> header(std::string_view name) const;
  const JsMetadata& metadata() const;

  Status ack();
  // Ack and wait for the server to confirm it (kDeadlineExceeded if it does not in time).
  Status ackSync(std::chrono::milliseconds timeout);
  // Redeliver as soon as possible.
  Status nak();
  // Redeliver after `delay`.
  Status nakWithDelay(std::chrono::milliseconds delay);
  // Still working on it: restarts the ack-wait timer.
  Status inProgress();
  // Never redeliver.
  Status term();

  struct Impl;

 private:
  explicit JsMessage(std::unique_ptr<Impl> impl);
  friend class PullConsumer;
  std::unique_ptr<Impl> impl_;
};

class PullConsumer {
 public:
  // Binds to the existing durable `durable` on `stream`.
  static Result<PullConsumer> bind(JetStream& js, std::string_view stream,
                                   std::string_view durable);

  PullConsumer(PullConsumer&&) noexcept;
  PullConsumer& operator=(PullConsumer&&) noexcept;
  PullConsumer(const PullConsumer&) = delete;
  PullConsumer& operator=(const PullConsumer&) = delete;
  ~PullConsumer();

  const std::string& stream() const;
  const std::string& durable() const;

  // Up to `batch` messages, waiting at most `timeout`. Nothing available in time is an empty
  // vector, not an error. kNotFound (`durable-missing`) if the durable was deleted meanwhile.
  Result<std::vector<JsMessage>> fetch(int batch, std::chrono::milliseconds timeout);
  // The durable's current state as the server sees it.
  Result<ConsumerInfo> info();

  struct Impl;

 private:
  explicit PullConsumer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shoal::transport
