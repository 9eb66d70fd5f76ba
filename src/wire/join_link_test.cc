// The join link's codec: what `shoal invite` prints parses back, and what is not an invite —
// plaintext, truncated, tampered — is refused without echoing its secret parts.
#include "wire/join_link.h"

#include <gtest/gtest.h>

namespace shoal::wire {
namespace {

JoinLink sample() {
  JoinLink l;
  l.host = "10.77.0.1";
  l.port = 4300;
  l.space = "main";
  l.owner = "u_aaaaaaaaaaaaaaaaaaaaaaaaaa";
  l.machine = "beta";
  l.inviteId = "0123456789abcdef0123456789abcdef";
  l.caFingerprint = std::string(64, 'a');
  l.jwt = "eyJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJzdWIiOiJVIn0.c2lnbmF0dXJl";
  l.seed = "SUAJCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  return l;
}

TEST(JoinLinkTest, AnInviteRoundTrips) {
  auto text = encodeJoinLink(sample());
  ASSERT_TRUE(text.isOk()) << text.status().toString();
  EXPECT_EQ(text->rfind("cotals://10.77.0.1:4300/main?owner=u_", 0), 0u) << *text;
  auto back = parseJoinLink("  " + *text + "\n");
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(*back, sample());

  JoinLink anyMachine = sample();
  anyMachine.machine.clear();
  anyMachine.host = "fd00::1";
  auto v6 = encodeJoinLink(anyMachine);
  ASSERT_TRUE(v6.isOk());
  EXPECT_NE(v6->find("[fd00::1]:4300"), std::string::npos);
  EXPECT_EQ(*parseJoinLink(*v6), anyMachine);
}

TEST(JoinLinkTest, APlaintextOrDamagedLinkIsRefused) {
  const std::string good = *encodeJoinLink(sample());
  std::string plain = good;
  plain.replace(0, 9, "cotal://");
  EXPECT_EQ(parseJoinLink(plain).status().reason(), "plaintext-link");
  for (const std::string& bad :
       {good.substr(0, good.size() - 40), good.substr(0, good.find("&jwt")),
        std::string("https://x/main?owner=u_a"), good + "&seed=SUAAAA",
        std::string(good).replace(good.find("owner=u_"), 8, "owner=lo"),
        std::string(good).replace(good.find(":4300"), 5, ":99999")}) {
    auto parsed = parseJoinLink(bad);
    ASSERT_FALSE(parsed.isOk()) << bad;
    EXPECT_EQ(parsed.status().reason(), "bad-join-link") << parsed.status().toString();
    EXPECT_EQ(parsed.status().message().find("SUAJ"), std::string::npos) << "never the seed";
  }
}

}  // namespace
}  // namespace shoal::wire
