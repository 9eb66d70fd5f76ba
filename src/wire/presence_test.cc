#include "wire/presence.h"

#include <string>

#include "wire/names.h"
#include "wire/reasons.h"

#include <gtest/gtest.h>

namespace shoal::wire {
namespace {

constexpr std::string_view kKey = "local.alice";

std::string record(std::string_view status, std::string_view extra = "") {
  return R"({"card":{"id":"local.alice","name":"alice","kind":"agent"},"status":")" +
         std::string(status) + R"(","ts":1710000000000)" + std::string(extra) + "}";
}

std::string reasonOf(std::string_view key, std::string_view json) {
  const Result<Presence> r = decodePresence(key, json);
  return r.isOk() ? "ok" : std::string(r.status().reason());
}

// A full record decodes every optional field and round-trips.
TEST(Presence, FullRecordRoundTrips) {
  const Result<Presence> p = decodePresence(
      kKey,
      record(
          "working",
          R"(,"lifecycleUid":"abcdefghijklmnopqrstuvwxyz",)"
          R"("condition":{"code":"rate_limit","source":"429","message":"slow down","since":1709999999000},)"
          R"("environment":"env-1","activity":"editing","attention":"focus",)"
          R"("channelModes":{"team.backend":"quiet","random":"muted"},)"
          R"("activeAt":1709999999500,"statusSince":1709999990000,"activitySince":1709999991000.5,)"
          R"("unknownField":1)"));
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  EXPECT_EQ(p->status, PresenceStatus::kWorking);
  EXPECT_EQ(p->ts, 1710000000000.0);
  EXPECT_EQ(p->condition->code, ConditionCode::kRateLimit);
  EXPECT_EQ(p->attention, Attention::kFocus);
  EXPECT_EQ(p->channelModes.at("random"), ChannelMode::kMuted);
  EXPECT_EQ(p->activitySince, 1709999991000.5);
  const Result<std::string> encoded = encodePresence(*p);
  ASSERT_TRUE(encoded.isOk()) << encoded.status().toString();
  EXPECT_EQ(*decodePresence(kKey, *encoded), *p);
}

// Readers drop a record whose card.id is not its KV key.
TEST(Presence, CardIdMustEqualTheKey) {
  EXPECT_EQ(reasonOf("local.bob", record("idle")), reason::kCardIdMismatch);
  EXPECT_EQ(reasonOf(kKey, record("idle")), "ok");
  EXPECT_EQ(reasonOf(kPresenceCanaryKey, record("idle")), reason::kReservedPresenceKey);
}

// Missing or wrong-typed card, name, status or ts each have a named reason.
TEST(Presence, RequiredFieldsAreNamed) {
  EXPECT_EQ(reasonOf(kKey, R"({"status":"idle","ts":1})"), reason::kMissingCard);
  EXPECT_EQ(reasonOf(kKey, R"({"card":"x","status":"idle","ts":1})"), reason::kMissingCard);
  EXPECT_EQ(
      reasonOf(kKey, R"({"card":{"id":"local.alice","kind":"agent"},"status":"idle","ts":1})"),
      reason::kMissingName);
  EXPECT_EQ(
      reasonOf(
          kKey,
          R"({"card":{"id":"local.alice","name":["a"],"kind":"agent"},"status":"idle","ts":1})"),
      reason::kMissingName);
  EXPECT_EQ(reasonOf(kKey, record("asleep")), reason::kBadStatus);
  EXPECT_EQ(reasonOf(kKey, R"({"card":{"id":"local.alice","name":"a","kind":"agent"},"ts":1})"),
            reason::kBadStatus);
  EXPECT_EQ(
      reasonOf(
          kKey,
          R"({"card":{"id":"local.alice","name":"a","kind":"agent"},"status":"idle","ts":1e999})"),
      reason::kBadTs);
  EXPECT_EQ(
      reasonOf(kKey, R"({"card":{"id":"local.alice","name":"a","kind":"agent"},"status":"idle"})"),
      reason::kBadTs);
  EXPECT_EQ(
      reasonOf(
          kKey,
          R"({"card":{"id":"local.alice","name":"a","kind":"agent"},"status":"idle","ts":"1"})"),
      reason::kBadTs);
  EXPECT_EQ(reasonOf(kKey, "nope"), reason::kMalformedJson);
}

// Optional fields must have their schema types and enum values.
TEST(Presence, OptionalFieldsAreTypeChecked) {
  EXPECT_EQ(reasonOf(kKey, record("idle", R"(,"condition":{"code":"sleepy"})")),
            reason::kBadCondition);
  EXPECT_EQ(reasonOf(kKey, record("idle", R"(,"condition":{"code":"auth","since":"x"})")),
            reason::kBadCondition);
  EXPECT_EQ(reasonOf(kKey, record("idle", R"(,"attention":"busy")")), reason::kBadAttention);
  EXPECT_EQ(reasonOf(kKey, record("idle", R"(,"channelModes":{"team":"loud"})")),
            reason::kBadChannelModes);
  EXPECT_EQ(reasonOf(kKey, record("idle", R"(,"channelModes":{"team.*":"quiet"})")),
            reason::kBadChannelModes);
  EXPECT_EQ(reasonOf(kKey, record("idle", R"(,"lifecycleUid":"UPPER")")), reason::kBadLifecycleUid);
  EXPECT_EQ(reasonOf(kKey, record("idle", R"(,"activity":5)")), reason::kBadPresenceField);
  EXPECT_EQ(reasonOf(kKey, record("idle", R"(,"activeAt":1e999)")), reason::kBadPresenceField);
  for (const char* code :
       {"rate_limit", "overloaded", "auth", "billing", "budget", "context", "model", "request",
        "server", "retrying", "approval", "input", "failed"}) {
    EXPECT_EQ(
        reasonOf(kKey, record("idle", R"(,"condition":{"code":")" + std::string(code) + R"("})")),
        "ok")
        << code;
  }
}

// An offline record never carries attention, channelModes or statusSince.
TEST(Presence, OfflineRecordIsScrubbed) {
  Presence p = *decodePresence(kKey, record("working"));
  p.status = PresenceStatus::kOffline;
  p.attention = Attention::kDnd;
  p.channelModes = {{"team", ChannelMode::kMuted}};
  p.statusSince = 1;
  p.activity = "last thing";
  const std::string encoded = *encodePresence(p);
  EXPECT_EQ(encoded.find("attention"), std::string::npos) << encoded;
  EXPECT_EQ(encoded.find("channelModes"), std::string::npos) << encoded;
  EXPECT_EQ(encoded.find("statusSince"), std::string::npos) << encoded;
  EXPECT_NE(encoded.find("last thing"), std::string::npos) << encoded;
  const Presence read = *decodePresence(
      kKey,
      record("offline", R"(,"attention":"dnd","statusSince":5,"channelModes":{"a":"quiet"})"));
  EXPECT_FALSE(read.attention.has_value());
  EXPECT_FALSE(read.statusSince.has_value());
  EXPECT_TRUE(read.channelModes.empty());
}

// The writer refuses a record it would not accept as a reader.
TEST(Presence, EncodeValidates) {
  Presence p = *decodePresence(kKey, record("idle"));
  p.card.name = std::string(129, 'x');
  EXPECT_EQ(encodePresence(p).status().reason(), reason::kNameTooLong);
  p = *decodePresence(kKey, record("idle"));
  p.ts = std::numeric_limits<double>::infinity();
  EXPECT_EQ(encodePresence(p).status().reason(), reason::kBadTs);
  p = *decodePresence(kKey, record("idle"));
  p.channelModes = {{"a.>", ChannelMode::kQuiet}};
  EXPECT_EQ(encodePresence(p).status().reason(), reason::kBadChannelModes);
  EXPECT_EQ(presenceStatusName(PresenceStatus::kWaiting), "waiting");
  EXPECT_EQ(parseConditionCode("rate_limit"), ConditionCode::kRateLimit);
}

}  // namespace
}  // namespace shoal::wire

namespace shoal::wire {
namespace {

// The bound is the writer's (checkActivity); the codec stays symmetric, so a long activity a
// peer published still decodes and re-encodes (the fuzz targets' round trip).
TEST(Presence, TheActivityBoundIsTheWritersTheCodecStaysSymmetric) {
  EXPECT_EQ(checkActivity(std::string(kMaxActivityBytes + 1, 'a')).reason(),
            reason::kPresenceFieldTooLong);
  EXPECT_NE(checkActivity(std::string(300, 'a')).message().find("at most 256"),
            std::string_view::npos);
  EXPECT_TRUE(checkActivity(std::string(kMaxActivityBytes, 'a')).isOk());
  EXPECT_TRUE(checkActivity("reviewing PR 12").isOk());
  Presence p = *decodePresence(kKey, record("idle"));
  p.activity = std::string(4 * kMaxActivityBytes, 'a');
  auto encoded = encodePresence(p);
  ASSERT_TRUE(encoded.isOk());
  EXPECT_EQ(decodePresence(kKey, *encoded)->activity, p.activity);
}

}  // namespace
}  // namespace shoal::wire
