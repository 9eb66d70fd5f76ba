#include "mesh/roster_view.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <ctime>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "base/log.h"
#include "wire/names.h"

namespace shoal::mesh {
namespace {

std::string isoInstant(int64_t wallMs) {
  const time_t secs = static_cast<time_t>(wallMs / 1000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", buf, static_cast<int>(wallMs % 1000));
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string_view viewStateName(ViewState state) {
  switch (state) {
    case ViewState::kCurrent:
      return "current";
    case ViewState::kUnpopulated:
      return "unpopulated";
    case ViewState::kStale:
      return "stale";
  }
  return "unknown";
}

std::string_view offlineCauseName(OfflineCause cause) {
  switch (cause) {
    case OfflineCause::kNone:
      return "none";
    case OfflineCause::kLeft:
      return "left";
    case OfflineCause::kExpired:
      return "expired";
    case OfflineCause::kDeleted:
      return "deleted";
    case OfflineCause::kStaleReplay:
      return "stale-replay";
  }
  return "unknown";
}

RosterView::RosterView(Executor& executor, PresenceWatchSource& source, RosterViewOptions options)
    : executor_(executor),
      source_(source),
      ttl_(options.ttl),
      selfId_(std::move(options.selfId)),
      republishSelf_(std::move(options.republishSelf)) {}

RosterView::~RosterView() {
  *alive_ = false;
  if (sweepTimer_) executor_.cancel(*sweepTimer_);
  for (const Waiter& w : waiters_)
    executor_.cancel(w.timer);
}

Status RosterView::start() {
  if (started_ || stopped_) {
    return failedPrecondition("roster-already-started",
                              "the roster view was already started; make a new one");
  }
  started_ = true;
  lastDeliveryNs_ = nowNs();
  lastDeliveryMs_ = nowMs();
  bindWatch();
  scheduleSweep();
  return Status::ok();
}

void RosterView::stop() {
  if (stopped_) return;
  stopped_ = true;
  ++generation_;  // anything still in flight (a rebind awaiting the broker) installs nothing
  source_.stop();
  if (sweepTimer_) executor_.cancel(*sweepTimer_);
  sweepTimer_.reset();
  std::vector<Waiter> waiters = std::move(waiters_);
  waiters_.clear();
  for (Waiter& w : waiters) {
    executor_.cancel(w.timer);
    w.done(cancelled("roster-stopped", "the roster view was stopped"));
  }
}

void RosterView::bindWatch() {
  const uint64_t gen = ++generation_;
  pending_.clear();
  snapshotDone_ = false;
  Executor* executor = &executor_;
  source_.bind([this, executor, gen, alive = std::weak_ptr<bool>(alive_)](PresenceWatchEvent ev) {
    executor->post([this, gen, alive, ev = std::move(ev)]() mutable {
      auto token = alive.lock();
      if (!token || !*token) return;
      onWatchEvent(gen, std::move(ev));
    });
  });
}

void RosterView::onWatchEvent(uint64_t gen, PresenceWatchEvent event) {
  if (stopped_ || gen != generation_) return;  // superseded or stopped: install nothing
  if (event.kind == PresenceWatchEvent::Kind::kFailed) {
    warn(event.status.withContext("presence watch failed"));
    return;
  }
  lastDeliveryNs_ = nowNs();
  lastDeliveryMs_ = nowMs();
  if (event.kind == PresenceWatchEvent::Kind::kSnapshotDone) {
    if (!snapshotDone_) finishSnapshot();
    return;
  }
  if (!snapshotDone_) {
    pending_[event.entry.key] = std::move(event.entry);
    return;
  }
  const bool isSelfPut = awaitingSelf_ && event.entry.key == selfId_ &&
                         event.entry.operation == transport::KvOperation::kPut;
  applyEntry(event.entry, /*replay=*/false);
  if (isSelfPut && rows_.count(selfId_) && rows_.at(selfId_).online()) {
    installCurrent();
  } else if (!awaitingSelf_ && state_ != ViewState::kCurrent) {
    setState(ViewState::kCurrent);  // a silent watch spoke again
  }
}

void RosterView::finishSnapshot() {
  snapshotDone_ = true;
  std::map<std::string, transport::KvEntry> entries = std::move(pending_);
  pending_.clear();
  size_t puts = 0;
  for (const auto& [key, entry] : entries) {
    if (key != wire::kPresenceCanaryKey && entry.operation == transport::KvOperation::kPut) ++puts;
  }
  if (isRebind_ && puts == 0 && !selfId_.empty()) {
    // A wipe: our own key is missing too. Nobody's key is in the bucket now; re-publish and let
    // the delivery of our own record make the view current.
    for (auto& [id, row] : rows_) {
      if (row.online()) markOffline(row, OfflineCause::kDeleted);
    }
    awaitingSelf_ = true;
    warn(unavailable("presence-bucket-wiped",
                     fmt::format("the presence bucket is empty after a rebind, including this "
                                 "observer's own key {}; re-publishing it",
                                 selfId_)));
    if (republishSelf_) republishSelf_();
    return;
  }
  std::set<std::string> seen;
  for (const auto& [key, entry] : entries) {
    if (entry.operation == transport::KvOperation::kPut) seen.insert(key);
    applyEntry(entry, /*replay=*/true);
  }
  // A key missing from the snapshot is gone — unless its last record is still within the
  // window: nats.c can report a snapshot complete a moment before its last keys arrive while
  // peers are writing, so such a row is left to the sweep (offline once its ts is stale).
  const double wallNow = static_cast<double>(nowMs());
  const double ttlMs = static_cast<double>(ttl_.count());
  for (auto& [id, row] : rows_) {
    if (!seen.count(id) && row.online() && wallNow - row.presence.ts > ttlMs) {
      markOffline(row, OfflineCause::kDeleted);
    }
  }
  installCurrent();
}

void RosterView::installCurrent() {
  awaitingSelf_ = false;
  setState(ViewState::kCurrent);
}

void RosterView::applyEntry(const transport::KvEntry& entry, bool /*replay*/) {
  if (entry.key == wire::kPresenceCanaryKey) return;  // reserved TTL canary
  if (entry.operation != transport::KvOperation::kPut) {
    auto it = rows_.find(entry.key);
    if (it != rows_.end() && it->second.online()) markOffline(it->second, OfflineCause::kDeleted);
    return;
  }
  Result<wire::Presence> decoded = wire::decodePresence(entry.key, entry.value);
  if (!decoded.isOk()) {
    warn(decoded.status().withContext(
        fmt::format("presence record under key '{}' dropped", entry.key)));
    return;
  }
  applyRecord(entry.key, std::move(decoded).value());
}

void RosterView::applyRecord(const std::string& key, wire::Presence record) {
  auto it = rows_.find(key);
  const bool known = it != rows_.end();
  if (record.status == wire::PresenceStatus::kOffline) {
    const bool wasOnline = known && it->second.online();
    RosterRow& row = rows_[key];
    row.id = key;
    row.presence = std::move(record);
    row.offlineCause = OfflineCause::kLeft;
    if (wasOnline || !known) emit(RosterEvent::Kind::kOffline, key);
    return;
  }
  const double age = static_cast<double>(nowMs()) - record.ts;
  if (age > static_cast<double>(ttl_.count())) {
    // A replayed stale PUT: never evidence that the peer is alive.
    if (known) return;  // keep the last-known row
    RosterRow& row = rows_[key];
    row.id = key;
    row.presence = std::move(record);
    row.presence.status = wire::PresenceStatus::kOffline;
    row.offlineCause = OfflineCause::kStaleReplay;
    emit(RosterEvent::Kind::kOffline, key);
    return;
  }
  if (!known) {
    RosterRow& row = rows_[key];
    row.id = key;
    row.presence = std::move(record);
    emit(RosterEvent::Kind::kJoined, key);
    return;
  }
  RosterRow& row = it->second;
  const bool wasOnline = row.online();
  const bool newLifecycle = row.presence.lifecycleUid != record.lifecycleUid;
  row.presence = std::move(record);
  row.offlineCause = OfflineCause::kNone;
  if (newLifecycle) emit(RosterEvent::Kind::kLifecycleChanged, key);
  emit(wasOnline ? RosterEvent::Kind::kUpdated : RosterEvent::Kind::kJoined, key);
}

void RosterView::markOffline(RosterRow& row, OfflineCause cause) {
  row.presence.status = wire::PresenceStatus::kOffline;
  // An observer deriving offline does not know when the peer left.
  row.presence.statusSince.reset();
  row.presence.attention.reset();
  row.presence.channelModes.clear();
  row.offlineCause = cause;
  emit(RosterEvent::Kind::kOffline, row.id);
}

void RosterView::scheduleSweep() {
  const auto every = std::max(std::chrono::milliseconds(500), ttl_ / 3);
  sweepTimer_ = executor_.postAfter(every, [this, alive = std::weak_ptr<bool>(alive_)] {
    auto token = alive.lock();
    if (!token || !*token) return;
    sweepTimer_.reset();
    sweep();
  });
}

void RosterView::sweep() {
  if (stopped_) return;
  const int64_t now = nowNs();
  const int64_t ttlNs = std::chrono::nanoseconds(ttl_).count();
  const bool silent = now - lastDeliveryNs_ > ttlNs;
  if (silent && state_ == ViewState::kCurrent) setState(ViewState::kStale);
  if (!silent && state_ == ViewState::kCurrent) {
    // Per-peer age-out, only while this observer is actually hearing the bucket.
    const double wallNow = static_cast<double>(nowMs());
    const double heard = static_cast<double>(lastDeliveryMs_);
    const double ttlMs = static_cast<double>(ttl_.count());
    for (auto& [id, row] : rows_) {
      const double ts = row.presence.ts;
      if (row.online() && wallNow - ts > ttlMs && heard - ts > ttlMs) {
        markOffline(row, OfflineCause::kExpired);
      }
    }
  }
  // The first bind counts as a delivery (start() stamps it), so `silent` also covers a first
  // snapshot that never arrives.
  const bool windowPassed = !lastRebindNs_ || now - *lastRebindNs_ >= ttlNs;
  if (silent && connectionLive_ && windowPassed) {
    const int64_t silentMs = (now - lastDeliveryNs_) / 1'000'000;
    warn(unavailable(kReasonWatchSilent,
                     fmt::format("presence watch silent since {} ({} ms, past the {} ms liveness "
                                 "window); rebinding from the bucket's current state",
                                 isoInstant(lastDeliveryMs_), silentMs, ttl_.count())));
    isRebind_ = true;
    ++rebinds_;
    lastRebindNs_ = now;
    bindWatch();
  }
  scheduleSweep();
}

void RosterView::setState(ViewState state) {
  if (state == state_) return;
  state_ = state;
  if (state == ViewState::kStale) staleSinceMs_ = lastDeliveryMs_;
  emit(RosterEvent::Kind::kViewChanged, "");
  if (state == ViewState::kCurrent) resolveWaiters();
}

void RosterView::emit(RosterEvent::Kind kind, const std::string& id) {
  if (onEvent_) onEvent_(RosterEvent{kind, id});
}

void RosterView::warn(const Status& status) {
  if (onWarning_) {
    onWarning_(status);
  } else {
    log::warn("{}", status.toString());
  }
}

void RosterView::resolveWaiters() {
  std::vector<Waiter> waiters = std::move(waiters_);
  waiters_.clear();
  for (Waiter& w : waiters) {
    executor_.cancel(w.timer);
    w.done(snapshot());
  }
}

PresenceViewInfo RosterView::info() const {
  PresenceViewInfo info;
  info.state = state_;
  info.fresh = state_ == ViewState::kCurrent;
  info.writeStuck = writeStuck_;
  info.lastKnown = !info.fresh || !writeStuck_.isOk();
  if (state_ == ViewState::kStale) {
    info.silentSinceMs = staleSinceMs_;
    info.condition = unavailable(
        kReasonViewStale,
        fmt::format("presence view is stale: the watch has been silent since {} (past the {} ms "
                    "liveness window); the roster is last-known and a missing name is not an "
                    "absence verdict",
                    isoInstant(staleSinceMs_), ttl_.count()));
  } else if (state_ == ViewState::kUnpopulated) {
    info.condition = unavailable(
        kReasonViewUnpopulated,
        "presence view is unpopulated: the presence watch has not completed its initial "
        "snapshot, so the roster may be partial and a missing name is not an absence verdict");
  }
  return info;
}

RosterSnapshot RosterView::snapshot() const {
  RosterSnapshot snap;
  snap.view = info();
  snap.rows.reserve(rows_.size());
  for (const auto& [id, row] : rows_)
    snap.rows.push_back(row);
  return snap;
}

void RosterView::waitForPresenceSnapshot(std::chrono::milliseconds timeout, SnapshotHandler done) {
  if (state_ == ViewState::kCurrent) {
    executor_.post([this, done = std::move(done), alive = std::weak_ptr<bool>(alive_)] {
      auto token = alive.lock();
      if (!token || !*token) return;
      done(snapshot());
    });
    return;
  }
  const uint64_t id = nextWaiterId_++;
  const TimerId timer =
      executor_.postAfter(timeout, [this, id, timeout, alive = std::weak_ptr<bool>(alive_)] {
        auto token = alive.lock();
        if (!token || !*token) return;
        auto it = std::find_if(waiters_.begin(), waiters_.end(),
                               [id](const Waiter& w) { return w.id == id; });
        if (it == waiters_.end()) return;
        SnapshotHandler handler = std::move(it->done);
        waiters_.erase(it);
        handler(deadlineExceeded(
            kReasonSnapshotTimeout,
            fmt::format("no complete presence snapshot within {} ms; view is {} (a bounded "
                        "give-up, not an absence verdict)",
                        timeout.count(), viewStateName(state_))));
      });
  waiters_.push_back(Waiter{id, std::move(done), timer});
}

Result<RosterRow> RosterView::find(std::string_view idOrName) const {
  if (state_ != ViewState::kCurrent) {
    return info().condition.withContext(fmt::format("cannot verify '{}'", idOrName));
  }
  if (auto it = rows_.find(std::string(idOrName)); it != rows_.end()) return it->second;
  const std::string want = lower(idOrName);
  std::vector<const RosterRow*> live;
  std::vector<const RosterRow*> offline;
  for (const auto& [id, row] : rows_) {
    if (lower(row.presence.card.name) != want) continue;
    (row.online() ? live : offline).push_back(&row);
  }
  const std::vector<const RosterRow*>& pick = live.empty() ? offline : live;
  if (pick.size() == 1) return *pick.front();
  if (pick.size() > 1) {
    std::string ids;
    for (const RosterRow* row : pick)
      ids += (ids.empty() ? "" : ", ") + row->id;
    return invalidArgument(
        kReasonAmbiguousName,
        fmt::format("name '{}' matches {} {} peers: {}; address one by id", idOrName, pick.size(),
                    live.empty() ? "offline" : "live", ids));
  }
  return notFound(kReasonUnknownPeer,
                  fmt::format("no peer with id or name '{}' in the current roster", idOrName));
}

std::optional<RosterRow> RosterView::row(std::string_view id) const {
  if (auto it = rows_.find(std::string(id)); it != rows_.end()) return it->second;
  return std::nullopt;
}

// --- KvPresenceWatchSource -------------------------------------------------------------------

struct KvPresenceWatchSource::Pump {
  std::mutex mu;
  transport::KvWatcher* watcher = nullptr;  // guarded by mu; owned by the pump thread
  bool stopped = false;                     // guarded by mu
  std::atomic<bool> finished{false};
  std::thread thread;

  void halt() {
    std::lock_guard lock(mu);
    stopped = true;
    if (watcher != nullptr) watcher->stop();
  }
};

namespace {

void runPump(transport::KeyValue& kv, const std::shared_ptr<KvPresenceWatchSource::Pump>& pump,
             const PresenceWatchSource::Deliver& deliver) {
  auto send = [&](PresenceWatchEvent ev) {
    std::lock_guard lock(pump->mu);  // no delivery after stop() returned
    if (!pump->stopped) deliver(std::move(ev));
  };
  Result<transport::KvWatcher> watcher = kv.watchAll();
  if (!watcher.isOk()) {
    send({PresenceWatchEvent::Kind::kFailed, {}, watcher.status()});
    return;
  }
  {
    std::lock_guard lock(pump->mu);
    if (pump->stopped) return;
    pump->watcher = &watcher.value();
  }
  bool snapshotDone = false;
  for (;;) {
    Result<std::optional<transport::KvEntry>> next = watcher->next(std::chrono::milliseconds(250));
    if (!next.isOk()) {
      if (next.status().code() != StatusCode::kCancelled) {
        send({PresenceWatchEvent::Kind::kFailed, {}, next.status()});
      }
      break;
    }
    if (next->has_value()) {
      send({PresenceWatchEvent::Kind::kEntry, std::move(**next), {}});
    } else if (!snapshotDone && watcher->initialValuesDone()) {
      snapshotDone = true;
      send({PresenceWatchEvent::Kind::kSnapshotDone, {}, {}});
    }
    std::lock_guard lock(pump->mu);
    if (pump->stopped) break;
  }
  std::lock_guard lock(pump->mu);
  pump->watcher = nullptr;
}

}  // namespace

KvPresenceWatchSource::KvPresenceWatchSource(transport::KeyValue& kv) : kv_(kv) {}

KvPresenceWatchSource::~KvPresenceWatchSource() {
  stop();
  for (auto& pump : pumps_) {
    if (pump->thread.joinable()) pump->thread.join();
  }
}

void KvPresenceWatchSource::bind(Deliver deliver) {
  stop();
  // Reap pumps that already ended (joining them does not block).
  std::erase_if(pumps_, [](const std::shared_ptr<Pump>& p) {
    if (!p->finished.load()) return false;
    if (p->thread.joinable()) p->thread.join();
    return true;
  });
  auto pump = std::make_shared<Pump>();
  pump->thread = std::thread([&kv = kv_, pump, deliver = std::move(deliver)] {
    runPump(kv, pump, deliver);
    pump->finished.store(true);
  });
  current_ = pump;
  pumps_.push_back(pump);
}

void KvPresenceWatchSource::stop() {
  if (current_) current_->halt();
  current_.reset();
}

}  // namespace shoal::mesh
