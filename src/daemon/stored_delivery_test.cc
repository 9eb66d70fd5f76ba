// The journal body of an admitted delivery: what a restart re-renders from.
#include "daemon/stored_delivery.h"

#include "journal/format.h"
#include "journal/limits.h"
#include "wire/message.h"
#include "wire/message_limits.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

mesh::Delivery sample() {
  mesh::Delivery d;
  d.kind = wire::DeliveryKind::kChannel;
  d.subject = "cotal.main.chat.ops.local.bob";
  d.historical = true;
  d.numDelivered = 2;
  d.streamSeq = 17;
  d.message.id = "m-1";
  d.message.ts = 1764500000.0;
  d.message.space = "main";
  d.message.from.id = "local.bob";
  d.message.routing = wire::Routing{wire::RoutingField::kChannel, "ops"};
  d.message.parts = {wire::TextPart{"line one\nline two", {}}};
  return d;
}

TEST(StoredDelivery, RoundTripsKindSubjectFlagsAndMessage) {
  mesh::Delivery d = sample();
  std::string body = encodeStoredDelivery(d);
  auto back = decodeStoredDelivery(body);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->kind, wire::DeliveryKind::kChannel);
  EXPECT_EQ(back->subject, d.subject);
  EXPECT_TRUE(back->historical);
  EXPECT_TRUE(back->redelivered);
  EXPECT_EQ(back->message.id, "m-1");
  EXPECT_EQ(ownershipId(d), "m-1");
}

// A delivery that carries the broker's bytes is kept as those bytes, exactly, and read again at
// dispatch by the parser that admitted it.
TEST(StoredDelivery, KeepsThePayloadAsTheBrokerHeldItAndReadsItAgain) {
  mesh::Delivery d = sample();
  d.subject = "cotal.main.chat.local.bob.ops";  // a real multicast subject: owner, actor, channel
  auto encoded = wire::encodeMessage(d.message);
  ASSERT_TRUE(encoded.isOk());
  d.payload = "{ " + encoded->substr(1);  // not how Shoal would encode it: kept as it came
  std::string body = encodeStoredDelivery(d);
  EXPECT_EQ(body, "channel\ncotal.main.chat.local.bob.ops\nhrp\n" + d.payload);
  auto back = decodeStoredDelivery(body);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->message, d.message);
  EXPECT_TRUE(back->historical);
  EXPECT_TRUE(back->redelivered);
  // The payload is checked against the subject as at admission: a kind or sender it does not
  // match is refused, not guessed at.
  auto wrongKind = decodeStoredDelivery("dm\ncotal.main.chat.local.bob.ops\n--p\n" + d.payload);
  ASSERT_FALSE(wrongKind.isOk());
  EXPECT_EQ(wrongKind.status().reason(), "bad-journal-body");
  EXPECT_FALSE(
      decodeStoredDelivery("channel\ncotal.main.chat.local.eve.ops\n--p\n" + d.payload).isOk());
}

// A body without the payload flag — a history copy's, and every body an older Shoal wrote — is
// the re-encoded message, read as before.
TEST(StoredDelivery, ABodyWithoutThePayloadFlagIsReadAsTheEncodedMessage) {
  mesh::Delivery d = sample();
  std::string body = encodeStoredDelivery(d);  // no payload: a history copy
  auto encoded = wire::encodeMessage(d.message);
  ASSERT_TRUE(encoded.isOk());
  EXPECT_EQ(body, "channel\ncotal.main.chat.ops.local.bob\nhr\n" + *encoded);
  auto back = decodeStoredDelivery(body);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->message, d.message);
}

TEST(StoredDelivery, EmptyIdIsOwnedUnderItsStreamPosition) {
  mesh::Delivery d = sample();
  d.message.id.clear();
  EXPECT_EQ(ownershipId(d), "seq:cotal.main.chat.ops.local.bob:17");
  // However long the subject, the id is one the journal can hold, stable and distinct.
  d.subject = "cotal.main.chat.local.bob." + std::string(900, 'c');
  const std::string longId = ownershipId(d);
  EXPECT_TRUE(wire::isValidMessageId(longId)) << longId;
  EXPECT_EQ(longId, ownershipId(d));
  d.streamSeq = 18;
  EXPECT_NE(longId, ownershipId(d));
}

// The wire's size bound is what makes every valid message admittable (message_limits.h): even a
// body that escapes twice (a text of quotes and backslashes, escaped once on the wire and again
// in the journal file) and the longest subject and id fit one live record.
TEST(StoredDelivery, TheLargestValidMessageFitsOneLiveRecord) {
  mesh::Delivery d = sample();
  d.kind = wire::DeliveryKind::kDm;
  d.subject = "cotal." + std::string(64, 's') + ".inst." + std::string(64, 'o') + "." +
              std::string(64, 'a') + "." + std::string(64, 'o') + "." + std::string(64, 'b');
  d.message.id = std::string(wire::kMaxMessageIdBytes, '"');
  d.message.parts = {wire::TextPart{"", {}}};
  auto& text = std::get<wire::TextPart>(d.message.parts[0]).text;
  // Grow the text to the largest envelope the encoder still accepts.
  text.assign(wire::kMaxMessageBytes / 2, '\\');
  for (;;) {
    auto encoded = wire::encodeMessage(d.message);
    ASSERT_TRUE(encoded.isOk() || encoded.status().reason() == "message-too-large");
    if (!encoded.isOk()) {
      text.pop_back();
      continue;
    }
    if (encoded->size() + 2 > wire::kMaxMessageBytes) break;
    text += '"';
  }
  journal::OwnershipRecord r;
  r.id = d.message.id;
  r.body = encodeStoredDelivery(d);
  r.target = std::string(129, 'x');
  r.wake = "dm";
  r.runtime.threadId = r.runtime.sessionId = r.runtime.receipt =
      std::string(journal::kMaxRuntimeFieldBytes, '"');
  r.seq = r.token.epoch = r.token.generation = UINT64_MAX;
  r.admittedAtMs = r.stateSinceMs = INT64_MAX;
  EXPECT_LE(journal::encodeRecord(r).size(), journal::Limits{}.maxLiveRecordBytes);
  // One byte more is refused where the sender is, before anything is published.
  text += "\\";
  EXPECT_EQ(wire::encodeMessage(d.message).status().reason(), "message-too-large");
}

TEST(StoredDelivery, DamagedBodiesAreNamed) {
  EXPECT_EQ(decodeStoredDelivery("dm\nonly two lines").status().reason(), "bad-journal-body");
  EXPECT_EQ(decodeStoredDelivery("smoke\ns\n--\n{}").status().reason(), "bad-journal-body");
  EXPECT_FALSE(decodeStoredDelivery("dm\ns\n--\nnot json").isOk());
}

}  // namespace
}  // namespace shoal::daemon
