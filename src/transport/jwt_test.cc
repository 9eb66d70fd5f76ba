#include "transport/jwt.h"

#include <boost/json.hpp>

#include "base/base64.h"
#include "transport/nkey.h"

#include <gtest/gtest.h>

namespace shoal::transport {
namespace {

namespace json = boost::json;

NKeyPair key(NKeyRole role) {
  auto k = generateNKey(role);
  EXPECT_TRUE(k.isOk());
  return *k;
}

class JwtTest : public ::testing::Test {
 protected:
  NKeyPair op_ = key(NKeyRole::kOperator);
  NKeyPair account_ = key(NKeyRole::kAccount);
  NKeyPair user_ = key(NKeyRole::kUser);
};

TEST_F(JwtTest, AUserJwtDecodesVerifiesAndCarriesItsGrants) {
  UserClaims c;
  c.name = "local.ada";
  c.userKey = user_.publicKey;
  c.accountKey = account_.publicKey;
  c.permissions.publish.allow = {"cotal.main.inst.*.*.local.ada"};
  c.permissions.responses = ResponsePermission{1, 5};
  c.expiresAt = 2'000'000'000;
  auto token = encodeUserJwt(c, account_.seed, 1'800'000'000);
  ASSERT_TRUE(token.isOk()) << token.status().toString();
  auto d = decodeJwt(*token);
  ASSERT_TRUE(d.isOk()) << d.status().toString();
  EXPECT_EQ(d->type, "user");
  EXPECT_EQ(d->issuer, account_.publicKey);
  EXPECT_EQ(d->subject, user_.publicKey);
  EXPECT_EQ(d->name, "local.ada");
  EXPECT_EQ(d->issuedAt, 1'800'000'000);
  EXPECT_EQ(d->expiresAt, 2'000'000'000);
  const json::object& nats = d->claims.at("nats").as_object();
  EXPECT_EQ(nats.at("pub").at("allow").as_array().size(), 1u);
  EXPECT_EQ(nats.at("sub").at("deny").as_array()[0], ">") << "an empty list denies everything";
  EXPECT_EQ(nats.at("resp").at("ttl").as_int64(), 5'000'000'000);
  EXPECT_FALSE(nats.contains("issuer_account")) << "signed by the account itself";
  EXPECT_EQ(nats.at("version").as_int64(), 2);
  EXPECT_EQ(d->claims.at("jti").as_string().size(), 52u) << "base32 of 32 bytes";
}

TEST_F(JwtTest, ASigningKeyNamesItsAccount) {
  NKeyPair signing = key(NKeyRole::kAccount);
  UserClaims c{"u", user_.publicKey, account_.publicKey, {}, 0};
  auto token = encodeUserJwt(c, signing.seed, 1);
  ASSERT_TRUE(token.isOk());
  auto d = decodeJwt(*token);
  ASSERT_TRUE(d.isOk());
  EXPECT_EQ(d->issuer, signing.publicKey);
  EXPECT_EQ(d->claims.at("nats").at("issuer_account").as_string(), account_.publicKey);
}

TEST_F(JwtTest, KeysOfTheWrongRoleAreRefused) {
  UserClaims u{"u", account_.publicKey, account_.publicKey, {}, 0};
  EXPECT_EQ(encodeUserJwt(u, account_.seed, 1).status().reason(), "bad-jwt-claims");
  u.userKey = user_.publicKey;
  EXPECT_EQ(encodeUserJwt(u, op_.seed, 1).status().reason(), "bad-jwt-claims")
      << "an operator does not sign users";
  AccountClaims a{"main", account_.publicKey, true, {}, {}};
  EXPECT_EQ(encodeAccountJwt(a, account_.seed, 1).status().reason(), "bad-jwt-claims");
  a.revocations["not-a-key"] = 1;
  EXPECT_EQ(encodeAccountJwt(a, op_.seed, 1).status().reason(), "bad-jwt-claims");
  OperatorClaims o{"shoal", op_.publicKey, account_.publicKey, {}};
  NKeyPair otherOp = key(NKeyRole::kOperator);
  EXPECT_EQ(encodeOperatorJwt(o, otherOp.seed, 1).status().reason(), "bad-jwt-claims")
      << "an operator JWT is self-signed";
  EXPECT_EQ(encodeUserJwt(u, "SUNOTASEED", 1).status().reason(), "bad-nkey-seed");
}

TEST_F(JwtTest, ATamperedTokenFailsVerification) {
  AccountClaims a{"main", account_.publicKey, true, {}, {{user_.publicKey, 1'800'000'000}}};
  auto token = encodeAccountJwt(a, op_.seed, 1'800'000'000);
  ASSERT_TRUE(token.isOk()) << token.status().toString();
  auto d = decodeJwt(*token);
  ASSERT_TRUE(d.isOk()) << d.status().toString();
  EXPECT_EQ(d->claims.at("nats").at("revocations").at(user_.publicKey).as_int64(), 1'800'000'000);
  EXPECT_EQ(d->claims.at("nats").at("limits").at("disk_storage").as_int64(), -1);

  // Re-sign the same claims with another operator's seed but keep the original issuer.
  const size_t a1 = token->find('.');
  const size_t b1 = token->rfind('.');
  std::string claims = *base64UrlDecode(token->substr(a1 + 1, b1 - a1 - 1));
  claims.replace(claims.find("\"main\""), 6, "\"evil\"");
  const std::string forged =
      token->substr(0, a1) + "." + base64UrlEncode(claims) + token->substr(b1);
  EXPECT_EQ(decodeJwt(forged).status().reason(), "bad-jwt");
  EXPECT_EQ(decodeJwt("a.b").status().reason(), "bad-jwt");
  EXPECT_EQ(decodeJwt("").status().reason(), "bad-jwt");
}

TEST_F(JwtTest, CredsHoldTheJwtAndTheSeedBetweenTheirMarkers) {
  const std::string creds = formatCreds("eyJhbGc.e30.c2ln", user_.seed);
  EXPECT_NE(creds.find("-----BEGIN NATS USER JWT-----\neyJhbGc.e30.c2ln\n------END NATS USER "
                       "JWT------"),
            std::string::npos);
  EXPECT_NE(creds.find("-----BEGIN USER NKEY SEED-----\n" + user_.seed +
                       "\n------END USER NKEY SEED------"),
            std::string::npos);
}

}  // namespace
}  // namespace shoal::transport
