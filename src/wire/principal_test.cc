#include "wire/principal.h"

#include <string>

#include "wire/reasons.h"
#include "wire/spec_vectors.h"

#include <gtest/gtest.h>

namespace shoal::wire {
namespace {

// Dot-form keys subjects, cards and presence; dash-form keys durable names.
TEST(Principal, HasDotAndDashForms) {
  const Principal p{std::string(spec::kOwnerA), "alice"};
  EXPECT_EQ(p.dotForm(), spec::kAlice);
  EXPECT_EQ(p.dashForm(), "u_aaaaaaaaaaaaaaaaaaaaaaaaaa-alice");
}

// The §12 sample principals parse into owner and actor.
TEST(Principal, SpecSamplesParse) {
  const Result<Principal> alice = parsePrincipal(spec::kAlice);
  ASSERT_TRUE(alice.isOk()) << alice.status().toString();
  EXPECT_EQ(alice->owner, spec::kOwnerA);
  EXPECT_EQ(alice->actor, "alice");
  const Result<Principal> bob = parsePrincipal(spec::kBob);
  ASSERT_TRUE(bob.isOk());
  EXPECT_EQ(bob->owner, spec::kOwnerB);
  EXPECT_EQ(bob->actor, "bob");
  EXPECT_TRUE(parsePrincipal("local.alice").isOk());
}

// An owner is `u_` + 26 base32-lower or exactly `local`; nothing else.
TEST(OwnerToken, IsDerivedFormOrLocal) {
  EXPECT_TRUE(isOwnerToken(spec::kOwnerA));
  EXPECT_TRUE(isOwnerToken("local"));
  EXPECT_TRUE(isOwnerToken("u_abcdefghijklmnopqrstuvwxyz"));
  EXPECT_TRUE(isOwnerToken("u_234567abcdefghijklmnopqrst"));
  EXPECT_FALSE(isOwnerToken("u_aaaaaaaaaaaaaaaaaaaaaaaaa"));    // 25
  EXPECT_FALSE(isOwnerToken("u_aaaaaaaaaaaaaaaaaaaaaaaaaaa"));  // 27
  EXPECT_FALSE(isOwnerToken("u_aaaaaaaaaaaaaaaaaaaaaaaaa1"));   // 1 is not base32
  EXPECT_FALSE(isOwnerToken("u_AAAAAAAAAAAAAAAAAAAAAAAAAA"));
  EXPECT_FALSE(isOwnerToken("Local"));
  EXPECT_FALSE(isOwnerToken("alice"));
  EXPECT_FALSE(isOwnerToken(""));
}

// An nkey (56 upper base32 starting with U) is recognised and refused with its own reason.
TEST(OwnerToken, NkeyShapedOwnerIsRefusedAsNkey) {
  EXPECT_TRUE(isNkeyShaped(spec::kNkeyOwner));
  EXPECT_FALSE(isNkeyShaped(spec::kOwnerA));
  EXPECT_FALSE(isNkeyShaped(std::string(spec::kNkeyOwner).substr(1)));
  EXPECT_FALSE(isRealOwner(spec::kNkeyOwner));
  EXPECT_EQ(checkRealOwner(spec::kNkeyOwner).reason(), reason::kNkeyOwner);
  EXPECT_EQ(checkRealOwner("bogus").reason(), reason::kNotAPrincipalOwner);
  EXPECT_TRUE(checkRealOwner("local").isOk());
}

// An actor is 1-64 of [A-Za-z0-9_]: `-` is reserved for the dash-form separator.
TEST(ActorToken, ReservesDashAndBoundsLength) {
  EXPECT_TRUE(isActorToken("alice"));
  EXPECT_TRUE(isActorToken("Code_Reviewer_2"));
  EXPECT_TRUE(isActorToken(std::string(64, 'a')));
  EXPECT_FALSE(isActorToken(std::string(65, 'a')));
  EXPECT_FALSE(isActorToken("code-reviewer"));
  EXPECT_FALSE(isActorToken("a.b"));
  EXPECT_FALSE(isActorToken(""));
  EXPECT_FALSE(isActorToken("*"));
}

// parsePrincipal names the failed rule.
TEST(Principal, ParseRefusalsNameTheRule) {
  EXPECT_EQ(parsePrincipal("alice").status().reason(), reason::kBadPrincipal);
  EXPECT_EQ(parsePrincipal("local.a.b").status().reason(), reason::kBadPrincipal);
  EXPECT_EQ(parsePrincipal("").status().reason(), reason::kBadPrincipal);
  EXPECT_EQ(parsePrincipal("bogus.alice").status().reason(), reason::kNotAPrincipalOwner);
  EXPECT_EQ(parsePrincipal(std::string(spec::kNkeyOwner) + ".team").status().reason(),
            reason::kNkeyOwner);
  EXPECT_EQ(parsePrincipal("local.al-ice").status().reason(), reason::kBadActorToken);
  EXPECT_EQ(parsePrincipal("local.").status().reason(), reason::kBadActorToken);
}

// A display name becomes an actor token: no dash, no dots, trimmed, at most 64, never empty.
TEST(ActorFromName, SanitizesToTheActorAlphabet) {
  EXPECT_EQ(actorFromName("alice"), "alice");
  EXPECT_EQ(actorFromName("Code Reviewer-2"), "Code_Reviewer_2");
  EXPECT_EQ(actorFromName("  bob@host.local "), "bob_host_local");
  EXPECT_EQ(actorFromName(""), "_");
  EXPECT_EQ(actorFromName("\xf0\x9f\x98\x80"), "__");
  EXPECT_EQ(actorFromName(std::string(100, 'x')).size(), kMaxActorLength);
  for (const char* name : {"Code Reviewer-2", "", "a.b.c", "\xe6\x97\xa5"}) {
    EXPECT_TRUE(isActorToken(actorFromName(name))) << name;
  }
}

}  // namespace
}  // namespace shoal::wire
