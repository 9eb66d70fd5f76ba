#include "mesh/channel_history.h"

#include <deque>

#include "transport/pull_consumer.h"
#include "wire/channel.h"
#include "wire/names.h"
#include "wire/subject.h"

namespace shoal::mesh {
namespace {

constexpr int kHistoryBatch = 256;

// Deletes the transient consumer however the read ends.
class ConsumerGuard {
 public:
  ConsumerGuard(transport::JetStream& js, std::string stream, std::string name)
      : js_(js), stream_(std::move(stream)), name_(std::move(name)) {}
  ~ConsumerGuard() { (void)js_.deleteConsumer(stream_, name_); }
  ConsumerGuard(const ConsumerGuard&) = delete;
  ConsumerGuard& operator=(const ConsumerGuard&) = delete;

 private:
  transport::JetStream& js_;
  std::string stream_;
  std::string name_;
};

}  // namespace

Result<HistoryPage> readChannelHistory(transport::JetStream& js, std::string_view space,
                                       const wire::Principal& reader, std::string_view lifecycleUid,
                                       std::string_view channel, const HistoryOptions& options) {
  SHOAL_RETURN_IF_ERROR(wire::validateConcreteChannel(channel));
  SHOAL_ASSIGN_OR_RETURN(std::string stream, wire::streamName(wire::Stream::kChat, space));
  SHOAL_ASSIGN_OR_RETURN(std::string durable, wire::chathistDurable(reader, lifecycleUid));
  SHOAL_ASSIGN_OR_RETURN(std::string filter, wire::chatFilter(space, channel));

  HistoryPage page;
  page.channel = std::string(channel);
  page.watermark = options.watermark;
  if (page.watermark == 0) {
    auto info = js.streamInfo(stream);
    if (!info.isOk()) {
      if (info.status().code() == StatusCode::kNotFound) {
        return notFound("space-not-provisioned",
                        "the space has no " + stream +
                            " stream; start the mesh with `shoal up` (or `shoal serve`)");
      }
      return info.status().withContext("reading " + stream);
    }
    page.watermark = info->state.lastSeq;
  }
  if (page.watermark == 0) return page;  // nothing was ever posted

  transport::ConsumerConfig config;
  config.durable = durable;
  config.description = "history read of " + std::string(channel);
  config.filterSubject = filter;
  config.ackPolicy = transport::AckPolicy::kNone;
  config.memoryStorage = true;
  config.inactiveThreshold = kHistoryInactiveThreshold;
  if (options.sinceMs) {
    config.deliverPolicy = transport::DeliverPolicy::kByStartTime;
    config.optStartTimeMs = *options.sinceMs;
  }
  // A consumer of this name left by an interrupted read of this uid would carry the old filter.
  (void)js.deleteConsumer(stream, durable);
  auto created = js.addConsumer(stream, config);
  if (!created.isOk()) return created.status().withContext("creating " + durable);
  ConsumerGuard guard(js, stream, durable);
  if (created->numPending == 0) return page;

  SHOAL_ASSIGN_OR_RETURN(auto consumer, transport::PullConsumer::bind(js, stream, durable));
  std::deque<HistoryEntry> kept;
  bool done = false;
  while (!done) {
    SHOAL_ASSIGN_OR_RETURN(auto batch, consumer.fetch(kHistoryBatch, options.fetchWait));
    if (batch.empty()) break;  // nothing more arrived in time
    for (auto& message : batch) {
      const auto& meta = message.metadata();
      if (meta.streamSeq > page.watermark) {
        done = true;
        break;
      }
      auto delivery = wire::readDelivery(message.subject(), message.data());
      if (!delivery.isOk()) {
        ++page.skipped;
        page.lastSkipReason = std::string(delivery.status().reason());
      } else {
        kept.push_back(HistoryEntry{meta.streamSeq, meta.timestampMs, message.subject(),
                                    std::move(*delivery)});
        if (options.limit != 0 && kept.size() > options.limit) kept.pop_front();
      }
      if (meta.streamSeq == page.watermark || meta.numPending == 0) done = true;
    }
  }
  page.entries.assign(std::make_move_iterator(kept.begin()), std::make_move_iterator(kept.end()));
  return page;
}

}  // namespace shoal::mesh
