#include "base/ids.h"

#include <regex>
#include <set>

#include <gtest/gtest.h>

namespace shoal {
namespace {

// A UUIDv7 has version 7, variant 10, and carries the clock's millisecond timestamp.
TEST(Ids, UuidV7HasVersionVariantAndTimestamp) {
  FakeClock clock(1'710'000'000'123);
  auto id = newUuidV7(clock);
  ASSERT_TRUE(id.isOk());
  EXPECT_TRUE(isUuidV7(*id)) << *id;
  EXPECT_EQ(uuidV7TimestampMs(*id), 1'710'000'000'123);
}

// Ids minted in one process are strictly increasing, even within one millisecond.
TEST(Ids, UuidV7IsStrictlyIncreasingWithinOneMillisecond) {
  FakeClock clock(1'800'000'000'000);
  std::string prev;
  for (int i = 0; i < 10000; ++i) {
    auto id = newUuidV7(clock);
    ASSERT_TRUE(id.isOk());
    ASSERT_TRUE(isUuidV7(*id)) << *id;
    if (!prev.empty()) {
      ASSERT_LT(prev, *id);
    }
    prev = *id;
  }
}

// A clock that goes backwards does not make ids go backwards.
TEST(Ids, UuidV7SurvivesClockGoingBack) {
  FakeClock clock(1'900'000'000'000);
  auto a = newUuidV7(clock);
  clock.setWallMs(1'899'999'000'000);
  auto b = newUuidV7(clock);
  ASSERT_TRUE(a.isOk() && b.isOk());
  EXPECT_LT(*a, *b);
}

// Lifecycle uids match [a-z0-9]{26,32} and do not repeat.
TEST(Ids, LifecycleUidMatchesGrammarAndIsUnique) {
  std::regex grammar("^[a-z0-9]{26,32}$");
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    auto uid = newLifecycleUid();
    ASSERT_TRUE(uid.isOk());
    EXPECT_TRUE(std::regex_match(*uid, grammar)) << *uid;
    EXPECT_TRUE(isLifecycleUid(*uid));
    EXPECT_TRUE(seen.insert(*uid).second) << "repeated uid " << *uid;
  }
}

// The validators refuse what the grammar refuses.
TEST(Ids, ValidatorsRefuseNearMisses) {
  EXPECT_FALSE(isLifecycleUid("abc"));
  EXPECT_FALSE(isLifecycleUid("ABCDEFGHIJKLMNOPQRSTUVWXYZ"));
  EXPECT_FALSE(isLifecycleUid(std::string(33, 'a')));
  EXPECT_TRUE(isLifecycleUid(std::string(32, 'a')));
  EXPECT_FALSE(isUuidV7("018f1d0a-0000-4000-9000-000000000001"));  // version 4
  EXPECT_FALSE(isUuidV7("018f1d0a-0000-7000-c000-000000000001"));  // variant 110
  EXPECT_TRUE(isUuidV7("018f1d0a-0000-7000-9000-000000000001"));
}

// Hex tokens have the asked length and differ.
TEST(Ids, HexTokensAreRandom) {
  auto a = newHexToken(16);
  auto b = newHexToken(16);
  ASSERT_TRUE(a.isOk() && b.isOk());
  EXPECT_EQ(a->size(), 32u);
  EXPECT_NE(*a, *b);
}

}  // namespace
}  // namespace shoal
