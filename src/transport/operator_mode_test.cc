// A real nats-server in operator mode (NATS decentralized JWT auth) trusting JWTs Shoal minted
// itself (transport/jwt.h): the broker admits a user whose chain verifies, enforces exactly the
// user JWT's grants (a denied publish is a permission violation), gives the account JetStream,
// and refuses an expired user, a user signed by a key its account does not hold, and a forged
// token (issue 19 item 1).
#include <atomic>
#include <fstream>

#include "base/clock.h"
#include "testing/eventually.h"
#include "testing/operator_fixture.h"
#include "transport/connection.h"
#include "transport/jetstream.h"
#include "transport/jwt.h"
#include "transport/nkey.h"

#include <gtest/gtest.h>

namespace shoal::transport {
namespace {

using shoal::testing::ConnectionEvents;
using std::chrono::seconds;

class OperatorModeTest : public shoal::testing::OperatorModeServerTest {};

TEST_F(OperatorModeTest, AMintedUserGetsExactlyItsGrants) {
  UserPermissions p;
  p.publish.allow = {"ok.>"};
  p.subscribe.allow = {"ok.>"};
  ConnectionEvents events;
  auto conn = connectWith(mintCreds("ada", p), &events);
  ASSERT_TRUE(conn.isOk()) << conn.status().toString() << "\n" << server_->logTail();
  std::atomic<int> got{0};
  auto sub = (*conn)->subscribe("ok.x", [&](Message) { ++got; });
  ASSERT_TRUE(sub.isOk());
  ASSERT_TRUE((*conn)->flush(seconds(5)).isOk());
  ASSERT_TRUE((*conn)->publish("ok.x", "allowed").isOk());
  EXPECT_TRUE(shoal::testing::eventually([&] { return got.load() == 1; }));

  ASSERT_TRUE((*conn)->publish("no.x", "denied").isOk()) << "the refusal is asynchronous";
  (void)(*conn)->flush(seconds(5));
  auto event = events.waitFor(ConnectionEventKind::kAsyncError);
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->status.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(event->subject, "no.x");
}

TEST_F(OperatorModeTest, TheAccountHasJetStream) {
  auto conn = connectWith(mintAllowAll("admin"));
  ASSERT_TRUE(conn.isOk()) << conn.status().toString();
  auto js = JetStream::create(**conn);
  ASSERT_TRUE(js.isOk()) << js.status().toString();
  StreamConfig config;
  config.name = "DM_main";
  config.subjects = {"cotal.main.inst.>"};
  ASSERT_TRUE(js->addStream(config).isOk());
  auto ack = js->publish("cotal.main.inst.a.b.c.d", "stored");
  ASSERT_TRUE(ack.isOk()) << ack.status().toString();
  EXPECT_EQ(ack->seq, 1u);
}

TEST_F(OperatorModeTest, ExpiredUnknownSignerAndForgedUsersAreRefused) {
  UserPermissions all;
  all.publish.allow = {">"};
  all.subscribe.allow = {">"};
  const int64_t now = nowSeconds();
  auto expired = connectWith(mintCreds("old", all, now - 60));
  ASSERT_FALSE(expired.isOk());
  EXPECT_EQ(expired.status().code(), StatusCode::kPermissionDenied) << expired.status().toString();

  // Signed by an account key this account does not list as a signing key.
  auto stranger = connectWith(mintCreds("stranger", all, 0, freshKey(NKeyRole::kAccount).seed));
  ASSERT_FALSE(stranger.isOk());
  EXPECT_EQ(stranger.status().code(), StatusCode::kPermissionDenied);

  // A user JWT presented with another user's seed: the nonce signature does not match.
  const std::string good = mintCreds("good", all);
  std::ifstream in(good);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  NKeyPair other = freshKey(NKeyRole::kUser);
  const size_t seedAt = text.find("SU");
  text.replace(seedAt, other.seed.size(), other.seed);
  std::ofstream(credsDir_->join("forged.creds")) << text;
  auto forged = connectWith(credsDir_->join("forged.creds"));
  ASSERT_FALSE(forged.isOk());
  EXPECT_EQ(forged.status().code(), StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace shoal::transport
