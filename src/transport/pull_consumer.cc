#include "transport/pull_consumer.h"

#include "transport/event_sink.h"
#include "transport/nats_internal.h"

namespace shoal::transport {
namespace {

using detail::natsError;
using detail::timeoutMs;

constexpr int64_t kNanosPerMs = 1'000'000;

// The pull subscription. Shared (not unique) on purpose: each fetched JsMessage holds a
// reference, because nats.c acks through the message's subscription.
struct SubscriptionHandle {
  natsSubscription* sub = nullptr;
  detail::EventSink* sink = nullptr;  // not owned; sinks are never freed (event_sink.h)
  ~SubscriptionHandle() {
    if (sub == nullptr) return;
    sink->forgetSubject(sub);  // before the pointer can be freed and reused
    // Destroy, never Unsubscribe: Unsubscribe may delete the durable on the server.
    natsSubscription_Destroy(sub);
  }
};

Status missingDurable(const std::string& stream, const std::string& durable, const Status& cause) {
  return notFound("durable-missing",
                  "durable consumer '" + durable + "' does not exist on stream '" + stream +
                      "' (it is provisioned by the manager plane, never created by a reader); " +
                      std::string(cause.message()));
}

bool isMissing(const Status& st) {
  return st.code() == StatusCode::kNotFound;
}

}  // namespace

struct JsMessage::Impl {
  std::shared_ptr<SubscriptionHandle> subscription;
  detail::MsgPtr msg;
  std::string subject;
  std::string data;
  Headers headers;
  JsMetadata metadata;
  std::string what;  // "message 12 of DM_main/dm_x" for error messages
};

struct PullConsumer::Impl {
  std::shared_ptr<SubscriptionHandle> subscription;
  jsCtx* js = nullptr;
  std::string stream;
  std::string durable;
};

JsMessage::JsMessage(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JsMessage::JsMessage(JsMessage&&) noexcept = default;
JsMessage& JsMessage::operator=(JsMessage&&) noexcept = default;
JsMessage::~JsMessage() = default;

const std::string& JsMessage::subject() const {
  return impl_->subject;
}
const std::string& JsMessage::data() const {
  return impl_->data;
}
const Headers& JsMessage::headers() const {
  return impl_->headers;
}
std::optional<std::string> JsMessage::header(std::string_view name) const {
  return findHeader(impl_->headers, name);
}
const JsMetadata& JsMessage::metadata() const {
  return impl_->metadata;
}

Status JsMessage::ack() {
  natsStatus s = natsMsg_Ack(impl_->msg.get(), nullptr);
  if (s != NATS_OK) return natsError(s, "ack of " + impl_->what);
  return Status::ok();
}

Status JsMessage::ackSync(std::chrono::milliseconds timeout) {
  jsOptions o;
  jsOptions_Init(&o);
  o.Wait = timeoutMs(timeout);
  jsErrCode err = static_cast<jsErrCode>(0);
  natsStatus s = natsMsg_AckSync(impl_->msg.get(), &o, &err);
  if (s != NATS_OK) return natsError(s, "confirmed ack of " + impl_->what, err);
  return Status::ok();
}

Status JsMessage::nak() {
  natsStatus s = natsMsg_Nak(impl_->msg.get(), nullptr);
  if (s != NATS_OK) return natsError(s, "nak of " + impl_->what);
  return Status::ok();
}

Status JsMessage::nakWithDelay(std::chrono::milliseconds delay) {
  natsStatus s =
      natsMsg_NakWithDelay(impl_->msg.get(), std::max<int64_t>(0, delay.count()), nullptr);
  if (s != NATS_OK) return natsError(s, "delayed nak of " + impl_->what);
  return Status::ok();
}

Status JsMessage::inProgress() {
  natsStatus s = natsMsg_InProgress(impl_->msg.get(), nullptr);
  if (s != NATS_OK) return natsError(s, "in-progress ack of " + impl_->what);
  return Status::ok();
}

Status JsMessage::term() {
  natsStatus s = natsMsg_Term(impl_->msg.get(), nullptr);
  if (s != NATS_OK) return natsError(s, "term of " + impl_->what);
  return Status::ok();
}

PullConsumer::PullConsumer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PullConsumer::PullConsumer(PullConsumer&&) noexcept = default;
PullConsumer& PullConsumer::operator=(PullConsumer&&) noexcept = default;
PullConsumer::~PullConsumer() = default;

const std::string& PullConsumer::stream() const {
  return impl_->stream;
}
const std::string& PullConsumer::durable() const {
  return impl_->durable;
}

Result<PullConsumer> PullConsumer::bind(JetStream& js, std::string_view stream,
                                        std::string_view durable) {
  auto impl = std::make_unique<Impl>();
  impl->js = detail::NatsAccess::context(js);
  impl->stream = std::string(stream);
  impl->durable = std::string(durable);
  if (impl->stream.empty() || impl->durable.empty()) {
    return invalidArgument("empty-name", "binding a pull consumer needs a stream and a durable");
  }

  // Look the durable up first: its filter subject is the subject to bind with, and a missing
  // durable must be reported as such (never created).
  auto info = js.consumerInfo(impl->stream, impl->durable);
  if (!info.isOk()) {
    if (isMissing(info.status())) return missingDurable(impl->stream, impl->durable, info.status());
    return info.status().withContext("binding to durable '" + impl->durable + "'");
  }
  // (Built as one expression: GCC 12 at -O3 warns falsely on `subject = ">"` after the copy.)
  const std::string subject =
      info->config.filterSubject.empty() ? std::string(">") : info->config.filterSubject;

  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = impl->stream.c_str();
  so.Consumer = impl->durable.c_str();
  // nats.c compares this flag with the durable's when binding; echo what the server has.
  so.Config.MemoryStorage = info->config.memoryStorage;
  natsSubscription* sub = nullptr;
  jsErrCode err = static_cast<jsErrCode>(0);
  natsStatus s =
      js_PullSubscribe(&sub, impl->js, subject.c_str(), impl->durable.c_str(), nullptr, &so, &err);
  if (s != NATS_OK) {
    Status st = natsError(
        s, "binding to durable '" + impl->durable + "' on stream '" + impl->stream + "'", err);
    if (isMissing(st)) return missingDurable(impl->stream, impl->durable, st);
    return st;
  }
  impl->subscription = std::make_shared<SubscriptionHandle>();
  impl->subscription->sub = sub;
  impl->subscription->sink = detail::NatsAccess::sink(detail::NatsAccess::owner(js));
  // For the async-error handler, which must not ask nats.c for the subject (event_sink.h). Read
  // here, while this subscription is certainly alive.
  const char* subSubject = natsSubscription_GetSubject(sub);
  impl->subscription->sink->rememberSubject(sub, subSubject != nullptr ? subSubject : subject);
  return PullConsumer(std::move(impl));
}

Result<std::vector<JsMessage>> PullConsumer::fetch(int batch, std::chrono::milliseconds timeout) {
  if (batch <= 0) return invalidArgument("bad-batch", "fetch batch must be at least 1");
  natsMsgList list{nullptr, 0};
  jsErrCode err = static_cast<jsErrCode>(0);
  natsStatus s =
      natsSubscription_Fetch(&list, impl_->subscription->sub, batch, timeoutMs(timeout), &err);
  std::vector<JsMessage> out;
  Status failure;
  if (s != NATS_OK && s != NATS_TIMEOUT) {
    failure = natsError(s, "fetch from durable '" + impl_->durable + "'", err);
  }
  out.reserve(static_cast<size_t>(list.Count));
  for (int i = 0; i < list.Count; ++i) {
    natsMsg* raw = list.Msgs[i];
    if (raw == nullptr) continue;
    list.Msgs[i] = nullptr;  // we own it now; natsMsgList_Destroy skips NULL entries
    auto impl = std::make_unique<JsMessage::Impl>();
    impl->subscription = impl_->subscription;
    impl->msg.reset(raw);
    Message m = detail::toMessage(raw);
    impl->subject = std::move(m.subject);
    impl->data = std::move(m.data);
    impl->headers = std::move(m.headers);
    jsMsgMetaData* meta = nullptr;
    if (natsMsg_GetMetaData(&meta, raw) == NATS_OK && meta != nullptr) {
      JsMetadata& md = impl->metadata;
      md.stream = meta->Stream != nullptr ? meta->Stream : "";
      md.consumer = meta->Consumer != nullptr ? meta->Consumer : "";
      md.streamSeq = meta->Sequence.Stream;
      md.consumerSeq = meta->Sequence.Consumer;
      md.numDelivered = meta->NumDelivered;
      md.numPending = meta->NumPending;
      md.timestampMs = meta->Timestamp / kNanosPerMs;
      jsMsgMetaData_Destroy(meta);
    }
    impl->what = "message " + std::to_string(impl->metadata.streamSeq) + " of " + impl_->stream +
                 "/" + impl_->durable;
    out.push_back(JsMessage(std::move(impl)));
  }
  natsMsgList_Destroy(&list);
  if (!failure.isOk() && out.empty()) {
    if (isMissing(failure)) return missingDurable(impl_->stream, impl_->durable, failure);
    return failure;
  }
  return out;
}

Result<ConsumerInfo> PullConsumer::info() {
  jsConsumerInfo* raw = nullptr;
  jsErrCode err = static_cast<jsErrCode>(0);
  natsStatus s = js_GetConsumerInfo(&raw, impl_->js, impl_->stream.c_str(), impl_->durable.c_str(),
                                    nullptr, &err);
  if (s != NATS_OK) {
    Status st = natsError(s, "reading durable '" + impl_->durable + "'", err);
    if (isMissing(st)) return missingDurable(impl_->stream, impl_->durable, st);
    return st;
  }
  ConsumerInfo out = detail::toConsumerInfo(raw);
  jsConsumerInfo_Destroy(raw);
  return out;
}

}  // namespace shoal::transport
