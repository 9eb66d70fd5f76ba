#include "mesh/stream_read.h"

#include <deque>
#include <iterator>

#include "transport/pull_consumer.h"

namespace shoal::mesh {
namespace {

constexpr int kReadBatch = 256;

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

Result<StoredPage> readStored(transport::JetStream& js, const StoredRead& read) {
  StoredPage page;
  page.watermark = read.watermark;
  if (page.watermark == 0) {
    auto info = js.streamInfo(read.stream);
    if (!info.isOk()) {
      if (info.status().code() == StatusCode::kNotFound) {
        return notFound("space-not-provisioned",
                        "the space has no " + read.stream +
                            " stream; start the mesh with `shoal up` (or `shoal serve`)");
      }
      return info.status().withContext("reading " + read.stream);
    }
    page.watermark = info->state.lastSeq;
  }
  if (page.watermark == 0) return page;  // nothing was ever stored

  transport::ConsumerConfig config;
  config.durable = read.consumer;
  config.description = read.description;
  config.filterSubject = read.filter;
  config.ackPolicy = transport::AckPolicy::kNone;
  config.memoryStorage = true;
  config.inactiveThreshold = kStoredReadInactiveThreshold;
  if (read.sinceMs) {
    config.deliverPolicy = transport::DeliverPolicy::kByStartTime;
    config.optStartTimeMs = *read.sinceMs;
  }
  // A consumer of this name left by an interrupted read would carry the old filter.
  (void)js.deleteConsumer(read.stream, read.consumer);
  // The filter rides in the subject, so an agent's grant pins the channels it may read.
  auto created = js.addConsumerPinned(read.stream, config);
  if (!created.isOk()) return created.status().withContext("creating " + read.consumer);
  ConsumerGuard guard(js, read.stream, read.consumer);
  if (created->numPending == 0) return page;

  SHOAL_ASSIGN_OR_RETURN(auto consumer,
                         transport::PullConsumer::bind(js, read.stream, read.consumer));
  std::deque<StoredEntry> kept;
  bool done = false;
  while (!done) {
    SHOAL_ASSIGN_OR_RETURN(auto batch, consumer.fetch(kReadBatch, read.fetchWait));
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
        kept.push_back(
            StoredEntry{meta.streamSeq, meta.timestampMs, message.subject(), std::move(*delivery)});
        if (read.limit != 0 && kept.size() > read.limit) kept.pop_front();
      }
      if (meta.streamSeq == page.watermark || meta.numPending == 0) done = true;
    }
  }
  page.entries.assign(std::make_move_iterator(kept.begin()), std::make_move_iterator(kept.end()));
  return page;
}

}  // namespace shoal::mesh
