#include "transport/kv.h"

#include <thread>

#include "testing/eventually.h"
#include "testing/nats_fixture.h"

#include <gtest/gtest.h>

namespace shoal::transport {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class KvTest : public shoal::testing::JetStreamServerTest {
 protected:
  void SetUp() override {
    JetStreamServerTest::SetUp();
    if (HasFatalFailure()) return;
    KvConfig config;
    config.bucket = "cotal_channels_main";
    config.history = 5;
    auto kv = KeyValue::createBucket(*js_, config);
    ASSERT_TRUE(kv.isOk()) << kv.status().toString();
    kv_.emplace(std::move(kv).value());
  }

  std::optional<KeyValue> kv_;
};

// A put is read back with its value, revision, operation and creation time.
TEST_F(KvTest, PutThenGet) {
  auto rev = kv_->put("general", "{\"class\":\"live\"}");
  ASSERT_TRUE(rev.isOk()) << rev.status().toString();
  auto entry = kv_->get("general");
  ASSERT_TRUE(entry.isOk()) << entry.status().toString();
  EXPECT_EQ(entry->bucket, "cotal_channels_main");
  EXPECT_EQ(entry->key, "general");
  EXPECT_EQ(entry->value, "{\"class\":\"live\"}");
  EXPECT_EQ(entry->revision, *rev);
  EXPECT_EQ(entry->operation, KvOperation::kPut);
  auto nowMs =
      std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  EXPECT_NEAR(static_cast<double>(entry->createdMs), static_cast<double>(nowMs), 60000.0);
}

// Reading an absent key is kNotFound (`key-not-found`).
TEST_F(KvTest, GetMissingKeyIsNotFound) {
  auto entry = kv_->get("absent");
  ASSERT_FALSE(entry.isOk());
  EXPECT_EQ(entry.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(entry.status().reason(), "key-not-found");
}

// create() writes only an absent key; a present one is kAlreadyExists (`key-exists`).
TEST_F(KvTest, CreateIfAbsentConflictIsAlreadyExists) {
  auto first = kv_->create("lease.0", "holder-a");
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  auto second = kv_->create("lease.0", "holder-b");
  ASSERT_FALSE(second.isOk());
  EXPECT_EQ(second.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(second.status().reason(), "key-exists");
  EXPECT_EQ(kv_->get("lease.0")->value, "holder-a");
}

// A deleted key can be created again.
TEST_F(KvTest, CreateAfterDeleteSucceeds) {
  ASSERT_TRUE(kv_->put("k", "v1").isOk());
  ASSERT_TRUE(kv_->remove("k").isOk());
  EXPECT_EQ(kv_->get("k").status().code(), StatusCode::kNotFound);
  auto again = kv_->create("k", "v2");
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  EXPECT_EQ(kv_->get("k")->value, "v2");
}

// update() with the current revision wins; with a stale one it is a CAS conflict (kAborted).
TEST_F(KvTest, UpdateWithStaleRevisionIsAborted) {
  auto r1 = kv_->create("profile", "v1");
  ASSERT_TRUE(r1.isOk());
  auto r2 = kv_->update("profile", "v2", *r1);
  ASSERT_TRUE(r2.isOk()) << r2.status().toString();
  EXPECT_GT(*r2, *r1);
  auto stale = kv_->update("profile", "v3", *r1);
  ASSERT_FALSE(stale.isOk());
  EXPECT_EQ(stale.status().code(), StatusCode::kAborted);
  EXPECT_EQ(stale.status().reason(), "wrong-last-sequence");
  EXPECT_EQ(kv_->get("profile")->value, "v2");
}

// A renewal that timed out while the broker was stalled still lands once it resumes; the next
// renewal at the old revision is then refused against the writer's own value (the soak's
// "claim lapsed and was taken" with no other claimant). updateOwn adopts that landed write and
// still refuses a value another writer put.
TEST_F(KvTest, UpdateOwnAdoptsItsOwnWriteWhoseAnswerWasLost) {
  JetStreamOptions quick;
  quick.defaultTimeout = milliseconds(300);
  auto js = JetStream::create(*conn_, quick);
  ASSERT_TRUE(js.isOk()) << js.status().toString();
  auto kv = KeyValue::openBucket(*js, "cotal_channels_main");
  ASSERT_TRUE(kv.isOk()) << kv.status().toString();
  const std::string mine = R"({"holder":"h","instance":"7f3a"})";
  auto r1 = kv->create("machine", mine);
  ASSERT_TRUE(r1.isOk()) << r1.status().toString();

  ASSERT_TRUE(server_->stall().isOk());
  auto lost = kv->update("machine", mine, *r1);
  ASSERT_TRUE(server_->resume().isOk());
  ASSERT_FALSE(lost.isOk());
  EXPECT_EQ(lost.status().code(), StatusCode::kDeadlineExceeded) << lost.status().toString();
  uint64_t landed = 0;
  ASSERT_TRUE(shoal::testing::eventually([&] {
    auto e = kv_->get("machine");
    landed = e.isOk() ? e->revision : 0;
    return landed > *r1;
  })) << "the timed-out update never landed";

  auto plain = kv->update("machine", mine, *r1);
  ASSERT_FALSE(plain.isOk());
  EXPECT_EQ(plain.status().reason(), "wrong-last-sequence");
  auto own = kv->updateOwn("machine", mine, *r1);
  ASSERT_TRUE(own.isOk()) << own.status().toString();
  EXPECT_EQ(*own, landed);
  auto next = kv->updateOwn("machine", mine, *own);
  ASSERT_TRUE(next.isOk()) << next.status().toString();
  EXPECT_GT(*next, landed);

  ASSERT_TRUE(kv_->put("machine", R"({"holder":"other","instance":"9c01"})").isOk());
  auto taken = kv->updateOwn("machine", mine, *next);
  ASSERT_FALSE(taken.isOk());
  EXPECT_EQ(taken.status().reason(), "wrong-last-sequence");
}

// A CAS delete with a stale revision is refused; with the current one it deletes.
TEST_F(KvTest, RemoveWithRevisionIsCompareAndSet) {
  auto r1 = kv_->put("lease.0", "a");
  auto r2 = kv_->put("lease.0", "b");
  ASSERT_TRUE(r1.isOk() && r2.isOk());
  Status stale = kv_->remove("lease.0", *r1);
  EXPECT_EQ(stale.code(), StatusCode::kAborted) << stale.toString();
  EXPECT_EQ(stale.reason(), "wrong-last-sequence");
  EXPECT_EQ(kv_->get("lease.0")->value, "b");
  Status current = kv_->remove("lease.0", *r2);
  ASSERT_TRUE(current.isOk()) << current.toString();
  EXPECT_EQ(kv_->get("lease.0").status().code(), StatusCode::kNotFound);
}

// keys() lists live keys only; an empty bucket has none.
TEST_F(KvTest, KeysListsLiveKeys) {
  auto none = kv_->keys();
  ASSERT_TRUE(none.isOk()) << none.status().toString();
  EXPECT_TRUE(none->empty());
  ASSERT_TRUE(kv_->put("a", "1").isOk());
  ASSERT_TRUE(kv_->put("b", "2").isOk());
  ASSERT_TRUE(kv_->remove("b").isOk());
  auto keys = kv_->keys();
  ASSERT_TRUE(keys.isOk());
  EXPECT_EQ(*keys, std::vector<std::string>{"a"});
}

// purge() drops a key's history.
TEST_F(KvTest, PurgeRemovesTheKey) {
  ASSERT_TRUE(kv_->put("p", "1").isOk());
  ASSERT_TRUE(kv_->put("p", "2").isOk());
  ASSERT_TRUE(kv_->purge("p").isOk());
  EXPECT_EQ(kv_->get("p").status().code(), StatusCode::kNotFound);
}

// A watch delivers the initial values, then the "done" marker, then live updates and deletes.
TEST_F(KvTest, WatchSeesInitialValuesThenMarkerThenLiveUpdates) {
  ASSERT_TRUE(kv_->put("presence.alice", "a1").isOk());
  ASSERT_TRUE(kv_->put("presence.bob", "b1").isOk());
  ASSERT_TRUE(kv_->put("other", "x").isOk());
  auto watcher = kv_->watch("presence.*");
  ASSERT_TRUE(watcher.isOk()) << watcher.status().toString();

  std::map<std::string, std::string> snapshot;
  while (!watcher->initialValuesDone()) {
    auto next = watcher->next(seconds(10));
    ASSERT_TRUE(next.isOk()) << next.status().toString();
    if (next->has_value()) {
      snapshot[(*next)->key] = (*next)->value;
    } else {
      ASSERT_TRUE(watcher->initialValuesDone()) << "timed out before the initial values";
    }
  }
  EXPECT_EQ(snapshot,
            (std::map<std::string, std::string>{{"presence.alice", "a1"}, {"presence.bob", "b1"}}));

  ASSERT_TRUE(kv_->put("presence.carol", "c1").isOk());
  ASSERT_TRUE(kv_->remove("presence.alice").isOk());
  auto live = watcher->next(seconds(10));
  ASSERT_TRUE(live.isOk());
  ASSERT_TRUE(live->has_value());
  EXPECT_EQ((*live)->key, "presence.carol");
  EXPECT_EQ((*live)->value, "c1");
  auto deleted = watcher->next(seconds(10));
  ASSERT_TRUE(deleted.isOk());
  ASSERT_TRUE(deleted->has_value());
  EXPECT_EQ((*deleted)->key, "presence.alice");
  EXPECT_EQ((*deleted)->operation, KvOperation::kDelete);
  EXPECT_TRUE((*deleted)->value.empty());

  auto quiet = watcher->next(milliseconds(50));
  ASSERT_TRUE(quiet.isOk());
  EXPECT_FALSE(quiet->has_value());
}

// On an empty bucket the marker comes first.
TEST_F(KvTest, WatchOfEmptyBucketIsDoneAtOnce) {
  auto watcher = kv_->watchAll();
  ASSERT_TRUE(watcher.isOk());
  auto first = watcher->next(seconds(10));
  ASSERT_TRUE(first.isOk());
  EXPECT_FALSE(first->has_value());
  EXPECT_TRUE(watcher->initialValuesDone());
}

// updatesOnly skips the values present when the watch started.
TEST_F(KvTest, WatchUpdatesOnlySkipsInitialValues) {
  ASSERT_TRUE(kv_->put("old", "1").isOk());
  auto watcher = kv_->watchAll({.updatesOnly = true});
  ASSERT_TRUE(watcher.isOk());
  ASSERT_TRUE(kv_->put("new", "2").isOk());
  auto next = watcher->next(seconds(10));
  ASSERT_TRUE(next.isOk());
  ASSERT_TRUE(next->has_value());
  EXPECT_EQ((*next)->key, "new");
  EXPECT_TRUE(watcher->initialValuesDone());
}

// stop() from another thread wakes a blocked next() with kCancelled.
TEST_F(KvTest, StopWakesABlockedNext) {
  auto watcher = kv_->watchAll({.updatesOnly = true});
  ASSERT_TRUE(watcher.isOk());
  KvWatcher* w = &*watcher;
  std::thread stopper([w] {
    // Stop only once the main thread is (very likely) blocked; correctness does not depend on
    // it: a next() after stop() returns kCancelled too.
    std::this_thread::yield();
    w->stop();
  });
  auto next = watcher->next(seconds(30));
  stopper.join();
  ASSERT_FALSE(next.isOk());
  EXPECT_EQ(next.status().code(), StatusCode::kCancelled);
}

// The bucket TTL is given in milliseconds and becomes the stream's max age.
TEST_F(KvTest, TtlIsMilliseconds) {
  KvConfig config;
  config.bucket = "cotal_presence_main";
  config.ttl = milliseconds(6000);
  auto kv = KeyValue::createBucket(*js_, config);
  ASSERT_TRUE(kv.isOk()) << kv.status().toString();
  auto info = js_->streamInfo("KV_cotal_presence_main");
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_EQ(info->config.maxAge, milliseconds(6000));
}

// Opening a bucket that does not exist is kNotFound (`bucket-not-found`); an existing one opens.
TEST_F(KvTest, OpenBucket) {
  auto missing = KeyValue::openBucket(*js_, "nope");
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().reason(), "bucket-not-found");
  ASSERT_TRUE(kv_->put("k", "v").isOk());
  auto opened = KeyValue::openBucket(*js_, "cotal_channels_main");
  ASSERT_TRUE(opened.isOk()) << opened.status().toString();
  EXPECT_EQ(opened->get("k")->value, "v");
  EXPECT_TRUE(KeyValue::deleteBucket(*js_, "cotal_channels_main").isOk());
  EXPECT_EQ(KeyValue::openBucket(*js_, "cotal_channels_main").status().code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace shoal::transport
