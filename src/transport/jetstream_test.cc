#include "transport/jetstream.h"

#include "testing/nats_fixture.h"

#include <gtest/gtest.h>

namespace shoal::transport {
namespace {

using std::chrono::milliseconds;

class JetStreamTest : public shoal::testing::JetStreamServerTest {
 protected:
  StreamConfig dmStream() {
    StreamConfig config;
    config.name = "DM_main";
    config.subjects = {"cotal.main.inst.>"};
    config.duplicateWindow = milliseconds(120000);
    config.maxMsgsPerSubject = 1000;
    return config;
  }
};

// A created stream reports its config and, after publishes, its last sequence.
TEST_F(JetStreamTest, StreamCreateInfoAndLastSeq) {
  auto created = js_->addStream(dmStream());
  ASSERT_TRUE(created.isOk()) << created.status().toString();
  EXPECT_EQ(created->state.lastSeq, 0u);
  for (int i = 1; i <= 3; ++i) {
    auto ack = js_->publish("cotal.main.inst.a.b.c.d", "m" + std::to_string(i));
    ASSERT_TRUE(ack.isOk()) << ack.status().toString();
    EXPECT_EQ(ack->stream, "DM_main");
    EXPECT_EQ(ack->seq, static_cast<uint64_t>(i));
    EXPECT_FALSE(ack->duplicate);
  }
  auto info = js_->streamInfo("DM_main");
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_EQ(info->state.lastSeq, 3u);
  EXPECT_EQ(info->state.msgs, 3u);
  EXPECT_EQ(info->config.subjects, std::vector<std::string>{"cotal.main.inst.>"});
  EXPECT_EQ(info->config.duplicateWindow, milliseconds(120000));
  EXPECT_EQ(info->config.maxMsgsPerSubject, 1000);
  EXPECT_EQ(info->config.storage, StorageType::kFile);
  EXPECT_GT(info->createdMs, 1'600'000'000'000);
}

// A second publish with the same Nats-Msg-Id is a duplicate: same sequence, stored once.
TEST_F(JetStreamTest, PublishWithMsgIdDeduplicates) {
  ASSERT_TRUE(js_->addStream(dmStream()).isOk());
  PublishOptions options;
  options.msgId = "018f1d0a-0000-7000-9000-000000000001";
  auto first = js_->publish("cotal.main.inst.a.b.c.d", "once", options);
  auto second = js_->publish("cotal.main.inst.a.b.c.d", "once", options);
  ASSERT_TRUE(first.isOk() && second.isOk());
  EXPECT_FALSE(first->duplicate);
  EXPECT_TRUE(second->duplicate);
  EXPECT_EQ(first->seq, second->seq);
  EXPECT_EQ(js_->streamInfo("DM_main")->state.msgs, 1u);
}

// A publish whose expected last sequence is stale is refused as a CAS conflict.
TEST_F(JetStreamTest, StaleExpectedLastSequenceIsAborted) {
  ASSERT_TRUE(js_->addStream(dmStream()).isOk());
  PublishOptions expectEmpty;
  expectEmpty.expectedLastSeq = 0;
  ASSERT_TRUE(js_->publish("cotal.main.inst.a.b.c.d", "first", expectEmpty).isOk());
  auto second = js_->publish("cotal.main.inst.a.b.c.d", "second", expectEmpty);
  ASSERT_FALSE(second.isOk());
  EXPECT_EQ(second.status().code(), StatusCode::kAborted);
  EXPECT_EQ(second.status().reason(), "wrong-last-sequence");
}

// Publishing where no stream listens fails with `no-responders`, not a silent loss.
TEST_F(JetStreamTest, PublishWithoutStreamIsNoResponders) {
  auto ack = js_->publish("no.stream.here", "x");
  ASSERT_FALSE(ack.isOk());
  EXPECT_EQ(ack.status().reason(), "no-responders");
}

// Asking about a missing stream is kNotFound with `stream-not-found`.
TEST_F(JetStreamTest, MissingStreamIsNotFound) {
  auto info = js_->streamInfo("NOPE");
  ASSERT_FALSE(info.isOk());
  EXPECT_EQ(info.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(info.status().reason(), "stream-not-found");
}

// Re-adding a stream with the same config is fine; with another config it is kAlreadyExists.
TEST_F(JetStreamTest, StreamNameInUseWithOtherConfigIsAlreadyExists) {
  ASSERT_TRUE(js_->addStream(dmStream()).isOk());
  EXPECT_TRUE(js_->addStream(dmStream()).isOk());
  auto other = dmStream();
  other.subjects = {"other.>"};
  auto clash = js_->addStream(other);
  ASSERT_FALSE(clash.isOk());
  EXPECT_EQ(clash.status().code(), StatusCode::kAlreadyExists);
}

// updateStream changes a stream's limits in place.
TEST_F(JetStreamTest, UpdateStreamChangesLimits) {
  ASSERT_TRUE(js_->addStream(dmStream()).isOk());
  auto changed = dmStream();
  changed.maxMsgsPerSubject = 10;
  auto updated = js_->updateStream(changed);
  ASSERT_TRUE(updated.isOk()) << updated.status().toString();
  EXPECT_EQ(updated->config.maxMsgsPerSubject, 10);
}

// A durable keeps the config it was created with (ack wait in ms, start sequence), and is gone
// after delete.
TEST_F(JetStreamTest, ConsumerCreateInfoDelete) {
  ASSERT_TRUE(js_->addStream(dmStream()).isOk());
  ConsumerConfig config;
  config.durable = "dm_local-alice-uid";
  config.filterSubject = "cotal.main.inst.local.alice.>";
  config.ackWait = milliseconds(60000);
  config.deliverPolicy = DeliverPolicy::kByStartSequence;
  config.optStartSeq = 1;
  config.maxAckPending = 100;
  auto created = js_->addConsumer("DM_main", config);
  ASSERT_TRUE(created.isOk()) << created.status().toString();
  auto info = js_->consumerInfo("DM_main", "dm_local-alice-uid");
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_EQ(info->name, "dm_local-alice-uid");
  EXPECT_EQ(info->config.ackWait, milliseconds(60000));
  EXPECT_EQ(info->config.filterSubject, "cotal.main.inst.local.alice.>");
  EXPECT_EQ(info->config.deliverPolicy, DeliverPolicy::kByStartSequence);
  EXPECT_EQ(info->config.optStartSeq, 1u);
  EXPECT_EQ(info->config.maxAckPending, 100);
  EXPECT_EQ(info->numPending, 0u);

  ASSERT_TRUE(js_->deleteConsumer("DM_main", "dm_local-alice-uid").isOk());
  auto gone = js_->consumerInfo("DM_main", "dm_local-alice-uid");
  ASSERT_FALSE(gone.isOk());
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(gone.status().reason(), "consumer-not-found");
}

// The inactive threshold round-trips in milliseconds (nats.c wants nanoseconds).
TEST_F(JetStreamTest, InactiveThresholdIsMilliseconds) {
  ASSERT_TRUE(js_->addStream(dmStream()).isOk());
  ConsumerConfig config;
  config.durable = "chathist_x";
  config.ackPolicy = AckPolicy::kNone;
  config.memoryStorage = true;
  config.inactiveThreshold = milliseconds(30000);
  auto created = js_->addConsumer("DM_main", config);
  ASSERT_TRUE(created.isOk()) << created.status().toString();
  EXPECT_EQ(created->config.inactiveThreshold, milliseconds(30000));
  EXPECT_EQ(created->config.ackPolicy, AckPolicy::kNone);
  EXPECT_TRUE(created->config.memoryStorage);
}

// deleteStream removes the stream.
TEST_F(JetStreamTest, DeleteStreamRemovesIt) {
  ASSERT_TRUE(js_->addStream(dmStream()).isOk());
  ASSERT_TRUE(js_->deleteStream("DM_main").isOk());
  EXPECT_EQ(js_->streamInfo("DM_main").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(js_->deleteStream("DM_main").code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace shoal::transport
