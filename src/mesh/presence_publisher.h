// PresencePublisher: writes this instance's own presence record into `cotal_presence_<space>`
// and keeps it fresh (seed "Presence"; Cotal SPEC §6; docs/presence.md).
//
// What it publishes: one record under the key `card.id` (never any other key), rewritten
//   - at start(), then on a heartbeat every `heartbeat` (2000 ms) with a fresh `ts`;
//   - promptly (one posted task, so several setters in one task make one write) after a change
//     of status, activity, condition, attention, channel modes or environment;
//   - once more, as `offline`, on leave(), scrubbed of attention / channelModes / statusSince.
// recordWorkEvent() only stamps `activeAt`; the next heartbeat carries it.
//
// Invariants:
//   - a live record's status is idle / waiting / working: `offline` is never heartbeated;
//   - `statusSince` moves only when status or activity changes (not on heartbeats or repeated
//     reports); `activitySince` only when activity changes;
//   - a condition is cleared by clearCondition() or when a normal next turn starts
//     (beginTurn());
//   - after leave() or stop() nothing more is written.
//
// presence-write-stuck (a local diagnosis of Cotal presence, not a wire field): every refused
// write is reported on the warning handler (a recoverable warning). When writes have failed
// consecutively more than once AND for at least `ttl` (6000 ms) since the first of them, the
// publisher raises writeStuck() = kUnavailable `presence-write-stuck` and calls the stuck
// handler with it; the next successful write resets the count, clears the condition and calls
// the stuck handler with OK.
//
// Thread safety: every method must be called on `executor` (the endpoint's strand); handlers
// are called there too. PresenceStore::put runs on that strand and may block for its timeout.
// Lifetime: `executor` and `store` must outlive the publisher; destroy it on the strand (or
// after the strand stopped) — its timers are cancelled by stop()/the destructor.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/executor.h"
#include "base/status.h"
#include "transport/kv.h"
#include "wire/presence.h"

namespace shoal::mesh {

inline constexpr std::chrono::milliseconds kPresenceHeartbeat{2000};
// Liveness window = bucket TTL (KV max_age) = write-stuck window.
inline constexpr std::chrono::milliseconds kPresenceTtl{6000};

inline constexpr std::string_view kReasonPresenceWriteStuck = "presence-write-stuck";
inline constexpr std::string_view kReasonPresenceWriteRefused = "presence-write-refused";

// The one write the publisher needs; a seam so tests can refuse writes.
class PresenceStore {
 public:
  virtual ~PresenceStore() = default;
  // Stores `value` under `key` (unconditional put). May block up to the store's timeout.
  virtual Status put(std::string_view key, std::string_view value) = 0;
};

// The production store: a put into the presence bucket.
// Lifetime: `kv` must outlive it.
class KvPresenceStore final : public PresenceStore {
 public:
  explicit KvPresenceStore(transport::KeyValue& kv) : kv_(kv) {}
  Status put(std::string_view key, std::string_view value) override;

 private:
  transport::KeyValue& kv_;
};

struct PresencePublisherOptions {
  wire::AgentCard card{};                   // the key is card.id
  std::optional<std::string> lifecycleUid;  // advisory; MUST in auth mode
  wire::PresenceStatus initialStatus = wire::PresenceStatus::kIdle;
  std::optional<std::string> environment;
  std::chrono::milliseconds heartbeat = kPresenceHeartbeat;
  std::chrono::milliseconds ttl = kPresenceTtl;
};

class PresencePublisher {
 public:
  using StatusHandler = std::function<void(const Status&)>;

  PresencePublisher(Executor& executor, PresenceStore& store, PresencePublisherOptions options);
  ~PresencePublisher();
  PresencePublisher(const PresencePublisher&) = delete;
  PresencePublisher& operator=(const PresencePublisher&) = delete;

  // Each refused write (kUnavailable-ish Status from the store, with context). Without a
  // handler, warnings (and the stuck condition) go to the log instead.
  void setWarningHandler(StatusHandler handler) { onWarning_ = std::move(handler); }
  // Called with `presence-write-stuck` when raised and with OK when a write clears it.
  void setWriteStuckHandler(StatusHandler handler) { onStuck_ = std::move(handler); }

  // Validates the record and writes it now, then heartbeats. Returns the encode error (the
  // card is invalid: kInvalidArgument) or OK; a refused first write is only a warning.
  // kFailedPrecondition if already started or left.
  Status start();

  // Live statuses only: `offline` is refused (kInvalidArgument `offline-is-not-live`).
  Status setStatus(wire::PresenceStatus status);
  // An activity over wire::kMaxActivityBytes (or not UTF-8) is refused and nothing changes.
  Status setActivity(std::optional<std::string> activity);
  // A harness-reported cause; `since` is stamped now when absent. Its texts are clipped to
  // wire::kMaxConditionTextBytes (they come from runtimes, which may say a lot).
  void setCondition(wire::PresenceCondition condition);
  void clearCondition();
  // A normal next turn starts: status becomes working and any condition is cleared.
  void beginTurn();
  // A work event (token, tool call) happened now: stamps activeAt; the next heartbeat carries it.
  void recordWorkEvent();
  void setAttention(std::optional<wire::Attention> attention);
  // nullopt removes the channel's override.
  void setChannelMode(const std::string& channel, std::optional<wire::ChannelMode> mode);
  void setEnvironment(std::optional<std::string> environment);

  // Writes the current record now (e.g. the roster saw its own key wiped). No-op unless live.
  void republish();

  // Graceful leave: stops heartbeating and writes exactly one final `offline` record.
  // Returns that write's outcome; kFailedPrecondition if not started or already gone.
  Status leave();
  // Stops heartbeating without writing (connection rebuild, or to let the key expire).
  void stop();

  // OK, or kUnavailable `presence-write-stuck` while stuck.
  const Status& writeStuck() const { return stuck_; }
  int consecutiveFailures() const { return consecutiveFailures_; }
  // The record as the next write would carry it (ts = last write).
  const wire::Presence& record() const { return record_; }
  const std::string& key() const { return record_.card.id; }
  bool live() const { return started_ && !gone_; }

 private:
  void schedulePublish();
  void scheduleHeartbeat();
  Status publishNow();
  Status write(const wire::Presence& p);
  void noteWriteResult(const Status& status);
  double nowMs() const { return static_cast<double>(executor_.clock().wallMs()); }

  Executor& executor_;
  PresenceStore& store_;
  const std::chrono::milliseconds heartbeat_;
  const std::chrono::milliseconds ttl_;

  wire::Presence record_;
  bool started_ = false;
  bool gone_ = false;  // left or stopped
  bool publishPending_ = false;
  std::optional<TimerId> heartbeatTimer_;
  int consecutiveFailures_ = 0;
  int64_t firstFailureNs_ = 0;  // monotonic
  Status stuck_;
  StatusHandler onWarning_;
  StatusHandler onStuck_;
  // Tasks posted to the executor check this token, so none runs after destruction.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace shoal::mesh
