// The credential rail's codec: subjects a daemon may use, request and reply bodies, and every
// refusal a hostile or broken peer could provoke.
#include "mesh/credential_rail.h"

#include "mesh/provision_client.h"
#include "transport/nkey.h"

#include <gtest/gtest.h>

namespace shoal::mesh {
namespace {

const std::string kOwner = "u_aaaaaaaaaaaaaaaaaaaaaaaaaa";
const std::string kNonce = "nonce_nonce_nonce_nonce_1";

IssueRequest sampleRequest() {
  IssueRequest r;
  r.principal = wire::Principal{kOwner, "reviewer"};
  r.lifecycleUid = "abcdefghijklmnopqrstuvwxyz";
  r.connId = "ibxseat0123456789";
  r.userKey = transport::generateNKey(transport::NKeyRole::kUser)->publicKey;
  r.role = "review";
  r.channels = {"team.backend", "general"};
  return r;
}

TEST(CredentialRailTest, SubjectsRoundTripAndStayInsideTheCallersGrant) {
  auto subject = issueSubject("main", kOwner, "laptop-1", kNonce);
  ASSERT_TRUE(subject.isOk()) << subject.status().toString();
  EXPECT_EQ(*subject, "cotal.main.ep.one.manager.issue." + kOwner + ".laptop-1." + kNonce);
  auto grant = issueCallerGrant("main", kOwner, "laptop-1");
  ASSERT_TRUE(grant.isOk());
  EXPECT_EQ(*grant, "cotal.main.ep.one.manager.issue." + kOwner + ".laptop-1.*");
  EXPECT_EQ(*issueServeFilter("main"), "cotal.main.ep.one.manager.issue.*.*.*");
  auto caller = parseIssueSubject(*subject, "main");
  ASSERT_TRUE(caller.isOk()) << caller.status().toString();
  EXPECT_EQ(*caller, (IssueCaller{kOwner, "laptop-1", kNonce}));
}

TEST(CredentialRailTest, TheRailBelongsToAuthModeOwnersAndNamedMachines) {
  // `local` is no one's owner in auth mode: no daemon grant, no request subject.
  EXPECT_EQ(issueCallerGrant("main", "local", "laptop").status().reason(), "bad-caller");
  EXPECT_EQ(parseIssueSubject("cotal.main.ep.one.manager.issue.local.laptop." + kNonce, "main")
                .status()
                .reason(),
            "bad-caller");
  EXPECT_EQ(issueCallerGrant("main", kOwner, "").status().reason(), "bad-machine-name");
  EXPECT_EQ(issueCallerGrant("main", kOwner, "a*").status().reason(), "bad-machine-name");
  EXPECT_EQ(issueCallerGrant("main", kOwner, std::string(65, 'm')).status().reason(),
            "bad-machine-name");
  EXPECT_EQ(parseIssueSubject("cotal.other.ep.one.manager.issue." + kOwner + ".m." + kNonce, "main")
                .status()
                .reason(),
            "bad-rail-subject");
  EXPECT_EQ(parseIssueSubject("cotal.main.ep.one.manager.issue." + kOwner + ".m", "main")
                .status()
                .reason(),
            "bad-rail-subject");
  EXPECT_EQ(parseIssueSubject("cotal.main.ep.one.manager.issue." + kOwner + ".m.short", "main")
                .status()
                .reason(),
            "bad-nonce");
}

TEST(CredentialRailTest, RequestsRoundTrip) {
  const IssueRequest r = sampleRequest();
  auto text = encodeIssueRequest(r);
  ASSERT_TRUE(text.isOk()) << text.status().toString();
  auto back = decodeIssueRequest(*text);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(*back, r);
  EXPECT_EQ(text->find("person"), std::string::npos);  // a seat's request, as before
  IssueRequest person = r;
  person.person = true;
  auto personText = encodeIssueRequest(person);
  ASSERT_TRUE(personText.isOk());
  auto personBack = decodeIssueRequest(*personText);
  ASSERT_TRUE(personBack.isOk()) << personBack.status().toString();
  EXPECT_TRUE(personBack->person);
  IssueRequest mail = person;
  mail.channels.clear();
  mail.role.reset();
  mail.mailbox = true;
  auto mailText = encodeIssueRequest(mail);
  ASSERT_TRUE(mailText.isOk()) << mailText.status().toString();
  auto mailBack = decodeIssueRequest(*mailText);
  ASSERT_TRUE(mailBack.isOk()) << mailBack.status().toString();
  EXPECT_EQ(*mailBack, mail);
}

TEST(CredentialRailTest, EveryMalformedRequestIsRefusedByName) {
  const IssueRequest good = sampleRequest();
  const std::string key = good.userKey;
  auto reasonOf = [](std::string_view body) {
    return std::string(decodeIssueRequest(body).status().reason());
  };
  EXPECT_EQ(reasonOf("not json"), "malformed-json");
  EXPECT_EQ(reasonOf("[1]"), "malformed-json");
  EXPECT_EQ(reasonOf("{}"), "bad-issue-request");
  const std::string base = R"({"principal":")" + kOwner +
                           R"(.rev","lifecycleUid":"abcdefghijklmnopqrstuvwxyz",)"
                           R"("connId":"ibxseat0123456789","userKey":")" +
                           key + "\"";
  EXPECT_TRUE(decodeIssueRequest(base + "}").isOk());
  EXPECT_EQ(reasonOf(base + R"(,"extra":1})"), "bad-issue-request");
  EXPECT_EQ(reasonOf(base + R"(,"role":7})"), "bad-issue-request");
  EXPECT_EQ(reasonOf(base + R"(,"person":"yes"})"), "bad-issue-request");
  EXPECT_EQ(reasonOf(base + R"(,"mailbox":true})"), "bad-issue-request");  // not a person's
  EXPECT_EQ(reasonOf(base + R"(,"person":true,"mailbox":true,"channels":["ops"]})"),
            "bad-issue-request");
  EXPECT_TRUE(decodeIssueRequest(base + R"(,"person":true,"mailbox":true})").isOk());
  EXPECT_EQ(reasonOf(base + R"(,"role":"a.b"})"), "bad-issue-request");
  EXPECT_EQ(reasonOf(base + R"(,"channels":"general"})"), "bad-issue-request");
  EXPECT_EQ(reasonOf(base + R"(,"channels":["team.*"]})"), "bad-issue-request");
  // The key must be a user's public key: never a seed, never an account key.
  IssueRequest seed = good;
  seed.userKey = transport::generateNKey(transport::NKeyRole::kUser)->seed;
  EXPECT_EQ(encodeIssueRequest(seed).status().reason(), "bad-issue-request");
  IssueRequest account = good;
  account.userKey = transport::generateNKey(transport::NKeyRole::kAccount)->publicKey;
  EXPECT_EQ(encodeIssueRequest(account).status().reason(), "bad-issue-request");
  IssueRequest conn = good;
  conn.connId = "short";
  EXPECT_EQ(encodeIssueRequest(conn).status().reason(), "bad-issue-request");
  EXPECT_EQ(reasonOf(std::string(kMaxIssueBodyBytes + 1, ' ')), "bad-issue-request");
}

TEST(CredentialRailTest, RepliesRoundTripAndRefusalsKeepTheirReason) {
  auto ok = decodeIssueReply(encodeIssueReply(IssueReply{"jwt.text.here", 1900000000}));
  ASSERT_TRUE(ok.isOk()) << ok.status().toString();
  EXPECT_EQ(*ok, (IssueReply{"jwt.text.here", 1900000000}));
  auto refused = decodeIssueReply(encodeProvisionError(permissionDenied("not-this-owner", "no")));
  EXPECT_EQ(refused.status().reason(), "not-this-owner");
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied) << "never retried";
  auto transient = decodeIssueReply(encodeProvisionError(unavailable("stream-not-found", "x")));
  EXPECT_EQ(transient.status().code(), StatusCode::kUnavailable) << "retried";
  EXPECT_EQ(decodeIssueReply(R"({"ok":true,"jwt":"","expiresAt":5})").status().reason(),
            "bad-issue-reply");
  EXPECT_EQ(decodeIssueReply(R"({"ok":true,"jwt":"x","expiresAt":-5})").status().reason(),
            "bad-issue-reply");
  EXPECT_EQ(decodeIssueReply(R"({"ok":false})").status().reason(), "bad-issue-reply");
  EXPECT_EQ(decodeIssueReply("garbage").status().reason(), "bad-issue-reply");
}

}  // namespace
}  // namespace shoal::mesh
