// JetStream: the JetStream context of a Connection — publish with acknowledgement, and stream
// and consumer management.
//
// Value types here are Shoal's own (no nats.c type leaks out). Durations are std::chrono
// milliseconds everywhere; the conversion to the nanoseconds that nats.c's stream and consumer
// configs use (MaxAge, Duplicates, AckWait, InactiveThreshold, OptStartTime) happens inside.
//
// Errors come from the status table (status_map.h): a missing stream is kNotFound
// (`stream-not-found`), a missing consumer kNotFound (`consumer-not-found`), a name already used
// with another config kAlreadyExists, a failed publish expectation kAborted
// (`wrong-last-sequence`), a timeout kDeadlineExceeded (the publish may or may not be stored:
// republish with the same msgId to find out without duplicating).
//
// Thread safety: every method may be called from any thread (nats.c's jsCtx is thread-safe).
// Lifetime: move-only; must not outlive its Connection.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "transport/connection.h"
#include "transport/message.h"

namespace shoal::transport {

enum class RetentionPolicy { kLimits, kInterest, kWorkQueue };
enum class StorageType { kFile, kMemory };
enum class DiscardPolicy { kOld, kNew };
enum class AckPolicy { kExplicit, kNone, kAll };
enum class DeliverPolicy { kAll, kLast, kNew, kByStartSequence, kByStartTime, kLastPerSubject };

struct StreamConfig {
  std::string name{};
  std::vector<std::string> subjects{};  // empty: the name is the only subject
  std::string description{};
  RetentionPolicy retention = RetentionPolicy::kLimits;
  StorageType storage = StorageType::kFile;
  DiscardPolicy discard = DiscardPolicy::kOld;
  int64_t maxMsgs = -1;
  int64_t maxBytes = -1;
  int64_t maxMsgsPerSubject = -1;
  int32_t maxMsgSize = -1;
  int64_t maxConsumers = -1;
  std::chrono::milliseconds maxAge{0};           // 0: unlimited
  std::chrono::milliseconds duplicateWindow{0};  // 0: server default (2 min)
  int replicas = 1;
  bool allowDirect = false;
  bool allowRollup = false;
  bool denyDelete = false;
  bool denyPurge = false;
};

struct StreamState {
  uint64_t msgs = 0;
  uint64_t bytes = 0;
  uint64_t firstSeq = 0;
  uint64_t lastSeq = 0;
  int64_t consumers = 0;
};

struct StreamInfo {
  StreamConfig config{};
  StreamState state{};
  int64_t createdMs = 0;  // Unix epoch ms
};

struct ConsumerConfig {
  std::string durable{};  // required for addConsumer (Shoal only uses named durables)
  std::string description{};
  std::string filterSubject{};  // empty: every subject of the stream
  AckPolicy ackPolicy = AckPolicy::kExplicit;
  std::chrono::milliseconds ackWait{30000};
  DeliverPolicy deliverPolicy = DeliverPolicy::kAll;
  uint64_t optStartSeq = 0;                        // for kByStartSequence
  int64_t optStartTimeMs = 0;                      // for kByStartTime (Unix epoch ms)
  int64_t maxDeliver = -1;                         // -1: unlimited
  int64_t maxAckPending = 0;                       // 0: server default (1000)
  int64_t maxWaiting = 0;                          // 0: server default (512 pull requests)
  std::chrono::milliseconds inactiveThreshold{0};  // 0: never removed for inactivity
  bool memoryStorage = false;
};

struct SequenceInfo {
  uint64_t consumerSeq = 0;
  uint64_t streamSeq = 0;
  int64_t lastActiveMs = 0;  // Unix epoch ms, 0 if never
};

struct ConsumerInfo {
  std::string stream{};
  std::string name{};
  ConsumerConfig config{};
  SequenceInfo delivered{};
  SequenceInfo ackFloor{};
  int64_t numAckPending = 0;
  int64_t numRedelivered = 0;
  int64_t numWaiting = 0;
  uint64_t numPending = 0;
};

struct PublishOptions {
  std::string msgId{};  // Nats-Msg-Id: deduplicated within the stream's duplicate window
  std::optional<uint64_t> expectedLastSeq{};         // of the stream (0: stream is empty)
  std::optional<uint64_t> expectedLastSubjectSeq{};  // of this subject (0: no message yet)
  std::string expectedStream{};
  std::string expectedLastMsgId{};
  Headers headers{};
  std::chrono::milliseconds timeout{0};  // 0: the context's default
};

struct PubAck {
  std::string stream{};
  uint64_t seq = 0;
  bool duplicate = false;  // the msgId was already stored; `seq` is the original's
};

// One message as the stream stores it (the stream-message-get API).
struct StoredMessage {
  std::string subject{};
  uint64_t seq = 0;
  int64_t timeMs = 0;  // when the stream stored it (Unix epoch ms)
  std::string data{};  // the payload, decoded
};

struct JetStreamOptions {
  std::string apiPrefix{};  // empty: "$JS.API"
  std::string domain{};
  std::chrono::milliseconds defaultTimeout{5000};
};

class JetStream {
 public:
  static Result<JetStream> create(Connection& connection, const JetStreamOptions& options = {});

  JetStream(JetStream&&) noexcept;
  JetStream& operator=(JetStream&&) noexcept;
  JetStream(const JetStream&) = delete;
  JetStream& operator=(const JetStream&) = delete;
  ~JetStream();

  Connection& connection() const;

  Result<PubAck> publish(std::string_view subject, std::string_view data,
                         const PublishOptions& options = {});

  Result<StreamInfo> addStream(const StreamConfig& config);
  Result<StreamInfo> updateStream(const StreamConfig& config);
  Result<StreamInfo> streamInfo(std::string_view name);
  Status deleteStream(std::string_view name);
  Status purgeStream(std::string_view name);

  // The first message at or after `fromSeq` whose subject matches `subjectFilter` (wildcards
  // allowed), through the stream-message-get API (works without Direct Get). kNotFound
  // (`no-message`) when there is none.
  Result<StoredMessage> findMessage(std::string_view stream, uint64_t fromSeq,
                                    std::string_view subjectFilter);

  Result<ConsumerInfo> addConsumer(std::string_view stream, const ConsumerConfig& config);
  // Creates the durable through `$JS.API.CONSUMER.CREATE.<stream>.<durable>.<filter>`, the form
  // that names the filter in the subject, so a credential's grant can pin which filter it may
  // read (nats.c's addConsumer uses `CONSUMER.DURABLE.CREATE.<stream>.<durable>`, whose body
  // holds any filter). The server refuses a body whose filter differs from the subject's.
  // kInvalidArgument (`empty-filter`) without a filter.
  Result<ConsumerInfo> addConsumerPinned(std::string_view stream, const ConsumerConfig& config);
  Result<ConsumerInfo> consumerInfo(std::string_view stream, std::string_view durable);
  Status deleteConsumer(std::string_view stream, std::string_view durable);

  struct Impl;

 private:
  explicit JetStream(std::unique_ptr<Impl> impl);
  friend struct detail::NatsAccess;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shoal::transport
