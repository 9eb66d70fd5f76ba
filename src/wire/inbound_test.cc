#include "wire/inbound.h"

#include <string>

#include "wire/reasons.h"
#include "wire/spec_vectors.h"

#include <gtest/gtest.h>

namespace shoal::wire {
namespace {

std::string reasonOf(std::string_view subject, std::string_view payload) {
  const Result<InboundDelivery> r = readDelivery(subject, payload);
  return r.isOk() ? "ok" : std::string(r.status().reason());
}

// The §12 multicast on its chat subject is admitted as a channel delivery.
TEST(ReadDelivery, SpecMulticastIsAChannelDelivery) {
  const Result<InboundDelivery> d = readDelivery(spec::kChatSubject, spec::kMulticast);
  ASSERT_TRUE(d.isOk()) << d.status().toString();
  EXPECT_EQ(d->kind, DeliveryKind::kChannel);
  EXPECT_EQ(d->subject.principal.dotForm(), spec::kAlice);
  EXPECT_EQ(d->message.routing, (Routing{RoutingField::kChannel, "team.backend"}));
}

// The §12 unicast on its DM subject is admitted as a DM; on the svc subject as anycast with
// routing rewritten to the role.
TEST(ReadDelivery, SpecUnicastIsADmAndKindFollowsTheSubject) {
  const Result<InboundDelivery> d = readDelivery(spec::kInstSubject, spec::kUnicast);
  ASSERT_TRUE(d.isOk()) << d.status().toString();
  EXPECT_EQ(d->kind, DeliveryKind::kDm);
  EXPECT_EQ(d->message.routing, (Routing{RoutingField::kTo, std::string(spec::kBob)}));
  const Result<InboundDelivery> any = readDelivery(spec::kSvcSubject, spec::kUnicast);
  ASSERT_TRUE(any.isOk()) << any.status().toString();
  EXPECT_EQ(any->kind, DeliveryKind::kAnycast);
  EXPECT_EQ(any->message.routing, (Routing{RoutingField::kToService, "reviewer"}));
}

// Every §12 rejection row, and every bad payload, yields its named reason.
TEST(ReadDelivery, RefusalsCarryTheirNamedReason) {
  EXPECT_EQ(reasonOf(spec::kRetiredCtlSubject, spec::kMulticast), reason::kMalformedSubject);
  EXPECT_EQ(reasonOf(spec::kChatWithoutChannelSubject, spec::kMulticast),
            reason::kMalformedSubject);
  EXPECT_EQ(reasonOf(spec::kNkeyOwnerSubject, spec::kMulticast), reason::kNkeyOwner);
  EXPECT_EQ(reasonOf(spec::kChatSubject, "{not json"), reason::kMalformedJson);
  EXPECT_EQ(
      reasonOf("cotal.main.chat.u_bbbbbbbbbbbbbbbbbbbbbbbbbb.bob.team.backend", spec::kMulticast),
      reason::kSenderMismatch);
  EXPECT_EQ(reasonOf("cotal.main.wake.u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice", spec::kMulticast),
            reason::kNotADeliverySubject);
}

}  // namespace
}  // namespace shoal::wire
