#include "wire/token.h"

#include "wire/reasons.h"

#include <gtest/gtest.h>

namespace shoal::wire {
namespace {

// A routing token is one or more of [A-Za-z0-9_-], nothing else.
TEST(RoutingToken, AcceptsOnlyTheSanitizedAlphabet) {
  EXPECT_TRUE(isRoutingToken("main"));
  EXPECT_TRUE(isRoutingToken("team-backend_2"));
  EXPECT_FALSE(isRoutingToken(""));
  EXPECT_FALSE(isRoutingToken("a.b"));
  EXPECT_FALSE(isRoutingToken("a*"));
  EXPECT_FALSE(isRoutingToken(">"));
  EXPECT_FALSE(isRoutingToken("a b"));
  EXPECT_FALSE(isRoutingToken("caf\xc3\xa9"));
}

// sanitizeToken trims, maps every other character to `_`, and maps empty to `_`.
TEST(SanitizeToken, TrimsReplacesAndNeverReturnsEmpty) {
  EXPECT_EQ(sanitizeToken("main"), "main");
  EXPECT_EQ(sanitizeToken("  my space\t"), "my_space");
  EXPECT_EQ(sanitizeToken("a.b*c>d"), "a_b_c_d");
  EXPECT_EQ(sanitizeToken(""), "_");
  EXPECT_EQ(sanitizeToken(" \n "), "_");
  EXPECT_EQ(sanitizeToken("keep-dash_and_underscore"), "keep-dash_and_underscore");
}

// Non-ASCII characters become one `_` per UTF-16 code unit, as the reference's JavaScript does.
TEST(SanitizeToken, CountsReplacementsInUtf16CodeUnits) {
  EXPECT_EQ(sanitizeToken("caf\xc3\xa9"), "caf_");             // é: one code unit
  EXPECT_EQ(sanitizeToken("\xe6\x97\xa5\xe6\x9c\xac"), "__");  // 日本: two
  EXPECT_EQ(sanitizeToken("a\xf0\x9f\x98\x80z"), "a__z");      // emoji: a surrogate pair
  EXPECT_EQ(sanitizeToken("a\xff\xfe"), "a__");                // invalid bytes: one each
  EXPECT_EQ(sanitizeToken("\xc2\xa0x\xe3\x80\x80"), "x");      // NBSP, ideographic space trimmed
}

// Sanitizing is idempotent, so a sanitized name is stable when sanitized again.
TEST(SanitizeToken, IsIdempotent) {
  for (const char* raw : {"  a b ", "x.y", "\xf0\x9f\x98\x80", "", "ok"}) {
    const std::string once = sanitizeToken(raw);
    EXPECT_EQ(sanitizeToken(once), once) << raw;
    EXPECT_TRUE(isRoutingToken(once)) << raw;
  }
}

// utf16Length counts like JavaScript's String.length.
TEST(Utf16Length, MatchesJavaScriptLength) {
  EXPECT_EQ(utf16Length(""), 0u);
  EXPECT_EQ(utf16Length("abc"), 3u);
  EXPECT_EQ(utf16Length("caf\xc3\xa9"), 4u);
  EXPECT_EQ(utf16Length("\xf0\x9f\x98\x80"), 2u);
}

// isValidUtf8 refuses overlongs, surrogates, truncation and stray continuation bytes.
TEST(Utf8, RefusesMalformedSequences) {
  EXPECT_TRUE(isValidUtf8("plain"));
  EXPECT_TRUE(isValidUtf8("caf\xc3\xa9 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(isValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(isValidUtf8("\xed\xa0\x80"));      // U+D800
  EXPECT_FALSE(isValidUtf8("\xe6\x97"));          // truncated
  EXPECT_FALSE(isValidUtf8("\x80"));              // stray continuation
  EXPECT_FALSE(isValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
}

// Space, role and lifecycle-uid validators name the rule.
TEST(TokenValidators, NameTheRule) {
  EXPECT_TRUE(validateSpace("main").isOk());
  EXPECT_EQ(validateSpace("my space").reason(), reason::kBadToken);
  EXPECT_TRUE(validateRole("reviewer").isOk());
  EXPECT_EQ(validateRole("a.b").reason(), reason::kBadToken);
  EXPECT_TRUE(validateLifecycleUid("abcdefghijklmnopqrstuvwxyz").isOk());
  EXPECT_EQ(validateLifecycleUid("short").reason(), reason::kBadLifecycleUid);
  EXPECT_EQ(validateLifecycleUid("ABCDEFGHIJKLMNOPQRSTUVWXYZ").reason(), reason::kBadLifecycleUid);
}

}  // namespace
}  // namespace shoal::wire
