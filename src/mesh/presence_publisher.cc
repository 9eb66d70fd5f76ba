#include "mesh/presence_publisher.h"

#include <utility>

#include "base/log.h"

namespace shoal::mesh {
namespace {

// Cuts `text` to at most `max` bytes on a UTF-8 character boundary, ending it with "…".
void clipText(std::optional<std::string>& text, size_t max) {
  static constexpr std::string_view kEllipsis = "\u2026";
  if (!text || text->size() <= max) return;
  size_t cut = max - kEllipsis.size();
  while (cut > 0 && (static_cast<unsigned char>((*text)[cut]) & 0xC0) == 0x80)
    --cut;
  text->resize(cut);
  *text += kEllipsis;
}

}  // namespace

Status KvPresenceStore::put(std::string_view key, std::string_view value) {
  Result<uint64_t> rev = kv_.put(key, value);
  return rev.isOk() ? Status::ok() : rev.status();
}

PresencePublisher::PresencePublisher(Executor& executor, PresenceStore& store,
                                     PresencePublisherOptions options)
    : executor_(executor), store_(store), heartbeat_(options.heartbeat), ttl_(options.ttl) {
  record_.card = std::move(options.card);
  record_.lifecycleUid = std::move(options.lifecycleUid);
  record_.status = options.initialStatus == wire::PresenceStatus::kOffline
                       ? wire::PresenceStatus::kIdle
                       : options.initialStatus;
  record_.environment = std::move(options.environment);
  clipText(record_.environment, wire::kMaxEnvironmentBytes);
}

PresencePublisher::~PresencePublisher() {
  *alive_ = false;
  if (heartbeatTimer_) executor_.cancel(*heartbeatTimer_);
}

Status PresencePublisher::start() {
  if (started_ || gone_) {
    return failedPrecondition("presence-already-started",
                              "the presence publisher was already started; make a new one");
  }
  const double now = nowMs();
  record_.ts = now;
  record_.statusSince = now;
  if (record_.activity) record_.activitySince = now;
  // Validate before claiming to be live: a bad card is the caller's error, not a warning.
  SHOAL_RETURN_IF_ERROR(wire::validateAgentCard(record_.card).withContext("presence card"));
  Result<std::string> encoded = wire::encodePresence(record_);
  if (!encoded.isOk()) return encoded.status().withContext("presence record");
  started_ = true;
  (void)publishNow();
  return Status::ok();
}

Status PresencePublisher::setStatus(wire::PresenceStatus status) {
  if (status == wire::PresenceStatus::kOffline) {
    return invalidArgument("offline-is-not-live",
                           "a live instance never publishes offline; call leave() to go away");
  }
  if (status != record_.status) {
    record_.status = status;
    record_.statusSince = nowMs();
    schedulePublish();
  }
  return Status::ok();
}

Status PresencePublisher::setActivity(std::optional<std::string> activity) {
  if (activity) SHOAL_RETURN_IF_ERROR(wire::checkActivity(*activity));
  if (activity == record_.activity) return Status::ok();  // a repeated report moves nothing
  const double now = nowMs();
  record_.activity = std::move(activity);
  record_.statusSince = now;
  record_.activitySince = record_.activity ? std::optional<double>(now) : std::nullopt;
  schedulePublish();
  return Status::ok();
}

void PresencePublisher::setCondition(wire::PresenceCondition condition) {
  clipText(condition.source, wire::kMaxConditionTextBytes);
  clipText(condition.message, wire::kMaxConditionTextBytes);
  if (!condition.since) {
    // Keep the age of a repeated report of the same cause.
    if (record_.condition && record_.condition->code == condition.code) {
      condition.since = record_.condition->since;
    } else {
      condition.since = nowMs();
    }
  }
  if (record_.condition == condition) return;
  record_.condition = std::move(condition);
  schedulePublish();
}

void PresencePublisher::clearCondition() {
  if (!record_.condition) return;
  record_.condition.reset();
  schedulePublish();
}

void PresencePublisher::beginTurn() {
  clearCondition();
  (void)setStatus(wire::PresenceStatus::kWorking);
}

void PresencePublisher::recordWorkEvent() {
  record_.activeAt = nowMs();
}

void PresencePublisher::setAttention(std::optional<wire::Attention> attention) {
  if (attention == record_.attention) return;
  record_.attention = attention;
  schedulePublish();
}

void PresencePublisher::setChannelMode(const std::string& channel,
                                       std::optional<wire::ChannelMode> mode) {
  auto it = record_.channelModes.find(channel);
  if (!mode) {
    if (it == record_.channelModes.end()) return;
    record_.channelModes.erase(it);
  } else {
    if (it != record_.channelModes.end() && it->second == *mode) return;
    record_.channelModes[channel] = *mode;
  }
  schedulePublish();
}

void PresencePublisher::setEnvironment(std::optional<std::string> environment) {
  clipText(environment, wire::kMaxEnvironmentBytes);
  if (environment == record_.environment) return;
  record_.environment = std::move(environment);
  schedulePublish();
}

void PresencePublisher::republish() {
  if (!live()) return;
  (void)publishNow();
}

Status PresencePublisher::leave() {
  if (!live()) {
    return failedPrecondition("presence-not-live",
                              "the presence publisher is not live (never started, or gone)");
  }
  gone_ = true;
  if (heartbeatTimer_) executor_.cancel(*heartbeatTimer_);
  heartbeatTimer_.reset();
  wire::Presence offline = record_;
  offline.status = wire::PresenceStatus::kOffline;
  offline.ts = nowMs();
  offline.attention.reset();
  offline.channelModes.clear();
  offline.statusSince.reset();
  record_ = offline;
  return write(offline);
}

void PresencePublisher::stop() {
  gone_ = true;
  if (heartbeatTimer_) executor_.cancel(*heartbeatTimer_);
  heartbeatTimer_.reset();
}

void PresencePublisher::schedulePublish() {
  if (!live() || publishPending_) return;
  publishPending_ = true;
  executor_.post([this, alive = std::weak_ptr<bool>(alive_)] {
    auto token = alive.lock();
    if (!token || !*token) return;
    publishPending_ = false;
    if (live()) (void)publishNow();
  });
}

void PresencePublisher::scheduleHeartbeat() {
  if (heartbeatTimer_) executor_.cancel(*heartbeatTimer_);
  heartbeatTimer_ = executor_.postAfter(heartbeat_, [this, alive = std::weak_ptr<bool>(alive_)] {
    auto token = alive.lock();
    if (!token || !*token) return;
    heartbeatTimer_.reset();
    if (live()) (void)publishNow();
  });
}

Status PresencePublisher::publishNow() {
  record_.ts = nowMs();
  Status st = write(record_);
  scheduleHeartbeat();
  return st;
}

Status PresencePublisher::write(const wire::Presence& p) {
  Result<std::string> encoded = wire::encodePresence(p);
  Status st = encoded.isOk() ? store_.put(p.card.id, *encoded) : encoded.status();
  noteWriteResult(st);
  return st;
}

void PresencePublisher::noteWriteResult(const Status& status) {
  if (status.isOk()) {
    consecutiveFailures_ = 0;
    if (!stuck_.isOk()) {
      stuck_ = Status::ok();
      log::info("presence write for {} succeeded; presence-write-stuck cleared", key());
      if (onStuck_) onStuck_(stuck_);
    }
    return;
  }
  const int64_t nowNs = executor_.clock().monotonicNs();
  if (consecutiveFailures_ == 0) firstFailureNs_ = nowNs;
  ++consecutiveFailures_;
  const Status warning = unavailable(kReasonPresenceWriteRefused,
                                     fmt::format("presence write for {} refused ({} in a row): {}",
                                                 key(), consecutiveFailures_, status.toString()));
  if (onWarning_) {
    onWarning_(warning);
  } else {
    log::warn("{}", warning.message());
  }
  const auto failingFor = std::chrono::nanoseconds(nowNs - firstFailureNs_);
  if (stuck_.isOk() && consecutiveFailures_ > 1 && failingFor >= ttl_) {
    stuck_ = unavailable(
        kReasonPresenceWriteStuck,
        fmt::format("presence writes for {} have failed {} times in a row for {} ms (a full "
                    "presence TTL); the roster is last-known until a write succeeds. Last "
                    "error: {}",
                    key(), consecutiveFailures_,
                    std::chrono::duration_cast<std::chrono::milliseconds>(failingFor).count(),
                    status.toString()));
    if (onStuck_) {
      onStuck_(stuck_);
    } else {
      log::warn("{}", stuck_.message());
    }
  }
}

}  // namespace shoal::mesh
