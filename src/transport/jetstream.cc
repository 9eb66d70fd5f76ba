#include "transport/jetstream.h"

#include <cstdio>
#include <ctime>

#include <boost/json.hpp>

#include "base/base64.h"
#include "transport/nats_internal.h"
#include "transport/status_map.h"

namespace shoal::transport {
namespace {

using detail::natsError;
using detail::timeoutMs;

constexpr int64_t kNanosPerMs = 1'000'000;

int64_t msToNs(std::chrono::milliseconds d) {
  return d.count() * kNanosPerMs;
}
std::chrono::milliseconds nsToMs(int64_t ns) {
  return std::chrono::milliseconds(ns / kNanosPerMs);
}

jsRetentionPolicy toNats(RetentionPolicy p) {
  switch (p) {
    case RetentionPolicy::kLimits:
      return js_LimitsPolicy;
    case RetentionPolicy::kInterest:
      return js_InterestPolicy;
    case RetentionPolicy::kWorkQueue:
      return js_WorkQueuePolicy;
  }
  return js_LimitsPolicy;
}
RetentionPolicy fromNats(jsRetentionPolicy p) {
  switch (p) {
    case js_InterestPolicy:
      return RetentionPolicy::kInterest;
    case js_WorkQueuePolicy:
      return RetentionPolicy::kWorkQueue;
    default:
      return RetentionPolicy::kLimits;
  }
}
jsStorageType toNats(StorageType s) {
  return s == StorageType::kMemory ? js_MemoryStorage : js_FileStorage;
}
StorageType fromNats(jsStorageType s) {
  return s == js_MemoryStorage ? StorageType::kMemory : StorageType::kFile;
}
jsDiscardPolicy toNats(DiscardPolicy d) {
  return d == DiscardPolicy::kNew ? js_DiscardNew : js_DiscardOld;
}
DiscardPolicy fromNats(jsDiscardPolicy d) {
  return d == js_DiscardNew ? DiscardPolicy::kNew : DiscardPolicy::kOld;
}
jsAckPolicy toNats(AckPolicy a) {
  switch (a) {
    case AckPolicy::kExplicit:
      return js_AckExplicit;
    case AckPolicy::kNone:
      return js_AckNone;
    case AckPolicy::kAll:
      return js_AckAll;
  }
  return js_AckExplicit;
}
AckPolicy fromNats(jsAckPolicy a) {
  switch (a) {
    case js_AckNone:
      return AckPolicy::kNone;
    case js_AckAll:
      return AckPolicy::kAll;
    default:
      return AckPolicy::kExplicit;
  }
}
jsDeliverPolicy toNats(DeliverPolicy d) {
  switch (d) {
    case DeliverPolicy::kAll:
      return js_DeliverAll;
    case DeliverPolicy::kLast:
      return js_DeliverLast;
    case DeliverPolicy::kNew:
      return js_DeliverNew;
    case DeliverPolicy::kByStartSequence:
      return js_DeliverByStartSequence;
    case DeliverPolicy::kByStartTime:
      return js_DeliverByStartTime;
    case DeliverPolicy::kLastPerSubject:
      return js_DeliverLastPerSubject;
  }
  return js_DeliverAll;
}
DeliverPolicy fromNats(jsDeliverPolicy d) {
  switch (d) {
    case js_DeliverLast:
      return DeliverPolicy::kLast;
    case js_DeliverNew:
      return DeliverPolicy::kNew;
    case js_DeliverByStartSequence:
      return DeliverPolicy::kByStartSequence;
    case js_DeliverByStartTime:
      return DeliverPolicy::kByStartTime;
    case js_DeliverLastPerSubject:
      return DeliverPolicy::kLastPerSubject;
    default:
      return DeliverPolicy::kAll;
  }
}

std::string str(const char* s) {
  return s != nullptr ? std::string(s) : std::string();
}

StreamInfo toStreamInfo(const jsStreamInfo* si) {
  StreamInfo out;
  if (const jsStreamConfig* c = si->Config) {
    StreamConfig& cfg = out.config;
    cfg.name = str(c->Name);
    cfg.description = str(c->Description);
    for (int i = 0; i < c->SubjectsLen; ++i)
      cfg.subjects.push_back(str(c->Subjects[i]));
    cfg.retention = fromNats(c->Retention);
    cfg.storage = fromNats(c->Storage);
    cfg.discard = fromNats(c->Discard);
    cfg.maxMsgs = c->MaxMsgs;
    cfg.maxBytes = c->MaxBytes;
    cfg.maxMsgsPerSubject = c->MaxMsgsPerSubject;
    cfg.maxMsgSize = c->MaxMsgSize;
    cfg.maxConsumers = c->MaxConsumers;
    cfg.maxAge = nsToMs(c->MaxAge);
    cfg.duplicateWindow = nsToMs(c->Duplicates);
    cfg.replicas = static_cast<int>(c->Replicas);
    cfg.allowDirect = c->AllowDirect;
    cfg.allowRollup = c->AllowRollup;
    cfg.denyDelete = c->DenyDelete;
    cfg.denyPurge = c->DenyPurge;
  }
  out.state.msgs = si->State.Msgs;
  out.state.bytes = si->State.Bytes;
  out.state.firstSeq = si->State.FirstSeq;
  out.state.lastSeq = si->State.LastSeq;
  out.state.consumers = si->State.Consumers;
  out.createdMs = si->Created / kNanosPerMs;
  return out;
}

}  // namespace

ConsumerInfo detail::toConsumerInfo(const jsConsumerInfo* ci) {
  ConsumerInfo out;
  out.stream = str(ci->Stream);
  out.name = str(ci->Name);
  if (const jsConsumerConfig* c = ci->Config) {
    ConsumerConfig& cfg = out.config;
    cfg.durable = str(c->Durable);
    cfg.description = str(c->Description);
    cfg.filterSubject = str(c->FilterSubject);
    cfg.ackPolicy = fromNats(c->AckPolicy);
    cfg.ackWait = nsToMs(c->AckWait);
    cfg.deliverPolicy = fromNats(c->DeliverPolicy);
    cfg.optStartSeq = c->OptStartSeq;
    cfg.optStartTimeMs = c->OptStartTime / kNanosPerMs;
    cfg.maxDeliver = c->MaxDeliver;
    cfg.maxAckPending = c->MaxAckPending;
    cfg.maxWaiting = c->MaxWaiting;
    cfg.inactiveThreshold = nsToMs(c->InactiveThreshold);
    cfg.memoryStorage = c->MemoryStorage;
  }
  out.delivered = {ci->Delivered.Consumer, ci->Delivered.Stream, ci->Delivered.Last / kNanosPerMs};
  out.ackFloor = {ci->AckFloor.Consumer, ci->AckFloor.Stream, ci->AckFloor.Last / kNanosPerMs};
  out.numAckPending = ci->NumAckPending;
  out.numRedelivered = ci->NumRedelivered;
  out.numWaiting = ci->NumWaiting;
  out.numPending = ci->NumPending;
  return out;
}

namespace {

struct StreamInfoDeleter {
  void operator()(jsStreamInfo* si) const { jsStreamInfo_Destroy(si); }
};
struct ConsumerInfoDeleter {
  void operator()(jsConsumerInfo* ci) const { jsConsumerInfo_Destroy(ci); }
};
struct PubAckDeleter {
  void operator()(jsPubAck* pa) const { jsPubAck_Destroy(pa); }
};

}  // namespace

struct JetStream::Impl {
  Connection* connection = nullptr;
  jsCtx* js = nullptr;
  std::string prefix;
  std::string domain;
  std::chrono::milliseconds defaultTimeout{5000};

  // A failed API call. A JetStream API request the credential may not send is dropped by the
  // broker (the refusal reaches only the error handler) and the call times out: when a
  // permission violation on the API subjects arrived during the call (`refusedBefore` is the
  // count before it), that refusal is the failure, not the timeout.
  Status failure(uint64_t refusedBefore, natsStatus s, std::string_view operation,
                 jsErrCode err) const {
    return refusalOr(refusedBefore, natsError(s, operation, err), operation);
  }
  Status refusalOr(uint64_t refusedBefore, Status st, std::string_view operation) const {
    if (st.code() != StatusCode::kDeadlineExceeded && st.code() != StatusCode::kUnavailable)
      return st;
    if (connection->stats().permissionViolations == refusedBefore) return st;
    Status refusal = connection->lastAsyncError();
    if (refusal.reason() != "permission-violation") return st;
    std::string text(operation);
    text += ": this credential may not use that JetStream API: ";
    text += refusal.message();
    return permissionDenied("permission-violation", text);
  }

  ~Impl() {
    if (js != nullptr) jsCtx_Destroy(js);
  }
};

jsCtx* detail::NatsAccess::context(const JetStream& js) {
  return js.impl_->js;
}
const Connection& detail::NatsAccess::owner(const JetStream& js) {
  return *js.impl_->connection;
}

JetStream::JetStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JetStream::JetStream(JetStream&&) noexcept = default;
JetStream& JetStream::operator=(JetStream&&) noexcept = default;
JetStream::~JetStream() = default;

Connection& JetStream::connection() const {
  return *impl_->connection;
}

Result<JetStream> JetStream::create(Connection& connection, const JetStreamOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->connection = &connection;
  impl->prefix = options.apiPrefix;
  impl->domain = options.domain;
  jsOptions o;
  jsOptions_Init(&o);
  if (!impl->prefix.empty()) o.Prefix = impl->prefix.c_str();
  if (!impl->domain.empty()) o.Domain = impl->domain.c_str();
  o.Wait = timeoutMs(options.defaultTimeout);
  impl->defaultTimeout = options.defaultTimeout;
  natsStatus s =
      natsConnection_JetStream(&impl->js, detail::NatsAccess::connection(connection), &o);
  if (s != NATS_OK) return natsError(s, "creating the JetStream context");
  return JetStream(std::move(impl));
}

Headers detail::publishHeaders(const PublishOptions& options) {
  Headers headers = options.headers;
  // Expectations go in as headers: unlike jsPubOptions they can say "0" (empty / no message).
  if (!options.msgId.empty()) headers.emplace_back("Nats-Msg-Id", options.msgId);
  if (options.expectedLastSeq) {
    headers.emplace_back("Nats-Expected-Last-Sequence", std::to_string(*options.expectedLastSeq));
  }
  if (options.expectedLastSubjectSeq) {
    headers.emplace_back("Nats-Expected-Last-Subject-Sequence",
                         std::to_string(*options.expectedLastSubjectSeq));
  }
  if (!options.expectedStream.empty()) {
    headers.emplace_back("Nats-Expected-Stream", options.expectedStream);
  }
  if (!options.expectedLastMsgId.empty()) {
    headers.emplace_back("Nats-Expected-Last-Msg-Id", options.expectedLastMsgId);
  }
  return headers;
}

Result<PubAck> JetStream::publish(std::string_view subject, std::string_view data,
                                  const PublishOptions& options) {
  SHOAL_ASSIGN_OR_RETURN(auto msg,
                         detail::makeMsg(subject, "", data, detail::publishHeaders(options)));
  jsPubOptions po;
  jsPubOptions_Init(&po);
  if (options.timeout.count() > 0) po.MaxWait = timeoutMs(options.timeout);
  jsPubAck* raw = nullptr;
  jsErrCode err = static_cast<jsErrCode>(0);
  const uint64_t refusedBefore = impl_->connection->stats().permissionViolations;
  natsStatus s = js_PublishMsg(&raw, impl_->js, msg.get(), &po, &err);
  std::unique_ptr<jsPubAck, PubAckDeleter> ack(raw);
  if (s == NATS_NO_RESPONDERS) {
    // nats.c reports this as "JetStream not enabled" (10076); mostly it means that no stream
    // captures the subject.
    return unavailable("no-responders", "JetStream publish to '" + std::string(subject) +
                                            "': no stream captures this subject (or JetStream "
                                            "is not enabled for this account)");
  }
  if (s != NATS_OK) {
    return impl_->failure(refusedBefore, s, "JetStream publish to '" + std::string(subject) + "'",
                          err);
  }
  return PubAck{str(ack->Stream), ack->Sequence, ack->Duplicate};
}

namespace {

// Fills a jsStreamConfig from `config`; `subjects` keeps the C strings alive.
void fillStreamConfig(const StreamConfig& config, jsStreamConfig* sc,
                      std::vector<const char*>* subjects) {
  jsStreamConfig_Init(sc);
  sc->Name = config.name.c_str();
  if (!config.description.empty()) sc->Description = config.description.c_str();
  for (const auto& s : config.subjects)
    subjects->push_back(s.c_str());
  sc->Subjects = subjects->empty() ? nullptr : subjects->data();
  sc->SubjectsLen = static_cast<int>(subjects->size());
  sc->Retention = toNats(config.retention);
  sc->Storage = toNats(config.storage);
  sc->Discard = toNats(config.discard);
  sc->MaxMsgs = config.maxMsgs;
  sc->MaxBytes = config.maxBytes;
  sc->MaxMsgsPerSubject = config.maxMsgsPerSubject;
  sc->MaxMsgSize = config.maxMsgSize;
  sc->MaxConsumers = config.maxConsumers;
  sc->MaxAge = msToNs(config.maxAge);
  sc->Duplicates = msToNs(config.duplicateWindow);
  sc->Replicas = config.replicas;
  sc->AllowDirect = config.allowDirect;
  sc->AllowRollup = config.allowRollup;
  sc->DenyDelete = config.denyDelete;
  sc->DenyPurge = config.denyPurge;
}

}  // namespace

Result<StreamInfo> JetStream::addStream(const StreamConfig& config) {
  if (config.name.empty()) return invalidArgument("empty-stream-name", "a stream needs a name");
  jsStreamConfig sc;
  std::vector<const char*> subjects;
  fillStreamConfig(config, &sc, &subjects);
  jsStreamInfo* raw = nullptr;
  jsErrCode err = static_cast<jsErrCode>(0);
  const uint64_t refusedBefore = impl_->connection->stats().permissionViolations;
  natsStatus s = js_AddStream(&raw, impl_->js, &sc, nullptr, &err);
  std::unique_ptr<jsStreamInfo, StreamInfoDeleter> si(raw);
  if (s != NATS_OK)
    return impl_->failure(refusedBefore, s, "creating stream '" + config.name + "'", err);
  return toStreamInfo(si.get());
}

Result<StreamInfo> JetStream::updateStream(const StreamConfig& config) {
  if (config.name.empty()) return invalidArgument("empty-stream-name", "a stream needs a name");
  jsStreamConfig sc;
  std::vector<const char*> subjects;
  fillStreamConfig(config, &sc, &subjects);
  jsStreamInfo* raw = nullptr;
  jsErrCode err = static_cast<jsErrCode>(0);
  const uint64_t refusedBefore = impl_->connection->stats().permissionViolations;
  natsStatus s = js_UpdateStream(&raw, impl_->js, &sc, nullptr, &err);
  std::unique_ptr<jsStreamInfo, StreamInfoDeleter> si(raw);
  if (s != NATS_OK)
    return impl_->failure(refusedBefore, s, "updating stream '" + config.name + "'", err);
  return toStreamInfo(si.get());
}

namespace {

// "2026-11-30T17:18:02.123456789Z" → Unix epoch ms (the server always writes UTC with `Z`).
std::optional<int64_t> parseRfc3339Ms(const std::string& text) {
  std::tm tm{};
  int fractionStart = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &fractionStart) != 6) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  int64_t ms = static_cast<int64_t>(timegm(&tm)) * 1000;
  size_t i = static_cast<size_t>(fractionStart);
  if (i < text.size() && text[i] == '.') {
    int64_t scale = 100;
    for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      ms += (text[i] - '0') * scale;
      scale /= 10;
    }
  }
  return ms;
}

}  // namespace

Result<StoredMessage> JetStream::findMessage(std::string_view stream, uint64_t fromSeq,
                                             std::string_view subjectFilter) {
  namespace json = boost::json;
  std::string prefix = impl_->prefix.empty() ? "$JS.API" : impl_->prefix;
  std::string subject = prefix + ".STREAM.MSG.GET." + std::string(stream);
  json::object request;
  request["seq"] = fromSeq;
  request["next_by_subj"] = std::string(subjectFilter);
  SHOAL_ASSIGN_OR_RETURN(
      Message reply,
      impl_->connection->request(subject, json::serialize(request), impl_->defaultTimeout));
  boost::system::error_code ec;
  json::value parsed = json::parse(reply.data, ec);
  if (ec || !parsed.is_object()) {
    return unavailable("bad-api-reply", "the stream message get reply is not JSON");
  }
  const json::object& o = parsed.as_object();
  if (const auto* error = o.if_contains("error"); error != nullptr && error->is_object()) {
    const auto* code = error->as_object().if_contains("code");
    if (code != nullptr && code->is_int64() && code->as_int64() == 404) {
      return notFound("no-message", "no message on " + std::string(stream) + " from seq " +
                                        std::to_string(fromSeq) + " matching " +
                                        std::string(subjectFilter));
    }
    const auto* description = error->as_object().if_contains("description");
    return unavailable("api-error", description != nullptr && description->is_string()
                                        ? std::string(description->as_string())
                                        : "stream message get failed");
  }
  const auto* message = o.if_contains("message");
  if (message == nullptr || !message->is_object()) {
    return unavailable("bad-api-reply", "the stream message get reply has no message");
  }
  const json::object& m = message->as_object();
  StoredMessage out;
  if (const auto* v = m.if_contains("subject"); v != nullptr && v->is_string()) {
    out.subject = std::string(v->as_string());
  }
  if (const auto* v = m.if_contains("seq"); v != nullptr && v->is_number()) {
    out.seq = v->to_number<uint64_t>();
  }
  if (const auto* v = m.if_contains("time"); v != nullptr && v->is_string()) {
    out.timeMs = parseRfc3339Ms(std::string(v->as_string())).value_or(0);
  }
  if (const auto* v = m.if_contains("data"); v != nullptr && v->is_string()) {
    auto data = base64Decode(v->as_string());
    if (!data) return unavailable("bad-api-reply", "a stored message's data is not base64");
    out.data = std::move(*data);
  }
  return out;
}

Result<StreamInfo> JetStream::streamInfo(std::string_view name) {
  std::string n(name);
  jsStreamInfo* raw = nullptr;
  jsErrCode err = static_cast<jsErrCode>(0);
  const uint64_t refusedBefore = impl_->connection->stats().permissionViolations;
  natsStatus s = js_GetStreamInfo(&raw, impl_->js, n.c_str(), nullptr, &err);
  std::unique_ptr<jsStreamInfo, StreamInfoDeleter> si(raw);
  if (s != NATS_OK) return impl_->failure(refusedBefore, s, "reading stream '" + n + "'", err);
  return toStreamInfo(si.get());
}

Status JetStream::deleteStream(std::string_view name) {
  std::string n(name);
  jsErrCode err = static_cast<jsErrCode>(0);
  const uint64_t refusedBefore = impl_->connection->stats().permissionViolations;
  natsStatus s = js_DeleteStream(impl_->js, n.c_str(), nullptr, &err);
  if (s != NATS_OK) return impl_->failure(refusedBefore, s, "deleting stream '" + n + "'", err);
  return Status::ok();
}

Status JetStream::purgeStream(std::string_view name) {
  std::string n(name);
  jsErrCode err = static_cast<jsErrCode>(0);
  const uint64_t refusedBefore = impl_->connection->stats().permissionViolations;
  natsStatus s = js_PurgeStream(impl_->js, n.c_str(), nullptr, &err);
  if (s != NATS_OK) return impl_->failure(refusedBefore, s, "purging stream '" + n + "'", err);
  return Status::ok();
}

Result<ConsumerInfo> JetStream::addConsumer(std::string_view stream, const ConsumerConfig& config) {
  if (config.durable.empty()) {
    return invalidArgument("empty-durable-name", "Shoal creates only named durable consumers");
  }
  std::string streamName(stream);
  jsConsumerConfig cc;
  jsConsumerConfig_Init(&cc);
  cc.Durable = config.durable.c_str();
  if (!config.description.empty()) cc.Description = config.description.c_str();
  if (!config.filterSubject.empty()) cc.FilterSubject = config.filterSubject.c_str();
  cc.AckPolicy = toNats(config.ackPolicy);
  cc.AckWait = msToNs(config.ackWait);
  cc.DeliverPolicy = toNats(config.deliverPolicy);
  cc.OptStartSeq = config.optStartSeq;
  cc.OptStartTime = config.optStartTimeMs * kNanosPerMs;
  cc.MaxDeliver = config.maxDeliver;
  cc.MaxAckPending = config.maxAckPending;
  cc.MaxWaiting = config.maxWaiting;
  cc.InactiveThreshold = msToNs(config.inactiveThreshold);
  cc.MemoryStorage = config.memoryStorage;
  jsConsumerInfo* raw = nullptr;
  jsErrCode err = static_cast<jsErrCode>(0);
  const uint64_t refusedBefore = impl_->connection->stats().permissionViolations;
  natsStatus s = js_AddConsumer(&raw, impl_->js, streamName.c_str(), &cc, nullptr, &err);
  std::unique_ptr<jsConsumerInfo, ConsumerInfoDeleter> ci(raw);
  if (s != NATS_OK) {
    return impl_->failure(
        refusedBefore, s,
        "creating consumer '" + config.durable + "' on stream '" + streamName + "'", err);
  }
  return detail::toConsumerInfo(ci.get());
}

namespace {

std::string_view ackPolicyName(AckPolicy a) {
  switch (a) {
    case AckPolicy::kNone:
      return "none";
    case AckPolicy::kAll:
      return "all";
    case AckPolicy::kExplicit:
      break;
  }
  return "explicit";
}

std::string_view deliverPolicyName(DeliverPolicy d) {
  switch (d) {
    case DeliverPolicy::kLast:
      return "last";
    case DeliverPolicy::kNew:
      return "new";
    case DeliverPolicy::kByStartSequence:
      return "by_start_sequence";
    case DeliverPolicy::kByStartTime:
      return "by_start_time";
    case DeliverPolicy::kLastPerSubject:
      return "last_per_subject";
    case DeliverPolicy::kAll:
      break;
  }
  return "all";
}

// Unix epoch ms → "2026-11-30T17:18:02.123Z", the form the server reads for opt_start_time.
std::string formatRfc3339Ms(int64_t ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[96];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return text;
}

// The consumer-create request body: the fields Shoal sets, in the server's JSON names.
boost::json::object consumerCreateRequest(std::string_view stream, const ConsumerConfig& c) {
  boost::json::object config;
  config["durable_name"] = c.durable;
  config["name"] = c.durable;
  if (!c.description.empty()) config["description"] = c.description;
  config["filter_subject"] = c.filterSubject;
  config["ack_policy"] = ackPolicyName(c.ackPolicy);
  config["ack_wait"] = msToNs(c.ackWait);
  config["deliver_policy"] = deliverPolicyName(c.deliverPolicy);
  if (c.deliverPolicy == DeliverPolicy::kByStartSequence) config["opt_start_seq"] = c.optStartSeq;
  if (c.deliverPolicy == DeliverPolicy::kByStartTime) {
    config["opt_start_time"] = formatRfc3339Ms(c.optStartTimeMs);
  }
  config["replay_policy"] = "instant";
  if (c.maxDeliver != 0) config["max_deliver"] = c.maxDeliver;
  if (c.maxAckPending != 0) config["max_ack_pending"] = c.maxAckPending;
  if (c.maxWaiting != 0) config["max_waiting"] = c.maxWaiting;
  if (c.inactiveThreshold.count() != 0) config["inactive_threshold"] = msToNs(c.inactiveThreshold);
  if (c.memoryStorage) config["mem_storage"] = true;
  boost::json::object request;
  request["stream_name"] = std::string(stream);
  request["config"] = std::move(config);
  return request;
}

uint64_t unsignedField(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_number() ? v->to_number<uint64_t>() : 0;
}

}  // namespace

Result<ConsumerInfo> JetStream::addConsumerPinned(std::string_view stream,
                                                  const ConsumerConfig& config) {
  namespace json = boost::json;
  if (config.durable.empty()) {
    return invalidArgument("empty-durable-name", "Shoal creates only named durable consumers");
  }
  if (config.filterSubject.empty()) {
    return invalidArgument("empty-filter", "a pinned consumer create names its filter");
  }
  const std::string what =
      "creating consumer '" + config.durable + "' on stream '" + std::string(stream) + "'";
  const std::string prefix = impl_->prefix.empty() ? "$JS.API" : impl_->prefix;
  const std::string subject = prefix + ".CONSUMER.CREATE." + std::string(stream) + "." +
                              config.durable + "." + config.filterSubject;
  const uint64_t refusedBefore = impl_->connection->stats().permissionViolations;
  auto reply = impl_->connection->request(
      subject, json::serialize(consumerCreateRequest(stream, config)), impl_->defaultTimeout);
  if (!reply.isOk()) return impl_->refusalOr(refusedBefore, reply.status().withContext(what), what);
  boost::system::error_code ec;
  json::value parsed = json::parse(reply->data, ec);
  if (ec || !parsed.is_object()) {
    return unavailable("bad-api-reply", what + ": the consumer create reply is not JSON");
  }
  const json::object& o = parsed.as_object();
  if (const auto* error = o.if_contains("error"); error != nullptr && error->is_object()) {
    const json::object& e = error->as_object();
    const auto* description = e.if_contains("description");
    return statusFromNats(NATS_ERR, static_cast<int>(unsignedField(e, "err_code")), what,
                          description != nullptr && description->is_string()
                              ? std::string_view(description->as_string())
                              : std::string_view());
  }
  ConsumerInfo info;
  info.stream = std::string(stream);
  info.name = config.durable;
  info.config = config;
  info.numPending = unsignedField(o, "num_pending");
  return info;
}

Result<ConsumerInfo> JetStream::consumerInfo(std::string_view stream, std::string_view durable) {
  std::string streamName(stream);
  std::string name(durable);
  jsConsumerInfo* raw = nullptr;
  jsErrCode err = static_cast<jsErrCode>(0);
  const uint64_t refusedBefore = impl_->connection->stats().permissionViolations;
  natsStatus s =
      js_GetConsumerInfo(&raw, impl_->js, streamName.c_str(), name.c_str(), nullptr, &err);
  std::unique_ptr<jsConsumerInfo, ConsumerInfoDeleter> ci(raw);
  if (s != NATS_OK) {
    return impl_->failure(refusedBefore, s,
                          "reading consumer '" + name + "' on stream '" + streamName + "'", err);
  }
  return detail::toConsumerInfo(ci.get());
}

Status JetStream::deleteConsumer(std::string_view stream, std::string_view durable) {
  std::string streamName(stream);
  std::string name(durable);
  jsErrCode err = static_cast<jsErrCode>(0);
  const uint64_t refusedBefore = impl_->connection->stats().permissionViolations;
  natsStatus s = js_DeleteConsumer(impl_->js, streamName.c_str(), name.c_str(), nullptr, &err);
  if (s != NATS_OK) {
    return impl_->failure(refusedBefore, s,
                          "deleting consumer '" + name + "' on stream '" + streamName + "'", err);
  }
  return Status::ok();
}

}  // namespace shoal::transport
