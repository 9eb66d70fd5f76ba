// Presence against a real nats-server: publishers and an observer, each on its own strand.
#include <atomic>
#include <future>
#include <optional>
#include <string>

#include "base/executor.h"
#include "mesh/presence_publisher.h"
#include "mesh/roster_view.h"
#include "testing/nats_fixture.h"
#include "transport/jetstream.h"
#include "transport/kv.h"
#include "wire/names.h"

#include <gtest/gtest.h>

namespace shoal::mesh {
namespace {

using shoal::testing::EventQueue;
using shoal::testing::eventually;
using std::chrono::milliseconds;

// Runs `fn` on `loop` and returns its result (the test thread never touches actor state).
template <typename F>
auto onLoop(Executor& loop, F fn) -> decltype(fn()) {
  std::promise<decltype(fn())> done;
  auto future = done.get_future();
  loop.post([&] { done.set_value(fn()); });
  return future.get();
}

class PresenceIntegrationTest : public shoal::testing::JetStreamServerTest {
 protected:
  void SetUp() override {
    JetStreamServerTest::SetUp();
    if (HasFatalFailure()) return;
    transport::KvConfig config;
    config.bucket = *wire::bucketName(wire::Bucket::kPresence, "main");
    config.ttl = kPresenceTtl;  // provisioning is not ours; the test creates the bucket
    auto kv = transport::KeyValue::createBucket(*js_, config);
    ASSERT_TRUE(kv.isOk()) << kv.status().toString();
    kv_.emplace(std::move(kv).value());
    store_.emplace(*kv_);
    source_.emplace(*kv_);
  }

  void TearDown() override {
    if (view_)
      onLoop(observerLoop_, [&] {
        view_->stop();
        return 0;
      });
    for (auto& p : publishers_)
      onLoop(publisherLoop_, [&] {
        p.reset();
        return 0;
      });
    onLoop(observerLoop_, [&] {
      view_.reset();
      return 0;
    });
    source_.reset();
    observerLoop_.stop();
    publisherLoop_.stop();
  }

  PresencePublisher& publish(const std::string& actor) {
    PresencePublisherOptions o;
    o.card.id = "local." + actor;
    o.card.name = actor;
    publishers_.push_back(std::make_unique<PresencePublisher>(publisherLoop_, *store_, o));
    PresencePublisher& p = *publishers_.back();
    Status st = onLoop(publisherLoop_, [&] { return p.start(); });
    EXPECT_TRUE(st.isOk()) << st.toString();
    return p;
  }

  void observe() {
    view_ = std::make_unique<RosterView>(observerLoop_, *source_);
    view_->setWarningHandler([this](const Status& s) { warnings_.push(s); });
    Status st = onLoop(observerLoop_, [&] { return view_->start(); });
    ASSERT_TRUE(st.isOk()) << st.toString();
  }

  // The observer's row for `id` (nullopt if absent or the view is not current).
  std::optional<RosterRow> rowOf(const std::string& id) {
    return onLoop(observerLoop_, [&]() -> std::optional<RosterRow> {
      Result<RosterRow> r = view_->find(id);
      if (!r.isOk()) return std::nullopt;
      return *r;
    });
  }

  std::optional<transport::KeyValue> kv_;
  std::optional<KvPresenceStore> store_;
  std::optional<KvPresenceWatchSource> source_;
  EventLoopThread publisherLoop_;
  EventLoopThread observerLoop_;
  std::vector<std::unique_ptr<PresencePublisher>> publishers_;
  std::unique_ptr<RosterView> view_;
  EventQueue<Status> warnings_;
};

// Two publishers are seen live by an observer, which reaches a current view.
TEST_F(PresenceIntegrationTest, TwoPublishersSeenByObserver) {
  publish("alice");
  PresencePublisher& bob = publish("bob");
  observe();
  std::promise<Result<RosterSnapshot>> snap;
  onLoop(observerLoop_, [&] {
    view_->waitForPresenceSnapshot(milliseconds(5000),
                                   [&](Result<RosterSnapshot> r) { snap.set_value(r); });
    return 0;
  });
  Result<RosterSnapshot> s = snap.get_future().get();
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  EXPECT_TRUE(s->view.fresh);
  EXPECT_EQ(s->rows.size(), 2u);
  ASSERT_TRUE(eventually([&] { return rowOf("alice") && rowOf("bob"); }));
  EXPECT_TRUE(rowOf("local.alice")->online());
  // A change is seen promptly.
  EXPECT_TRUE(
      onLoop(publisherLoop_, [&] { return bob.setStatus(wire::PresenceStatus::kWorking); }).isOk());
  EXPECT_TRUE(eventually([&] {
    auto r = rowOf("bob");
    return r && r->presence.status == wire::PresenceStatus::kWorking;
  }));
}

// A graceful leave shows offline (cause `left`) and the row stays.
TEST_F(PresenceIntegrationTest, GracefulLeaveShowsOffline) {
  PresencePublisher& alice = publish("alice");
  observe();
  ASSERT_TRUE(eventually([&] { return rowOf("alice") && rowOf("alice")->online(); }));
  Status left = onLoop(publisherLoop_, [&] { return alice.leave(); });
  ASSERT_TRUE(left.isOk()) << left.toString();
  EXPECT_TRUE(eventually([&] {
    auto r = rowOf("alice");
    return r && !r->online() && r->offlineCause == OfflineCause::kLeft;
  }));
}

// A forged record written straight into the bucket (card.id ≠ key) is dropped with a warning.
TEST_F(PresenceIntegrationTest, ForgedRecordIsDroppedWithWarning) {
  publish("alice");
  observe();
  ASSERT_TRUE(eventually([&] { return rowOf("alice").has_value(); }));
  auto rev =
      kv_->put("local.carol", R"({"card":{"id":"local.mallory","name":"carol","kind":"agent"},)"
                              R"("status":"idle","ts":)" +
                                  std::to_string(Clock::real().wallMs()) + "}");
  ASSERT_TRUE(rev.isOk()) << rev.status().toString();
  auto w = warnings_.popUntil([](const Status& s) { return s.reason() == "card-id-mismatch"; });
  ASSERT_TRUE(w.has_value());
  EXPECT_NE(w->message().find("local.carol"), std::string::npos) << w->message();
  EXPECT_FALSE(rowOf("carol").has_value());
  EXPECT_FALSE(rowOf("local.mallory").has_value());
}

// A publisher whose heartbeats stop (no leave) goes offline in the observer within the window,
// while a heartbeating peer stays live. Takes ~6–10 s of real time.
TEST_F(PresenceIntegrationTest, StoppedHeartbeatsGoOfflineWithinWindow) {
  PresencePublisher& alice = publish("alice");
  publish("bob");
  observe();
  ASSERT_TRUE(eventually([&] { return rowOf("alice") && rowOf("bob"); }));
  onLoop(publisherLoop_, [&] {
    alice.stop();
    return 0;
  });
  const auto stoppedAt = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually(
      [&] {
        auto r = rowOf("alice");
        return r && !r->online();
      },
      milliseconds(15000), milliseconds(50)));
  const auto took = std::chrono::steady_clock::now() - stoppedAt;
  EXPECT_LT(took, milliseconds(6000 + 2000 + 2000 + 1000));  // ttl + heartbeat + sweep + slack
  EXPECT_TRUE(rowOf("bob")->online());
  EXPECT_TRUE(onLoop(observerLoop_, [&] { return view_->info().fresh; }));
}

// A watch source whose deliveries can be cut off, as when the observer's own watch stalls
// (its process frozen, its subscription starved) while the peers keep writing.
class FreezableSource final : public PresenceWatchSource {
 public:
  explicit FreezableSource(PresenceWatchSource& inner) : inner_(inner) {}
  void bind(Deliver deliver) override {
    inner_.bind([this, deliver = std::move(deliver)](PresenceWatchEvent e) {
      if (!frozen_.load()) deliver(std::move(e));
    });
  }
  void stop() override { inner_.stop(); }
  void freeze(bool frozen) { frozen_.store(frozen); }

 private:
  PresenceWatchSource& inner_;
  std::atomic<bool> frozen_{false};
};

// An observer whose own watch is frozen reports `stale` (then retries its rebind) and keeps
// every peer last-known online: no mass death. Thawed, it becomes current again.
TEST_F(PresenceIntegrationTest, FrozenObserverReportsStaleNotMassDeath) {
  publish("alice");
  publish("bob");
  FreezableSource freezable(*source_);
  view_ = std::make_unique<RosterView>(observerLoop_, freezable);
  view_->setWarningHandler([this](const Status& s) { warnings_.push(s); });
  ASSERT_TRUE(onLoop(observerLoop_, [&] { return view_->start(); }).isOk());
  ASSERT_TRUE(eventually([&] { return rowOf("alice") && rowOf("bob"); }));

  freezable.freeze(true);
  auto silent = warnings_.popUntil([](const Status& s) { return s.reason() == kReasonWatchSilent; },
                                   milliseconds(15000));
  ASSERT_TRUE(silent.has_value());
  RosterSnapshot frozen = onLoop(observerLoop_, [&] { return view_->snapshot(); });
  EXPECT_FALSE(frozen.view.fresh);
  EXPECT_TRUE(frozen.view.lastKnown);
  ASSERT_EQ(frozen.rows.size(), 2u);
  for (const auto& row : frozen.rows)
    EXPECT_TRUE(row.online()) << row.id;
  // Lookups refuse with the view's condition rather than calling anyone unknown or offline.
  auto lookup = onLoop(observerLoop_, [&] { return view_->find("alice"); });
  ASSERT_FALSE(lookup.isOk());
  EXPECT_EQ(lookup.status().code(), StatusCode::kUnavailable);

  freezable.freeze(false);
  // Recovery may need the next rebind (at most one per ttl) and its snapshot; on a loaded
  // 2-core CI machine that has taken over 15 s, so the bound is generous: the test is about
  // recovering, not its speed.
  ASSERT_TRUE(eventually([&] { return onLoop(observerLoop_, [&] { return view_->info().fresh; }); },
                         milliseconds(40000)));
  EXPECT_TRUE(rowOf("alice")->online());
  EXPECT_TRUE(rowOf("bob")->online());
  // `freezable` dies with this scope: no delivery may reach it afterwards.
  onLoop(observerLoop_, [&] {
    view_->stop();
    return 0;
  });
  source_->stop();
}

}  // namespace
}  // namespace shoal::mesh
