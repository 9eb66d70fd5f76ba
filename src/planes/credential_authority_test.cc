// The space's credential authority against a real broker configured from it (issue 19 items 1
// and 4): keys made once in owner-only files, a minted agent admitted with exactly its grants,
// an expired one refused, and a revocation pushed to the running broker refusing the user.
#include "planes/credential_authority.h"

#include <filesystem>
#include <fstream>

#include <sys/stat.h>

#include "testing/nats_fixture.h"
#include "testing/temp_dir.h"
#include "transport/connection.h"

#include <gtest/gtest.h>

namespace shoal::planes {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

mode_t modeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

AgentScope adaScope() {
  AgentScope s;
  s.space = "main";
  s.principal = wire::Principal{"local", "ada"};
  s.lifecycleUid = "abcdefghijklmnopqrstuvwxyz";
  s.connId = "ibxauthoritytest00000000000000001";
  return s;
}

class CredentialAuthorityTest : public shoal::testing::NatsServerTest {
 protected:
  shoal::testing::TestNatsServerOptions serverOptions() override {
    auto dir = shoal::testing::TempDir::create("authority");
    EXPECT_TRUE(dir.isOk());
    dir_.emplace(std::move(dir).value());
    auto authority = CredentialAuthority::openOrCreate(FileSystem::posix(), dir_->join("keys"),
                                                       "main", Clock::real());
    EXPECT_TRUE(authority.isOk()) << authority.status().toString();
    authority_.emplace(std::move(authority).value());
    shoal::testing::TestNatsServerOptions options;
    options.extraConfig = authority_->serverConfig(dir_->join("resolver"));
    return options;
  }

  std::string write(const std::string& name, const std::string& creds) {
    const std::string path = dir_->join(name + ".creds");
    std::ofstream(path) << creds;
    ::chmod(path.c_str(), 0600);
    return path;
  }

  Result<std::unique_ptr<transport::Connection>> connectAs(const std::string& credsPath,
                                                           const std::string& inbox = "") {
    transport::ConnectOptions o = optionsForServer();
    o.credentialsFile = credsPath;
    o.allowReconnect = false;
    o.inboxPrefix = inbox;
    return transport::Connection::connect(o);
  }

  std::optional<shoal::testing::TempDir> dir_;
  std::optional<CredentialAuthority> authority_;
};

TEST_F(CredentialAuthorityTest, KeysAreMadeOnceInOwnerOnlyFiles) {
  const std::string keys = dir_->join("keys");
  EXPECT_EQ(modeOf(keys), 0700u);
  for (const char* f : {"operator.seed", "system.seed", "account.seed", "signing.seed"})
    EXPECT_EQ(modeOf(keys + "/" + f), 0600u) << f;
  auto again = CredentialAuthority::openOrCreate(FileSystem::posix(), keys, "main", Clock::real());
  ASSERT_TRUE(again.isOk());
  EXPECT_EQ(again->accountKey(), authority_->accountKey());
  EXPECT_EQ(again->systemKey(), authority_->systemKey());

  ::chmod((keys + "/account.seed").c_str(), 0644);
  auto exposed =
      CredentialAuthority::openOrCreate(FileSystem::posix(), keys, "main", Clock::real());
  EXPECT_EQ(exposed.status().reason(), "secret-exposed");
}

TEST_F(CredentialAuthorityTest, AMintedAgentIsAdmittedWithItsGrantsAndExpires) {
  auto rows = agentGrants(adaScope());
  ASSERT_TRUE(rows.isOk());
  auto minted = authority_->mint("local.ada", *rows, hours(24));
  ASSERT_TRUE(minted.isOk()) << minted.status().toString();
  auto conn = connectAs(write("ada", minted->creds), "_INBOX_" + adaScope().connId);
  ASSERT_TRUE(conn.isOk()) << conn.status().toString() << "\n" << server_->logTail();
  ASSERT_TRUE((*conn)->publish("cotal.main.inst.local.bob.local.ada", "hi").isOk());
  ASSERT_TRUE((*conn)->flush(seconds(5)).isOk());
  EXPECT_EQ((*conn)->stats().permissionViolations, 0u);

  // Minted by the same keys an hour and a day ago: expired.
  FakeClock past(Clock::real().wallMs() - 25LL * 3600 * 1000);
  auto old =
      CredentialAuthority::openOrCreate(FileSystem::posix(), dir_->join("keys"), "main", past);
  ASSERT_TRUE(old.isOk());
  auto stale = old->mint("local.ada", *rows, hours(24));
  ASSERT_TRUE(stale.isOk());
  auto refused = connectAs(write("stale", stale->creds));
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied) << refused.status().toString();
}

TEST_F(CredentialAuthorityTest, ARevocationPushedToTheBrokerRefusesTheUser) {
  auto rows = agentGrants(adaScope());
  ASSERT_TRUE(rows.isOk());
  auto minted = authority_->mint("local.ada", *rows, hours(24));
  ASSERT_TRUE(minted.isOk());
  const std::string creds = write("ada", minted->creds);
  ASSERT_TRUE(connectAs(creds).isOk()) << "admitted before the revocation";

  ASSERT_TRUE(authority_->revoke(minted->userKey).isOk());
  auto sys = authority_->mintSystemUser("ibxclaims0000000000000000000001", std::chrono::minutes(5));
  ASSERT_TRUE(sys.isOk()) << sys.status().toString();
  auto admin = connectAs(write("sys", sys->creds), "_INBOX_ibxclaims0000000000000000000001");
  ASSERT_TRUE(admin.isOk()) << admin.status().toString() << "\n" << server_->logTail();
  auto pushed = (*admin)->request("$SYS.REQ.CLAIMS.UPDATE", authority_->accountJwt(), seconds(5));
  ASSERT_TRUE(pushed.isOk()) << pushed.status().toString();
  EXPECT_NE(pushed->data.find("\"code\":200"), std::string::npos) << pushed->data;

  auto refused = connectAs(creds);
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied) << refused.status().toString();
  // The revocation is kept: a reopened authority still signs it into the account.
  auto reopened = CredentialAuthority::openOrCreate(FileSystem::posix(), dir_->join("keys"), "main",
                                                    Clock::real());
  ASSERT_TRUE(reopened.isOk());
  EXPECT_EQ(reopened->revocations().count(minted->userKey), 1u);
}

}  // namespace
}  // namespace shoal::planes
