// The journal body of an admitted delivery: what a restart re-renders from.
#include "daemon/stored_delivery.h"

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

TEST(StoredDelivery, EmptyIdIsOwnedUnderItsStreamPosition) {
  mesh::Delivery d = sample();
  d.message.id.clear();
  EXPECT_EQ(ownershipId(d), "seq:cotal.main.chat.ops.local.bob:17");
}

TEST(StoredDelivery, DamagedBodiesAreNamed) {
  EXPECT_EQ(decodeStoredDelivery("dm\nonly two lines").status().reason(), "bad-journal-body");
  EXPECT_EQ(decodeStoredDelivery("smoke\ns\n--\n{}").status().reason(), "bad-journal-body");
  EXPECT_FALSE(decodeStoredDelivery("dm\ns\n--\nnot json").isOk());
}

}  // namespace
}  // namespace shoal::daemon
