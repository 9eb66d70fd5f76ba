// The join rail's codec: an invite's subjects, the request body and the manager's refusals.
#include "mesh/join_rail.h"

#include "transport/nkey.h"

#include <gtest/gtest.h>

namespace shoal::mesh {
namespace {

const std::string kOwner = "u_aaaaaaaaaaaaaaaaaaaaaaaaaa";
const std::string kInvite = "0123456789abcdef0123456789abcdef";

TEST(JoinRailTest, AnInvitesGrantCoversItsOwnSubjectOnly) {
  JoinCaller caller{kOwner, "beta", kInvite};
  auto subject = joinSubject("main", caller);
  ASSERT_TRUE(subject.isOk()) << subject.status().toString();
  EXPECT_EQ(*subject, "cotal.main.ep.one.manager.join." + kOwner + ".beta." + kInvite);
  EXPECT_EQ(*joinCallerGrant("main", kOwner, "beta", kInvite), *subject);
  EXPECT_EQ(*joinCallerGrant("main", kOwner, "", kInvite),
            "cotal.main.ep.one.manager.join." + kOwner + ".*." + kInvite)
      << "an invite without --machine leaves the name to the joiner";
  EXPECT_EQ(*joinServeFilter("main"), "cotal.main.ep.one.manager.join.*.*.*");
  auto parsed = parseJoinSubject(*subject, "main");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(*parsed, caller);
  auto id = newInviteId();
  ASSERT_TRUE(id.isOk());
  EXPECT_EQ(id->size(), 32u);
}

TEST(JoinRailTest, SubjectsOutsideTheRailAreRefused) {
  EXPECT_EQ(joinSubject("main", {"local", "beta", kInvite}).status().reason(), "bad-caller");
  EXPECT_EQ(joinSubject("main", {kOwner, "", kInvite}).status().reason(), "bad-machine-name");
  EXPECT_EQ(joinSubject("main", {kOwner, "beta", "short"}).status().reason(), "bad-invite");
  EXPECT_EQ(
      parseJoinSubject("cotal.main.ep.one.manager.issue." + kOwner + ".beta." + kInvite, "main")
          .status()
          .reason(),
      "bad-rail-subject");
  EXPECT_EQ(
      parseJoinSubject("cotal.other.ep.one.manager.join." + kOwner + ".beta." + kInvite, "main")
          .status()
          .reason(),
      "bad-rail-subject");
  EXPECT_EQ(parseJoinSubject("cotal.main.ep.one.manager.join." + kOwner + ".beta", "main")
                .status()
                .reason(),
            "bad-rail-subject");
}

TEST(JoinRailTest, RequestsRoundTripAndRefuseWhatIsNotAKeyAndAnInbox) {
  JoinRequest request{transport::generateNKey(transport::NKeyRole::kUser)->publicKey,
                      "ibxdmn0123456789"};
  auto body = encodeJoinRequest(request);
  ASSERT_TRUE(body.isOk()) << body.status().toString();
  auto back = decodeJoinRequest(*body);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(*back, request);
  const std::string account = transport::generateNKey(transport::NKeyRole::kAccount)->publicKey;
  for (const std::string& bad :
       {std::string(R"({"userKey":")") + account + R"(","connId":"ibxdmn0123456789"})",
        std::string(R"({"userKey":")") + request.userKey + R"(","connId":"x y"})",
        std::string(R"({"userKey":")") + request.userKey + R"("})",
        std::string(R"({"userKey":")") + request.userKey +
            R"(","connId":"ibxdmn0123456789","extra":"1"})",
        std::string(8 * 1024, ' ')}) {
    EXPECT_FALSE(decodeJoinRequest(bad).isOk()) << bad.substr(0, 120);
  }
  EXPECT_EQ(decodeJoinRequest("{").status().reason(), "malformed-json");
}

TEST(JoinRailTest, AUsedInviteIsAPermanentRefusal) {
  auto used = decodeJoinReply(
      R"({"ok":false,"error":{"code":"invite-used","message":"invite 0123 was used"}})");
  ASSERT_FALSE(used.isOk());
  EXPECT_EQ(used.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(used.status().reason(), "invite-used");
  auto ok = decodeJoinReply(R"({"ok":true,"jwt":"eyJ.x.y","expiresAt":1800000000})");
  ASSERT_TRUE(ok.isOk()) << ok.status().toString();
  EXPECT_EQ(ok->expiresAt, 1800000000);
}

}  // namespace
}  // namespace shoal::mesh

namespace shoal::mesh {
namespace {

TEST(DaemonRenewalTest, ARenewalIsTellableFromASeatsRequestAndRoundTrips) {
  DaemonRenewal renewal{transport::generateNKey(transport::NKeyRole::kUser)->publicKey,
                        "ibxdmn0123456789"};
  auto body = encodeDaemonRenewal(renewal);
  ASSERT_TRUE(body.isOk()) << body.status().toString();
  auto back = decodeDaemonRenewal(*body);
  ASSERT_TRUE(back.isOk() && back->has_value()) << back.status().toString();
  EXPECT_EQ(**back, renewal);
  auto seat = decodeDaemonRenewal(R"({"principal":"u_aaaaaaaaaaaaaaaaaaaaaaaaaa.ada"})");
  ASSERT_TRUE(seat.isOk());
  EXPECT_FALSE(seat->has_value()) << "a seat's request names no daemonKey";
  EXPECT_EQ(
      decodeDaemonRenewal(R"({"daemonKey":"Unot","connId":"ibxdmn0123456789"})").status().reason(),
      "bad-issue-request");
  EXPECT_EQ(decodeDaemonRenewal(std::string(R"({"daemonKey":")") + renewal.daemonKey +
                                R"(","connId":"ibxdmn0123456789","role":"x"})")
                .status()
                .reason(),
            "bad-issue-request");
}

}  // namespace
}  // namespace shoal::mesh
