#include "wire/delivery_frame.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "wire/reasons.h"
#include "wire/spec_vectors.h"

#include <gtest/gtest.h>

namespace shoal::wire {
namespace {

constexpr std::string_view kBadEntry = "bad-fanout-entry";
constexpr std::string_view kBadFrame = "bad-delivery-frame";
constexpr std::string_view kUid = "abcdefghijklmnopqrstuvwxyz";
constexpr uint64_t kMaxSafe = (uint64_t{1} << 53) - 1;

// The §12 multicast sample with its channel replaced by `channel`.
std::string postOn(std::string_view channel) {
  std::string json(spec::kMulticast);
  const std::string from = R"("channel":"team.backend")";
  json.replace(json.find(from), from.size(), R"("channel":")" + std::string(channel) + "\"");
  return json;
}

CotalMessage decoded(std::string_view json) {
  Result<CotalMessage> r = decodeMessage(json);
  EXPECT_TRUE(r.isOk()) << r.status().toString() << " for " << json;
  return r.isOk() ? *std::move(r) : CotalMessage{};
}

// A channel post to team.backend, as the fan-out normalises it.
CotalMessage post() {
  return decoded(spec::kMulticast);
}

// A fan-out entry: `head` holds every member but msg.
std::string entry(std::string_view head, std::string_view msg = spec::kMulticast) {
  return "{" + std::string(head) + R"(,"msg":)" + std::string(msg) + "}";
}
constexpr std::string_view kEntryHead =
    R"("channel":"team.backend","seq":42,"reason":"durable-channel","generation":3)";

// kEntryHead with the given raw JSON for seq and generation.
std::string counters(std::string_view seq, std::string_view generation) {
  return R"("channel":"team.backend","seq":)" + std::string(seq) +
         R"(,"reason":"durable-channel","generation":)" + std::string(generation);
}

// A delivery frame: `head` holds every member but msg.
std::string frame(std::string_view head, std::string_view msg = spec::kMulticast) {
  return entry(head, msg);
}
constexpr std::string_view kFrameHead = R"("version":1,"channel":"team.backend")";

std::string entryReason(std::string_view json) {
  const Result<FanoutEntry> r = decodeFanoutEntry(json);
  return r.isOk() ? "ok" : std::string(r.status().reason());
}

std::string frameReason(std::string_view json) {
  const Result<DeliveryFrame> r = decodeDeliveryFrame(json);
  return r.isOk() ? "ok" : std::string(r.status().reason());
}

// ---------------------------------------------------------------------------------------------
// FanoutEntry

// Both reasons have their wire names.
TEST(FanoutEntry, ReasonsHaveTheirWireNames) {
  EXPECT_EQ(fanoutReasonName(FanoutReason::kDurableChannel), "durable-channel");
  EXPECT_EQ(fanoutReasonName(FanoutReason::kLiveMention), "live-mention");
}

// An entry is written in key order channel, seq, reason, generation, msg, with the message
// bytes exactly as encodeMessage wrote them, and decodes back to the same entry.
TEST(FanoutEntry, EncodesGoldenBytesAndRoundTrips) {
  const FanoutEntry e{"team.backend", 42, FanoutReason::kDurableChannel, 3, post()};
  const Result<std::string> json = encodeFanoutEntry(e);
  ASSERT_TRUE(json.isOk()) << json.status().toString();
  EXPECT_EQ(*json, entry(kEntryHead));
  const Result<FanoutEntry> back = decodeFanoutEntry(*json);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->channel, "team.backend");
  EXPECT_EQ(back->seq, 42u);
  EXPECT_EQ(back->reason, FanoutReason::kDurableChannel);
  EXPECT_EQ(back->generation, 3u);
  EXPECT_EQ(back->msg, e.msg);
}

// A live-mention copy carries generation 0 and survives the round trip.
TEST(FanoutEntry, LiveMentionRoundTrips) {
  const FanoutEntry e{"team.backend", 7, FanoutReason::kLiveMention, 0, post()};
  const Result<std::string> json = encodeFanoutEntry(e);
  ASSERT_TRUE(json.isOk()) << json.status().toString();
  EXPECT_NE(json->find(R"("reason":"live-mention","generation":0,)"), std::string::npos);
  const Result<FanoutEntry> back = decodeFanoutEntry(*json);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->reason, FanoutReason::kLiveMention);
  EXPECT_EQ(back->generation, 0u);
  EXPECT_EQ(back->seq, 7u);
  EXPECT_EQ(back->msg, e.msg);
}

// Unknown message fields, data parts and non-integral numbers inside msg survive the nesting.
TEST(FanoutEntry, RichMessageRoundTripsExactly) {
  const CotalMessage rich = decoded(
      R"({"id":"m9","ts":1710000000000.25,"space":"main",)"
      R"("from":{"id":"local.alice","name":"alice","x-from":[1,2.5]},"channel":"ops.deploy.eu",)"
      R"("parts":[{"kind":"text","text":"ü \"q\""},{"kind":"data","data":{"v":0.1,"n":null}},)"
      R"({"kind":"com.example.poll","k":[true]}],"replyTo":"m8","x-top":{"deep":{"a":-1e-7}}})");
  const FanoutEntry e{"ops.deploy.eu", 9, FanoutReason::kDurableChannel, 1, rich};
  const Result<std::string> json = encodeFanoutEntry(e);
  ASSERT_TRUE(json.isOk()) << json.status().toString();
  const Result<FanoutEntry> back = decodeFanoutEntry(*json);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->msg, rich);
  EXPECT_EQ(*encodeFanoutEntry(*back), *json);
}

// seq and generation are integers in [0, 2^53-1]: the largest safe integer round-trips, one
// more is refused on both sides so the encoder never writes what the decoder refuses.
TEST(FanoutEntry, CountersStayWithinSafeIntegers) {
  const FanoutEntry e{"team.backend", kMaxSafe, FanoutReason::kDurableChannel, kMaxSafe, post()};
  const Result<std::string> json = encodeFanoutEntry(e);
  ASSERT_TRUE(json.isOk()) << json.status().toString();
  const Result<FanoutEntry> back = decodeFanoutEntry(*json);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->seq, kMaxSafe);
  EXPECT_EQ(back->generation, kMaxSafe);

  EXPECT_EQ(entryReason(entry(counters("9007199254740991", "9007199254740991"))), "ok");
  EXPECT_EQ(entryReason(entry(counters("9007199254740992", "3"))), kBadEntry);
  EXPECT_EQ(entryReason(entry(counters("42", "9007199254740992"))), kBadEntry);
  EXPECT_EQ(entryReason(entry(counters("9223372036854775807", "3"))), kBadEntry);
  EXPECT_EQ(entryReason(entry(counters("18446744073709551615", "3"))), kBadEntry);
  FanoutEntry big = e;
  big.seq = kMaxSafe + 1;
  EXPECT_EQ(encodeFanoutEntry(big).status().reason(), kBadEntry);
  big = e;
  big.generation = kMaxSafe + 1;
  EXPECT_EQ(encodeFanoutEntry(big).status().reason(), kBadEntry);
}

// Anything that is not one JSON object is malformed-json.
TEST(FanoutEntry, MalformedJsonIsNamed) {
  for (std::string_view bad :
       {"", "{", "[]", "null", "42", "not json", R"({"channel":"team.backend",})", "{} trailing"}) {
    EXPECT_EQ(entryReason(bad), reason::kMalformedJson) << bad;
  }
  EXPECT_EQ(entryReason(entry(kEntryHead) + " x"), reason::kMalformedJson);
}

// The channel must be present, a string and concrete.
TEST(FanoutEntry, ChannelMustBeConcrete) {
  for (std::string_view channel :
       {R"("team.*")", R"("team.>")", R"(">")", R"("*")", R"("")", R"("team..x")",
        R"("team backend")", R"("team.")", "7", "null"}) {
    const std::string head = R"("channel":)" + std::string(channel) +
                             R"(,"seq":42,"reason":"durable-channel","generation":3)";
    EXPECT_EQ(entryReason(entry(head)), kBadEntry) << channel;
  }
  EXPECT_EQ(entryReason(entry(R"("seq":42,"reason":"durable-channel","generation":3)")), kBadEntry);
}

// seq and generation are required non-negative integers: negative, fractional, string, null
// and boolean values are refused.
TEST(FanoutEntry, CountersMustBeNonNegativeIntegers) {
  for (std::string_view bad : {"-1", "1.5", "4.2e1", R"("42")", "null", "true", "[]", "{}"}) {
    EXPECT_EQ(entryReason(entry(counters(bad, "3"))), kBadEntry) << "seq " << bad;
    EXPECT_EQ(entryReason(entry(counters("42", bad))), kBadEntry) << "generation " << bad;
  }
  EXPECT_EQ(
      entryReason(entry(R"("channel":"team.backend","reason":"durable-channel","generation":3)")),
      kBadEntry);
  EXPECT_EQ(entryReason(entry(R"("channel":"team.backend","seq":42,"reason":"durable-channel")")),
            kBadEntry);
  EXPECT_EQ(entryReason(entry(counters("0", "0"))), "ok");
}

// reason is one of the two names, exactly.
TEST(FanoutEntry, ReasonMustBeKnown) {
  for (std::string_view value :
       {R"("mention")", R"("Durable-Channel")", R"("durable_channel")", R"("")", "7", "null"}) {
    const std::string head = R"("channel":"team.backend","seq":42,"reason":)" + std::string(value) +
                             R"(,"generation":3)";
    EXPECT_EQ(entryReason(entry(head)), kBadEntry) << value;
  }
  EXPECT_EQ(entryReason(entry(R"("channel":"team.backend","seq":42,"generation":3)")), kBadEntry);
}

// msg must be an object holding a channel post to the entry's channel; an invalid message keeps
// decodeMessage's own reason.
TEST(FanoutEntry, MsgMustBeAPostToTheEntryChannel) {
  EXPECT_EQ(entryReason(entry(kEntryHead, postOn("team.frontend"))), kBadEntry);
  EXPECT_EQ(entryReason(entry(kEntryHead, postOn("team"))), kBadEntry);
  EXPECT_EQ(entryReason(entry(kEntryHead, postOn("team.backend.x"))), kBadEntry);
  EXPECT_EQ(entryReason(entry(kEntryHead, spec::kUnicast)), kBadEntry);  // a DM
  for (std::string_view msg : {R"("text")", "null", "[]", "7"}) {
    EXPECT_EQ(entryReason(entry(kEntryHead, msg)), kBadEntry) << msg;
  }
  EXPECT_EQ(entryReason("{" + std::string(kEntryHead) + "}"), kBadEntry);
  EXPECT_EQ(entryReason(entry(kEntryHead, postOn("team.*"))), reason::kChannelWildcardInPublish);
  EXPECT_EQ(
      entryReason(entry(
          kEntryHead,
          R"({"ts":1,"space":"main","from":{"id":"local.a","name":"a"},"channel":"team.backend","parts":[]})")),
      reason::kMissingId);
}

// The encoder refuses a non-concrete channel, a DM, a post to another channel and an invalid
// message.
TEST(FanoutEntry, EncoderRefusesWhatTheDecoderWould) {
  FanoutEntry e{"team.>", 42, FanoutReason::kDurableChannel, 3, post()};
  EXPECT_EQ(encodeFanoutEntry(e).status().reason(), reason::kChannelWildcardInPublish);
  e.channel = "team.frontend";
  EXPECT_EQ(encodeFanoutEntry(e).status().reason(), kBadEntry);
  e.channel = "team.backend";
  e.msg = decoded(spec::kUnicast);
  EXPECT_EQ(encodeFanoutEntry(e).status().reason(), kBadEntry);
  e.msg = post();
  e.msg.ts = std::nan("");
  EXPECT_EQ(encodeFanoutEntry(e).status().reason(), reason::kBadTs);
}

// ---------------------------------------------------------------------------------------------
// DeliveryFrame

// The header and version the DLV pump requires.
TEST(DeliveryFrame, HeaderIsCotalDeliveryFrameOne) {
  EXPECT_EQ(kDeliveryFrameHeader, "Cotal-Delivery-Frame");
  EXPECT_EQ(kDeliveryFrameVersion, "1");
}

// A frame is written as version, channel, msg (message bytes untouched) and decodes back.
TEST(DeliveryFrame, EncodesGoldenBytesAndRoundTrips) {
  const DeliveryFrame f{"team.backend", post()};
  const Result<std::string> json = encodeDeliveryFrame(f);
  ASSERT_TRUE(json.isOk()) << json.status().toString();
  EXPECT_EQ(*json, frame(kFrameHead));
  const Result<DeliveryFrame> back = decodeDeliveryFrame(*json);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->channel, "team.backend");
  EXPECT_EQ(back->msg, f.msg);
  // Key order on the wire does not matter to the reader.
  const Result<DeliveryFrame> reordered = decodeDeliveryFrame(
      R"({"msg":)" + std::string(spec::kMulticast) + R"(,"channel":"team.backend","version":1})");
  ASSERT_TRUE(reordered.isOk()) << reordered.status().toString();
  EXPECT_EQ(reordered->msg, f.msg);
}

// A single-segment channel and a message with unknown fields survive the frame.
TEST(DeliveryFrame, RichMessageRoundTripsExactly) {
  const CotalMessage rich =
      decoded(R"({"id":"m9","ts":0.5,"space":"main","from":{"id":"local.alice","name":"alice"},)"
              R"("channel":"general","mentions":["Bob"," carol "],)"
              R"("parts":[{"kind":"data","data":[1.25,{"z":false}]}],"contextId":"c","x-y":"z"})");
  const DeliveryFrame f{"general", rich};
  const Result<std::string> json = encodeDeliveryFrame(f);
  ASSERT_TRUE(json.isOk()) << json.status().toString();
  const Result<DeliveryFrame> back = decodeDeliveryFrame(*json);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->channel, "general");
  EXPECT_EQ(back->msg, rich);
}

// Anything that is not one JSON object is malformed-json.
TEST(DeliveryFrame, MalformedJsonIsNamed) {
  for (std::string_view bad :
       {"", "{", "[]", "null", "\"frame\"", "not json", R"({"version":1,})", "{} {}"}) {
    EXPECT_EQ(frameReason(bad), reason::kMalformedJson) << bad;
  }
  EXPECT_EQ(frameReason(frame(kFrameHead) + "x"), reason::kMalformedJson);
}

// The frame has exactly the keys version, channel, msg: any other key is refused, a fan-out
// entry is not a frame.
TEST(DeliveryFrame, UnknownKeysAreRefused) {
  for (std::string_view extra :
       {R"("seq":42)", R"("x":null)", R"("Version":1)", R"("generation":3)", R"("":1)"}) {
    EXPECT_EQ(frameReason(frame(std::string(kFrameHead) + "," + std::string(extra))), kBadFrame)
        << extra;
  }
  EXPECT_EQ(frameReason(entry(kEntryHead)), kBadFrame);
  EXPECT_EQ(frameReason("{}"), kBadFrame);
}

// version must be the number 1: missing, other numbers, strings, booleans and null are refused.
TEST(DeliveryFrame, VersionMustBeOne) {
  for (std::string_view version :
       {"0", "2", "-1", "1.5", "0.999", R"("1")", "true", "null", "[1]", "{}"}) {
    const std::string head =
        R"("version":)" + std::string(version) + R"(,"channel":"team.backend")";
    EXPECT_EQ(frameReason(frame(head)), kBadFrame) << version;
  }
  EXPECT_EQ(frameReason(frame(R"("channel":"team.backend")")), kBadFrame);
}

// The frame channel must be present, a string and concrete.
TEST(DeliveryFrame, ChannelMustBeConcrete) {
  for (std::string_view channel :
       {R"("team.*")", R"("team.>")", R"(">")", R"("*")", R"("")", R"("team..x")",
        R"("team/backend")", R"(".team")", "7", "null", R"(["team.backend"])"}) {
    const std::string head = R"("version":1,"channel":)" + std::string(channel);
    EXPECT_EQ(frameReason(frame(head)), kBadFrame) << channel;
  }
  EXPECT_EQ(frameReason(frame(R"("version":1)")), kBadFrame);
}

// msg.channel must equal the frame's channel exactly (no prefix, no pattern match, no case
// folding), and msg must be a channel post, not a DM.
TEST(DeliveryFrame, MsgMustBeAPostToTheFrameChannel) {
  EXPECT_EQ(frameReason(frame(kFrameHead, postOn("team.frontend"))), kBadFrame);
  EXPECT_EQ(frameReason(frame(kFrameHead, postOn("team"))), kBadFrame);
  EXPECT_EQ(frameReason(frame(kFrameHead, postOn("team.backend.x"))), kBadFrame);
  EXPECT_EQ(frameReason(frame(kFrameHead, postOn("Team.Backend"))), kBadFrame);
  EXPECT_EQ(frameReason(frame(R"("version":1,"channel":"team.frontend")")), kBadFrame);
  EXPECT_EQ(frameReason(frame(kFrameHead, spec::kUnicast)), kBadFrame);  // a DM
  const std::string toService =
      R"({"id":"m","ts":1,"space":"main","from":{"id":"local.a","name":"a"},"toService":"reviewer","parts":[]})";
  EXPECT_EQ(frameReason(frame(kFrameHead, toService)), kBadFrame);
}

// msg must be present and an object; an invalid message keeps decodeMessage's own reason.
TEST(DeliveryFrame, MsgMustBeAValidMessage) {
  EXPECT_EQ(frameReason("{" + std::string(kFrameHead) + "}"), kBadFrame);
  for (std::string_view msg : {R"("text")", "null", "[]", "7", "true"}) {
    EXPECT_EQ(frameReason(frame(kFrameHead, msg)), kBadFrame) << msg;
  }
  EXPECT_EQ(frameReason(frame(kFrameHead, postOn("team.>"))), reason::kChannelWildcardInPublish);
  EXPECT_EQ(
      frameReason(frame(
          kFrameHead,
          R"({"id":"m","ts":1,"space":"main","from":{"id":"local.a","name":"a"},"channel":"team.backend","to":"local.b","parts":[]})")),
      reason::kMultipleRoutingFields);
  EXPECT_EQ(
      frameReason(frame(
          kFrameHead,
          R"({"id":"m","ts":"1","space":"main","from":{"id":"local.a","name":"a"},"channel":"team.backend","parts":[]})")),
      reason::kBadTs);
}

// The encoder refuses a non-concrete channel, a DM and a post to another channel, naming the
// frame rule (not the fan-out entry's).
TEST(DeliveryFrame, EncoderRefusesWhatTheDecoderWould) {
  DeliveryFrame f{"team.*", post()};
  EXPECT_EQ(encodeDeliveryFrame(f).status().reason(), reason::kChannelWildcardInPublish);
  f.channel = "team.frontend";
  EXPECT_EQ(encodeDeliveryFrame(f).status().reason(), kBadFrame);
  f.channel = "team.backend";
  f.msg = decoded(spec::kUnicast);
  EXPECT_EQ(encodeDeliveryFrame(f).status().reason(), kBadFrame);
  f.msg = post();
  f.msg.ts = std::numeric_limits<double>::infinity();
  EXPECT_EQ(encodeDeliveryFrame(f).status().reason(), reason::kBadTs);
}

// ---------------------------------------------------------------------------------------------
// copyMsgId

// The per-copy dedup id is `<msgId>:<o>.<a>:<uid>:<generation>`, generation in plain decimal.
TEST(CopyMsgId, IsMsgIdPrincipalUidGeneration) {
  const Principal bob{std::string(spec::kOwnerB), "bob"};
  EXPECT_EQ(copyMsgId("018f1d0a-0000-7000-9000-000000000001", bob, kUid, 3),
            "018f1d0a-0000-7000-9000-000000000001:u_bbbbbbbbbbbbbbbbbbbbbbbbbb.bob:"
            "abcdefghijklmnopqrstuvwxyz:3");
  EXPECT_EQ(copyMsgId("m1", Principal{"local", "alice"}, kUid, 0),
            "m1:local.alice:abcdefghijklmnopqrstuvwxyz:0");
  EXPECT_EQ(copyMsgId("m1", bob, kUid, kMaxSafe),
            "m1:u_bbbbbbbbbbbbbbbbbbbbbbbbbb.bob:abcdefghijklmnopqrstuvwxyz:9007199254740991");
}

// Copies for another member, another lifecycle or another generation never share an id, so a
// rejoin (generation + 1) is not swallowed by the duplicate window.
TEST(CopyMsgId, DiffersPerMemberLifecycleAndGeneration) {
  const Principal bob{std::string(spec::kOwnerB), "bob"};
  const Principal carol{std::string(spec::kOwnerB), "carol"};
  const std::string base = copyMsgId("m1", bob, kUid, 1);
  EXPECT_EQ(copyMsgId("m1", bob, kUid, 1), base);
  EXPECT_NE(copyMsgId("m2", bob, kUid, 1), base);
  EXPECT_NE(copyMsgId("m1", carol, kUid, 1), base);
  EXPECT_NE(copyMsgId("m1", bob, "zyxwvutsrqponmlkjihgfedcba", 1), base);
  EXPECT_NE(copyMsgId("m1", bob, kUid, 2), base);
}

}  // namespace
}  // namespace shoal::wire
