#include "runtime/output_queue.h"

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "runtime/reasons.h"

#include <gtest/gtest.h>

namespace shoal::runtime {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

// An entry of exactly `bytes` wire bytes: `tag` padded with '.', then '\n'.
std::string entry(const std::string& tag, size_t bytes) {
  std::string s = tag;
  if (s.size() + 1 < bytes) s.append(bytes - 1 - s.size(), '.');
  s.resize(bytes - 1);
  s.push_back('\n');
  return s;
}

std::string popEntry(TranslatedOutputQueue& q) {
  auto popped = q.pop(milliseconds(0));
  EXPECT_TRUE(popped.isOk()) << popped.status().toString();
  if (!popped.isOk() || !popped->has_value()) return "<none>";
  return **popped;
}

// 128 entries fill the queue even when bytes are plentiful; the 129th waits for a pop.
TEST(TranslatedOutputQueue, EntryCapAloneTriggersBackpressure) {
  TranslatedOutputQueue q(1);
  for (size_t i = 0; i < kOutputQueueMaxEntries; ++i) {
    ASSERT_TRUE(q.push(entry(std::to_string(i), 8)).isOk()) << i;
  }
  EXPECT_EQ(q.stats().entries, 128u);
  EXPECT_EQ(q.stats().bytes, 128u * 8);
  Status full = q.push(entry("extra", 8), {}, nanoseconds(0));
  EXPECT_EQ(full.code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(full.reason(), reason::kQueueFull);

  Status blocked;
  std::thread producer([&] { blocked = q.push(entry("extra", 8)); });
  q.waitForWaitersForTest(1, 0);
  EXPECT_EQ(q.stats().blockedProducers, 1u);
  EXPECT_EQ(popEntry(q), entry("0", 8));
  producer.join();
  EXPECT_TRUE(blocked.isOk()) << blocked.toString();
  EXPECT_EQ(q.stats().entries, 128u);
}

// The byte cap alone triggers backpressure, charged on exact wire bytes.
TEST(TranslatedOutputQueue, ByteCapAloneTriggersBackpressure) {
  TranslatedOutputQueue q(1, {.maxEntries = 128, .maxBytes = 100, .maxLineBytes = 100});
  ASSERT_TRUE(q.push(entry("a", 60)).isOk());
  ASSERT_TRUE(q.push(entry("b", 40)).isOk());  // exactly 100 bytes charged
  EXPECT_EQ(q.stats().bytes, 100u);
  Status full = q.push(entry("c", 1), {}, nanoseconds(0));
  EXPECT_EQ(full.reason(), reason::kQueueFull);

  Status blocked;
  std::thread producer([&] { blocked = q.push(entry("c", 50)); });
  q.waitForWaitersForTest(1, 0);
  EXPECT_EQ(popEntry(q), entry("a", 60));  // frees 60: 40 + 50 fits
  producer.join();
  EXPECT_TRUE(blocked.isOk());
  EXPECT_EQ(q.stats().bytes, 90u);
}

// Blocked producers are admitted in arrival order: a small entry that would fit does not
// overtake a large one waiting ahead of it.
TEST(TranslatedOutputQueue, BlockedProducersAreAdmittedInArrivalOrder) {
  TranslatedOutputQueue q(1, {.maxEntries = 128, .maxBytes = 100, .maxLineBytes = 100});
  ASSERT_TRUE(q.push(entry("head", 60)).isOk());
  Status bigResult;
  Status smallResult;
  std::thread big([&] { bigResult = q.push(entry("big", 50)); });
  q.waitForWaitersForTest(1, 0);
  std::thread small([&] { smallResult = q.push(entry("small", 10)); });  // fits by bytes
  q.waitForWaitersForTest(2, 0);
  EXPECT_EQ(q.stats().entries, 1u);  // the small one is still waiting behind the big one
  EXPECT_EQ(popEntry(q), entry("head", 60));
  big.join();
  small.join();
  EXPECT_TRUE(bigResult.isOk());
  EXPECT_TRUE(smallResult.isOk());
  EXPECT_EQ(popEntry(q), entry("big", 50));
  EXPECT_EQ(popEntry(q), entry("small", 10));
}

// An entry exactly at the line cap is admitted; one byte over is line-too-long, transport-
// fatal: the queue seals so nothing can be written past the gap, and what was admitted
// before it still drains.
TEST(TranslatedOutputQueue, EntryOverTheLineCapIsRefusedAndSealsTheQueue) {
  TranslatedOutputQueue q(3, {.maxEntries = 8, .maxBytes = 256, .maxLineBytes = 64});
  ASSERT_TRUE(q.push(entry("at-cap", 64)).isOk());
  Status over = q.push(entry("over", 65));
  EXPECT_EQ(over.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(over.reason(), reason::kLineTooLong);
  EXPECT_TRUE(q.stats().sealed);
  EXPECT_EQ(q.sealReason(), over);
  Status later = q.push(entry("later", 8));
  EXPECT_EQ(later.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(later.reason(), reason::kQueueSealed);
  EXPECT_EQ(popEntry(q), entry("at-cap", 64));
  auto end = q.pop(milliseconds(0));
  ASSERT_TRUE(end.isOk());
  EXPECT_FALSE(end->has_value());
}

// An entry that is not exactly one newline-terminated line is an encoder bug: refused and
// sealed the same way.
TEST(TranslatedOutputQueue, EntryThatIsNotOneLineIsRefused) {
  for (const std::string& bad :
       {std::string(""), std::string("no newline"), std::string("two\nlines\n")}) {
    TranslatedOutputQueue q(1);
    Status s = q.push(bad);
    EXPECT_EQ(s.code(), StatusCode::kInternal) << bad;
    EXPECT_EQ(s.reason(), reason::kNotOneLine);
    EXPECT_TRUE(q.stats().sealed);
  }
}

// A producer blocked on a full queue returns `cancelled` when its stop token fires; its entry
// was not admitted and nothing else changed.
TEST(TranslatedOutputQueue, CancelWhileBlockedReturnsCancelled) {
  TranslatedOutputQueue q(1, {.maxEntries = 2, .maxBytes = 1024, .maxLineBytes = 1024});
  ASSERT_TRUE(q.push(entry("a", 4)).isOk());
  ASSERT_TRUE(q.push(entry("b", 4)).isOk());
  std::stop_source stop;
  Status result;
  std::thread producer([&] { result = q.push(entry("c", 4), stop.get_token()); });
  q.waitForWaitersForTest(1, 0);
  stop.request_stop();
  producer.join();
  EXPECT_EQ(result.code(), StatusCode::kCancelled);
  EXPECT_EQ(result.reason(), reason::kCancelled);
  auto s = q.stats();
  EXPECT_EQ(s.entries, 2u);
  EXPECT_EQ(s.admitted, 2u);
  EXPECT_EQ(s.blockedProducers, 0u);
  // A cancelled token does not refuse an entry that fits right away.
  EXPECT_EQ(popEntry(q), entry("a", 4));
  EXPECT_TRUE(q.push(entry("d", 4), stop.get_token()).isOk());
}

// seal(): later pushes are refused, blocked producers are woken with the refusal, every
// admitted entry drains in order, then end of stream — repeatedly.
TEST(TranslatedOutputQueue, SealThenDrainPreservesOrder) {
  TranslatedOutputQueue q(1, {.maxEntries = 10, .maxBytes = 1024, .maxLineBytes = 1024});
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(q.push(entry("e" + std::to_string(i), 16)).isOk());
  }
  Status blocked;
  std::thread producer([&] { blocked = q.push(entry("late", 16)); });
  q.waitForWaitersForTest(1, 0);
  q.seal();
  producer.join();
  EXPECT_EQ(blocked.reason(), reason::kQueueSealed);
  EXPECT_EQ(q.push(entry("after", 16)).reason(), reason::kQueueSealed);
  EXPECT_TRUE(q.sealReason().isOk());  // a clean source EOF
  EXPECT_EQ(q.awaitDrained({}, nanoseconds(0)).reason(), reason::kTimedOut);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(popEntry(q), entry("e" + std::to_string(i), 16));
  }
  for (int i = 0; i < 2; ++i) {
    auto end = q.pop(milliseconds(0));
    ASSERT_TRUE(end.isOk());
    EXPECT_FALSE(end->has_value());
  }
  EXPECT_TRUE(q.awaitDrained().isOk());
  EXPECT_TRUE(q.stats().drained);
}

// The owner's drained() wait returns only after the consumer saw end of stream, i.e. after it
// wrote everything it popped.
TEST(TranslatedOutputQueue, AwaitDrainedWaitsForTheConsumerToSeeEndOfStream) {
  TranslatedOutputQueue q(1);
  ASSERT_TRUE(q.push(entry("x", 8)).isOk());
  q.seal();
  std::vector<std::string> written;
  Status drained = internalError("unset", "unset");
  std::thread owner([&] { drained = q.awaitDrained(); });
  std::thread flusher([&] {
    for (;;) {
      auto popped = q.pop();
      if (!popped.isOk() || !popped->has_value()) break;
      written.push_back(**popped);
    }
  });
  flusher.join();
  owner.join();
  EXPECT_TRUE(drained.isOk()) << drained.toString();
  EXPECT_EQ(written, std::vector<std::string>{entry("x", 8)});
}

// abort() wakes a consumer blocked on an empty queue.
TEST(TranslatedOutputQueue, AbortWakesABlockedConsumer) {
  TranslatedOutputQueue q(1);
  Status popped;
  std::thread consumer([&] {
    auto r = q.pop();
    popped = r.isOk() ? internalError("unexpected", "entry or end") : r.status();
  });
  q.waitForWaitersForTest(0, 1);
  EXPECT_EQ(q.abort(), 0u);
  consumer.join();
  EXPECT_EQ(popped.code(), StatusCode::kCancelled);
  EXPECT_EQ(popped.reason(), reason::kAborted);
}

// abort() wakes every blocked producer and the drain waiter with `aborted`, reports how many
// queued entries it abandoned, and is idempotent.
TEST(TranslatedOutputQueue, AbortWakesEveryoneAndCountsAbandonedEntries) {
  TranslatedOutputQueue q(7, {.maxEntries = 3, .maxBytes = 1024, .maxLineBytes = 1024});
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(q.push(entry("q", 4)).isOk());
  }
  constexpr int kProducers = 4;
  std::vector<Status> results(kProducers);
  std::vector<std::thread> producers;
  producers.reserve(kProducers);
  for (int i = 0; i < kProducers; ++i) {
    producers.emplace_back([&, i] { results[i] = q.push(entry("p", 4)); });
  }
  Status drained;
  std::thread owner([&] { drained = q.awaitDrained(); });
  q.waitForWaitersForTest(kProducers, 0);
  EXPECT_EQ(q.abort(unavailable("stdout-write-failed", "short write")), 3u);
  EXPECT_EQ(q.abort(), 0u);  // idempotent
  for (auto& t : producers) {
    t.join();
  }
  owner.join();
  for (const auto& r : results) {
    EXPECT_EQ(r.code(), StatusCode::kCancelled);
    EXPECT_EQ(r.reason(), reason::kAborted);
    EXPECT_NE(r.message().find("3 queued entries abandoned"), std::string_view::npos);
    EXPECT_NE(r.message().find("short write"), std::string_view::npos);
  }
  EXPECT_EQ(drained.reason(), reason::kAborted);
  auto popped = q.pop(milliseconds(0));
  ASSERT_FALSE(popped.isOk());
  EXPECT_EQ(popped.status().reason(), reason::kAborted);
  auto s = q.stats();
  EXPECT_TRUE(s.aborted);
  EXPECT_EQ(s.abandoned, 3u);
  EXPECT_EQ(s.entries, 0u);
  EXPECT_EQ(s.bytes, 0u);
  q.seal();  // no effect after abort
  EXPECT_EQ(q.push(entry("z", 4)).reason(), reason::kAborted);
}

// Aborting an old generation's queue cannot affect the new generation's queue.
TEST(TranslatedOutputQueue, AbortingAnOldGenerationLeavesTheNewOneAlone) {
  TranslatedOutputQueue old(1);
  TranslatedOutputQueue next(2);
  ASSERT_TRUE(old.push(entry("old", 8)).isOk());
  ASSERT_TRUE(next.push(entry("new", 8)).isOk());
  EXPECT_EQ(old.abort(), 1u);
  EXPECT_EQ(old.abort(), 0u);
  EXPECT_TRUE(next.push(entry("new2", 8)).isOk());
  EXPECT_EQ(popEntry(next), entry("new", 8));
  EXPECT_EQ(popEntry(next), entry("new2", 8));
  EXPECT_FALSE(next.stats().aborted);
}

// pop() with a timeout on an empty open queue times out; a cancelled pop says so.
TEST(TranslatedOutputQueue, PopTimesOutOrIsCancelledWithoutConsuming) {
  TranslatedOutputQueue q(1);
  auto timedOut = q.pop(milliseconds(1));
  ASSERT_FALSE(timedOut.isOk());
  EXPECT_EQ(timedOut.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(timedOut.status().reason(), reason::kTimedOut);
  std::stop_source stop;
  stop.request_stop();
  auto cancelledPop = q.pop(std::nullopt, stop.get_token());
  ASSERT_FALSE(cancelledPop.isOk());
  EXPECT_EQ(cancelledPop.status().reason(), reason::kCancelled);
}

// Many producers through a small queue: every entry arrives exactly once, each producer's
// entries in its own order, and the caps hold throughout.
TEST(TranslatedOutputQueue, ConcurrentProducersLoseNothingAndKeepPerProducerOrder) {
  constexpr size_t kMaxEntries = 4;
  constexpr size_t kMaxBytes = 200;
  TranslatedOutputQueue q(1,
                          {.maxEntries = kMaxEntries, .maxBytes = kMaxBytes, .maxLineBytes = 100});
  constexpr int kProducers = 4;
  constexpr int kPerProducer = 1000;
  std::atomic<int> failures{0};
  std::vector<std::thread> producers;
  producers.reserve(kProducers);
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; ++i) {
        std::string tag = std::to_string(p) + ":" + std::to_string(i);
        if (!q.push(entry(tag, 10 + static_cast<size_t>((p * 31 + i * 7) % 90))).isOk()) {
          ++failures;
        }
      }
    });
  }
  std::map<int, int> nextIndex;
  size_t received = 0;
  bool capsHeld = true;
  std::thread consumer([&] {
    for (;;) {
      auto s = q.stats();
      if (s.entries > kMaxEntries || s.bytes > kMaxBytes) capsHeld = false;
      auto popped = q.pop();
      if (!popped.isOk() || !popped->has_value()) return;
      const std::string& e = **popped;
      int p = std::stoi(e.substr(0, e.find(':')));
      int i = std::stoi(e.substr(e.find(':') + 1));
      if (nextIndex[p] != i) capsHeld = false;  // out of order or lost
      nextIndex[p] = i + 1;
      ++received;
    }
  });
  for (auto& t : producers) {
    t.join();
  }
  q.seal();
  consumer.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(capsHeld);
  EXPECT_EQ(received, static_cast<size_t>(kProducers * kPerProducer));
  for (int p = 0; p < kProducers; ++p) {
    EXPECT_EQ(nextIndex[p], kPerProducer);
  }
  EXPECT_TRUE(q.awaitDrained({}, milliseconds(0)).isOk());
}

// The defaults are the seed's numbers.
TEST(TranslatedOutputQueue, DefaultsAreTheSeedNumbers) {
  OutputQueueLimits limits;
  EXPECT_EQ(limits.maxEntries, 128u);
  EXPECT_EQ(limits.maxBytes, size_t{32} * 1024 * 1024);
  EXPECT_EQ(limits.maxLineBytes, size_t{32} * 1024 * 1024);
  EXPECT_EQ(kMaxLineBytes, size_t{32} * 1024 * 1024);
  EXPECT_EQ(kReadChunkBytes, size_t{64} * 1024);
}

}  // namespace
}  // namespace shoal::runtime
