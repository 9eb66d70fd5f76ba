// The receipt outbox's rules without a broker: what is owed, when it is tried again, what the
// journal section says, and what a damaged section is.
#include "daemon/receipt_outbox.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

Receipt surfacedAt(std::string id, int64_t atMs) {
  return Receipt{"surfaced", std::move(id), "local.alice", atMs, "stdin-read"};
}

TEST(ReceiptOutboxTest, AStoredReceiptLeavesNothingOwed) {
  ReceiptOutbox box;
  auto t = box.begin(surfacedAt("m-1", 1000));
  box.stored(t);
  EXPECT_EQ(box.owedCount(), 0u);
  EXPECT_FALSE(box.nextDueMs().has_value());
  EXPECT_TRUE(box.due(1'000'000).empty());
}

TEST(ReceiptOutboxTest, AnUnsentReceiptIsTriedAgainWithABackoff) {
  ReceiptOutbox box;
  auto t = box.begin(surfacedAt("m-1", 1000));
  box.unsent(t, 5000);
  EXPECT_EQ(box.owedCount(), 1u);
  EXPECT_EQ(box.nextDueMs(), 6000);
  EXPECT_TRUE(box.due(5999).empty());
  auto due = box.due(6000);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].second, surfacedAt("m-1", 1000));
  EXPECT_FALSE(box.nextDueMs().has_value()) << "being published: not due again";
  box.unsent(due[0].first, 6000);
  EXPECT_EQ(box.nextDueMs(), 8000) << "the second failure waits 2 s";
  box.stored(box.due(8000).at(0).first);
  EXPECT_EQ(box.owedCount(), 0u);
}

TEST(ReceiptOutboxTest, TheBackoffDoublesToThirtySeconds) {
  EXPECT_EQ(receiptRetryDelayMs(1), 1000);
  EXPECT_EQ(receiptRetryDelayMs(2), 2000);
  EXPECT_EQ(receiptRetryDelayMs(3), 4000);
  EXPECT_EQ(receiptRetryDelayMs(5), 16000);
  EXPECT_EQ(receiptRetryDelayMs(6), 30000);
  EXPECT_EQ(receiptRetryDelayMs(1000), 30000);
}

TEST(ReceiptOutboxTest, ThroughStaysBehindTheOldestFirstPublish) {
  ReceiptOutbox box;
  auto t = box.begin(surfacedAt("m-1", 10000));
  auto first = parseOwedReceipts(*box.takeSection(20000));
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  EXPECT_EQ(first->throughMs, 10000 - ReceiptOutbox::kThroughSlackMs);
  EXPECT_FALSE(box.takeSection(20500).has_value()) << "nothing changed";
  box.stored(t);
  auto second = parseOwedReceipts(*box.takeSection(21000));
  ASSERT_TRUE(second.isOk());
  EXPECT_EQ(second->throughMs, 21000 - ReceiptOutbox::kThroughSlackMs);
  EXPECT_TRUE(second->owed.empty());
}

TEST(ReceiptOutboxTest, WhatIsOwedSurvivesIntoTheNextLife) {
  ReceiptOutbox box;
  const Receipt failed{"failed", "m-2", "local.bob", 3000, "runtime-exited-before-reading: x"};
  box.unsent(box.begin(surfacedAt("m-1", 2000)), 4000);
  box.unsent(box.begin(failed), 4000);
  auto saved = parseOwedReceipts(*box.takeSection(4000));
  ASSERT_TRUE(saved.isOk()) << saved.status().toString();
  EXPECT_EQ(saved->owed, (std::vector<Receipt>{surfacedAt("m-1", 2000), failed}));
  EXPECT_EQ(saved->throughMs, 4000 - ReceiptOutbox::kThroughSlackMs);

  ReceiptOutbox next;
  next.restore(saved->owed);
  EXPECT_EQ(next.owedCount(), 2u);
  auto due = next.due(0);
  ASSERT_EQ(due.size(), 2u) << "a previous life's debt is due at once";
  next.stored(due[0].first);
  auto left = parseOwedReceipts(*next.takeSection(5000));
  ASSERT_TRUE(left.isOk());
  EXPECT_EQ(left->owed, (std::vector<Receipt>{failed})) << "still being published: still owed";
}

TEST(ReceiptOutboxTest, AtMostKMaxOwedAreKeptTheOldestDropped) {
  ReceiptOutbox box;
  for (size_t i = 0; i <= ReceiptOutbox::kMaxOwed; ++i)
    box.unsent(box.begin(surfacedAt("m-" + std::to_string(i), 1000)), 1000);
  EXPECT_EQ(box.owedCount(), ReceiptOutbox::kMaxOwed);
  EXPECT_EQ(box.dropped(), 1u);
  auto saved = parseOwedReceipts(*box.takeSection(2000));
  ASSERT_TRUE(saved.isOk());
  EXPECT_EQ(saved->owed.front().id, "m-1") << "m-0, the oldest, was dropped";
}

TEST(ReceiptOutboxTest, ADamagedSectionIsRefusedByName) {
  for (
      const char* text :
      {"", "[]", R"({"owed":[]})", R"({"through":1})", R"({"through":"1","owed":[]})",
       R"({"through":1,"owed":[{"outcome":"read","id":"m","sender":"local.a","at":1,"detail":""}]})",
       R"({"through":1,"owed":[{"outcome":"failed","id":"m","sender":"local.a","detail":""}]})",
       R"({"through":1,"owed":[7]})"}) {
    auto parsed = parseOwedReceipts(text);
    ASSERT_FALSE(parsed.isOk()) << text;
    EXPECT_EQ(parsed.status().reason(), "bad-receipt-outbox") << text;
  }
}

}  // namespace
}  // namespace shoal::daemon
