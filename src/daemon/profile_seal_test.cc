#include "daemon/profile_seal.h"

#include <sys/stat.h>

#include "base/file_system.h"
#include "testing/temp_dir.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

const std::string kProfile =
    R"({"name":"a","id":"local.a","runtime":"exec","command":["/bin/cat"]})";

// A seal verifies only for the same key, space and bytes.
TEST(ProfileSealTest, VerifiesOnlyTheExactProfileSpaceAndKey) {
  ProfileSealer mine = ProfileSealer::withKeyForTest(std::string(64, '1'));
  ProfileSealer theirs = ProfileSealer::withKeyForTest(std::string(64, '2'));
  EXPECT_NE(mine.keyId(), theirs.keyId());
  ProfileSealValue seal = mine.seal("main", kProfile);
  EXPECT_EQ(seal.keyId, mine.keyId());
  EXPECT_EQ(seal.mac.size(), 64u);
  EXPECT_EQ(mine.verify("main", kProfile, &seal), SealVerdict::kSealed);
  EXPECT_EQ(mine.verify("main", kProfile, nullptr), SealVerdict::kUnsealed);
  EXPECT_EQ(theirs.verify("main", kProfile, &seal), SealVerdict::kForeign);
  EXPECT_EQ(mine.verify("other", kProfile, &seal), SealVerdict::kForged);
  std::string changed = kProfile;
  changed.replace(changed.find("cat"), 3, "dog");
  EXPECT_EQ(mine.verify("main", changed, &seal), SealVerdict::kForged);
  ProfileSealValue wrongMac = seal;
  wrongMac.mac[0] = wrongMac.mac[0] == '0' ? '1' : '0';
  EXPECT_EQ(mine.verify("main", kProfile, &wrongMac), SealVerdict::kForged);
}

// The key is made once, owner-only, and the same file gives the same key; a key file others
// can read is refused.
TEST(ProfileSealTest, KeyFileIsOwnerOnlyAndStable) {
  auto dir = testing::TempDir::create("seal");
  ASSERT_TRUE(dir.isOk());
  std::string path = dir->join("secrets/main-seats.key");
  auto first = ProfileSealer::open(path);
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(dir->join("secrets").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto again = ProfileSealer::open(path);
  ASSERT_TRUE(again.isOk());
  EXPECT_EQ(again->keyId(), first->keyId());
  EXPECT_EQ(again->seal("main", kProfile).mac, first->seal("main", kProfile).mac);

  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  auto exposed = ProfileSealer::open(path);
  ASSERT_FALSE(exposed.isOk());
  EXPECT_EQ(exposed.status().reason(), "secret-exposed");
}

}  // namespace
}  // namespace shoal::daemon
