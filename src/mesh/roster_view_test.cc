#include "mesh/roster_view.h"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/clock.h"
#include "base/executor.h"
#include "wire/names.h"

#include <gtest/gtest.h>

namespace shoal::mesh {
namespace {

using std::chrono::milliseconds;
using wire::PresenceStatus;
using Kind = PresenceWatchEvent::Kind;

// A watch source the test drives: each bind() is one generation the test can deliver on.
class FakeSource final : public PresenceWatchSource {
 public:
  void bind(Deliver deliver) override { binds.push_back(std::move(deliver)); }
  void stop() override { ++stops; }
  std::vector<Deliver> binds;
  int stops = 0;
};

class RosterViewTest : public ::testing::Test {
 protected:
  RosterViewTest() : executor_(clock_) {}

  void make(RosterViewOptions options = {}) {
    view_ = std::make_unique<RosterView>(executor_, source_, std::move(options));
    view_->setWarningHandler([this](const Status& s) { warnings_.push_back(s); });
    view_->setEventHandler([this](const RosterEvent& e) { events_.push_back(e); });
    ASSERT_TRUE(view_->start().isOk());
  }

  static std::string record(std::string_view id, std::string_view name, std::string_view status,
                            double ts, std::string_view extra = "") {
    return fmt::format(R"({{"card":{{"id":"{}","name":"{}","kind":"agent"}},"status":"{}",)"
                       R"("ts":{}{}}})",
                       id, name, status, ts, extra);
  }
  double nowMs() const { return static_cast<double>(clock_.wallMs()); }

  // Delivers on generation `gen` (index into binds) and runs the posted task.
  void put(size_t gen, std::string_view key, std::string value) {
    transport::KvEntry e;
    e.key = std::string(key);
    e.value = std::move(value);
    source_.binds.at(gen)({Kind::kEntry, e, {}});
    executor_.runReady();
  }
  void heartbeat(size_t gen, std::string_view id, std::string_view name,
                 std::string_view status = "idle") {
    put(gen, id, record(id, name, status, nowMs()));
  }
  void del(size_t gen, std::string_view key, transport::KvOperation op) {
    transport::KvEntry e;
    e.key = std::string(key);
    e.operation = op;
    source_.binds.at(gen)({Kind::kEntry, e, {}});
    executor_.runReady();
  }
  void snapshotDone(size_t gen) {
    source_.binds.at(gen)({Kind::kSnapshotDone, {}, {}});
    executor_.runReady();
  }
  // A current view holding alice and bob.
  void currentWithAliceAndBob() {
    make();
    heartbeat(0, "local.alice", "alice");
    heartbeat(0, "local.bob", "bob");
    snapshotDone(0);
    ASSERT_EQ(view_->info().state, ViewState::kCurrent);
  }
  RosterRow row(std::string_view id) {
    for (const RosterRow& r : view_->snapshot().rows) {
      if (r.id == id) return r;
    }
    ADD_FAILURE() << "no row " << id;
    return {};
  }
  bool hasRow(std::string_view id) {
    for (const RosterRow& r : view_->snapshot().rows) {
      if (r.id == id) return true;
    }
    return false;
  }
  bool warned(std::string_view reason) {
    for (const Status& s : warnings_) {
      if (s.reason() == reason) return true;
    }
    return false;
  }

  FakeClock clock_;
  ManualExecutor executor_;
  FakeSource source_;
  std::unique_ptr<RosterView> view_;
  std::vector<Status> warnings_;
  std::vector<RosterEvent> events_;
};

// Until the first watch completes its initial snapshot the view is unpopulated (fresh: false).
TEST_F(RosterViewTest, UnpopulatedUntilInitialSnapshotDone) {
  make();
  heartbeat(0, "local.alice", "alice");
  PresenceViewInfo info = view_->info();
  EXPECT_EQ(info.state, ViewState::kUnpopulated);
  EXPECT_FALSE(info.fresh);
  EXPECT_EQ(info.condition.reason(), kReasonViewUnpopulated);
  snapshotDone(0);
  info = view_->info();
  EXPECT_EQ(info.state, ViewState::kCurrent);
  EXPECT_TRUE(info.fresh);
  EXPECT_TRUE(info.condition.isOk());
  EXPECT_TRUE(row("local.alice").online());
}

// A whole-watch silence past the window makes the view stale; no peer is declared dead.
TEST_F(RosterViewTest, SilentWatchIsStaleNotMassDeath) {
  currentWithAliceAndBob();
  const int64_t lastHeard = clock_.wallMs();
  executor_.advance(milliseconds(20000));
  PresenceViewInfo info = view_->info();
  EXPECT_EQ(info.state, ViewState::kStale);
  EXPECT_FALSE(info.fresh);
  EXPECT_EQ(info.silentSinceMs, lastHeard);
  EXPECT_EQ(info.condition.reason(), kReasonViewStale);
  EXPECT_TRUE(row("local.alice").online());
  EXPECT_TRUE(row("local.bob").online());
}

// Offline from a stale ts is derived only while the observer hears the bucket.
TEST_F(RosterViewTest, StaleTsGoesOfflineOnlyWhileHearingBucket) {
  currentWithAliceAndBob();
  // bob keeps heartbeating, alice stopped.
  for (int i = 1; i <= 5; ++i) {
    executor_.advance(milliseconds(2000));
    heartbeat(0, "local.bob", "bob");
    // At 6 s alice is exactly one TTL old; at 8 s the last delivery (6 s) is not yet past it.
    if (i <= 4) {
      EXPECT_TRUE(row("local.alice").online()) << i;
    }
  }
  EXPECT_EQ(row("local.alice").presence.status, PresenceStatus::kOffline);
  EXPECT_EQ(row("local.alice").offlineCause, OfflineCause::kExpired);
  EXPECT_FALSE(row("local.alice").presence.statusSince.has_value());
  EXPECT_TRUE(row("local.bob").online());
}

// The last delivery must itself be more than a TTL after ts: a deaf observer kills nobody even
// when its wall clock runs far ahead.
TEST_F(RosterViewTest, WallClockJumpAloneKillsNobody) {
  currentWithAliceAndBob();
  clock_.setWallMs(clock_.wallMs() + 60000);
  executor_.advance(milliseconds(2000));  // one sweep, still hearing (2 s < TTL)
  EXPECT_TRUE(row("local.alice").online());
  EXPECT_TRUE(row("local.bob").online());
}

// KV DEL and PURGE markers make a peer offline; offline peers stay in the roster.
TEST_F(RosterViewTest, DeleteOrPurgeMeansOfflineAndRowStays) {
  currentWithAliceAndBob();
  del(0, "local.alice", transport::KvOperation::kDelete);
  del(0, "local.bob", transport::KvOperation::kPurge);
  EXPECT_EQ(row("local.alice").offlineCause, OfflineCause::kDeleted);
  EXPECT_EQ(row("local.bob").presence.status, PresenceStatus::kOffline);
  EXPECT_EQ(view_->snapshot().rows.size(), 2u);
}

// A graceful leave (an offline record) shows offline with cause `left`.
TEST_F(RosterViewTest, OfflineRecordIsALeave) {
  currentWithAliceAndBob();
  put(0, "local.alice", record("local.alice", "alice", "offline", nowMs()));
  EXPECT_EQ(row("local.alice").offlineCause, OfflineCause::kLeft);
  EXPECT_FALSE(row("local.alice").online());
}

// A replayed stale PUT keeps a known peer's last-known row and records an unknown peer offline.
TEST_F(RosterViewTest, ReplayedStalePutKeepsKnownRowRecordsUnknownOffline) {
  currentWithAliceAndBob();
  const double aliceTs = row("local.alice").presence.ts;
  executor_.advance(milliseconds(1000));
  const double old = nowMs() - 7000;
  put(0, "local.alice", record("local.alice", "alice", "working", old));
  EXPECT_EQ(row("local.alice").presence.ts, aliceTs);
  EXPECT_EQ(row("local.alice").presence.status, PresenceStatus::kIdle);
  put(0, "local.carol", record("local.carol", "carol", "working", old));
  EXPECT_EQ(row("local.carol").presence.status, PresenceStatus::kOffline);
  EXPECT_EQ(row("local.carol").offlineCause, OfflineCause::kStaleReplay);
}

// A changed lifecycleUid for the same principal is always an event.
TEST_F(RosterViewTest, ChangedLifecycleUidIsAlwaysAnEvent) {
  currentWithAliceAndBob();
  auto lifecycleEvents = [&] {
    int n = 0;
    for (const RosterEvent& e : events_)
      n += e.kind == RosterEvent::Kind::kLifecycleChanged;
    return n;
  };
  put(0, "local.alice",
      record("local.alice", "alice", "idle", nowMs(),
             R"(,"lifecycleUid":"aaaaaaaaaaaaaaaaaaaaaaaaaa")"));
  EXPECT_EQ(lifecycleEvents(), 1);
  put(0, "local.alice",
      record("local.alice", "alice", "idle", nowMs(),
             R"(,"lifecycleUid":"aaaaaaaaaaaaaaaaaaaaaaaaaa")"));
  EXPECT_EQ(lifecycleEvents(), 1);  // same lifecycle: an ordinary update
  put(0, "local.alice",
      record("local.alice", "alice", "idle", nowMs(),
             R"(,"lifecycleUid":"bbbbbbbbbbbbbbbbbbbbbbbbbb")"));
  EXPECT_EQ(lifecycleEvents(), 2);
}

// A record whose card.id differs from its key is dropped and reported as a warning.
TEST_F(RosterViewTest, ForgedCardIdIsDroppedWithWarning) {
  currentWithAliceAndBob();
  put(0, "local.carol", record("local.mallory", "carol", "idle", nowMs()));
  EXPECT_FALSE(hasRow("local.carol"));
  EXPECT_FALSE(hasRow("local.mallory"));
  EXPECT_TRUE(warned("card-id-mismatch"));
  // A forged write over a known key does not replace the genuine row.
  put(0, "local.alice", record("local.mallory", "alice", "working", nowMs()));
  EXPECT_EQ(row("local.alice").presence.status, PresenceStatus::kIdle);
}

// Missing or wrong-typed name or status, and a non-finite ts, are each dropped with a warning.
TEST_F(RosterViewTest, MalformedRecordsAreDroppedWithWarnings) {
  make();
  snapshotDone(0);
  put(0, "local.a", R"({"card":{"id":"local.a","kind":"agent"},"status":"idle","ts":1})");
  put(0, "local.b", R"({"card":{"id":"local.b","name":7,"kind":"agent"},"status":"idle","ts":1})");
  put(0, "local.c", R"({"card":{"id":"local.c","name":"c","kind":"agent"},"ts":1})");
  put(0, "local.d", R"({"card":{"id":"local.d","name":"d","kind":"agent"},"status":3,"ts":1})");
  put(0, "local.e",
      R"({"card":{"id":"local.e","name":"e","kind":"agent"},"status":"idle","ts":"nope"})");
  put(0, "local.f", "not json");
  EXPECT_TRUE(view_->snapshot().rows.empty());
  EXPECT_EQ(warnings_.size(), 6u);
  EXPECT_TRUE(warned("bad-ts"));
}

// The reserved TTL canary key is ignored: no row, no warning.
TEST_F(RosterViewTest, CanaryKeyIsIgnored) {
  make();
  put(0, wire::kPresenceCanaryKey, "canary");
  snapshotDone(0);
  put(0, wire::kPresenceCanaryKey, "canary");
  EXPECT_TRUE(view_->snapshot().rows.empty());
  EXPECT_TRUE(warnings_.empty());
}

// Stale under a live connection: one rebind per window, with a warning naming the silence.
TEST_F(RosterViewTest, RebindOncePerWindowWithWarningNamingSilentInterval) {
  currentWithAliceAndBob();
  executor_.advance(milliseconds(6000));
  EXPECT_EQ(view_->rebindCount(), 0u);  // not yet past the window
  executor_.advance(milliseconds(2000));
  EXPECT_EQ(view_->rebindCount(), 1u);
  ASSERT_EQ(source_.binds.size(), 2u);
  ASSERT_TRUE(warned(kReasonWatchSilent));
  EXPECT_NE(warnings_.back().message().find("silent since 2023-11-14T22:13:20.000Z"),
            std::string::npos)
      << warnings_.back().message();
  EXPECT_EQ(view_->info().state, ViewState::kStale);  // until the rebind's snapshot lands
  executor_.advance(milliseconds(4000));
  EXPECT_EQ(view_->rebindCount(), 1u);  // at most once per window
  executor_.advance(milliseconds(2000));
  EXPECT_EQ(view_->rebindCount(), 2u);
}

// Without a live connection the view stays stale and does not rebind.
TEST_F(RosterViewTest, NoRebindWithoutLiveConnection) {
  currentWithAliceAndBob();
  view_->setConnectionLive(false);
  executor_.advance(milliseconds(30000));
  EXPECT_EQ(view_->rebindCount(), 0u);
  EXPECT_EQ(view_->info().state, ViewState::kStale);
  heartbeat(0, "local.alice", "alice");  // the same watch speaks again
  EXPECT_EQ(view_->info().state, ViewState::kCurrent);
}

// A completed rebind makes the view current; keys missing from it are offline; the superseded
// watch's late events are ignored.
TEST_F(RosterViewTest, RebindSnapshotInstallsAndIgnoresOldGeneration) {
  currentWithAliceAndBob();
  executor_.advance(milliseconds(8000));
  ASSERT_EQ(source_.binds.size(), 2u);
  heartbeat(1, "local.alice", "alice");
  snapshotDone(1);
  EXPECT_EQ(view_->info().state, ViewState::kCurrent);
  EXPECT_TRUE(row("local.alice").online());
  EXPECT_EQ(row("local.bob").offlineCause, OfflineCause::kDeleted);
  heartbeat(0, "local.bob", "bob");  // old generation
  EXPECT_FALSE(row("local.bob").online());
}

// A rebind whose results arrive after stop() installs nothing.
TEST_F(RosterViewTest, RebindAfterStopInstallsNothing) {
  currentWithAliceAndBob();
  executor_.advance(milliseconds(8000));
  ASSERT_EQ(source_.binds.size(), 2u);
  view_->stop();
  EXPECT_GE(source_.stops, 1);
  heartbeat(1, "local.carol", "carol");
  snapshotDone(1);
  EXPECT_FALSE(hasRow("local.carol"));
  EXPECT_EQ(view_->info().state, ViewState::kStale);
  EXPECT_TRUE(row("local.bob").online());
}

// A rebind landing on an empty bucket is current knowledge for a non-registered observer.
TEST_F(RosterViewTest, EmptyRebindIsCurrentForNonRegisteredObserver) {
  currentWithAliceAndBob();
  executor_.advance(milliseconds(8000));
  snapshotDone(1);
  EXPECT_EQ(view_->info().state, ViewState::kCurrent);
  EXPECT_FALSE(row("local.alice").online());
  EXPECT_FALSE(row("local.bob").online());
}

// For a registered observer an empty rebind is a wipe: it re-publishes itself and becomes
// current only when its own record is delivered.
TEST_F(RosterViewTest, EmptyRebindIsAWipeForRegisteredObserver) {
  int republished = 0;
  RosterViewOptions options;
  options.selfId = "local.me";
  options.republishSelf = [&] { ++republished; };
  make(options);
  heartbeat(0, "local.me", "me");
  heartbeat(0, "local.alice", "alice");
  snapshotDone(0);
  executor_.advance(milliseconds(8000));
  ASSERT_EQ(source_.binds.size(), 2u);
  snapshotDone(1);
  EXPECT_EQ(republished, 1);
  EXPECT_FALSE(view_->info().fresh);
  EXPECT_TRUE(warned("presence-bucket-wiped"));
  heartbeat(1, "local.alice", "alice");  // someone else's record is not enough
  EXPECT_FALSE(view_->info().fresh);
  heartbeat(1, "local.me", "me");
  EXPECT_EQ(view_->info().state, ViewState::kCurrent);
}

// waitForPresenceSnapshot returns the snapshot once current, or a bounded timeout.
TEST_F(RosterViewTest, WaitForSnapshotResolvesOrTimesOut) {
  make();
  std::vector<Result<RosterSnapshot>> results;
  view_->waitForPresenceSnapshot(milliseconds(1000),
                                 [&](Result<RosterSnapshot> r) { results.push_back(r); });
  view_->waitForPresenceSnapshot(milliseconds(5000),
                                 [&](Result<RosterSnapshot> r) { results.push_back(r); });
  executor_.advance(milliseconds(1000));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status().reason(), kReasonSnapshotTimeout);
  heartbeat(0, "local.alice", "alice");
  snapshotDone(0);
  ASSERT_EQ(results.size(), 2u);
  ASSERT_TRUE(results[1].isOk());
  EXPECT_EQ(results[1]->rows.size(), 1u);
  EXPECT_TRUE(results[1]->view.fresh);
  executor_.advance(milliseconds(5000));
  EXPECT_EQ(results.size(), 2u);  // the resolved waiter's timer never fires
  view_->waitForPresenceSnapshot(milliseconds(1),
                                 [&](Result<RosterSnapshot> r) { results.push_back(r); });
  executor_.runReady();
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[2].isOk());
}

// A lookup under a stale view reports the view's condition (silent-since), never unknown peer.
TEST_F(RosterViewTest, LookupUnderStaleViewReportsCondition) {
  currentWithAliceAndBob();
  view_->setConnectionLive(false);
  executor_.advance(milliseconds(8000));
  for (std::string_view who : {"alice", "local.alice", "nobody"}) {
    Result<RosterRow> r = view_->find(who);
    ASSERT_FALSE(r.isOk());
    EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
    EXPECT_EQ(r.status().reason(), kReasonViewStale);
    EXPECT_NE(r.status().message().find("silent since 2023-11-14T22:13:20.000Z"),
              std::string::npos);
  }
}

// A lookup under an unpopulated view reports that condition, never unknown peer.
TEST_F(RosterViewTest, LookupUnderUnpopulatedViewReportsCondition) {
  make();
  Result<RosterRow> r = view_->find("nobody");
  EXPECT_EQ(r.status().reason(), kReasonViewUnpopulated);
}

// Several peers sharing a name: refused with every candidate id.
TEST_F(RosterViewTest, AmbiguousNameListsCandidates) {
  make();
  heartbeat(0, "local.rev1", "Reviewer");
  heartbeat(0, "local.rev2", "reviewer");
  snapshotDone(0);
  Result<RosterRow> r = view_->find("REVIEWER");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().reason(), kReasonAmbiguousName);
  EXPECT_NE(r.status().message().find("local.rev1"), std::string::npos);
  EXPECT_NE(r.status().message().find("local.rev2"), std::string::npos);
}

// Resolution order: exact id > unique live name > unique offline name; else unknown-peer.
TEST_F(RosterViewTest, NameResolutionOrder) {
  make();
  heartbeat(0, "local.x1", "Sam");
  put(0, "local.x2", record("local.x2", "sam", "offline", nowMs()));
  put(0, "local.x3", record("local.x3", "local.x1", "idle", nowMs()));  // name = another id
  put(0, "local.y1", record("local.y1", "ghost", "offline", nowMs()));
  put(0, "local.y2", record("local.y2", "ghost", "offline", nowMs()));
  snapshotDone(0);
  EXPECT_EQ(view_->find("local.x1")->id, "local.x1");
  EXPECT_EQ(view_->find("sam")->id, "local.x1");  // the live one wins
  del(0, "local.x1", transport::KvOperation::kDelete);
  EXPECT_EQ(view_->find("sam").status().reason(), kReasonAmbiguousName);  // two offline
  EXPECT_EQ(view_->find("ghost").status().reason(), kReasonAmbiguousName);
  EXPECT_EQ(view_->find("nobody").status().reason(), kReasonUnknownPeer);
}

// presence-write-stuck marks the roster last-known without changing the view state.
TEST_F(RosterViewTest, WriteStuckMarksRosterLastKnown) {
  currentWithAliceAndBob();
  EXPECT_FALSE(view_->info().lastKnown);
  view_->setWriteStuck(unavailable(kReasonPresenceWriteStuck, "stuck"));
  EXPECT_TRUE(view_->info().lastKnown);
  EXPECT_EQ(view_->info().state, ViewState::kCurrent);
  view_->setWriteStuck(Status::ok());
  EXPECT_FALSE(view_->info().lastKnown);
}

}  // namespace
}  // namespace shoal::mesh
