#include "wire/channel_config.h"

#include <string>

#include "wire/reasons.h"

#include <gtest/gtest.h>

namespace shoal::wire {
namespace {

std::string reasonOf(std::string_view json) {
  const Result<ChannelConfig> r = decodeChannelConfig(json);
  return r.isOk() ? "ok" : std::string(r.status().reason());
}

// replayWindow is digits then s/m/h/d: `24h` is a day; `24`, `1w`, `-1h` are refused.
TEST(ReplayWindow, AcceptsOnlyDigitsAndAUnit) {
  EXPECT_EQ(*parseReplayWindowMs("24h"), 86'400'000);
  EXPECT_EQ(*parseReplayWindowMs("90s"), 90'000);
  EXPECT_EQ(*parseReplayWindowMs("15m"), 900'000);
  EXPECT_EQ(*parseReplayWindowMs("7d"), 604'800'000);
  EXPECT_EQ(*parseReplayWindowMs("0s"), 0);
  for (const char* bad : {"24", "1w", "-1h", "", "h", "1.5h", "1H", " 1h", "1h ", "1hh",
                          "99999999999999999999d", "106751991167301d"}) {
    EXPECT_EQ(parseReplayWindowMs(bad).status().reason(), reason::kBadReplayWindow) << bad;
  }
}

// A full config decodes and round-trips.
TEST(ChannelConfig, FullConfigRoundTrips) {
  const Result<ChannelConfig> c = decodeChannelConfig(
      R"({"replay":false,"replayWindow":"24h","deliveryClass":"live","description":"d","instructions":"i","x":1})");
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->replay, false);
  EXPECT_EQ(c->deliveryClass, DeliveryClass::kLive);
  EXPECT_EQ(*decodeChannelConfig(*encodeChannelConfig(*c)), *c);
  EXPECT_EQ(*encodeChannelConfig({}), "{}");
}

// Over-long description and instructions are refused, never truncated.
TEST(ChannelConfig, LongTextIsRefusedNotTruncated) {
  const auto desc = [](size_t n) { return R"({"description":")" + std::string(n, 'd') + R"("})"; };
  EXPECT_EQ(reasonOf(desc(200)), "ok");
  EXPECT_EQ(reasonOf(desc(201)), reason::kDescriptionTooLong);
  EXPECT_EQ(reasonOf(R"({"instructions":")" + std::string(2000, 'i') + R"("})"), "ok");
  EXPECT_EQ(reasonOf(R"({"instructions":")" + std::string(2001, 'i') + R"("})"),
            reason::kInstructionsTooLong);
  ChannelConfig c;
  c.description = std::string(201, 'd');
  EXPECT_EQ(encodeChannelConfig(c).status().reason(), reason::kDescriptionTooLong);
}

// Wrong types and enum values have their own reasons.
TEST(ChannelConfig, WrongTypesAreNamed) {
  EXPECT_EQ(reasonOf(R"({"replay":"yes"})"), reason::kBadChannelConfig);
  EXPECT_EQ(reasonOf(R"({"replayWindow":24})"), reason::kBadChannelConfig);
  EXPECT_EQ(reasonOf(R"({"replayWindow":"1w"})"), reason::kBadReplayWindow);
  EXPECT_EQ(reasonOf(R"({"deliveryClass":"best-effort"})"), reason::kBadDeliveryClass);
  EXPECT_EQ(reasonOf(R"({"description":1})"), reason::kBadChannelConfig);
  EXPECT_EQ(reasonOf("[]"), reason::kMalformedJson);
}

// Effective values: channel ?? defaults ?? (replay true, class durable, window unbounded).
TEST(ChannelConfig, EffectiveValuesFallBackInOrder) {
  const ChannelConfig none;
  const ChannelDefaults noDefaults;
  EXPECT_TRUE(effectiveReplay(none, noDefaults));
  EXPECT_EQ(effectiveClass(none, noDefaults), DeliveryClass::kDurable);
  EXPECT_FALSE(effectiveReplayWindowMs(none, noDefaults).has_value());
  const ChannelDefaults defaults =
      *decodeChannelDefaults(R"({"replay":false,"deliveryClass":"live","replayWindow":"1h"})");
  EXPECT_FALSE(effectiveReplay(none, defaults));
  EXPECT_EQ(effectiveClass(none, defaults), DeliveryClass::kLive);
  EXPECT_EQ(effectiveReplayWindowMs(none, defaults), 3'600'000);
  const ChannelConfig channel =
      *decodeChannelConfig(R"({"replay":true,"deliveryClass":"durable","replayWindow":"2d"})");
  EXPECT_TRUE(effectiveReplay(channel, defaults));
  EXPECT_EQ(effectiveClass(channel, defaults), DeliveryClass::kDurable);
  EXPECT_EQ(effectiveReplayWindowMs(channel, defaults), 172'800'000);
  EXPECT_EQ(*encodeChannelDefaults(defaults),
            R"({"replay":false,"replayWindow":"1h","deliveryClass":"live"})");
  EXPECT_EQ(kChannelDefaultsKey, "=defaults");
}

}  // namespace
}  // namespace shoal::wire
