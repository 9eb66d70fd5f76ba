#include "mesh/presence_publisher.h"

#include <string>
#include <vector>

#include "base/clock.h"
#include "base/executor.h"

#include <gtest/gtest.h>

namespace shoal::mesh {
namespace {

using std::chrono::milliseconds;
using wire::PresenceStatus;

// A store that remembers every write and refuses them on demand.
class FakeStore final : public PresenceStore {
 public:
  Status put(std::string_view key, std::string_view value) override {
    if (failAll || failNext > 0) {
      if (failNext > 0) --failNext;
      ++refused;
      return unavailable("timeout", "JetStream publish timed out");
    }
    puts.push_back({std::string(key), std::string(value)});
    return Status::ok();
  }
  wire::Presence last() const {
    Result<wire::Presence> p = wire::decodePresence(puts.back().first, puts.back().second);
    EXPECT_TRUE(p.isOk()) << p.status().toString();
    return p.isOk() ? *p : wire::Presence{};
  }

  std::vector<std::pair<std::string, std::string>> puts;
  bool failAll = false;
  int failNext = 0;
  int refused = 0;
};

class PresencePublisherTest : public ::testing::Test {
 protected:
  PresencePublisherTest() : executor_(clock_) {}

  PresencePublisherOptions options() {
    PresencePublisherOptions o;
    o.card.id = "local.alice";
    o.card.name = "alice";
    o.lifecycleUid = "abcdefghijklmnopqrstuvwxyz";
    return o;
  }
  std::unique_ptr<PresencePublisher> make(PresencePublisherOptions o) {
    auto p = std::make_unique<PresencePublisher>(executor_, store_, std::move(o));
    p->setWarningHandler([this](const Status& s) { warnings_.push_back(s); });
    p->setWriteStuckHandler([this](const Status& s) { stuckEvents_.push_back(s); });
    return p;
  }
  std::unique_ptr<PresencePublisher> started() {
    auto p = make(options());
    EXPECT_TRUE(p->start().isOk());
    executor_.runReady();
    return p;
  }
  double nowMs() const { return static_cast<double>(clock_.wallMs()); }

  FakeClock clock_;
  ManualExecutor executor_;
  FakeStore store_;
  std::vector<Status> warnings_;
  std::vector<Status> stuckEvents_;
};

// An instance writes only its own key (card.id), on start and on every heartbeat.
TEST_F(PresencePublisherTest, WritesOnlyItsOwnKey) {
  auto p = started();
  ASSERT_TRUE(p->setStatus(PresenceStatus::kWorking).isOk());
  executor_.runReady();
  executor_.advance(milliseconds(10000));
  ASSERT_GE(store_.puts.size(), 5u);
  for (const auto& [key, value] : store_.puts)
    EXPECT_EQ(key, "local.alice");
  EXPECT_EQ(store_.last().lifecycleUid, "abcdefghijklmnopqrstuvwxyz");
}

// The record is rewritten every 2000 ms with a fresh ts.
TEST_F(PresencePublisherTest, HeartbeatsEveryTwoSeconds) {
  auto p = started();
  ASSERT_EQ(store_.puts.size(), 1u);
  const double t0 = store_.last().ts;
  executor_.advance(milliseconds(1999));
  EXPECT_EQ(store_.puts.size(), 1u);
  executor_.advance(milliseconds(1));
  ASSERT_EQ(store_.puts.size(), 2u);
  EXPECT_EQ(store_.last().ts, t0 + 2000);
  executor_.advance(milliseconds(2000));
  EXPECT_EQ(store_.puts.size(), 3u);
}

// A live instance never writes offline: setStatus(offline) is refused, heartbeats stay live.
TEST_F(PresencePublisherTest, NeverHeartbeatsOffline) {
  auto p = started();
  Status refused = p->setStatus(PresenceStatus::kOffline);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.reason(), "offline-is-not-live");
  executor_.advance(milliseconds(20000));
  for (const auto& [key, value] : store_.puts) {
    EXPECT_EQ(value.find("\"offline\""), std::string::npos) << value;
  }
  PresencePublisherOptions o = options();
  o.initialStatus = PresenceStatus::kOffline;  // even asked for at construction
  FakeStore other;
  PresencePublisher q(executor_, other, o);
  ASSERT_TRUE(q.start().isOk());
  EXPECT_EQ(q.record().status, PresenceStatus::kIdle);
}

// leave() writes exactly one offline record, scrubbed of attention/channelModes/statusSince.
TEST_F(PresencePublisherTest, LeavePublishesExactlyOneScrubbedOfflineRecord) {
  auto p = started();
  p->setAttention(wire::Attention::kDnd);
  p->setChannelMode("deploys", wire::ChannelMode::kMuted);
  EXPECT_TRUE(p->setActivity("reviewing").isOk());
  executor_.runReady();
  EXPECT_EQ(store_.last().attention, wire::Attention::kDnd);
  const size_t before = store_.puts.size();
  ASSERT_TRUE(p->leave().isOk());
  ASSERT_EQ(store_.puts.size(), before + 1);
  const wire::Presence off = store_.last();
  EXPECT_EQ(off.status, PresenceStatus::kOffline);
  EXPECT_FALSE(off.attention.has_value());
  EXPECT_TRUE(off.channelModes.empty());
  EXPECT_FALSE(off.statusSince.has_value());
  EXPECT_EQ(store_.puts.back().second.find("statusSince"), std::string::npos);
  executor_.advance(milliseconds(10000));
  p->republish();
  executor_.runReady();
  EXPECT_EQ(store_.puts.size(), before + 1);  // nothing after the final record
  EXPECT_EQ(p->leave().code(), StatusCode::kFailedPrecondition);
}

// stop() stops heartbeating without writing anything (the key then expires).
TEST_F(PresencePublisherTest, StopWritesNothingMore) {
  auto p = started();
  const size_t before = store_.puts.size();
  p->stop();
  executor_.advance(milliseconds(10000));
  EXPECT_EQ(store_.puts.size(), before);
}

// statusSince moves only when status or activity changes; activitySince only with activity.
TEST_F(PresencePublisherTest, StatusSinceMovesOnlyOnStatusOrActivityChange) {
  auto p = started();
  const double t0 = nowMs();
  EXPECT_EQ(store_.last().statusSince, t0);
  executor_.advance(milliseconds(4000));  // heartbeats
  EXPECT_EQ(store_.last().statusSince, t0);
  ASSERT_TRUE(p->setStatus(PresenceStatus::kIdle).isOk());  // repeated report
  EXPECT_TRUE(p->setActivity(std::nullopt).isOk());         // repeated report
  executor_.runReady();
  EXPECT_EQ(p->record().statusSince, t0);

  executor_.advance(milliseconds(500));
  const double t1 = nowMs();
  ASSERT_TRUE(p->setStatus(PresenceStatus::kWorking).isOk());
  executor_.runReady();
  EXPECT_EQ(store_.last().statusSince, t1);
  EXPECT_FALSE(store_.last().activitySince.has_value());

  executor_.advance(milliseconds(500));
  const double t2 = nowMs();
  EXPECT_TRUE(p->setActivity("editing parser.cc").isOk());
  executor_.runReady();
  EXPECT_EQ(store_.last().statusSince, t2);
  EXPECT_EQ(store_.last().activitySince, t2);

  executor_.advance(milliseconds(500));
  const double t3 = nowMs();
  ASSERT_TRUE(p->setStatus(PresenceStatus::kWaiting).isOk());
  EXPECT_TRUE(p->setActivity("editing parser.cc").isOk());  // same activity: no move
  executor_.runReady();
  EXPECT_EQ(store_.last().statusSince, t3);
  EXPECT_EQ(store_.last().activitySince, t2);  // a status change does not move it
  executor_.advance(milliseconds(6000));
  EXPECT_EQ(store_.last().statusSince, t3);
  EXPECT_EQ(store_.last().activitySince, t2);
}

// Free text a writer sets is bounded so every heartbeat fits the broker's max_payload: a long
// activity is refused with a sentence and changes nothing; a runtime's long condition message
// is clipped on a character boundary.
TEST_F(PresencePublisherTest, FreeTextIsBoundedSoHeartbeatsKeepFitting) {
  auto p = started();
  EXPECT_TRUE(p->setActivity("reviewing").isOk());
  Status tooLong = p->setActivity(std::string(1200 * 1024, 'a'));
  EXPECT_EQ(tooLong.reason(), "presence-field-too-long");
  EXPECT_NE(tooLong.message().find("at most 256"), std::string_view::npos) << tooLong.message();
  EXPECT_TRUE(p->setActivity(std::string(256, 'a')).isOk());
  EXPECT_EQ(p->setActivity("\xff\xfe").reason(), "invalid-utf8");
  wire::PresenceCondition c;
  c.code = wire::ConditionCode::kRateLimit;
  c.message = std::string(3000, 'x') + "\u00e9";
  c.message->insert(1020, "\u00e9\u00e9");  // a two-byte character across the cut
  p->setCondition(c);
  executor_.runReady();
  const wire::Presence last = store_.last();
  EXPECT_EQ(last.activity, std::string(256, 'a'));
  ASSERT_TRUE(last.condition && last.condition->message);
  EXPECT_LE(last.condition->message->size(), wire::kMaxConditionTextBytes);
  EXPECT_EQ(last.condition->message->substr(last.condition->message->size() - 3), "\u2026");
  executor_.advance(milliseconds(6000));
  EXPECT_TRUE(warnings_.empty()) << warnings_.front().toString();
}

// A change is published promptly (not on the next heartbeat), and setters in one task coalesce.
TEST_F(PresencePublisherTest, ChangePublishesPromptlyAndCoalesces) {
  auto p = started();
  const size_t before = store_.puts.size();
  ASSERT_TRUE(p->setStatus(PresenceStatus::kWorking).isOk());
  EXPECT_TRUE(p->setActivity("building").isOk());
  p->setEnvironment("env-7");
  executor_.runReady();
  ASSERT_EQ(store_.puts.size(), before + 1);
  EXPECT_EQ(store_.last().status, PresenceStatus::kWorking);
  EXPECT_EQ(store_.last().activity, "building");
  EXPECT_EQ(store_.last().environment, "env-7");
}

// A condition rides along until cleared, and a normal next turn clears it.
TEST_F(PresencePublisherTest, ConditionClearedWhenNextTurnStarts) {
  auto p = started();
  ASSERT_TRUE(p->setStatus(PresenceStatus::kWaiting).isOk());
  wire::PresenceCondition c;
  c.code = wire::ConditionCode::kRateLimit;
  c.source = "429";
  p->setCondition(c);
  executor_.runReady();
  ASSERT_TRUE(store_.last().condition.has_value());
  EXPECT_EQ(store_.last().condition->code, wire::ConditionCode::kRateLimit);
  EXPECT_EQ(store_.last().condition->since, nowMs());  // stamped when absent
  executor_.advance(milliseconds(2000));
  EXPECT_TRUE(store_.last().condition.has_value());  // heartbeats keep it
  p->beginTurn();
  executor_.runReady();
  EXPECT_FALSE(store_.last().condition.has_value());
  EXPECT_EQ(store_.last().status, PresenceStatus::kWorking);
  p->setCondition(c);
  p->clearCondition();
  executor_.runReady();
  EXPECT_FALSE(store_.last().condition.has_value());
}

// A work event stamps activeAt without a write of its own; the next heartbeat carries it.
TEST_F(PresencePublisherTest, WorkEventRidesNextHeartbeat) {
  auto p = started();
  const size_t before = store_.puts.size();
  executor_.advance(milliseconds(300));
  const double at = nowMs();
  p->recordWorkEvent();
  executor_.runReady();
  EXPECT_EQ(store_.puts.size(), before);
  executor_.advance(milliseconds(1700));
  ASSERT_EQ(store_.puts.size(), before + 1);
  EXPECT_EQ(store_.last().activeAt, at);
  EXPECT_EQ(store_.last().statusSince, at - 300);  // a work event is not a status change
}

// Attention and per-channel modes are mirrored; removing a mode removes it from the record.
TEST_F(PresencePublisherTest, AttentionAndChannelModesAreMirrored) {
  auto p = started();
  p->setAttention(wire::Attention::kFocus);
  p->setChannelMode("deploys", wire::ChannelMode::kQuiet);
  executor_.runReady();
  EXPECT_EQ(store_.last().attention, wire::Attention::kFocus);
  EXPECT_EQ(store_.last().channelModes.at("deploys"), wire::ChannelMode::kQuiet);
  p->setChannelMode("deploys", std::nullopt);
  executor_.runReady();
  EXPECT_TRUE(store_.last().channelModes.empty());
}

// An invalid card is the caller's error at start(), not a warning.
TEST_F(PresencePublisherTest, InvalidCardIsRefusedAtStart) {
  PresencePublisherOptions o = options();
  o.card.id = "not a principal";
  auto p = make(o);
  Status st = p->start();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(store_.puts.empty());
  EXPECT_FALSE(p->live());
}

// One refused write is a recoverable warning, not presence-write-stuck.
TEST_F(PresencePublisherTest, OneRefusedWriteIsOnlyAWarning) {
  auto p = started();
  store_.failNext = 1;
  executor_.advance(milliseconds(2000));
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_EQ(warnings_[0].reason(), kReasonPresenceWriteRefused);
  EXPECT_TRUE(p->writeStuck().isOk());
  EXPECT_TRUE(stuckEvents_.empty());
  executor_.advance(milliseconds(2000));
  EXPECT_EQ(p->consecutiveFailures(), 0);
}

// Consecutive failures for a full TTL (and more than one) raise presence-write-stuck once.
TEST_F(PresencePublisherTest, WriteStuckAfterFullTtlOfFailures) {
  auto p = started();
  store_.failAll = true;
  executor_.advance(milliseconds(2000));  // first failure
  executor_.advance(milliseconds(4000));  // failures at +2 s, +4 s: 4 s of failing
  EXPECT_EQ(p->consecutiveFailures(), 3);
  EXPECT_TRUE(p->writeStuck().isOk());
  executor_.advance(milliseconds(2000));  // +6 s since the first failure
  EXPECT_EQ(p->writeStuck().code(), StatusCode::kUnavailable);
  EXPECT_EQ(p->writeStuck().reason(), kReasonPresenceWriteStuck);
  ASSERT_EQ(stuckEvents_.size(), 1u);
  EXPECT_EQ(stuckEvents_[0].reason(), kReasonPresenceWriteStuck);
  executor_.advance(milliseconds(6000));
  EXPECT_EQ(stuckEvents_.size(), 1u);  // raised once, not on every failure
  EXPECT_EQ(warnings_.size(), 7u);     // but every refusal is still a warning
}

// A single failure followed by a long gap is not stuck: more than one failure is needed.
TEST_F(PresencePublisherTest, SingleFailureIsNeverStuckEvenAfterTtl) {
  PresencePublisherOptions o = options();
  o.heartbeat = milliseconds(7000);
  auto p = make(o);
  store_.failNext = 1;
  ASSERT_TRUE(p->start().isOk());
  executor_.advance(milliseconds(6999));
  EXPECT_TRUE(p->writeStuck().isOk());
  store_.failNext = 1;
  executor_.advance(milliseconds(1));  // second failure, 7 s after the first
  EXPECT_EQ(p->writeStuck().reason(), kReasonPresenceWriteStuck);
}

// A successful write resets the count and clears presence-write-stuck (handler sees OK).
TEST_F(PresencePublisherTest, SuccessfulWriteClearsStuck) {
  auto p = started();
  store_.failAll = true;
  executor_.advance(milliseconds(8000));
  ASSERT_FALSE(p->writeStuck().isOk());
  store_.failAll = false;
  executor_.advance(milliseconds(2000));
  EXPECT_TRUE(p->writeStuck().isOk());
  EXPECT_EQ(p->consecutiveFailures(), 0);
  ASSERT_EQ(stuckEvents_.size(), 2u);
  EXPECT_TRUE(stuckEvents_[1].isOk());
  // A fresh run of failures must again last a full TTL.
  store_.failAll = true;
  executor_.advance(milliseconds(4000));
  EXPECT_TRUE(p->writeStuck().isOk());
}

}  // namespace
}  // namespace shoal::mesh
