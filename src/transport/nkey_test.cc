#include "transport/nkey.h"

#include "base/base64.h"

#include <gtest/gtest.h>

namespace shoal::transport {
namespace {

// A published nkeys test vector (seed, its public key, one nonce's signature).
constexpr std::string_view kSeed = "SUAMLK2ZNL35WSMW37E7UD4VZ7ELPKW7DHC3BWBSD2GCZ7IUQQXZIORRBU";
constexpr std::string_view kPublic = "UCK5N7N66OBOINFXAYC2ACJQYFSOD4VYNU6APEJTAVFZB2SVHLKGEW7L";

// The public key derived from a seed is the one the nkeys format defines for it.
TEST(NKeyTest, KnownSeedDerivesItsPublicKey) {
  auto pair = nkeyFromSeed(kSeed);
  ASSERT_TRUE(pair.isOk()) << pair.status().toString();
  EXPECT_EQ(pair->role, NKeyRole::kUser);
  EXPECT_EQ(pair->publicKey, kPublic);
  EXPECT_EQ(pair->seed, kSeed);
  EXPECT_TRUE(isNKeyPublic(kPublic, NKeyRole::kUser));
  EXPECT_FALSE(isNKeyPublic(kPublic, NKeyRole::kAccount));
}

// Signing a server nonce gives the vector's Ed25519 signature.
TEST(NKeyTest, SignatureOfANonceMatchesTheVector) {
  auto sig = nkeySign(kSeed, "PXoWU7zWAMt75FY");
  ASSERT_TRUE(sig.isOk()) << sig.status().toString();
  EXPECT_EQ(
      base64Encode(*sig),
      "ZaAiVDgB5CeYoXoQ7cBCmq+ZllzUnGUoDVb8C7PilWvCs8XKfUchAUhz2P4BYAF++Dg3w05CqyQFRDiGL6LrDw==");
}

// The vector's signature verifies under its public key, and nothing else does.
TEST(NKeyTest, VerifyAcceptsOnlyTheSignersSignatureOfTheSameBytes) {
  auto sig = nkeySign(kSeed, "PXoWU7zWAMt75FY");
  ASSERT_TRUE(sig.isOk());
  EXPECT_TRUE(nkeyVerify(kPublic, "PXoWU7zWAMt75FY", *sig));
  EXPECT_FALSE(nkeyVerify(kPublic, "PXoWU7zWAMt75FZ", *sig));
  auto other = generateNKey(NKeyRole::kUser);
  ASSERT_TRUE(other.isOk());
  EXPECT_FALSE(nkeyVerify(other->publicKey, "PXoWU7zWAMt75FY", *sig));
  std::string flipped = *sig;
  flipped[0] = static_cast<char>(flipped[0] ^ 1);
  EXPECT_FALSE(nkeyVerify(kPublic, "PXoWU7zWAMt75FY", flipped));
  EXPECT_FALSE(nkeyVerify("UNOTAKEY", "PXoWU7zWAMt75FY", *sig));
}

// A generated pair round-trips: its seed decodes to the same public key, of the asked role.
TEST(NKeyTest, GeneratedPairsRoundTripAndDiffer) {
  for (NKeyRole role : {NKeyRole::kUser, NKeyRole::kAccount, NKeyRole::kOperator}) {
    auto a = generateNKey(role);
    auto b = generateNKey(role);
    ASSERT_TRUE(a.isOk() && b.isOk());
    EXPECT_NE(a->seed, b->seed);
    auto back = nkeyFromSeed(a->seed + "\n");
    ASSERT_TRUE(back.isOk()) << back.status().toString();
    EXPECT_EQ(back->publicKey, a->publicKey);
    EXPECT_EQ(back->role, role);
    EXPECT_TRUE(isNKeyPublic(a->publicKey, role));
  }
  auto user = generateNKey(NKeyRole::kUser);
  ASSERT_TRUE(user.isOk());
  EXPECT_EQ(user->seed.substr(0, 2), "SU");
  EXPECT_EQ(user->seed.size(), 58u);
  EXPECT_EQ(user->publicKey.substr(0, 1), "U");
  EXPECT_EQ(user->publicKey.size(), 56u);
}

// A damaged seed (one character changed, truncated, a public key, noise) is refused by name.
TEST(NKeyTest, DamagedSeedsAreRefused) {
  std::string flipped(kSeed);
  flipped[10] = flipped[10] == 'A' ? 'B' : 'A';
  for (std::string_view bad : {std::string_view(flipped), kSeed.substr(0, 40), kPublic,
                               std::string_view("hello"), std::string_view("")}) {
    auto pair = nkeyFromSeed(bad);
    ASSERT_FALSE(pair.isOk()) << bad;
    EXPECT_EQ(pair.status().reason(), "bad-nkey-seed");
  }
  EXPECT_FALSE(isNKeyPublic(flipped, NKeyRole::kUser));
}

}  // namespace
}  // namespace shoal::transport
