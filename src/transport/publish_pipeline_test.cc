#include "transport/publish_pipeline.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

#include "testing/nats_fixture.h"

#include <gtest/gtest.h>

namespace shoal::transport {
namespace {

using std::chrono::milliseconds;

class PublishPipelineTest : public shoal::testing::JetStreamServerTest {
 protected:
  void SetUp() override {
    JetStreamServerTest::SetUp();
    if (HasFatalFailure()) return;
    StreamConfig config;
    config.name = "DM_main";
    config.subjects = {"cotal.main.inst.>"};
    config.duplicateWindow = milliseconds(120000);
    ASSERT_TRUE(js_->addStream(config).isOk());
  }

  std::unique_ptr<PublishPipeline> pipeline(int window, milliseconds timeout = milliseconds(5000)) {
    PublishPipelineOptions o;
    o.window = window;
    o.timeout = timeout;
    auto p = PublishPipeline::create(*conn_, o);
    EXPECT_TRUE(p.isOk()) << p.status().toString();
    return p.isOk() ? std::move(p).value() : nullptr;
  }

  static std::vector<OutgoingMessage> numbered(int n) {
    std::vector<OutgoingMessage> out;
    for (int i = 0; i < n; ++i)
      out.push_back({"cotal.main.inst.a.b.c.d", "m" + std::to_string(i), {}});
    return out;
  }
};

// A window smaller than the batch: every message is answered with its own sequence, in order.
TEST_F(PublishPipelineTest, EveryMessageIsAnsweredWithItsOwnSequence) {
  auto p = pipeline(16);
  ASSERT_NE(p, nullptr);
  auto results = p->publishAll(numbered(500));
  ASSERT_EQ(results.size(), 500u);
  for (size_t i = 0; i < results.size(); ++i) {
    ASSERT_TRUE(results[i].isOk()) << i << ": " << results[i].status().toString();
    EXPECT_EQ(results[i]->stream, "DM_main");
    EXPECT_EQ(results[i]->seq, i + 1);  // one connection, one stream: stored in send order
  }
  auto stored = js_->findMessage("DM_main", 250, "cotal.main.inst.>");
  ASSERT_TRUE(stored.isOk());
  EXPECT_EQ(stored->data, "m249");
  // A second batch on the same pipeline continues.
  auto again = p->publishAll(numbered(3));
  ASSERT_TRUE(again[2].isOk());
  EXPECT_EQ(again[2]->seq, 503u);
}

// A refusal belongs to its own message: the others of the batch are stored.
TEST_F(PublishPipelineTest, ARefusalIsReportedForItsOwnMessageOnly) {
  auto p = pipeline(8);
  ASSERT_NE(p, nullptr);
  auto batch = numbered(5);
  batch[2].options.expectedLastSeq = 0;  // the stream is not empty by then
  batch[4].options.msgId = "dup-1";
  batch.push_back({"cotal.main.inst.a.b.c.d", "again", {}});
  batch.back().options.msgId = "dup-1";
  auto results = p->publishAll(batch);
  ASSERT_EQ(results.size(), 6u);
  EXPECT_TRUE(results[0].isOk() && results[1].isOk() && results[3].isOk());
  ASSERT_FALSE(results[2].isOk());
  EXPECT_EQ(results[2].status().code(), StatusCode::kAborted);
  EXPECT_EQ(results[2].status().reason(), "wrong-last-sequence");
  ASSERT_TRUE(results[4].isOk() && results[5].isOk());
  EXPECT_FALSE(results[4]->duplicate);
  EXPECT_TRUE(results[5]->duplicate);
  EXPECT_EQ(results[4]->seq, results[5]->seq);
  EXPECT_EQ(js_->streamInfo("DM_main")->state.msgs, 4u);
}

// The broker killed with publishes in flight: every answer is either a sequence the stream
// holds with that message's bytes, or a named failure — never "stored" for a lost message.
TEST_F(PublishPipelineTest, ABrokerKilledMidBatchNeverYieldsAFalseStored) {
  auto p = pipeline(256, milliseconds(1500));
  ASSERT_NE(p, nullptr);
  // Batches of 500 back to back until one comes back with a failure; the broker is killed as
  // soon as the first batch was answered, so answers were seen stored before the kill and the
  // batch in flight at the kill (or the next) fails — whatever the machine's load.
  std::vector<OutgoingMessage> batch;
  std::vector<Result<PubAck>> results;
  std::atomic<int> answered{0};
  std::thread sender([&] {
    for (int b = 0; b < 200; ++b) {
      auto part = numbered(500);
      auto got = p->publishAll(part);
      batch.insert(batch.end(), part.begin(), part.end());
      const bool failed =
          std::any_of(got.begin(), got.end(), [](const auto& r) { return !r.isOk(); });
      results.insert(results.end(), got.begin(), got.end());
      answered.fetch_add(1);
      if (failed) return;
    }
  });
  while (answered.load() == 0)
    std::this_thread::sleep_for(milliseconds(1));
  ASSERT_TRUE(server_->kill9().isOk());
  sender.join();
  ASSERT_TRUE(server_->restart().isOk());
  auto checker = connect();
  ASSERT_NE(checker, nullptr);
  auto js = JetStream::create(*checker);
  ASSERT_TRUE(js.isOk());
  size_t stored = 0, failed = 0;
  std::set<uint64_t> seqs;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].isOk()) {
      ++failed;
      EXPECT_FALSE(results[i].status().reason().empty()) << i;
      continue;
    }
    ++stored;
    EXPECT_TRUE(seqs.insert(results[i]->seq).second) << "seq reported twice: " << i;
    auto m = js->findMessage("DM_main", results[i]->seq, "cotal.main.inst.>");
    ASSERT_TRUE(m.isOk()) << i << " reported stored at " << results[i]->seq << ": "
                          << m.status().toString();
    EXPECT_EQ(m->seq, results[i]->seq);
    EXPECT_EQ(m->data, batch[i].data);
  }
  EXPECT_GE(stored, 500u);  // the first batch at least
  EXPECT_GT(failed, 0u);    // the kill came while the sender was still sending
}

}  // namespace
}  // namespace shoal::transport
