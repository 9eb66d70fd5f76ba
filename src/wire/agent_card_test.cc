#include "wire/agent_card.h"

#include <string>

#include "wire/reasons.h"

#include <gtest/gtest.h>

namespace shoal::wire {
namespace {

std::string card(std::string_view name, std::string_view extra = "") {
  return R"({"id":"local.alice","name":")" + std::string(name) + R"(","kind":"agent")" +
         std::string(extra) + "}";
}

std::string reasonOf(std::string_view json) {
  const Result<AgentCard> r = decodeAgentCard(json);
  return r.isOk() ? "ok" : std::string(r.status().reason());
}

// A full card decodes, keeps string meta only, and round-trips.
TEST(AgentCard, FullCardRoundTrips) {
  const Result<AgentCard> c = decodeAgentCard(
      R"({"id":"u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice","name":"alice","kind":"agent",)"
      R"("owner":"u_aaaaaaaaaaaaaaaaaaaaaaaaaa","actor":"alice","role":"reviewer",)"
      R"("description":"reviews code","tags":["cpp","review"],)"
      R"("skills":[{"id":"s1","name":"Review","description":"d"},{"id":"s2","name":"Test"}],)"
      R"("meta":{"model":"m","host":"h","n":3},"protocolVersion":"0.4","future":true})");
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ(c->kind, EndpointKind::kAgent);
  EXPECT_EQ(c->tags, (std::vector<std::string>{"cpp", "review"}));
  EXPECT_EQ(c->skills.size(), 2u);
  EXPECT_EQ(c->meta, (std::map<std::string, std::string>{{"host", "h"}, {"model", "m"}}));
  const Result<std::string> encoded = encodeAgentCard(*c);
  ASSERT_TRUE(encoded.isOk()) << encoded.status().toString();
  EXPECT_EQ(*decodeAgentCard(*encoded), *c);
}

// A 128-character name is accepted; 129 is refused, never truncated.
TEST(AgentCard, NameOver128CharactersIsRefused) {
  EXPECT_EQ(reasonOf(card(std::string(128, 'n'))), "ok");
  EXPECT_EQ(reasonOf(card(std::string(129, 'n'))), reason::kNameTooLong);
  AgentCard c = *decodeAgentCard(card("ok"));
  c.name = std::string(129, 'n');
  EXPECT_EQ(encodeAgentCard(c).status().reason(), reason::kNameTooLong);
  // Characters are UTF-16 code units: 64 emoji are 128 units, 65 are 130.
  std::string emoji;
  for (int i = 0; i < 64; ++i) {
    emoji += "\xf0\x9f\x98\x80";
  }
  EXPECT_EQ(reasonOf(card(emoji)), "ok");
  EXPECT_EQ(reasonOf(card(emoji + "\xf0\x9f\x98\x80")), reason::kNameTooLong);
}

// id, name and kind are required with their types; owner/actor must be id's halves.
TEST(AgentCard, RequiredFieldsAndConsistency) {
  EXPECT_EQ(reasonOf(R"({"name":"a","kind":"agent"})"), reason::kBadCardId);
  EXPECT_EQ(reasonOf(R"({"id":"alice","name":"a","kind":"agent"})"), reason::kBadPrincipal);
  EXPECT_EQ(reasonOf(R"({"id":"bogus.alice","name":"a","kind":"agent"})"),
            reason::kNotAPrincipalOwner);
  EXPECT_EQ(reasonOf(R"({"id":"local.alice","kind":"agent"})"), reason::kMissingName);
  EXPECT_EQ(reasonOf(R"({"id":"local.alice","name":7,"kind":"agent"})"), reason::kMissingName);
  EXPECT_EQ(reasonOf(R"({"id":"local.alice","name":"a"})"), reason::kBadCardKind);
  EXPECT_EQ(reasonOf(R"({"id":"local.alice","name":"a","kind":"robot"})"), reason::kBadCardKind);
  EXPECT_EQ(reasonOf(card("a", R"(,"owner":"u_aaaaaaaaaaaaaaaaaaaaaaaaaa")")),
            reason::kCardOwnerMismatch);
  EXPECT_EQ(reasonOf(card("a", R"(,"actor":"bob")")), reason::kCardOwnerMismatch);
  EXPECT_EQ(reasonOf(card("a", R"(,"tags":"x")")), reason::kBadCardField);
  EXPECT_EQ(reasonOf(card("a", R"(,"skills":[{"id":"x"}])")), reason::kBadCardField);
  EXPECT_EQ(reasonOf(card("a", R"(,"meta":[])")), reason::kBadCardField);
  EXPECT_EQ(reasonOf(card("a", R"(,"role":1)")), reason::kBadCardField);
  EXPECT_EQ(reasonOf("[]"), reason::kMalformedJson);
}

}  // namespace
}  // namespace shoal::wire
