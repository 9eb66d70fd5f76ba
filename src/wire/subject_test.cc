#include "wire/subject.h"

#include <string>
#include <vector>

#include "wire/reasons.h"
#include "wire/spec_vectors.h"

#include <gtest/gtest.h>

namespace shoal::wire {
namespace {

Principal alice() {
  return {std::string(spec::kOwnerA), "alice"};
}
Principal bob() {
  return {std::string(spec::kOwnerB), "bob"};
}

std::string reasonOf(std::string_view subject) {
  const Result<ParsedSubject> r = parseSubject(subject);
  return r.isOk() ? "ok" : std::string(r.status().reason());
}

// §12 row 1: a chat subject names sender <ownerA>.alice and channel team.backend.
TEST(SpecSubjectTable, ChatRowParses) {
  const Result<ParsedSubject> p = parseSubject(spec::kChatSubject);
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  EXPECT_EQ(p->kind, SubjectKind::kChat);
  EXPECT_EQ(p->space, "main");
  EXPECT_EQ(p->principal.dotForm(), spec::kAlice);
  EXPECT_EQ(p->rest, "team.backend");
  EXPECT_FALSE(p->recipient.has_value());
  EXPECT_TRUE(checkSurfaceable(*p).isOk());
}

// §12 row 2: a DM subject names sender <ownerA>.alice and recipient <ownerB>.bob.
TEST(SpecSubjectTable, InstRowParses) {
  const Result<ParsedSubject> p = parseSubject(spec::kInstSubject);
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  EXPECT_EQ(p->kind, SubjectKind::kInst);
  EXPECT_EQ(p->principal.dotForm(), spec::kAlice);
  EXPECT_EQ(p->rest, spec::kBob);
  ASSERT_TRUE(p->recipient.has_value());
  EXPECT_EQ(*p->recipient, bob());
  EXPECT_TRUE(checkSurfaceable(*p).isOk());
}

// §12 row 3: an anycast subject names sender <ownerA>.alice and role reviewer.
TEST(SpecSubjectTable, SvcRowParses) {
  const Result<ParsedSubject> p = parseSubject(spec::kSvcSubject);
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  EXPECT_EQ(p->kind, SubjectKind::kSvc);
  EXPECT_EQ(p->principal.dotForm(), spec::kAlice);
  EXPECT_EQ(p->rest, spec::kRole);
  EXPECT_TRUE(checkSurfaceable(*p).isOk());
}

// §12 row 4: the retired control subject yields no sender and is never handled.
TEST(SpecSubjectTable, RetiredControlSubjectHasNoSender) {
  EXPECT_EQ(reasonOf(spec::kRetiredCtlSubject), reason::kMalformedSubject);
  EXPECT_EQ(reasonOf("cotal.main.control.manager.local.alice"), reason::kMalformedSubject);
  EXPECT_EQ(reasonOf("cotal.main.ctl.delivery.local.alice.reply.x"), reason::kMalformedSubject);
}

// §12 row 5: a chat subject without a channel token is malformed (no sender).
TEST(SpecSubjectTable, ChatWithoutChannelHasNoSender) {
  EXPECT_EQ(reasonOf(spec::kChatWithoutChannelSubject), reason::kMalformedSubject);
}

// §12 row 6: an nkey owner split-parses but is dropped at the surfacing boundary.
TEST(SpecSubjectTable, NkeyOwnerSplitsButIsNotSurfaceable) {
  const Result<ParsedSubject> p = parseSubject(spec::kNkeyOwnerSubject);
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  EXPECT_EQ(p->kind, SubjectKind::kChat);
  EXPECT_EQ(p->principal.owner, spec::kNkeyOwner);
  EXPECT_EQ(p->principal.actor, "team");
  EXPECT_EQ(p->rest, "backend");
  EXPECT_EQ(checkSurfaceable(*p).reason(), reason::kNkeyOwner);
}

// Each kind has an exact arity (chat: at least 6); anything else has no sender.
TEST(ParseSubject, EnforcesExactArityPerKind) {
  const std::string a = "u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice";
  const std::string uid = "abcdefghijklmnopqrstuvwxyz";
  EXPECT_EQ(reasonOf("cotal.main.inst." + a), reason::kMalformedSubject);        // 5
  EXPECT_EQ(reasonOf("cotal.main.inst.x." + a), reason::kMalformedSubject);      // 6
  EXPECT_EQ(reasonOf("cotal.main.inst.x.y.z." + a), reason::kMalformedSubject);  // 8
  EXPECT_EQ(reasonOf("cotal.main.svc." + a), reason::kMalformedSubject);         // 5
  EXPECT_EQ(reasonOf("cotal.main.svc.r.x." + a), reason::kMalformedSubject);     // 7
  EXPECT_EQ(reasonOf("cotal.main.live.manager." + a + ".reply"), reason::kMalformedSubject);
  EXPECT_EQ(reasonOf("cotal.main.dinbox." + a), reason::kMalformedSubject);
  EXPECT_EQ(reasonOf("cotal.main.dlv." + a + "." + uid + ".x"), reason::kMalformedSubject);
  EXPECT_EQ(reasonOf("cotal.main.wake." + a + ".x"), reason::kMalformedSubject);
  EXPECT_EQ(reasonOf("cotal.main.rcpt." + a), reason::kMalformedSubject);
  EXPECT_EQ(reasonOf("cotal.main.chat.local"), reason::kMalformedSubject);
  EXPECT_EQ(reasonOf("cotal.main.chat.local.alice.a.b.c.d"), "ok");  // deep channel
  EXPECT_EQ(reasonOf("cotal.main.live.manager." + a), "ok");
  EXPECT_EQ(reasonOf("cotal.main.dinbox." + a + "." + uid), "ok");
  EXPECT_EQ(reasonOf("cotal.main.dlv." + a + "." + uid), "ok");
  EXPECT_EQ(reasonOf("cotal.main.wake." + a), "ok");
  EXPECT_EQ(reasonOf("cotal.main.rcpt." + a + ".local.bob"), "ok");
}

// Wrong root, unknown kind, empty or wildcard tokens, white space and over-long subjects have
// no sender.
TEST(ParseSubject, RefusesEverythingElseAsMalformed) {
  for (const std::string& s : std::vector<std::string>{
           "", "cotal", "cotal.main", "nats.main.chat.local.alice.x",
           "Cotal.main.chat.local.alice.x", "cotal.main.trace.x", "cotal.main.bogus.local.alice.x",
           "cotal..chat.local.alice.x", "cotal.main.chat.local.alice.x.",
           ".cotal.main.chat.local.alice.x", "cotal.main.chat.local..x", "cotal.main.chat.*.*.x",
           "cotal.main.chat.local.alice.>", "cotal.main.chat.local.alice.a b",
           "cotal.main.chat.local.alice.x\n", "cotal.main.chat.local.al\tice.x",
           std::string("cotal.main.chat.local.alice.x\0", 30)}) {
    EXPECT_EQ(reasonOf(s), reason::kMalformedSubject) << s;
  }
  const std::string huge = "cotal.main.chat.local.alice." + std::string(kMaxSubjectBytes, 'a');
  EXPECT_EQ(reasonOf(huge), reason::kMalformedSubject);
}

// The refusal message says why the subject has no sender.
TEST(ParseSubject, RefusalMessageSaysWhy) {
  const Status s = parseSubject(spec::kRetiredCtlSubject).status();
  EXPECT_NE(s.message().find("retired"), std::string_view::npos) << s.toString();
  const Status arity = parseSubject("cotal.main.inst.local.bob.local").status();
  EXPECT_NE(arity.message().find("exactly 7"), std::string_view::npos) << arity.toString();
}

// The surfacing boundary refuses non-real owners on either principal and bad kind tokens.
TEST(CheckSurfaceable, RefusesJunkOwnersAndTokens) {
  const auto check = [](std::string_view subject) -> std::string {
    const Result<ParsedSubject> p = parseSubject(subject);
    if (!p.isOk()) return std::string(p.status().reason());
    const Status s = checkSurfaceable(*p);
    return s.isOk() ? "ok" : std::string(s.reason());
  };
  EXPECT_EQ(check("cotal.main.chat.bogus.alice.team"), reason::kNotAPrincipalOwner);
  EXPECT_EQ(check("cotal.main.chat.local.al-ice.team"), reason::kBadActorToken);
  EXPECT_EQ(check("cotal.main.chat.local.alice.te%am"), reason::kChannelBadChar);
  EXPECT_EQ(check("cotal.main.inst.bogus.bob.local.alice"), reason::kNotAPrincipalOwner);
  EXPECT_EQ(
      check(std::string("cotal.main.inst.local.bob.") + std::string(spec::kNkeyOwner) + ".alice"),
      reason::kNkeyOwner);
  EXPECT_EQ(check("cotal.main.svc.re%view.local.alice"), reason::kBadToken);
  EXPECT_EQ(check("cotal.ma%in.svc.reviewer.local.alice"), reason::kBadToken);
  EXPECT_EQ(check("cotal.main.live.janitor.local.alice"), reason::kBadPlane);
  EXPECT_EQ(check("cotal.main.dlv.local.alice.SHORT"), reason::kBadLifecycleUid);
  EXPECT_EQ(check("cotal.main.wake.local.alice"), "ok");
  EXPECT_EQ(check("cotal.main.live.delivery.local.alice"), "ok");
}

// Builders produce the documented layouts and parse back to what was built.
TEST(SubjectBuilders, BuildTheDocumentedLayouts) {
  EXPECT_EQ(*chatSubject("main", alice(), "team.backend"), spec::kChatSubject);
  EXPECT_EQ(*instSubject("main", bob(), alice()), spec::kInstSubject);
  EXPECT_EQ(*svcSubject("main", "reviewer", alice()), spec::kSvcSubject);
  const std::string uid = "abcdefghijklmnopqrstuvwxyz";
  EXPECT_EQ(*dinboxSubject("main", alice(), uid),
            "cotal.main.dinbox.u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice." + uid);
  EXPECT_EQ(*dlvSubject("main", alice(), uid),
            "cotal.main.dlv.u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice." + uid);
  EXPECT_EQ(*wakeSubject("main", alice()), "cotal.main.wake.u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice");
  EXPECT_EQ(*rcptSubject("main", alice(), bob()),
            "cotal.main.rcpt.u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice.u_bbbbbbbbbbbbbbbbbbbbbbbbbb.bob");
  const Result<ParsedSubject> rcpt = parseSubject(*rcptSubject("main", alice(), bob()));
  ASSERT_TRUE(rcpt.isOk());
  EXPECT_EQ(rcpt->principal, alice());
  EXPECT_EQ(rcpt->recipient, bob());
  EXPECT_EQ(*liveSubject("main", Plane::kManager, alice()),
            "cotal.main.live.manager.u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice");
}

// Builders refuse wildcards in a publish channel, bad tokens and non-real principals.
TEST(SubjectBuilders, ValidateEveryInput) {
  EXPECT_EQ(chatSubject("main", alice(), "team.*").status().reason(),
            reason::kChannelWildcardInPublish);
  EXPECT_EQ(chatSubject("main", alice(), std::string(5000, 'a')).status().reason(),
            reason::kChannelTooLong);
  EXPECT_EQ(chatSubject("my space", alice(), "team").status().reason(), reason::kBadToken);
  EXPECT_EQ(chatSubject("main", {"bogus", "alice"}, "team").status().reason(),
            reason::kNotAPrincipalOwner);
  EXPECT_EQ(instSubject("main", {std::string(spec::kNkeyOwner), "x"}, alice()).status().reason(),
            reason::kNkeyOwner);
  EXPECT_EQ(svcSubject("main", "a.b", alice()).status().reason(), reason::kBadToken);
  EXPECT_EQ(dlvSubject("main", alice(), "nope").status().reason(), reason::kBadLifecycleUid);
  EXPECT_EQ(chatSubject(std::string(600, 's'), alice(), std::string(4096, 'c')).status().reason(),
            reason::kSubjectTooLong);
}

// Subscription filters use whole-token wildcards in the documented places.
TEST(SubjectFilters, BuildTheDocumentedFilters) {
  EXPECT_EQ(*chatFilter("main", "team.>"), "cotal.main.chat.*.*.team.>");
  EXPECT_EQ(*chatFilter("main", "team.backend"), "cotal.main.chat.*.*.team.backend");
  EXPECT_EQ(chatFilter("main", "team.>.x").status().reason(), reason::kChannelWildcardNotLast);
  EXPECT_EQ(*dmFilter("main", bob()), "cotal.main.inst.u_bbbbbbbbbbbbbbbbbbbbbbbbbb.bob.>");
  EXPECT_EQ(*svcFilter("main", "reviewer"), "cotal.main.svc.reviewer.>");
  EXPECT_EQ(*rcptFilter("main", alice()), "cotal.main.rcpt.u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice.>");
  EXPECT_EQ(*wakeFilter("main", std::nullopt), "cotal.main.wake.>");
  EXPECT_EQ(*wakeFilter("main", alice()), *wakeSubject("main", alice()));
}

// A rail reply goes only to an inbox: a request cannot aim a plane's answer at a DM subject.
TEST(RailReplyTarget, OnlyUnderAnInbox) {
  EXPECT_TRUE(checkRailReplyTarget("_INBOX.abc").isOk());
  EXPECT_TRUE(checkRailReplyTarget("_INBOX_ibxada0000000000.x.y").isOk());
  for (std::string_view bad :
       {"", "_INBOX", "_INBOX.", "cotal.main.inst.local.bob.local.ada", "x_INBOX.abc", "_INBO.x"}) {
    EXPECT_EQ(checkRailReplyTarget(bad).reason(), reason::kBadReplySubject) << bad;
  }
}

// Liveness: probes on the caller's own subject, replies under `<request>.reply.<nonce>`, a
// queue-grouped serve filter, and a responder that drops any other reply target.
TEST(LivenessSubjects, ReplyTargetMustSitUnderTheRequest) {
  const std::string req = *liveSubject("main", Plane::kDelivery, alice());
  const std::string reply = *livenessReplySubject(req, "n0nce_1-2");
  EXPECT_EQ(reply, req + ".reply.n0nce_1-2");
  EXPECT_TRUE(checkLivenessReplyTarget(req, reply).isOk());
  EXPECT_EQ(checkLivenessReplyTarget(req, "_INBOX.abc").reason(), reason::kBadReplySubject);
  EXPECT_EQ(checkLivenessReplyTarget(req, req + ".reply.").reason(), reason::kBadReplySubject);
  EXPECT_EQ(checkLivenessReplyTarget(req, req + ".reply.a.b").reason(), reason::kBadReplySubject);
  EXPECT_EQ(checkLivenessReplyTarget(req, req + "x.reply.a").reason(), reason::kBadReplySubject);
  EXPECT_EQ(livenessReplySubject(req, "a.b").status().reason(), reason::kBadToken);
  EXPECT_EQ(livenessReplySubject(spec::kChatSubject, "n").status().reason(),
            reason::kBadReplySubject);
  EXPECT_EQ(*livenessServeFilter("main", Plane::kManager), "cotal.main.live.manager.*.*");
  EXPECT_EQ(livenessQueueGroup(Plane::kManager), "live.manager");
  EXPECT_EQ(*livenessReplyGrant("main", Plane::kDelivery), "cotal.main.live.delivery.*.*.reply.>");
  EXPECT_EQ(parsePlane("manager"), Plane::kManager);
  EXPECT_EQ(parsePlane("delivery"), Plane::kDelivery);
  EXPECT_FALSE(parsePlane("Manager").has_value());
}

}  // namespace
}  // namespace shoal::wire
