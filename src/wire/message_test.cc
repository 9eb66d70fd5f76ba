#include "wire/message.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "wire/message_limits.h"
#include "wire/reasons.h"
#include "wire/spec_vectors.h"

#include <gtest/gtest.h>

namespace shoal::wire {
namespace {

std::string reasonOf(std::string_view json) {
  const Result<CotalMessage> r = decodeMessage(json);
  return r.isOk() ? "ok" : std::string(r.status().reason());
}

// A minimal valid DM with `extra` spliced in as further members (e.g. `,"x":1`).
std::string dm(std::string_view extra = "",
               std::string_view parts = R"([{"kind":"text","text":"hi"}])") {
  return R"({"id":"m1","ts":1,"space":"main","from":{"id":"local.alice","name":"alice"},)"
         R"("to":"local.bob","parts":)" +
         std::string(parts) + std::string(extra) + "}";
}

// A minimal valid DM whose single part is `part`.
std::string withPart(std::string_view part) {
  return dm("", "[" + std::string(part) + "]");
}

CotalMessage decoded(std::string_view json) {
  Result<CotalMessage> r = decodeMessage(json);
  EXPECT_TRUE(r.isOk()) << r.status().toString() << " for " << json;
  return r.isOk() ? *std::move(r) : CotalMessage{};
}

void expectRoundTrip(const CotalMessage& m) {
  const Result<std::string> encoded = encodeMessage(m);
  ASSERT_TRUE(encoded.isOk()) << encoded.status().toString();
  const Result<CotalMessage> again = decodeMessage(*encoded);
  ASSERT_TRUE(again.isOk()) << again.status().toString() << " for " << *encoded;
  EXPECT_EQ(*again, m) << *encoded;
}

// The §12 multicast sample decodes into exactly its fields.
TEST(SpecMessage, MulticastSampleDecodes) {
  const CotalMessage m = decoded(spec::kMulticast);
  EXPECT_EQ(m.id, "018f1d0a-0000-7000-9000-000000000001");
  EXPECT_EQ(m.ts, 1710000000000.0);
  EXPECT_EQ(m.space, "main");
  EXPECT_EQ(m.from.id, spec::kAlice);
  EXPECT_EQ(m.from.name, "alice");
  EXPECT_EQ(m.from.role, "planner");
  EXPECT_EQ(m.routing, (Routing{RoutingField::kChannel, "team.backend"}));
  EXPECT_EQ(m.mentions, std::vector<std::string>{"bob"});
  ASSERT_EQ(m.parts.size(), 1u);
  EXPECT_EQ(std::get<TextPart>(m.parts[0]).text, "Can you review this?");
  EXPECT_EQ(m.contextId, "ctx-1");
  EXPECT_FALSE(m.replyTo.has_value());
  EXPECT_TRUE(m.unknown.empty());
}

// The §12 unicast sample decodes into exactly its fields.
TEST(SpecMessage, UnicastSampleDecodes) {
  const CotalMessage m = decoded(spec::kUnicast);
  EXPECT_EQ(m.id, "018f1d0a-0000-7000-9000-000000000002");
  EXPECT_EQ(m.ts, 1710000001000.0);
  EXPECT_EQ(m.from.id, spec::kAlice);
  EXPECT_FALSE(m.from.role.has_value());
  EXPECT_EQ(m.routing, (Routing{RoutingField::kTo, std::string(spec::kBob)}));
  EXPECT_TRUE(m.mentions.empty());
  ASSERT_EQ(m.parts.size(), 1u);
  EXPECT_EQ(std::get<TextPart>(m.parts[0]).text, "Direct note.");
}

// Both samples validate against the subjects they are published on.
TEST(SpecMessage, SamplesMatchTheirSubjects) {
  const Result<ParsedSubject> chat = parseSubject(spec::kChatSubject);
  ASSERT_TRUE(chat.isOk());
  EXPECT_EQ(*checkAgainstSubject(decoded(spec::kMulticast), *chat), DeliveryKind::kChannel);
  const Result<ParsedSubject> inst = parseSubject(spec::kInstSubject);
  ASSERT_TRUE(inst.isOk());
  EXPECT_EQ(*checkAgainstSubject(decoded(spec::kUnicast), *inst), DeliveryKind::kDm);
}

// Re-encoding a §12 sample gives back its exact bytes (golden bytes), and decode(encode(m))==m.
TEST(SpecMessage, SamplesRoundTripByteForByte) {
  for (std::string_view sample : {spec::kMulticast, spec::kUnicast}) {
    const CotalMessage m = decoded(sample);
    const Result<std::string> encoded = encodeMessage(m);
    ASSERT_TRUE(encoded.isOk()) << encoded.status().toString();
    EXPECT_EQ(*encoded, sample);
    expectRoundTrip(m);
  }
}

// Malformed JSON, invalid UTF-8 and non-object documents are `malformed-json`, never a crash.
TEST(DecodeMessage, MalformedJsonIsNamed) {
  for (std::string_view bad :
       {"", "{", "not json", "[]", "\"str\"", "42", "null", "{\"id\":\"a\",}", "{'id':1}",
        "{\"id\":\"a\"} trailing", "{\"id\":\"\xff\"}", "{\"id\":\"\\ud800\"}",
        "/* c */ {\"id\":\"a\"}"}) {
    EXPECT_EQ(reasonOf(bad), reason::kMalformedJson) << bad;
  }
  EXPECT_EQ(reasonOf(std::string(100, '[') + std::string(100, ']')), reason::kMalformedJson);
}

// `id` must be present and a string; the empty string is legal.
TEST(DecodeMessage, IdMustBeAString) {
  EXPECT_EQ(
      reasonOf(
          R"({"ts":1,"space":"main","from":{"id":"local.a","name":"a"},"to":"local.b","parts":[]})"),
      reason::kMissingId);
  EXPECT_EQ(
      reasonOf(
          R"({"id":7,"ts":1,"space":"main","from":{"id":"local.a","name":"a"},"to":"local.b","parts":[]})"),
      reason::kMissingId);
}

// An id is "" (legal, never a dedup key: Cotal §4) or 1..256 bytes of printable ASCII
// (message_limits.h): what a receiving seat's journal can hold. Anything else is refused by the
// parser and by the encoder alike, so no valid message is a poison one.
TEST(DecodeMessage, IdsAreWhatAJournalCanHold) {
  auto withId = [](const std::string& id) {
    return R"({"id":")" + id +
           R"(","ts":1,"space":"main","from":{"id":"local.a","name":"a"},"to":"local.b","parts":[]})";
  };
  EXPECT_EQ(decoded(withId("")).id, "");
  for (const std::string& bad : {std::string(257, 'a'), std::string("a\\nb"),
                                 std::string("caf\u00e9"), std::string("tab\\t")}) {
    EXPECT_EQ(reasonOf(withId(bad)), reason::kBadMessageId) << bad;
  }
  const CotalMessage longest = decoded(withId(std::string(256, 'z')));
  EXPECT_EQ(longest.id.size(), 256u);
  expectRoundTrip(longest);
  CotalMessage m = longest;
  m.id = "line\nbreak";
  EXPECT_EQ(encodeMessage(m).status().reason(), reason::kBadMessageId);
}

// A message's JSON is at most 240 KiB, on the way in and on the way out.
TEST(DecodeMessage, AMessageLargerThanAJournalRecordIsRefusedBothWays) {
  const std::string big(kMaxMessageBytes, 'x');
  EXPECT_EQ(reasonOf(dm("", R"([{"kind":"text","text":")" + big + R"("}])")),
            reason::kMessageTooLarge);
  CotalMessage m = decoded(dm());
  m.parts = {TextPart{big, {}}};
  auto encoded = encodeMessage(m);
  ASSERT_FALSE(encoded.isOk());
  EXPECT_EQ(encoded.status().reason(), reason::kMessageTooLarge);
  EXPECT_NE(encoded.status().message().find("240 KiB"), std::string_view::npos);
  m.parts = {TextPart{std::string(kMaxMessageBytes - 1024, 'x'), {}}};
  EXPECT_TRUE(encodeMessage(m).isOk());
}

// Two routing fields are refused; so are none, and a non-string one.
TEST(DecodeMessage, ExactlyOneRoutingField) {
  EXPECT_EQ(reasonOf(dm(R"(,"channel":"team")")), reason::kMultipleRoutingFields);
  EXPECT_EQ(reasonOf(dm(R"(,"toService":"reviewer")")), reason::kMultipleRoutingFields);
  EXPECT_EQ(
      reasonOf(R"({"id":"m","ts":1,"space":"s","from":{"id":"local.a","name":"a"},"parts":[]})"),
      reason::kNoRoutingField);
  EXPECT_EQ(
      reasonOf(
          R"({"id":"m","ts":1,"space":"s","from":{"id":"local.a","name":"a"},"to":5,"parts":[]})"),
      reason::kBadRoutingField);
  EXPECT_EQ(
      reasonOf(
          R"({"id":"m","ts":1,"space":"s","from":{"id":"local.a","name":"a"},"toService":"a.b","parts":[]})"),
      reason::kBadRoutingField);
}

// The channel routing field must be a concrete channel: a 5,000-char one or `>` mid-channel is
// refused with the channel rule's name; `to` must be a principal.
TEST(DecodeMessage, RoutingTargetGrammarIsChecked) {
  const auto chan = [](std::string_view channel) {
    return R"({"id":"m","ts":1,"space":"s","from":{"id":"local.a","name":"a"},"channel":")" +
           std::string(channel) + R"(","parts":[]})";
  };
  EXPECT_EQ(reasonOf(chan(std::string(5000, 'c'))), reason::kChannelTooLong);
  EXPECT_EQ(reasonOf(chan("team.>.backend")), reason::kChannelWildcardInPublish);
  EXPECT_EQ(reasonOf(chan("team.*")), reason::kChannelWildcardInPublish);
  EXPECT_EQ(reasonOf(chan("team..x")), reason::kChannelEmptySegment);
  EXPECT_EQ(reasonOf(chan("team.backend")), "ok");
  const auto to = [](std::string_view target) {
    return R"({"id":"m","ts":1,"space":"s","from":{"id":"local.a","name":"a"},"to":")" +
           std::string(target) + R"(","parts":[]})";
  };
  EXPECT_EQ(reasonOf(to("bob")), reason::kBadPrincipal);
  EXPECT_EQ(reasonOf(to("bogus.bob")), reason::kNotAPrincipalOwner);
}

// `ts` must be a finite number: 1e999 overflows to infinity and is refused.
TEST(DecodeMessage, TsMustBeFinite) {
  const auto ts = [](std::string_view v) {
    return R"({"id":"m","ts":)" + std::string(v) +
           R"(,"space":"s","from":{"id":"local.a","name":"a"},"to":"local.b","parts":[]})";
  };
  EXPECT_EQ(reasonOf(ts("1e999")), reason::kBadTs);
  EXPECT_EQ(reasonOf(ts("-1e999")), reason::kBadTs);
  EXPECT_EQ(reasonOf(ts("\"1710000000000\"")), reason::kBadTs);
  EXPECT_EQ(reasonOf(ts("null")), reason::kBadTs);
  EXPECT_EQ(
      reasonOf(
          R"({"id":"m","space":"s","from":{"id":"local.a","name":"a"},"to":"local.b","parts":[]})"),
      reason::kBadTs);
  EXPECT_EQ(decoded(ts("1710000000000.5")).ts, 1710000000000.5);
  EXPECT_EQ(decoded(ts("1.71e12")).ts, 1710000000000.0);
  EXPECT_EQ(decoded(ts("18446744073709551615")).ts, 18446744073709551615.0);
}

// A non-integral ts survives encode/decode exactly; an integral one is written as an integer.
TEST(EncodeMessage, TsKeepsItsExactValue) {
  CotalMessage m = decoded(spec::kUnicast);
  for (double ts : {0.1, 1710000000000.25, -5.0, 1e300, 123456789.123456789, 9007199254740993.0,
                    2.2250738585072014e-308}) {
    m.ts = ts;
    expectRoundTrip(m);
  }
  m.ts = 1710000000000;
  EXPECT_NE(encodeMessage(m)->find(R"("ts":1710000000000,)"), std::string::npos);
  m.ts = std::numeric_limits<double>::infinity();
  EXPECT_EQ(encodeMessage(m).status().reason(), reason::kBadTs);
  m.ts = std::nan("");
  EXPECT_EQ(encodeMessage(m).status().reason(), reason::kBadTs);
}

// `from` must be an object with string id and name; role, when present, is a string.
TEST(DecodeMessage, FromNeedsIdAndName) {
  const auto from = [](std::string_view v) {
    return R"({"id":"m","ts":1,"space":"s",)" + std::string(v) + R"("to":"local.b","parts":[]})";
  };
  EXPECT_EQ(reasonOf(from("")), reason::kMissingFrom);
  EXPECT_EQ(reasonOf(from(R"("from":"local.a",)")), reason::kMissingFrom);
  EXPECT_EQ(reasonOf(from(R"("from":{"name":"a"},)")), reason::kMissingFrom);
  EXPECT_EQ(reasonOf(from(R"("from":{"id":"local.a"},)")), reason::kMissingFrom);
  EXPECT_EQ(reasonOf(from(R"("from":{"id":"local.a","name":1},)")), reason::kMissingFrom);
  EXPECT_EQ(reasonOf(from(R"("from":{"id":"local.a","name":"a","role":3},)")), reason::kBadFrom);
}

// `space` must be present and a string.
TEST(DecodeMessage, SpaceMustBeAString) {
  EXPECT_EQ(
      reasonOf(R"({"id":"m","ts":1,"from":{"id":"local.a","name":"a"},"to":"local.b","parts":[]})"),
      reason::kMissingSpace);
  EXPECT_EQ(
      reasonOf(
          R"({"id":"m","ts":1,"space":[],"from":{"id":"local.a","name":"a"},"to":"local.b","parts":[]})"),
      reason::kMissingSpace);
}

// `parts` must be an array; each part must satisfy its kind's rule.
TEST(DecodeMessage, PartsMustBeAnArrayOfValidParts) {
  EXPECT_EQ(reasonOf(dm("", "{}")), reason::kBadParts);
  EXPECT_EQ(
      reasonOf(
          R"({"id":"m","ts":1,"space":"s","from":{"id":"local.a","name":"a"},"to":"local.b"})"),
      reason::kBadParts);
  EXPECT_EQ(reasonOf(dm("", "[]")), "ok");  // the schema has no minItems
  EXPECT_EQ(reasonOf(withPart("7")), reason::kBadPart);
  EXPECT_EQ(reasonOf(withPart(R"({"text":"no kind"})")), reason::kBadPart);
  EXPECT_EQ(reasonOf(withPart(R"({"kind":"text"})")), reason::kBadPart);
  EXPECT_EQ(reasonOf(withPart(R"({"kind":"text","text":5})")), reason::kBadPart);
  EXPECT_EQ(reasonOf(withPart(R"({"kind":"data"})")), reason::kBadPart);
  EXPECT_EQ(reasonOf(withPart(R"({"kind":"data","data":null})")), "ok");
}

// A bad part's message names its index and the rule it broke.
TEST(DecodeMessage, BadPartMessageNamesIndexAndRule) {
  const Status s =
      decodeMessage(dm("", R"([{"kind":"text","text":"ok"},{"kind":"artifact"}])")).status();
  EXPECT_EQ(s.reason(), reason::kBadPart);
  EXPECT_NE(s.message().find("parts[1]"), std::string_view::npos) << s.toString();
  EXPECT_NE(s.message().find("name"), std::string_view::npos) << s.toString();
}

// An artifact needs name, mediaType, a sha256 digest and a non-negative integer size.
TEST(DecodeMessage, ArtifactDigestAndSizeAreChecked) {
  const std::string digest = "sha256:" + std::string(64, 'a');
  const auto artifact = [&](std::string_view d, std::string_view size) {
    return withPart(R"({"kind":"artifact","name":"log.txt","mediaType":"text/plain","digest":")" +
                    std::string(d) + R"(","size":)" + std::string(size) + "}");
  };
  EXPECT_EQ(reasonOf(artifact(digest, "12")), "ok");
  EXPECT_EQ(reasonOf(artifact(digest, "0")), "ok");
  EXPECT_EQ(reasonOf(artifact(digest, "12.0")), "ok");
  EXPECT_EQ(reasonOf(artifact("sha256:" + std::string(64, 'A'), "1")), reason::kBadPart);
  EXPECT_EQ(reasonOf(artifact("sha256:" + std::string(63, 'a'), "1")), reason::kBadPart);
  EXPECT_EQ(reasonOf(artifact("sha1:" + std::string(64, 'a'), "1")), reason::kBadPart);
  EXPECT_EQ(reasonOf(artifact("sha256:" + std::string(63, 'a') + "g", "1")), reason::kBadPart);
  EXPECT_EQ(reasonOf(artifact(digest, "-1")), reason::kBadPart);
  EXPECT_EQ(reasonOf(artifact(digest, "1.5")), reason::kBadPart);
  EXPECT_EQ(reasonOf(artifact(digest, "\"12\"")), reason::kBadPart);
  EXPECT_EQ(reasonOf(artifact(digest, "9007199254740992")), reason::kBadPart);
  const CotalMessage m = decoded(artifact(digest, "9007199254740991"));
  const auto& a = std::get<ArtifactPart>(m.parts[0]);
  EXPECT_EQ(a.size, 9007199254740991u);
  EXPECT_EQ(a.digest, digest);
  expectRoundTrip(m);
}

// Reverse-DNS kinds are extensions kept whole; a bare unknown kind is refused.
TEST(DecodeMessage, ExtensionKindsAreReverseDnsOnly) {
  const CotalMessage m =
      decoded(withPart(R"({"kind":"ai.cotal.tool-call","name":"grep","args":{"q":[1,2.5]}})"));
  const auto& ext = std::get<ExtensionPart>(m.parts[0]);
  EXPECT_EQ(ext.kind, "ai.cotal.tool-call");
  EXPECT_EQ(ext.json, R"({"kind":"ai.cotal.tool-call","name":"grep","args":{"q":[1,2.5E0]}})");
  expectRoundTrip(m);
  EXPECT_EQ(reasonOf(withPart(R"({"kind":"com.example.x-1"})")), "ok");
  EXPECT_EQ(reasonOf(withPart(R"({"kind":"image","url":"x"})")), reason::kUnknownPartKind);
  EXPECT_EQ(reasonOf(withPart(R"({"kind":"Text","text":"x"})")), reason::kUnknownPartKind);
  EXPECT_EQ(reasonOf(withPart(R"({"kind":"a..b"})")), reason::kUnknownPartKind);
  EXPECT_EQ(reasonOf(withPart(R"({"kind":".a.b"})")), reason::kUnknownPartKind);
  EXPECT_EQ(reasonOf(withPart(R"({"kind":"a.b."})")), reason::kUnknownPartKind);
  EXPECT_EQ(reasonOf(withPart(R"({"kind":"a.b_c"})")), reason::kUnknownPartKind);
  EXPECT_EQ(reasonOf(withPart(R"({"kind":""})")), reason::kUnknownPartKind);
}

// A data part carries any nested JSON and round-trips it exactly.
TEST(DecodeMessage, DataPartWithNestedJsonRoundTrips) {
  const CotalMessage m = decoded(withPart(
      R"({"kind":"data","data":{"a":[1,-2,3.25,true,null,{"b":"\u00e9\n"}],"big":18446744073709551615,"neg":-9223372036854775808,"e":1e-7}})"));
  const auto& data = std::get<DataPart>(m.parts[0]);
  EXPECT_EQ(data.json,
            "{\"a\":[1,-2,3.25E0,true,null,{\"b\":\"\xc3\xa9\\n\"}],\"big\":18446744073709551615,"
            "\"neg\":-9223372036854775808,\"e\":1E-7}");
  expectRoundTrip(m);
}

// A non-finite number anywhere in a data part is refused, naming its path.
TEST(DecodeMessage, NonFiniteNumberInDataIsRefusedWithItsPath) {
  const Status s = decodeMessage(withPart(R"({"kind":"data","data":{"x":[0,1e999]}})")).status();
  EXPECT_EQ(s.reason(), reason::kBadPart);
  EXPECT_NE(s.message().find("parts[0].data.x[1]"), std::string_view::npos) << s.toString();
  EXPECT_EQ(reasonOf(dm(R"(,"extra":{"n":-1e400})")), reason::kNonFiniteNumber);
}

// Unknown fields are ignored by readers but kept, and written back on encode.
TEST(DecodeMessage, UnknownFieldsAreKeptAndForwarded) {
  const CotalMessage m =
      decoded(R"({"id":"m","ts":1,"space":"s","from":{"id":"local.a","name":"a","avatar":"x.png"},)"
              R"("to":"local.b","parts":[{"kind":"text","text":"t","lang":"en"}],"priority":3,)"
              R"("trace":{"hops":["a","b"]}})");
  EXPECT_EQ(m.unknown, (UnknownFields{{"priority", "3"}, {"trace", R"({"hops":["a","b"]})"}}));
  EXPECT_EQ(m.from.unknown, (UnknownFields{{"avatar", "\"x.png\""}}));
  EXPECT_EQ(std::get<TextPart>(m.parts[0]).unknown, (UnknownFields{{"lang", "\"en\""}}));
  const std::string encoded = *encodeMessage(m);
  EXPECT_NE(encoded.find(R"("priority":3)"), std::string::npos) << encoded;
  EXPECT_NE(encoded.find(R"("avatar":"x.png")"), std::string::npos) << encoded;
  EXPECT_NE(encoded.find(R"("lang":"en")"), std::string::npos) << encoded;
  expectRoundTrip(m);
}

// Mentions are trimmed, lower-cased, de-duplicated, emptied of blanks, and omitted when empty.
TEST(DecodeMessage, MentionsAreNormalised) {
  const CotalMessage m = decoded(dm(R"(,"mentions":["  Bob ","bob","","ALICE","\t","Émile"])"));
  EXPECT_EQ(m.mentions, (std::vector<std::string>{"bob", "alice", "Émile"}));
  EXPECT_TRUE(decoded(dm(R"(,"mentions":[" "])")).mentions.empty());
  EXPECT_EQ(encodeMessage(decoded(dm(R"(,"mentions":[])")))->find("mentions"), std::string::npos);
  EXPECT_EQ(reasonOf(dm(R"(,"mentions":"bob")")), reason::kBadMentions);
  EXPECT_EQ(reasonOf(dm(R"(,"mentions":["bob",1])")), reason::kBadMentions);
  EXPECT_EQ(normalizeMentions({"B", " b", "c"}), (std::vector<std::string>{"b", "c"}));
}

// replyTo and contextId are optional strings.
TEST(DecodeMessage, ReplyToAndContextIdAreStrings) {
  const CotalMessage m = decoded(dm(R"(,"replyTo":"m0","contextId":"ctx")"));
  EXPECT_EQ(m.replyTo, "m0");
  EXPECT_EQ(m.contextId, "ctx");
  expectRoundTrip(m);
  EXPECT_EQ(reasonOf(dm(R"(,"replyTo":1)")), reason::kBadReplyTo);
  EXPECT_EQ(reasonOf(dm(R"(,"contextId":null)")), reason::kBadContextId);
}

// from.id must equal the subject sender; the kind is derived from the subject.
TEST(CheckAgainstSubject, SpoofedSenderIsRefused) {
  const CotalMessage m = decoded(spec::kUnicast);
  const Result<ParsedSubject> spoofed =
      parseSubject("cotal.main.inst.u_bbbbbbbbbbbbbbbbbbbbbbbbbb.bob.local.mallory");
  ASSERT_TRUE(spoofed.isOk());
  EXPECT_EQ(checkAgainstSubject(m, *spoofed).status().reason(), reason::kSenderMismatch);
  const Result<ParsedSubject> svc = parseSubject(spec::kSvcSubject);
  EXPECT_EQ(*checkAgainstSubject(m, *svc), DeliveryKind::kAnycast);
  const Result<ParsedSubject> wake =
      parseSubject("cotal.main.wake.u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice");
  EXPECT_EQ(checkAgainstSubject(m, *wake).status().reason(), reason::kNotADeliverySubject);
}

// Routing is rewritten from the subject: the payload's routing fields are advisory.
TEST(NormalizeForDelivery, RewritesRoutingFromTheSubject) {
  CotalMessage m = decoded(spec::kUnicast);
  ASSERT_TRUE(normalizeForDelivery(m, *parseSubject(spec::kChatSubject)).isOk());
  EXPECT_EQ(m.routing, (Routing{RoutingField::kChannel, "team.backend"}));
  ASSERT_TRUE(normalizeForDelivery(m, *parseSubject(spec::kSvcSubject)).isOk());
  EXPECT_EQ(m.routing, (Routing{RoutingField::kToService, "reviewer"}));
  ASSERT_TRUE(normalizeForDelivery(m, *parseSubject(spec::kInstSubject)).isOk());
  EXPECT_EQ(m.routing, (Routing{RoutingField::kTo, std::string(spec::kBob)}));
  EXPECT_EQ(normalizeForDelivery(m, *parseSubject("cotal.main.wake.local.a")).reason(),
            reason::kNotADeliverySubject);
  EXPECT_EQ(deliveryKindName(DeliveryKind::kAnycast), "anycast");
}

// A hand-built message is validated before encoding: no JSON injection, no bad UTF-8.
TEST(EncodeMessage, RefusesInvalidHandBuiltMessages) {
  CotalMessage m = decoded(spec::kUnicast);
  CotalMessage bad = m;
  bad.parts = {DataPart{R"(1},"channel":"x)", {}}};
  EXPECT_EQ(encodeMessage(bad).status().reason(), reason::kBadPart);
  bad = m;
  bad.unknown = {{"channel", "\"team\""}};
  EXPECT_EQ(encodeMessage(bad).status().reason(), reason::kBadUnknownField);
  bad = m;
  bad.unknown = {{"x", "nan"}};
  EXPECT_EQ(encodeMessage(bad).status().reason(), reason::kBadUnknownField);
  bad = m;
  bad.parts = {TextPart{"\xff", {}}};
  EXPECT_EQ(encodeMessage(bad).status().reason(), reason::kInvalidUtf8);
  bad = m;
  bad.routing = {RoutingField::kChannel, "team.>"};
  EXPECT_EQ(validateMessage(bad).reason(), reason::kChannelWildcardInPublish);
  bad = m;
  bad.parts = {ExtensionPart{"ai.cotal.x", R"({"kind":"ai.cotal.y"})"}};
  EXPECT_EQ(encodeMessage(bad).status().reason(), reason::kBadPart);
  bad.parts = {ExtensionPart{"text", R"({"kind":"text"})"}};
  EXPECT_EQ(encodeMessage(bad).status().reason(), reason::kUnknownPartKind);
  bad.parts = {ArtifactPart{"n", "t", "sha256:xyz", 1, {}}};
  EXPECT_EQ(encodeMessage(bad).status().reason(), reason::kBadPart);
  EXPECT_TRUE(validateMessage(m).isOk());
}

// A hand-built message with every field round-trips, with mentions normalised on the way out.
TEST(EncodeMessage, FullMessageRoundTrips) {
  CotalMessage m;
  m.id = "018f1d0a-0000-7000-9000-0000000000ff";
  m.ts = 1710000000123;
  m.space = "main";
  m.from = {"local.alice", "alice@host", "planner", {}};
  m.routing = {RoutingField::kToService, "reviewer"};
  m.mentions = {"Bob", "bob", " carol "};
  m.parts = {
      TextPart{"multi\nline \xe2\x9c\x93 \"quoted\"", {}},
      DataPart{R"({"k":[1,2,{"z":null}]})", {}},
      ArtifactPart{"a.bin", "application/octet-stream", "sha256:" + std::string(64, '0'), 42, {}},
      ExtensionPart{"com.example.card", R"({"kind":"com.example.card","v":1})"}};
  m.replyTo = "018f1d0a-0000-7000-9000-0000000000fe";
  m.contextId = "ctx";
  m.unknown = {{"x-extra", R"([1,"two"])"}};
  const Result<std::string> encoded = encodeMessage(m);
  ASSERT_TRUE(encoded.isOk()) << encoded.status().toString();
  const CotalMessage back = decoded(*encoded);
  CotalMessage expected = m;
  expected.mentions = {"bob", "carol"};
  EXPECT_EQ(back, expected);
}

// Subnormal, underflowing and extreme numbers inside data are read exactly and round-trip.
TEST(DecodeMessage, ExtremeNumbersRoundTrip) {
  const CotalMessage m = decoded(withPart(
      R"({"kind":"data","data":[4.9e-324,2.2250738585072011e-308,1e-400,-1e-400,)"
      R"(1.7976931348623157e308,-0.0,0,-9223372036854775809,123456789012345678901234567890]})"));
  expectRoundTrip(m);
  EXPECT_EQ(reasonOf(withPart(R"({"kind":"data","data":[1.7976931348623159e308]})")),
            reason::kBadPart);
}

// Random doubles survive decode → encode → decode exactly, in ts and inside data (Boost 1.81's
// own parser is one ULP off for about one double in seven).
TEST(EncodeMessage, RandomDoublesRoundTripExactly) {
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 3000; ++i) {
    const uint64_t bits = rng();
    double d = 0;
    std::memcpy(&d, &bits, sizeof d);
    if (!std::isfinite(d)) continue;
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
    ASSERT_EQ(ec, std::errc());
    const std::string num(buf, end);
    std::string json = R"({"id":"m","ts":)";
    json += num;
    json += R"(,"space":"s","from":{"id":"local.a","name":"a"},"to":"local.b",)";
    json += R"("parts":[{"kind":"data","data":[)";
    json += num;
    json += "]}]}";
    const CotalMessage m = decoded(json);
    ASSERT_EQ(m.ts, d) << num;
    expectRoundTrip(m);
  }
}

}  // namespace
}  // namespace shoal::wire
