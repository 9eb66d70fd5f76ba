#include "transport/pull_consumer.h"

#include "testing/nats_fixture.h"

#include <gtest/gtest.h>

namespace shoal::transport {
namespace {

using shoal::testing::eventually;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kStream = "DM_main";
constexpr const char* kDurable = "dm_local-bob-uid";
constexpr const char* kSubject = "cotal.main.inst.local.bob.local.alice";

class PullConsumerTest : public shoal::testing::JetStreamServerTest {
 protected:
  void SetUp() override {
    JetStreamServerTest::SetUp();
    if (HasFatalFailure()) return;
    StreamConfig stream;
    stream.name = kStream;
    stream.subjects = {"cotal.main.inst.>"};
    ASSERT_TRUE(js_->addStream(stream).isOk());
  }

  void addDurable(milliseconds ackWait = milliseconds(60000)) {
    ConsumerConfig config;
    config.durable = kDurable;
    config.filterSubject = "cotal.main.inst.local.bob.>";
    config.ackWait = ackWait;
    auto created = js_->addConsumer(kStream, config);
    ASSERT_TRUE(created.isOk()) << created.status().toString();
  }

  void publish(const std::string& data, const Headers& headers = {}) {
    PublishOptions options;
    options.headers = headers;
    auto ack = js_->publish(kSubject, data, options);
    ASSERT_TRUE(ack.isOk()) << ack.status().toString();
  }

  PullConsumer bind() {
    auto consumer = PullConsumer::bind(*js_, kStream, kDurable);
    EXPECT_TRUE(consumer.isOk()) << consumer.status().toString();
    return std::move(consumer).value();
  }

  // Exactly one message within the deadline.
  std::optional<JsMessage> fetchOne(PullConsumer& consumer, milliseconds timeout = seconds(10)) {
    auto batch = consumer.fetch(1, timeout);
    EXPECT_TRUE(batch.isOk()) << batch.status().toString();
    if (!batch.isOk() || batch->empty()) return std::nullopt;
    return std::move(batch->front());
  }

  int64_t ackPending() {
    auto info = js_->consumerInfo(kStream, kDurable);
    EXPECT_TRUE(info.isOk()) << info.status().toString();
    return info.isOk() ? info->numAckPending : -1;
  }
};

// Binding to an existing durable fetches its messages with subject, data, headers and metadata.
TEST_F(PullConsumerTest, BindToExistingDurableFetchesMessages) {
  addDurable();
  publish("hello", {{"Cotal-Kind", "dm"}});
  publish("world");
  auto consumer = bind();
  auto batch = consumer.fetch(10, seconds(10));
  ASSERT_TRUE(batch.isOk()) << batch.status().toString();
  ASSERT_EQ(batch->size(), 2u);
  const JsMessage& m = (*batch)[0];
  EXPECT_EQ(m.subject(), kSubject);
  EXPECT_EQ(m.data(), "hello");
  EXPECT_EQ(m.header("Cotal-Kind"), "dm");
  EXPECT_EQ(m.metadata().stream, kStream);
  EXPECT_EQ(m.metadata().consumer, kDurable);
  EXPECT_EQ(m.metadata().streamSeq, 1u);
  EXPECT_EQ(m.metadata().consumerSeq, 1u);
  EXPECT_EQ(m.metadata().numDelivered, 1u);
  EXPECT_EQ(m.metadata().numPending, 1u);
  auto nowMs =
      std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  EXPECT_NEAR(static_cast<double>(m.metadata().timestampMs), static_cast<double>(nowMs), 60000.0);
  EXPECT_EQ((*batch)[1].metadata().streamSeq, 2u);
  for (auto& msg : *batch)
    EXPECT_TRUE(msg.ack().isOk());
}

// Binding to a durable that does not exist fails with `durable-missing` and creates nothing.
TEST_F(PullConsumerTest, BindToMissingDurableIsNotFoundAndCreatesNothing) {
  auto consumer = PullConsumer::bind(*js_, kStream, kDurable);
  ASSERT_FALSE(consumer.isOk());
  EXPECT_EQ(consumer.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(consumer.status().reason(), "durable-missing");
  EXPECT_NE(consumer.status().message().find(kDurable), std::string_view::npos);
  EXPECT_EQ(js_->consumerInfo(kStream, kDurable).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(js_->streamInfo(kStream)->state.consumers, 0);
}

// Destroying a PullConsumer leaves the durable on the server, with its progress.
TEST_F(PullConsumerTest, DestroyingPullConsumerLeavesTheDurable) {
  addDurable();
  publish("one");
  publish("two");
  {
    auto consumer = bind();
    auto m = fetchOne(consumer);
    ASSERT_TRUE(m.has_value());
    ASSERT_TRUE(m->ackSync(seconds(5)).isOk());
  }
  auto info = js_->consumerInfo(kStream, kDurable);
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_EQ(info->ackFloor.streamSeq, 1u);
  EXPECT_EQ(info->numPending, 1u);
  // And a new binding continues where the old one stopped.
  auto again = bind();
  auto m = fetchOne(again);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->data(), "two");
}

// Fetching from an empty durable returns no messages, not an error.
TEST_F(PullConsumerTest, FetchWithNothingPendingIsEmpty) {
  addDurable();
  auto consumer = bind();
  auto batch = consumer.fetch(5, milliseconds(100));
  ASSERT_TRUE(batch.isOk()) << batch.status().toString();
  EXPECT_TRUE(batch->empty());
}

// An acked message leaves the consumer's ack-pending set.
TEST_F(PullConsumerTest, AckClearsAckPending) {
  addDurable();
  publish("a");
  auto consumer = bind();
  auto m = fetchOne(consumer);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(ackPending(), 1);
  ASSERT_TRUE(m->ack().isOk());
  EXPECT_TRUE(eventually([&] { return ackPending() == 0; }));
}

// A confirmed ack has been processed by the server when it returns.
TEST_F(PullConsumerTest, AckSyncIsConfirmed) {
  addDurable();
  publish("a");
  auto consumer = bind();
  auto m = fetchOne(consumer);
  ASSERT_TRUE(m.has_value());
  ASSERT_TRUE(m->ackSync(seconds(5)).isOk());
  EXPECT_EQ(ackPending(), 0);
}

// A nak'd message is redelivered at once, counted as its second delivery.
TEST_F(PullConsumerTest, NakRedeliversWithNumDeliveredTwo) {
  addDurable();
  publish("retry me");
  auto consumer = bind();
  auto first = fetchOne(consumer);
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(first->nak().isOk());
  auto second = fetchOne(consumer);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->data(), "retry me");
  EXPECT_EQ(second->metadata().numDelivered, 2u);
  EXPECT_EQ(second->metadata().streamSeq, first->metadata().streamSeq);
  ASSERT_TRUE(second->ack().isOk());
}

// A nak with delay holds the redelivery back until the delay has passed.
TEST_F(PullConsumerTest, NakWithDelayRedeliversLater) {
  addDurable();
  publish("later");
  auto consumer = bind();
  auto first = fetchOne(consumer);
  ASSERT_TRUE(first.has_value());
  auto nakAt = std::chrono::steady_clock::now();
  ASSERT_TRUE(first->nakWithDelay(milliseconds(1500)).isOk());
  auto early = consumer.fetch(1, milliseconds(200));
  ASSERT_TRUE(early.isOk());
  EXPECT_TRUE(early->empty()) << "redelivered before the delay";
  auto second = fetchOne(consumer);
  ASSERT_TRUE(second.has_value());
  EXPECT_GE(std::chrono::steady_clock::now() - nakAt, milliseconds(1000));
  EXPECT_EQ(second->metadata().numDelivered, 2u);
}

// A terminated message is never redelivered and leaves ack-pending.
TEST_F(PullConsumerTest, TermIsNotRedelivered) {
  addDurable(milliseconds(1000));
  publish("poison");
  publish("next");
  auto consumer = bind();
  auto first = fetchOne(consumer);
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->data(), "poison");
  ASSERT_TRUE(first->term().isOk());
  EXPECT_TRUE(eventually([&] { return ackPending() == 0; }));
  // For 1.5 ack waits, only "next" ever comes.
  auto deadline = std::chrono::steady_clock::now() + milliseconds(1500);
  int nextCount = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    auto batch = consumer.fetch(5, milliseconds(300));
    ASSERT_TRUE(batch.isOk());
    for (auto& m : *batch) {
      EXPECT_NE(m.data(), "poison") << "terminated message came back";
      if (m.data() == "next") {
        ++nextCount;
        ASSERT_TRUE(m.ack().isOk());
      }
    }
  }
  EXPECT_EQ(nextCount, 1);
}

// inProgress keeps a message from being redelivered past its ack wait.
TEST_F(PullConsumerTest, InProgressExtendsTheAckWait) {
  addDurable(milliseconds(2000));
  publish("slow work");
  auto consumer = bind();
  auto m = fetchOne(consumer);
  ASSERT_TRUE(m.has_value());
  auto start = std::chrono::steady_clock::now();
  // Keep reporting progress for 1.5 ack waits; fetches in between double as the pause.
  while (std::chrono::steady_clock::now() - start < milliseconds(3000)) {
    ASSERT_TRUE(m->inProgress().isOk());
    auto batch = consumer.fetch(1, milliseconds(300));
    ASSERT_TRUE(batch.isOk());
    EXPECT_TRUE(batch->empty()) << "redelivered despite inProgress";
  }
  ASSERT_TRUE(m->ackSync(seconds(5)).isOk());
  EXPECT_EQ(ackPending(), 0);
}

// A durable deleted under a bound consumer is reported as `durable-missing` by info().
TEST_F(PullConsumerTest, DeletedDurableIsReportedMissing) {
  addDurable();
  auto consumer = bind();
  ASSERT_TRUE(js_->deleteConsumer(kStream, kDurable).isOk());
  auto info = consumer.info();
  ASSERT_FALSE(info.isOk());
  EXPECT_EQ(info.status().reason(), "durable-missing");
}

// A JsMessage can still be acked after its PullConsumer is gone.
TEST_F(PullConsumerTest, MessageOutlivesItsConsumer) {
  addDurable();
  publish("kept");
  std::optional<JsMessage> m;
  {
    auto consumer = bind();
    m = fetchOne(consumer);
  }
  ASSERT_TRUE(m.has_value());
  ASSERT_TRUE(m->ackSync(seconds(5)).isOk());
  EXPECT_EQ(ackPending(), 0);
}

}  // namespace
}  // namespace shoal::transport
