#include "transport/creds_file.h"

#include <fstream>

#include <sys/stat.h>

#include "testing/temp_dir.h"
#include "transport/jwt.h"
#include "transport/nkey.h"

#include <gtest/gtest.h>

namespace shoal::transport {
namespace {

class CredsFileTest : public ::testing::Test {
 protected:
  std::string credsText(std::vector<std::string> subAllow, int64_t expiresAt = 2'000'000'000) {
    UserClaims c;
    c.name = "manager";
    c.userKey = user_.publicKey;
    c.accountKey = account_.publicKey;
    c.permissions.subscribe.allow = std::move(subAllow);
    c.expiresAt = expiresAt;
    auto token = encodeUserJwt(c, account_.seed, 1'800'000'000);
    EXPECT_TRUE(token.isOk()) << token.status().toString();
    return formatCreds(*token, user_.seed);
  }

  NKeyPair account_ = *generateNKey(NKeyRole::kAccount);
  NKeyPair user_ = *generateNKey(NKeyRole::kUser);
};

TEST_F(CredsFileTest, NamesTheUserTheExpiryAndTheInboxItsGrantsAllow) {
  auto info = parseCreds(credsText({"cotal.main.live.manager.*.*", "_INBOX_ibxmanager0001.>"}));
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_EQ(info->userKey, user_.publicKey);
  EXPECT_EQ(info->name, "manager");
  EXPECT_EQ(info->issuer, account_.publicKey);
  EXPECT_EQ(info->expiresAt, 2'000'000'000);
  EXPECT_EQ(info->inboxPrefix, "_INBOX_ibxmanager0001");
}

TEST_F(CredsFileTest, AnInboxWildcardOrNoInboxRowGivesNoPrefix) {
  EXPECT_EQ(parseCreds(credsText({"_INBOX.>"}))->inboxPrefix, "");
  EXPECT_EQ(parseCreds(credsText({"_INBOX_*.>"}))->inboxPrefix, "");
  EXPECT_EQ(parseCreds(credsText({"cotal.main.>"}))->inboxPrefix, "");
}

TEST_F(CredsFileTest, RefusesTextThatIsNotAUsersSignedJwt) {
  EXPECT_EQ(parseCreds("hello").status().reason(), "bad-creds");
  std::string text = credsText({});
  // One character of the claims changed: the signature no longer matches.
  const size_t dot = text.find('.');
  text[dot + 5] = text[dot + 5] == 'A' ? 'B' : 'A';
  EXPECT_EQ(parseCreds(text).status().reason(), "bad-creds");
  NKeyPair op = *generateNKey(NKeyRole::kOperator);
  auto accountJwt = encodeAccountJwt({"main", account_.publicKey, true, {}, {}}, op.seed, 1);
  ASSERT_TRUE(accountJwt.isOk());
  auto notUser = parseCreds(formatCreds(*accountJwt, user_.seed));
  EXPECT_EQ(notUser.status().reason(), "bad-creds");
  EXPECT_NE(notUser.status().message().find("account"), std::string::npos);
}

TEST_F(CredsFileTest, AFileOthersCanReadIsRefused) {
  auto dir = shoal::testing::TempDir::create("creds");
  ASSERT_TRUE(dir.isOk());
  const std::string path = dir->join("p.creds");
  std::ofstream(path) << credsText({"_INBOX_ibxplane000001.>"});
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  EXPECT_EQ(readCredsFile(FileSystem::posix(), path).status().reason(), "secret-exposed");
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  auto info = readCredsFile(FileSystem::posix(), path);
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_EQ(info->path, path);
  EXPECT_EQ(info->inboxPrefix, "_INBOX_ibxplane000001");
}

}  // namespace
}  // namespace shoal::transport
