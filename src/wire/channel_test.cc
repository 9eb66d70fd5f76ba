#include "wire/channel.h"

#include <string>

#include "wire/reasons.h"

#include <gtest/gtest.h>

namespace shoal::wire {
namespace {

// Concrete channels are dotted segments of [A-Za-z0-9_-]+.
TEST(ConcreteChannel, AcceptsDottedSegments) {
  for (const char* ch : {"team", "team.backend", "a-b.c_d.0", "x.y.z.w"}) {
    EXPECT_TRUE(validateConcreteChannel(ch).isOk()) << ch;
    EXPECT_TRUE(isConcreteChannel(ch)) << ch;
  }
}

// A 5,000-character channel is refused as too long; 4,096 is the last length accepted.
TEST(ConcreteChannel, RefusesOverLongChannel) {
  EXPECT_EQ(validateConcreteChannel(std::string(5000, 'a')).reason(), reason::kChannelTooLong);
  EXPECT_EQ(validateChannelPattern(std::string(5000, 'a')).reason(), reason::kChannelTooLong);
  EXPECT_TRUE(validateConcreteChannel(std::string(kMaxChannelLength, 'a')).isOk());
  EXPECT_EQ(validateConcreteChannel(std::string(kMaxChannelLength + 1, 'a')).reason(),
            reason::kChannelTooLong);
}

// A publish target may not hold a wildcard anywhere, `>` mid-channel included.
TEST(ConcreteChannel, RefusesWildcards) {
  EXPECT_EQ(validateConcreteChannel("team.*").reason(), reason::kChannelWildcardInPublish);
  EXPECT_EQ(validateConcreteChannel("team.>").reason(), reason::kChannelWildcardInPublish);
  EXPECT_EQ(validateConcreteChannel("team.>.backend").reason(), reason::kChannelWildcardInPublish);
  EXPECT_EQ(validateConcreteChannel(">").reason(), reason::kChannelWildcardInPublish);
}

// Empty segments and characters outside the alphabet are refused, not rewritten.
TEST(ConcreteChannel, RefusesEmptySegmentsAndBadCharacters) {
  EXPECT_EQ(validateConcreteChannel("").reason(), reason::kChannelEmptySegment);
  EXPECT_EQ(validateConcreteChannel(".team").reason(), reason::kChannelEmptySegment);
  EXPECT_EQ(validateConcreteChannel("team.").reason(), reason::kChannelEmptySegment);
  EXPECT_EQ(validateConcreteChannel("team..backend").reason(), reason::kChannelEmptySegment);
  EXPECT_EQ(validateConcreteChannel("team backend").reason(), reason::kChannelBadChar);
  EXPECT_EQ(validateConcreteChannel("team.a*").reason(), reason::kChannelBadChar);
  EXPECT_EQ(validateConcreteChannel("caf\xc3\xa9").reason(), reason::kChannelBadChar);
  EXPECT_EQ(validateConcreteChannel("a/b").reason(), reason::kChannelBadChar);
}

// Patterns allow `*` anywhere and `>` only as the last whole segment.
TEST(ChannelPattern, WildcardsOnlyAsWholeSegmentsGreaterThanLast) {
  for (const char* p : {"team.*", "team.>", "*", ">", "*.backend", "a.*.c.>"}) {
    EXPECT_TRUE(validateChannelPattern(p).isOk()) << p;
  }
  EXPECT_EQ(validateChannelPattern("team.>.backend").reason(), reason::kChannelWildcardNotLast);
  EXPECT_EQ(validateChannelPattern(">.x").reason(), reason::kChannelWildcardNotLast);
  EXPECT_EQ(validateChannelPattern("team.b*").reason(), reason::kChannelBadChar);
  EXPECT_EQ(validateChannelPattern("team..x").reason(), reason::kChannelEmptySegment);
}

// Every refusal message says where the problem is.
TEST(ConcreteChannel, RefusalMessageNamesTheSegment) {
  const Status s = validateConcreteChannel("team.b d");
  EXPECT_NE(s.message().find("segment 1"), std::string_view::npos) << s.toString();
}

// sanitizeChannel rewrites each segment and keeps whole-segment wildcards (`>` only last).
TEST(SanitizeChannel, SanitizesSegmentsAndKeepsValidWildcards) {
  EXPECT_EQ(sanitizeChannel("team.backend"), "team.backend");
  EXPECT_EQ(sanitizeChannel(" Team Alpha.back end "), "Team_Alpha.back_end");
  EXPECT_EQ(sanitizeChannel("team.*"), "team.*");
  EXPECT_EQ(sanitizeChannel("team.>"), "team.>");
  EXPECT_EQ(sanitizeChannel("team.>.x"), "team._.x");
  EXPECT_EQ(sanitizeChannel("a..b"), "a._.b");
  EXPECT_EQ(sanitizeChannel("a*b"), "a_b");
  EXPECT_EQ(sanitizeChannel(""), "_");
  EXPECT_TRUE(validateChannelPattern(sanitizeChannel("x.>.y.z*.>")).isOk());
}

// NATS matching: `*` is one segment, `>` one or more; `team.>` does not match bare `team`.
TEST(ChannelMatches, FollowsNatsSemantics) {
  EXPECT_TRUE(channelMatches("team.backend", "team.backend"));
  EXPECT_FALSE(channelMatches("team.backend", "team.frontend"));
  EXPECT_TRUE(channelMatches("team.*", "team.backend"));
  EXPECT_FALSE(channelMatches("team.*", "team.backend.api"));
  EXPECT_FALSE(channelMatches("team.*", "team"));
  EXPECT_TRUE(channelMatches("team.>", "team.backend"));
  EXPECT_TRUE(channelMatches("team.>", "team.backend.api"));
  EXPECT_FALSE(channelMatches("team.>", "team"));
  EXPECT_TRUE(channelMatches(">", "anything.at.all"));
  EXPECT_TRUE(channelMatches("*.backend", "team.backend"));
  EXPECT_FALSE(channelMatches("team", "team.backend"));
  EXPECT_FALSE(channelMatches("team.backend", "team"));
  EXPECT_TRUE(channelMatches("a.*.c.>", "a.b.c.d.e"));
  EXPECT_FALSE(channelMatches("a.*.c.>", "a.b.c"));
}

}  // namespace
}  // namespace shoal::wire
