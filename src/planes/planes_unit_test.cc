// Unit tests: the provision rail codec and subject rules, and the delivery lease grading.
#include "mesh/provision_client.h"
#include "planes/liveness_responder.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

const wire::Principal kAlice{"local", "alice"};
constexpr std::string_view kUid = "abcdefghijklmnopqrstuvwxyz";
constexpr std::string_view kNonce = "0123456789abcdef0123456789abcdef";

// A provision subject is the 10-token §13.2 class-untargeted form and parses back to its caller.
TEST(ProvisionSubject, RoundTripsTheCaller) {
  auto s = mesh::provisionSubject("main", kAlice, kUid, kNonce);
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  EXPECT_EQ(*s,
            "cotal.main.ep.one.manager.provision.local.alice.abcdefghijklmnopqrstuvwxyz."
            "0123456789abcdef0123456789abcdef");
  auto caller = mesh::parseProvisionSubject(*s, "main");
  ASSERT_TRUE(caller.isOk()) << caller.status().toString();
  EXPECT_EQ(caller->principal, kAlice);
  EXPECT_EQ(caller->lifecycleUid, kUid);
  EXPECT_EQ(caller->nonce, kNonce);
  EXPECT_EQ(*mesh::provisionServeFilter("main"), "cotal.main.ep.one.manager.provision.*.*.*.*");
}

// Wrong arity, another space, a fake owner, a bad uid or a short nonce are refused.
TEST(ProvisionSubject, RefusesAnythingButTheExactRail) {
  const std::string base = "cotal.main.ep.one.manager.provision.";
  EXPECT_EQ(mesh::parseProvisionSubject(base + "local.alice.abcdefghijklmnopqrstuvwxyz", "main")
                .status()
                .reason(),
            "bad-rail-subject");
  EXPECT_EQ(mesh::parseProvisionSubject(
                "cotal.other.ep.one.manager.provision.local.alice.abcdefghijklmnopqrstuvwxyz." +
                    std::string(kNonce),
                "main")
                .status()
                .reason(),
            "bad-rail-subject");
  EXPECT_EQ(mesh::parseProvisionSubject(
                base + "bob.alice.abcdefghijklmnopqrstuvwxyz." + std::string(kNonce), "main")
                .status()
                .reason(),
            "bad-caller");
  EXPECT_EQ(mesh::parseProvisionSubject(base + "local.alice.SHORT." + std::string(kNonce), "main")
                .status()
                .reason(),
            "bad-lifecycle-uid");
  EXPECT_EQ(
      mesh::parseProvisionSubject(base + "local.alice.abcdefghijklmnopqrstuvwxyz.short", "main")
          .status()
          .reason(),
      "bad-nonce");
  EXPECT_FALSE(mesh::parseProvisionSubject(
                   base + "local..abcdefghijklmnopqrstuvwxyz." + std::string(kNonce), "main")
                   .isOk());
  EXPECT_FALSE(mesh::isRailNonce(std::string(65, 'a')));
  EXPECT_TRUE(mesh::isRailNonce(std::string(22, 'a')));
}

// A request body carries only `roles`; unknown keys, wrong types and bad roles are refused.
TEST(ProvisionRequestCodec, AcceptsRolesAndRefusesEverythingElse) {
  auto enc = mesh::encodeProvisionRequest({{"reviewer", "builder"}});
  ASSERT_TRUE(enc.isOk());
  auto dec = mesh::decodeProvisionRequest(*enc);
  ASSERT_TRUE(dec.isOk());
  EXPECT_EQ(dec->roles, (std::vector<std::string>{"reviewer", "builder"}));
  EXPECT_TRUE(mesh::decodeProvisionRequest("").isOk());
  EXPECT_EQ(mesh::decodeProvisionRequest(R"({"roles":["a","a"]})")->roles.size(), 1u);
  EXPECT_EQ(mesh::decodeProvisionRequest(R"({"roles":[],"x":1})").status().reason(),
            "bad-provision-request");
  EXPECT_EQ(mesh::decodeProvisionRequest(R"({"roles":"reviewer"})").status().reason(),
            "bad-provision-request");
  EXPECT_EQ(mesh::decodeProvisionRequest(R"({"roles":["a.b"]})").status().reason(), "bad-token");
  EXPECT_EQ(mesh::decodeProvisionRequest("{").status().reason(), "malformed-json");
  EXPECT_EQ(mesh::decodeProvisionRequest("[]").status().reason(), "malformed-json");
}

// A success reply round-trips; a refusal decodes to a Status carrying the manager's code.
TEST(ProvisionReplyCodec, RoundTripsSuccessAndRefusal) {
  mesh::ProvisionReply reply;
  reply.durable = "dm_local-alice-abcdefghijklmnopqrstuvwxyz";
  reply.created = true;
  reply.frontier = 3;
  reply.roles = {{"reviewer", "svc_reviewer"}};
  auto back = mesh::decodeProvisionReply(mesh::encodeProvisionReply(reply));
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(*back, reply);

  auto refused =
      mesh::decodeProvisionReply(mesh::encodeProvisionError(invalidArgument("bad-token", "x")));
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().reason(), "bad-token");
  auto failed = mesh::decodeProvisionReply(
      mesh::encodeProvisionError(unavailable("stream-not-found", "no DM stream")));
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(mesh::decodeProvisionReply(R"({"ok":true})").status().reason(), "bad-provision-reply");
  EXPECT_EQ(mesh::decodeProvisionReply("nope").status().reason(), "bad-provision-reply");
}

// Delivery grading: no row or not ready ⇒ unbound, another holder ⇒ stale, own ⇒ bound,
// unreadable ⇒ unknown.
TEST(ResponderFromLease, GradesTheLeaseRow) {
  using wire::Responder;
  EXPECT_EQ(planes::responderFromLease(std::nullopt, "local.dlv", "i1"), Responder::kUnbound);
  EXPECT_EQ(planes::responderFromLease(R"({"holder":"local.dlv","since":1,"ready":false,)"
                                       R"("incarnation":"i1"})",
                                       "local.dlv", "i1"),
            Responder::kUnbound);
  EXPECT_EQ(planes::responderFromLease(R"({"holder":"local.dlv","since":1})", "local.dlv", "i1"),
            Responder::kUnbound);
  EXPECT_EQ(planes::responderFromLease(R"({"holder":"local.dlv","since":1,"ready":true,)"
                                       R"("incarnation":"i1"})",
                                       "local.dlv", "i1"),
            Responder::kBound);
  EXPECT_EQ(planes::responderFromLease(R"({"holder":"local.other","since":1,"ready":true,)"
                                       R"("incarnation":"i1"})",
                                       "local.dlv", "i1"),
            Responder::kStale);
  EXPECT_EQ(planes::responderFromLease(R"({"holder":"local.dlv","since":1,"ready":true,)"
                                       R"("incarnation":"i0"})",
                                       "local.dlv", "i1"),
            Responder::kStale);
  EXPECT_EQ(planes::responderFromLease("not json", "local.dlv", "i1"), Responder::kUnknown);
  EXPECT_EQ(planes::responderFromLease(R"({"ready":true})", "local.dlv", "i1"),
            Responder::kUnknown);
  EXPECT_EQ(
      planes::responderFromLease(R"({"holder":"local.dlv","ready":"yes"})", "local.dlv", "i1"),
      Responder::kUnknown);
}

}  // namespace
}  // namespace shoal
