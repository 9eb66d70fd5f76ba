#include "supervisor/user_identity.h"

#include <sys/stat.h>

#include "testing/temp_dir.h"
#include "transport/nkey.h"
#include "wire/principal.h"

#include <gtest/gtest.h>

namespace shoal::supervisor {
namespace {

TEST(UserIdentity, TheOwnerTokenIsAValidAuthenticatedOwnerAndStable) {
  auto a = transport::generateNKey(transport::NKeyRole::kUser);
  auto b = transport::generateNKey(transport::NKeyRole::kUser);
  ASSERT_TRUE(a.isOk() && b.isOk());
  auto ta = ownerTokenOf(a->publicKey);
  ASSERT_TRUE(ta.isOk());
  EXPECT_EQ(ta->size(), 28u);
  EXPECT_EQ(ta->rfind("u_", 0), 0u);
  EXPECT_TRUE(wire::validatePrincipal(wire::Principal{*ta, "ada"}).isOk()) << *ta;
  EXPECT_EQ(*ownerTokenOf(a->publicKey), *ta) << "the same key, the same owner";
  EXPECT_NE(*ownerTokenOf(b->publicKey), *ta) << "two keys, two owners";
  EXPECT_EQ(ownerTokenOf("local").status().reason(), "bad-user-key");
  auto account = transport::generateNKey(transport::NKeyRole::kAccount);
  EXPECT_EQ(ownerTokenOf(account->publicKey).status().reason(), "bad-user-key");
}

TEST(UserIdentity, TheKeyIsMadeOnceInAnOwnerOnlyFile) {
  auto dir = shoal::testing::TempDir::create("identity");
  ASSERT_TRUE(dir.isOk());
  const std::string secrets = dir->join("secrets");
  auto first = ensureUserIdentity(secrets);
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  struct stat st {};
  ASSERT_EQ(::stat(first->seedFile.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = ensureUserIdentity(secrets);
  ASSERT_TRUE(again.isOk());
  EXPECT_EQ(again->owner, first->owner);
  ::chmod(first->seedFile.c_str(), 0640);
  EXPECT_EQ(ensureUserIdentity(secrets).status().reason(), "secret-exposed");
}

}  // namespace
}  // namespace shoal::supervisor
