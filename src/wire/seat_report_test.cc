// The receipt and wake-record bodies are a contract between the daemon that writes them and
// every reader (the CLI, the dashboard, another implementation): the exact bytes are pinned
// here, both ways, beside what a reader does with an incomplete or foreign body.
#include "wire/seat_receipt.h"
#include "wire/wake_record.h"

#include <gtest/gtest.h>

namespace shoal::wire {
namespace {

constexpr std::string_view kSurfacedGolden =
    R"({"id":"m-1","recipient":"local.reviewer","surfacedAt":1765000000123,"evidence":"runtime-ack"})";
constexpr std::string_view kFailedGolden =
    R"({"id":"m-2","recipient":"local.reviewer","failedAt":1765000000456,"reason":"runtime-exited-before-reading"})";
constexpr std::string_view kStartedGolden =
    R"({"kind":"started","seat":{"id":"local.reviewer","name":"Reviewer"},"generation":3,"at":1765000000789,"detail":"pid 4242","messages":["m-1","m-2"]})";
constexpr std::string_view kWakeResultGolden =
    R"({"kind":"wake-result","seat":{"id":"local.reviewer","name":"Reviewer"},"generation":3,"at":1765000001000,"message":"m-1","target":"peer:local.alice","result":"replied","replyId":"m-9"})";

SeatReceipt surfaced() {
  return {
      SeatReceipt::Outcome::kSurfaced, "m-1", "local.reviewer", 1765000000123, "runtime-ack", ""};
}

TEST(SeatReceipt, EncodesTheGoldenBytesAndReadsThemBack) {
  EXPECT_EQ(encodeSeatReceipt(surfaced()), kSurfacedGolden);
  SeatReceipt failed{SeatReceipt::Outcome::kFailed,  "m-2", "local.reviewer", 1765000000456, "",
                     "runtime-exited-before-reading"};
  EXPECT_EQ(encodeSeatReceipt(failed), kFailedGolden);
  auto back = decodeSeatReceipt(kSurfacedGolden);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(*back, surfaced());
  back = decodeSeatReceipt(kFailedGolden);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(*back, failed);
}

TEST(SeatReceipt, AnOlderReceiptWithoutEvidenceOrReasonStillReads) {
  auto old = decodeSeatReceipt(R"({"id":"m-1","recipient":"local.r","surfacedAt":5})");
  ASSERT_TRUE(old.isOk());
  EXPECT_EQ(old->evidence, "");
  EXPECT_EQ(encodeSeatReceipt(*old), R"({"id":"m-1","recipient":"local.r","surfacedAt":5})");
  auto noReason = decodeSeatReceipt(R"({"id":"m-1","failedAt":5})");
  ASSERT_TRUE(noReason.isOk());
  EXPECT_EQ(noReason->reason, "no reason given");
}

TEST(SeatReceipt, ABodyWithoutAnIdOrATimeIsRefusedByName) {
  EXPECT_EQ(decodeSeatReceipt(R"({"surfacedAt":5})").status().reason(), "bad-receipt");
  EXPECT_EQ(decodeSeatReceipt(R"({"id":"m-1","surfacedAt":"5"})").status().reason(), "bad-receipt");
  EXPECT_EQ(decodeSeatReceipt("[1]").status().reason(), "malformed-json");
  EXPECT_EQ(decodeSeatReceipt("{").status().reason(), "malformed-json");
}

TEST(SeatReceipt, EvidenceKindIsTheReasonsHeadOnlyWhenItIsAKnownKind) {
  EXPECT_EQ(evidenceKind("stdin-read: 120 bytes"), "stdin-read");
  EXPECT_EQ(evidenceKind("inbox-page"), "inbox-page");
  EXPECT_EQ(evidenceKind("transport accepted"), "");
  EXPECT_EQ(evidenceKind("runtime-acknowledged: x"), "");
}

TEST(WakeRecord, EncodesTheGoldenBytesAndReadsThemBack) {
  WakeRecord started;
  started.kind = "started";
  started.seatId = "local.reviewer";
  started.seatName = "Reviewer";
  started.generation = 3;
  started.atMs = 1765000000789;
  started.detail = "pid 4242";
  started.messages = {"m-1", "m-2"};
  EXPECT_EQ(encodeWakeRecord(started), kStartedGolden);
  auto back = decodeWakeRecord(kStartedGolden);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(*back, started);

  WakeRecord result;

  result.kind = std::string(kWakeResultKind);

  result.seatId = "local.reviewer";

  result.seatName = "Reviewer";

  result.generation = 3;

  result.atMs = 1765000001000;

  result.message = "m-1";

  result.target = "peer:local.alice";

  result.result = "replied";

  result.replyId = "m-9";
  EXPECT_EQ(encodeWakeRecord(result), kWakeResultGolden);
  back = decodeWakeRecord(kWakeResultGolden);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(*back, result);
}

TEST(WakeRecord, FieldsOfTheWrongTypeReadAsAbsentAndAKindIsRequired) {
  auto odd =
      decodeWakeRecord(R"({"kind":"stopped","seat":"x","generation":-1,"messages":[1,"m"]})");
  ASSERT_TRUE(odd.isOk());
  EXPECT_EQ(odd->seatId, "");
  EXPECT_EQ(odd->generation, 0u);
  EXPECT_EQ(odd->messages, std::vector<std::string>{"m"});
  EXPECT_EQ(decodeWakeRecord(R"({"seat":{}})").status().reason(), "bad-wake-record");
  EXPECT_EQ(decodeWakeRecord(R"({"kind":"wake-result","result":"replied"})").status().reason(),
            "bad-wake-record");
}

}  // namespace
}  // namespace shoal::wire
