// RosterView: an observer's picture of `cotal_presence_<space>`, built from a KV watch of the
// whole bucket (seed "Presence"; Cotal SPEC §6; docs/presence.md).
//
// The view is a state machine fed watch events (entries, the initial-snapshot marker, watch
// failures) and clock ticks (a sweep every ttl/3 on the executor). Where the events come from
// is a PresenceWatchSource: KvPresenceWatchSource pumps a real KvWatcher on its own thread;
// tests drive a fake one with ManualExecutor + FakeClock.
//
// View state (local, not wire): `current`; `unpopulated` (the current watch has not completed
// its initial snapshot); `stale` (the whole watch silent past the liveness window `ttl`).
// `fresh` is false for the two unsafe states. presence-write-stuck (from the publisher, via
// setWriteStuck) additionally marks the roster last-known without changing the state.
//
// Rules:
//   - rows are keyed by the KV key; a record is accepted only through wire::decodePresence
//     (card.id = key, name/status types, finite ts …); a rejected record is dropped and
//     reported on the warning handler; the reserved key `_cotal_ttl_reconcile` is ignored;
//   - offline is derived from a stale ts (now − ts > ttl AND lastWatchDelivery − ts > ttl, and
//     only while the view is not stale), from a KV DEL/PURGE, from a record that says offline,
//     and from a key missing after a rebind whose last ts is past the window (a fresher one is
//     left to the sweep: nats.c may mark a snapshot done just before its last keys arrive);
//     offline peers stay in the roster;
//   - a stale PUT (status ≠ offline, now − ts > ttl): known peer keeps its last-known row,
//     unknown peer is recorded offline;
//   - a changed lifecycleUid is always reported as a kLifecycleChanged event;
//   - stale under a live connection: rebind from current state at most once per ttl, with a
//     warning naming the silent interval; the view is unpopulated until the rebind's snapshot
//     completes; events of a superseded or stopped watch generation install nothing;
//   - a rebind landing on an empty bucket is current knowledge for a non-registered observer;
//     for a registered one (selfId set) it is a wipe: it calls republishSelf and becomes
//     current when its own record is delivered.
//
// Lookups refuse under a non-current view with kUnavailable `presence-view-stale` /
// `presence-view-unpopulated` (never "unknown peer").
//
// Thread safety: every method must be called on `executor`; handlers are called there.
// PresenceWatchSource delivery callbacks may run on any thread (they only post).
// Lifetime: `executor` and `source` must outlive the view. Call stop() before destroying the
// source; tasks still queued after destruction are ignored.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/executor.h"
#include "base/result.h"
#include "base/status.h"
#include "mesh/presence_publisher.h"
#include "transport/kv.h"
#include "wire/presence.h"

namespace shoal::mesh {

inline constexpr std::string_view kReasonViewStale = "presence-view-stale";
inline constexpr std::string_view kReasonViewUnpopulated = "presence-view-unpopulated";
inline constexpr std::string_view kReasonWatchSilent = "presence-watch-silent";
inline constexpr std::string_view kReasonSnapshotTimeout = "presence-snapshot-timeout";
inline constexpr std::string_view kReasonAmbiguousName = "ambiguous-name";
inline constexpr std::string_view kReasonUnknownPeer = "unknown-peer";

// One event from a watch generation.
struct PresenceWatchEvent {
  enum class Kind { kEntry, kSnapshotDone, kFailed };
  Kind kind = Kind::kEntry;
  transport::KvEntry entry{};  // kEntry
  Status status{};             // kFailed
};

// Where watch events come from. bind() starts a watch of the whole bucket from its current
// state (stopping any earlier one); `deliver` is called (from any thread) with its events.
class PresenceWatchSource {
 public:
  using Deliver = std::function<void(PresenceWatchEvent)>;
  virtual ~PresenceWatchSource() = default;
  virtual void bind(Deliver deliver) = 0;
  // Stops the current watch; no more deliveries after it returns.
  virtual void stop() = 0;
};

enum class ViewState { kCurrent, kUnpopulated, kStale };
std::string_view viewStateName(ViewState state);

// Why a row is offline.
enum class OfflineCause { kNone, kLeft, kExpired, kDeleted, kStaleReplay };
std::string_view offlineCauseName(OfflineCause cause);

struct RosterRow {
  std::string id;           // the KV key = card.id
  wire::Presence presence;  // last accepted record; presence.status is the effective status
  OfflineCause offlineCause = OfflineCause::kNone;
  bool online() const { return presence.status != wire::PresenceStatus::kOffline; }
};

struct PresenceViewInfo {
  ViewState state = ViewState::kUnpopulated;
  bool fresh = false;                    // state == kCurrent
  std::optional<int64_t> silentSinceMs;  // kStale: wall ms of the last watch delivery
  bool lastKnown = true;                 // !fresh or presence-write-stuck
  Status writeStuck{};
  // The condition in words ("presence view is stale: …"); OK when current.
  Status condition{};
};

struct RosterSnapshot {
  PresenceViewInfo view;
  std::vector<RosterRow> rows;  // sorted by id
};

struct RosterEvent {
  enum class Kind { kJoined, kUpdated, kOffline, kLifecycleChanged, kViewChanged };
  Kind kind = Kind::kUpdated;
  std::string id;  // empty for kViewChanged
};

struct RosterViewOptions {
  std::chrono::milliseconds ttl = kPresenceTtl;
  // The observer's own key when it registers (publishes presence); empty when it does not.
  std::string selfId{};
  // Called on the executor when a rebind found the bucket wiped (own key missing).
  std::function<void()> republishSelf{};
};

class RosterView {
 public:
  using StatusHandler = std::function<void(const Status&)>;
  using EventHandler = std::function<void(const RosterEvent&)>;
  using SnapshotHandler = std::function<void(Result<RosterSnapshot>)>;

  RosterView(Executor& executor, PresenceWatchSource& source, RosterViewOptions options = {});
  ~RosterView();
  RosterView(const RosterView&) = delete;
  RosterView& operator=(const RosterView&) = delete;

  // Warnings (rejected records, a silent watch) go here; without a handler, to the log.
  void setWarningHandler(StatusHandler handler) { onWarning_ = std::move(handler); }
  void setEventHandler(EventHandler handler) { onEvent_ = std::move(handler); }

  // Binds the watch and starts the sweep. kFailedPrecondition if already started or stopped.
  Status start();
  // Stops the watch; later deliveries (including a rebind still in flight) install nothing.
  void stop();

  // The endpoint reports its connection state; a stale view rebinds only while live.
  void setConnectionLive(bool live) { connectionLive_ = live; }
  // From the publisher's stuck handler: OK clears.
  void setWriteStuck(const Status& stuck) { writeStuck_ = stuck; }

  PresenceViewInfo info() const;
  RosterSnapshot snapshot() const;
  // Calls `done` once the view is current (at once if it is), or with kDeadlineExceeded
  // `presence-snapshot-timeout` after `timeout` — a bounded give-up, not proof of anything.
  void waitForPresenceSnapshot(std::chrono::milliseconds timeout, SnapshotHandler done);

  // Exact id > unique live name > unique offline name (names case-insensitive). Errors:
  // the view's condition (kUnavailable) when not current; kInvalidArgument `ambiguous-name`
  // listing candidate ids; kNotFound `unknown-peer`.
  Result<RosterRow> find(std::string_view idOrName) const;
  // The row under `id` as held now, whatever the view state (callers label it by info()).
  std::optional<RosterRow> row(std::string_view id) const;

  uint64_t rebindCount() const { return rebinds_; }

 private:
  void bindWatch();
  void onWatchEvent(uint64_t gen, PresenceWatchEvent event);
  void applyEntry(const transport::KvEntry& entry, bool replay);
  void applyRecord(const std::string& key, wire::Presence record);
  void finishSnapshot();
  void installCurrent();
  void sweep();
  void scheduleSweep();
  void setState(ViewState state);
  void markOffline(RosterRow& row, OfflineCause cause);
  void emit(RosterEvent::Kind kind, const std::string& id);
  void warn(const Status& status);
  void resolveWaiters();
  int64_t nowNs() const { return executor_.clock().monotonicNs(); }
  int64_t nowMs() const { return executor_.clock().wallMs(); }

  Executor& executor_;
  PresenceWatchSource& source_;
  const std::chrono::milliseconds ttl_;
  const std::string selfId_;
  std::function<void()> republishSelf_;

  bool started_ = false;
  bool stopped_ = false;
  bool connectionLive_ = true;
  uint64_t generation_ = 0;  // events of any other generation are ignored
  ViewState state_ = ViewState::kUnpopulated;
  bool isRebind_ = false;
  bool snapshotDone_ = false;  // of the current generation
  int64_t staleSinceMs_ = 0;
  bool awaitingSelf_ = false;  // wipe seen; current once our own record is delivered
  std::map<std::string, transport::KvEntry> pending_;  // initial snapshot of this generation
  std::map<std::string, RosterRow> rows_;
  int64_t lastDeliveryNs_ = 0;  // monotonic
  int64_t lastDeliveryMs_ = 0;  // wall, for the ts comparison and "silent since"
  std::optional<int64_t> lastRebindNs_;
  uint64_t rebinds_ = 0;
  std::optional<TimerId> sweepTimer_;
  Status writeStuck_;
  struct Waiter {
    uint64_t id;
    SnapshotHandler done;
    TimerId timer;
  };
  std::vector<Waiter> waiters_;
  uint64_t nextWaiterId_ = 1;
  StatusHandler onWarning_;
  EventHandler onEvent_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// The production source: one thread per watch generation pumping KvWatcher::next.
// Thread safety: bind/stop from one thread (the view's executor). Lifetime: `kv` must outlive
// it; the destructor stops and joins every pump thread.
class KvPresenceWatchSource final : public PresenceWatchSource {
 public:
  explicit KvPresenceWatchSource(transport::KeyValue& kv);
  ~KvPresenceWatchSource() override;
  void bind(Deliver deliver) override;
  void stop() override;

  struct Pump;

 private:
  transport::KeyValue& kv_;
  std::shared_ptr<Pump> current_;
  std::vector<std::shared_ptr<Pump>> pumps_;  // shared with each pump thread
};

}  // namespace shoal::mesh
