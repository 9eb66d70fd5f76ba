#include "transport/publish_pipeline.h"

#include <map>
#include <mutex>
#include <optional>

#include "transport/nats_internal.h"
#include "transport/status_map.h"

namespace shoal::transport {

struct PublishPipeline::Impl {
  Connection* connection = nullptr;
  jsCtx* js = nullptr;
  std::string prefix;
  std::string domain;
  std::chrono::milliseconds timeout{5000};
  std::mutex callMu;  // one publishAll at a time

  // The batch being answered: each message's slot, by the natsMsg nats.c hands back.
  std::mutex mu;
  std::map<const natsMsg*, size_t> slots;
  std::vector<std::optional<Result<PubAck>>>* answers = nullptr;

  // nats.c's thread: one message's acknowledgement or refusal.
  static void onAck(jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr* pae, void* closure) {
    auto* self = static_cast<Impl*>(closure);
    {
      std::lock_guard lock(self->mu);
      auto it = self->slots.find(msg);
      if (it != self->slots.end() && self->answers != nullptr) {
        (*self->answers)[it->second] = answerOf(msg, pa, pae);
        self->slots.erase(it);
      }
    }
    natsMsg_Destroy(msg);
  }

  static Result<PubAck> answerOf(natsMsg* msg, const jsPubAck* pa, const jsPubAckErr* pae) {
    if (pa != nullptr) {
      return PubAck{pa->Stream ? std::string(pa->Stream) : std::string(), pa->Sequence,
                    pa->Duplicate};
    }
    const std::string what = "JetStream publish to '" +
                             std::string(natsMsg_GetSubject(msg) ? natsMsg_GetSubject(msg) : "") +
                             "'";
    if (pae == nullptr) return unavailable("publish-failed", what + ": no answer");
    return statusFromNats(static_cast<int>(pae->Err), static_cast<int>(pae->ErrCode), what,
                          pae->ErrText ? pae->ErrText : "");
  }

  ~Impl() {
    if (js != nullptr) jsCtx_Destroy(js);
  }
};

Result<std::unique_ptr<PublishPipeline>> PublishPipeline::create(
    Connection& connection, const PublishPipelineOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->connection = &connection;
  impl->prefix = options.apiPrefix;
  impl->domain = options.domain;
  impl->timeout = options.timeout;
  jsOptions o;
  jsOptions_Init(&o);
  if (!impl->prefix.empty()) o.Prefix = impl->prefix.c_str();
  if (!impl->domain.empty()) o.Domain = impl->domain.c_str();
  o.Wait = detail::timeoutMs(options.timeout);
  o.PublishAsync.MaxPending = std::max(1, options.window);
  o.PublishAsync.AckHandler = &Impl::onAck;
  o.PublishAsync.AckHandlerClosure = impl.get();
  // A full window waits this long for room before the send fails (then reported per message).
  o.PublishAsync.StallWait = detail::timeoutMs(options.timeout);
  natsStatus s =
      natsConnection_JetStream(&impl->js, detail::NatsAccess::connection(connection), &o);
  if (s != NATS_OK)
    return detail::natsError(s, "creating the publish pipeline's JetStream context");
  return std::unique_ptr<PublishPipeline>(new PublishPipeline(std::move(impl)));
}

PublishPipeline::PublishPipeline(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PublishPipeline::~PublishPipeline() = default;

std::vector<Result<PubAck>> PublishPipeline::publishAll(
    const std::vector<OutgoingMessage>& messages) {
  std::lock_guard call(impl_->callMu);
  std::vector<std::optional<Result<PubAck>>> answers(messages.size());
  {
    std::lock_guard lock(impl_->mu);
    impl_->answers = &answers;
  }
  std::optional<Status> halted;  // a send failed: the broker is away, the rest are not tried
  for (size_t i = 0; i < messages.size(); ++i) {
    const OutgoingMessage& m = messages[i];
    if (halted) {
      answers[i] = unavailable(
          "publish-not-sent",
          "JetStream publish to '" + m.subject +
              "': not sent, an earlier publish of the batch failed: " + halted->toString());
      continue;
    }
    auto built = detail::makeMsg(m.subject, "", m.data, detail::publishHeaders(m.options));
    if (!built.isOk()) {
      answers[i] = built.status();
      continue;
    }
    natsMsg* raw = built->release();
    {
      // Before the send: the answer may come back before js_PublishMsgAsync returns.
      std::lock_guard lock(impl_->mu);
      impl_->slots[raw] = i;
    }
    natsStatus s = js_PublishMsgAsync(impl_->js, &raw, nullptr);
    if (s != NATS_OK) {
      // Not taken: nats.c left the message with us (raw still set), no answer will come.
      std::lock_guard lock(impl_->mu);
      impl_->slots.erase(raw);
      answers[i] = detail::natsError(s, "JetStream publish to '" + m.subject + "'");
      halted = answers[i]->status();
      natsMsg_Destroy(raw);
    }
  }
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = detail::timeoutMs(impl_->timeout);
  (void)js_PublishAsyncComplete(impl_->js, &po);
  // What is still unanswered: no longer awaited (its late answer, if any, finds no slot).
  natsMsgList pending{nullptr, 0};
  if (js_PublishAsyncGetPendingList(&pending, impl_->js) == NATS_OK) natsMsgList_Destroy(&pending);
  std::vector<Result<PubAck>> out;
  out.reserve(messages.size());
  std::lock_guard lock(impl_->mu);
  impl_->slots.clear();
  impl_->answers = nullptr;
  for (size_t i = 0; i < messages.size(); ++i) {
    if (answers[i]) {
      out.push_back(std::move(*answers[i]));
    } else {
      out.push_back(deadlineExceeded(
          "publish-unacknowledged",
          "JetStream publish to '" + messages[i].subject + "': no acknowledgement within " +
              std::to_string(impl_->timeout.count()) +
              " ms; it may or may not be stored (republish with the same msgId to find out)"));
    }
  }
  return out;
}

}  // namespace shoal::transport
