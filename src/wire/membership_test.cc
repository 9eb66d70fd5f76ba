#include "wire/membership.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wire/reasons.h"
#include "wire/spec_vectors.h"

#include <gtest/gtest.h>

namespace shoal::wire {
namespace {

constexpr std::string_view kBadMembership = "bad-membership";
constexpr std::string_view kBadAcl = "bad-acl";
constexpr uint64_t kMaxSafe = (uint64_t{1} << 53) - 1;

// An open (durable-active) membership of alice in team.backend.
MembershipRecord member() {
  MembershipRecord r;
  r.channel = "team.backend";
  r.member = Principal{std::string(spec::kOwnerA), "alice"};
  r.lifecycleUid = "abcdefghijklmnopqrstuvwxyz";
  r.joinCursor = 10;
  r.activated = true;
  r.generation = 2;
  r.writerIdentity = "delivery-1";
  r.updatedAt = 1710000000000;
  return r;
}

// A membership row whose members are `fields` (raw JSON, without braces) after the identity.
std::string row(std::string_view fields) {
  return R"({"channel":"team.backend","owner":"u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice",)"
         R"("lifecycleUid":"abcdefghijklmnopqrstuvwxyz",)" +
         std::string(fields) + "}";
}

std::string membershipReason(std::string_view json) {
  const Result<MembershipRecord> r = decodeMembership(json);
  return r.isOk() ? "ok" : std::string(r.status().reason());
}

std::string aclReason(std::string_view json) {
  const Result<AclRecord> r = decodeAcl(json);
  return r.isOk() ? "ok" : std::string(r.status().reason());
}

AclRecord acl(std::vector<std::string> patterns) {
  AclRecord r;
  r.allowSubscribe = std::move(patterns);
  return r;
}

// ---------------------------------------------------------------------------------------------
// MembershipRecord codec

// An open row is written as `durable-active` with no leaveCursor, the principal in `owner`, and
// decodes back to the same record.
TEST(Membership, OpenRecordEncodesGoldenBytesAndRoundTrips) {
  const MembershipRecord r = member();
  EXPECT_TRUE(r.active());
  const Result<std::string> json = encodeMembership(r);
  ASSERT_TRUE(json.isOk()) << json.status().toString();
  EXPECT_EQ(*json,
            row(R"("state":"durable-active","joinCursor":10,"activated":true,)"
                R"("generation":2,"writerIdentity":"delivery-1","updatedAt":1710000000000)"));
  const Result<MembershipRecord> back = decodeMembership(*json);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(*back, r);
}

// A left row (a tombstone) carries leaveCursor, is written as `live-confirmed`, and round-trips.
TEST(Membership, TombstoneEncodesLiveConfirmedAndRoundTrips) {
  MembershipRecord r = member();
  r.leaveCursor = 20;
  r.activated = false;
  EXPECT_FALSE(r.active());
  const Result<std::string> json = encodeMembership(r);
  ASSERT_TRUE(json.isOk()) << json.status().toString();
  EXPECT_EQ(*json, row(R"("state":"live-confirmed","joinCursor":10,"leaveCursor":20,)"
                       R"("activated":false,"generation":2,"writerIdentity":"delivery-1",)"
                       R"("updatedAt":1710000000000)"));
  const Result<MembershipRecord> back = decodeMembership(*json);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(*back, r);
}

// A local-owner member, a zero join cursor and an empty (join == leave) interval all round-trip;
// the largest safe integer survives in every counter.
TEST(Membership, EdgeValuesRoundTrip) {
  MembershipRecord r = member();
  r.member = Principal{"local", "Bob_2"};
  r.channel = "general";
  r.joinCursor = 0;
  r.generation = 0;
  r.updatedAt = -1;
  r.writerIdentity.clear();
  for (const std::optional<uint64_t> leave :
       {std::optional<uint64_t>{}, std::optional<uint64_t>{0}}) {
    r.leaveCursor = leave;
    const Result<std::string> json = encodeMembership(r);
    ASSERT_TRUE(json.isOk()) << json.status().toString();
    EXPECT_EQ(*decodeMembership(*json), r) << *json;
  }
  r.joinCursor = kMaxSafe;
  r.leaveCursor = kMaxSafe;
  r.generation = kMaxSafe;
  const Result<std::string> json = encodeMembership(r);
  ASSERT_TRUE(json.isOk()) << json.status().toString();
  EXPECT_EQ(*decodeMembership(*json), r) << *json;
}

// leaveCursor decides open vs left; the written `state` is derived from it, not read back.
TEST(Membership, LeaveCursorDecidesActive) {
  const Result<MembershipRecord> open =
      decodeMembership(row(R"("state":"live-confirmed","joinCursor":5,"generation":1)"));
  ASSERT_TRUE(open.isOk()) << open.status().toString();
  EXPECT_TRUE(open->active());
  const Result<MembershipRecord> left = decodeMembership(
      row(R"("state":"durable-active","joinCursor":5,"leaveCursor":6,"generation":1)"));
  ASSERT_TRUE(left.isOk()) << left.status().toString();
  EXPECT_FALSE(left->active());
  EXPECT_EQ(left->leaveCursor, 6u);
}

// activated, writerIdentity and updatedAt are reporting only: absent, mistyped or out-of-range
// values read as their defaults and never refuse the row.
TEST(Membership, ReportingFieldsNeverRefuseARow) {
  const Result<MembershipRecord> bare = decodeMembership(row(R"("joinCursor":5,"generation":1)"));
  ASSERT_TRUE(bare.isOk()) << bare.status().toString();
  EXPECT_FALSE(bare->activated);
  EXPECT_EQ(bare->writerIdentity, "");
  EXPECT_EQ(bare->updatedAt, 0);
  const Result<MembershipRecord> mistyped = decodeMembership(row(
      R"("joinCursor":5,"generation":1,"activated":"yes","writerIdentity":7,"updatedAt":"now")"));
  ASSERT_TRUE(mistyped.isOk()) << mistyped.status().toString();
  EXPECT_FALSE(mistyped->activated);
  EXPECT_EQ(mistyped->writerIdentity, "");
  EXPECT_EQ(mistyped->updatedAt, 0);
  // Out of the int64 range: never undefined behaviour, read as 0.
  for (std::string_view at : {"1e300", "-1e300", "1e999", "18446744073709551615"}) {
    const Result<MembershipRecord> r =
        decodeMembership(row(R"("joinCursor":5,"generation":1,"updatedAt":)" + std::string(at)));
    ASSERT_TRUE(r.isOk()) << at;
    EXPECT_EQ(r->updatedAt, 0) << at;
  }
  // Every int64 is kept exactly; a fractional epoch is truncated.
  EXPECT_EQ(
      decodeMembership(row(R"("joinCursor":5,"generation":1,"updatedAt":9223372036854775807)"))
          ->updatedAt,
      INT64_MAX);
  EXPECT_EQ(decodeMembership(row(R"("joinCursor":5,"generation":1,"updatedAt":1710000000000.75)"))
                ->updatedAt,
            1710000000000);
}

// Anything that is not one JSON object is malformed-json.
TEST(Membership, MalformedJsonIsNamed) {
  for (std::string_view bad :
       {"", "{", "[]", "null", "\"row\"", "not json", R"({"channel":1,})", "{} {}"}) {
    EXPECT_EQ(membershipReason(bad), reason::kMalformedJson) << bad;
  }
}

// The channel must be present, a string and concrete (a key is never a pattern).
TEST(Membership, ChannelMustBeConcrete) {
  for (std::string_view channel : {R"("team.*")", R"("team.>")", R"(">")", R"("*")", R"("")",
                                   R"("team..x")", R"("team/x")", "7", "null"}) {
    const std::string json =
        R"({"channel":)" + std::string(channel) +
        R"(,"owner":"u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice","lifecycleUid":"u","joinCursor":1,"generation":1})";
    EXPECT_EQ(membershipReason(json), kBadMembership) << channel;
  }
  EXPECT_EQ(
      membershipReason(
          R"({"owner":"u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice","lifecycleUid":"u","joinCursor":1,"generation":1})"),
      kBadMembership);
}

// owner must hold a full, real principal (`<owner>.<actor>`); a bare owner or actor, an nkey,
// or a non-string is refused.
TEST(Membership, OwnerMustBeAPrincipal) {
  for (std::string_view owner :
       {R"("alice")", R"("u_aaaaaaaaaaaaaaaaaaaaaaaaaa")", R"("bogus.alice")",
        R"("u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice.x")", R"("local.al-ice")", R"("local.")",
        R"("UAQGWOEVJKMIO4WXSYOTLARXYOZTCXFK67JASEH6AFFFYK6FOPSKQCAD.alice")", "7", "null"}) {
    const std::string json = R"({"channel":"team.backend","owner":)" + std::string(owner) +
                             R"(,"lifecycleUid":"u","joinCursor":1,"generation":1})";
    EXPECT_EQ(membershipReason(json), kBadMembership) << owner;
  }
  EXPECT_EQ(membershipReason(
                R"({"channel":"team.backend","lifecycleUid":"u","joinCursor":1,"generation":1})"),
            kBadMembership);
}

// lifecycleUid must be present and a string.
TEST(Membership, LifecycleUidMustBeAString) {
  for (std::string_view uid : {"7", "null", "[]"}) {
    const std::string json = R"({"channel":"team.backend","owner":"local.alice","lifecycleUid":)" +
                             std::string(uid) + R"(,"joinCursor":1,"generation":1})";
    EXPECT_EQ(membershipReason(json), kBadMembership) << uid;
  }
  EXPECT_EQ(
      membershipReason(
          R"({"channel":"team.backend","owner":"local.alice","joinCursor":1,"generation":1})"),
      kBadMembership);
}

// joinCursor, generation and a present leaveCursor are integers in [0, 2^53-1]: negative,
// fractional, string, boolean, null and too-large values are refused, as is a missing cursor.
TEST(Membership, CursorsMustBeNonNegativeSafeIntegers) {
  for (std::string_view bad : {"-1", "1.5", "1e1", R"("10")", "true", "null", "[]",
                               "9007199254740992", "9223372036854775807", "18446744073709551615"}) {
    const std::string v(bad);
    EXPECT_EQ(membershipReason(row(R"("joinCursor":)" + v + R"(,"generation":1)")), kBadMembership)
        << "joinCursor " << bad;
    EXPECT_EQ(membershipReason(row(R"("joinCursor":1,"generation":)" + v)), kBadMembership)
        << "generation " << bad;
    EXPECT_EQ(membershipReason(row(R"("joinCursor":1,"generation":1,"leaveCursor":)" + v)),
              kBadMembership)
        << "leaveCursor " << bad;
  }
  EXPECT_EQ(membershipReason(row(R"("generation":1)")), kBadMembership);
  EXPECT_EQ(membershipReason(row(R"("joinCursor":1)")), kBadMembership);
  EXPECT_EQ(
      membershipReason(row(
          R"("joinCursor":9007199254740991,"generation":9007199254740991,"leaveCursor":9007199254740991)")),
      "ok");
}

// A tombstone below its own join cursor is refused; leave == join (an empty interval) is legal.
TEST(Membership, LeaveBelowJoinIsRefused) {
  EXPECT_EQ(membershipReason(row(R"("joinCursor":10,"leaveCursor":9,"generation":1)")),
            kBadMembership);
  EXPECT_EQ(membershipReason(row(R"("joinCursor":10,"leaveCursor":0,"generation":1)")),
            kBadMembership);
  EXPECT_EQ(membershipReason(row(R"("joinCursor":10,"leaveCursor":10,"generation":1)")), "ok");
  EXPECT_EQ(membershipReason(row(R"("joinCursor":10,"leaveCursor":11,"generation":1)")), "ok");
}

// The encoder refuses what the decoder would: a pattern channel, a bad principal, a leave below
// the join, a counter past 2^53-1.
TEST(Membership, EncoderRefusesWhatTheDecoderWould) {
  MembershipRecord r = member();
  r.channel = "team.>";
  EXPECT_EQ(encodeMembership(r).status().reason(), reason::kChannelWildcardInPublish);
  r = member();
  r.member = Principal{"bogus", "alice"};
  EXPECT_EQ(encodeMembership(r).status().reason(), reason::kNotAPrincipalOwner);
  r = member();
  r.member = Principal{"local", "al.ice"};
  EXPECT_EQ(encodeMembership(r).status().reason(), reason::kBadActorToken);
  r = member();
  r.leaveCursor = 9;
  EXPECT_EQ(encodeMembership(r).status().reason(), kBadMembership);
  r = member();
  r.joinCursor = kMaxSafe + 1;
  EXPECT_EQ(encodeMembership(r).status().reason(), kBadMembership);
  r = member();
  r.generation = kMaxSafe + 1;
  EXPECT_EQ(encodeMembership(r).status().reason(), kBadMembership);
  r = member();
  r.leaveCursor = kMaxSafe + 1;
  EXPECT_EQ(encodeMembership(r).status().reason(), kBadMembership);
}

// ---------------------------------------------------------------------------------------------
// MembershipRecord::covers

// joinCursor < seq ≤ leaveCursor: the join sequence itself is excluded, the leave sequence is
// included.
TEST(MembershipCovers, IsJoinExclusiveLeaveInclusive) {
  MembershipRecord r = member();
  r.joinCursor = 10;
  r.leaveCursor = 20;
  EXPECT_FALSE(r.covers(0));
  EXPECT_FALSE(r.covers(9));
  EXPECT_FALSE(r.covers(10));
  EXPECT_TRUE(r.covers(11));
  EXPECT_TRUE(r.covers(15));
  EXPECT_TRUE(r.covers(20));
  EXPECT_FALSE(r.covers(21));
  EXPECT_FALSE(r.covers(UINT64_MAX));
}

// An open membership has no upper bound.
TEST(MembershipCovers, OpenLeaveHasNoUpperBound) {
  MembershipRecord r = member();
  r.joinCursor = 10;
  EXPECT_FALSE(r.covers(10));
  EXPECT_TRUE(r.covers(11));
  EXPECT_TRUE(r.covers(kMaxSafe));
  EXPECT_TRUE(r.covers(UINT64_MAX));
  r.joinCursor = 0;
  EXPECT_FALSE(r.covers(0));
  EXPECT_TRUE(r.covers(1));
}

// leave == join is an empty interval: nothing is deliverable.
TEST(MembershipCovers, EmptyIntervalCoversNothing) {
  MembershipRecord r = member();
  r.joinCursor = 10;
  r.leaveCursor = 10;
  for (uint64_t seq : {uint64_t{0}, uint64_t{9}, uint64_t{10}, uint64_t{11}, kMaxSafe}) {
    EXPECT_FALSE(r.covers(seq)) << seq;
  }
}

// A rejoin starts a new interval: the gap between the old leave and the new join is covered by
// neither row, so it is never redelivered.
TEST(MembershipCovers, RejoinGapIsNeverCovered) {
  MembershipRecord left = member();
  left.joinCursor = 10;
  left.leaveCursor = 20;
  MembershipRecord rejoined = member();
  rejoined.joinCursor = 30;
  rejoined.generation = left.generation + 1;
  for (uint64_t seq = 21; seq <= 30; ++seq) {
    EXPECT_FALSE(left.covers(seq) || rejoined.covers(seq)) << seq;
  }
  EXPECT_TRUE(left.covers(20));
  EXPECT_TRUE(rejoined.covers(31));
}

// ---------------------------------------------------------------------------------------------
// AclRecord codec

// An ACL row is written as allowSubscribe, revision, updatedAt and round-trips.
TEST(Acl, EncodesGoldenBytesAndRoundTrips) {
  AclRecord r = acl({"team.>", "ops.*", "general", "*", ">"});
  r.revision = 4;
  r.updatedAt = 1710000000000;
  const Result<std::string> json = encodeAcl(r);
  ASSERT_TRUE(json.isOk()) << json.status().toString();
  EXPECT_EQ(*json, R"({"allowSubscribe":["team.>","ops.*","general","*",">"],"revision":4,)"
                   R"("updatedAt":1710000000000})");
  const Result<AclRecord> back = decodeAcl(*json);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(*back, r);
}

// `[]` is a known ACL that reads nothing; revision and updatedAt default to 0.
TEST(Acl, EmptyListIsKnownAndReadsNothing) {
  const Result<AclRecord> r = decodeAcl(R"({"allowSubscribe":[]})");
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_TRUE(r->allowSubscribe.empty());
  EXPECT_EQ(r->revision, 0u);
  EXPECT_EQ(r->updatedAt, 0);
  EXPECT_FALSE(r->covers("team.backend"));
  EXPECT_EQ(*encodeAcl(*r), R"({"allowSubscribe":[],"revision":0,"updatedAt":0})");
  // Unknown members (e.g. the reference's issuedAllowSubscribe) are ignored.
  EXPECT_EQ(aclReason(R"({"allowSubscribe":["a"],"issuedAllowSubscribe":["a"],"x":1})"), "ok");
}

// Anything that is not one JSON object is malformed-json.
TEST(Acl, MalformedJsonIsNamed) {
  for (std::string_view bad :
       {"", "{", "[]", "null", "[\"team.>\"]", "not json", R"({"allowSubscribe":[,]})"}) {
    EXPECT_EQ(aclReason(bad), reason::kMalformedJson) << bad;
  }
}

// allowSubscribe must be present and an array.
TEST(Acl, AllowSubscribeMustBeAnArray) {
  for (std::string_view allow : {R"("team.>")", "null", "{}", "7", "true"}) {
    EXPECT_EQ(aclReason(R"({"allowSubscribe":)" + std::string(allow) + "}"), kBadAcl) << allow;
  }
  EXPECT_EQ(aclReason(R"({"revision":1})"), kBadAcl);
}

// Every entry must be a string; one non-string refuses the row.
TEST(Acl, NonStringEntriesAreRefused) {
  for (std::string_view allow : {"[7]", "[null]", "[true]", R"([["team.>"]])", R"([{"p":"a"}])",
                                 R"(["team.>",7])", R"(["team.>",null,"ops"])"}) {
    EXPECT_EQ(aclReason(R"({"allowSubscribe":)" + std::string(allow) + "}"), kBadAcl) << allow;
  }
}

// Every entry must be a valid channel pattern: `>` only last, `*` and `>` only as whole segments,
// no empty segments, routing characters only, within the length limit.
TEST(Acl, BadPatternsAreRefused) {
  for (std::string_view pattern : {"", "team.>.x", ">.team", "team..a", ".team", "team.", "team.a*",
                                   "te>am", "team a", "team/a", "tëam"}) {
    EXPECT_EQ(aclReason(R"({"allowSubscribe":["ok",")" + std::string(pattern) + R"("]})"), kBadAcl)
        << pattern;
  }
  EXPECT_EQ(aclReason(R"({"allowSubscribe":[")" + std::string(5000, 'c') + R"("]})"), kBadAcl);
  EXPECT_EQ(encodeAcl(acl({"team.>.x"})).status().reason(), reason::kChannelWildcardNotLast);
  EXPECT_EQ(encodeAcl(acl({"team..a"})).status().reason(), reason::kChannelEmptySegment);
}

// revision, when present, is an integer in [0, 2^53-1].
TEST(Acl, RevisionMustBeANonNegativeSafeInteger) {
  for (std::string_view bad :
       {"-1", "1.5", R"("4")", "null", "true", "9007199254740992", "18446744073709551615"}) {
    EXPECT_EQ(aclReason(R"({"allowSubscribe":[],"revision":)" + std::string(bad) + "}"), kBadAcl)
        << bad;
  }
  EXPECT_EQ(decodeAcl(R"({"allowSubscribe":[],"revision":9007199254740991})")->revision, kMaxSafe);
  AclRecord r = acl({});
  r.revision = kMaxSafe + 1;
  EXPECT_EQ(encodeAcl(r).status().reason(), kBadAcl);
}

// ---------------------------------------------------------------------------------------------
// AclRecord::covers

// `team.>` covers every channel strictly below team (one or more segments), never bare `team`
// and never a sibling whose name merely starts with "team".
TEST(AclCovers, TailWildcardNeedsAtLeastOneSegment) {
  const AclRecord r = acl({"team.>"});
  EXPECT_TRUE(r.covers("team.a"));
  EXPECT_TRUE(r.covers("team.a.b"));
  EXPECT_TRUE(r.covers("team.backend.eu.x"));
  EXPECT_FALSE(r.covers("team"));
  EXPECT_FALSE(r.covers("teams.a"));
  EXPECT_FALSE(r.covers("tea.a"));
  EXPECT_FALSE(r.covers("ops.team.a"));
  EXPECT_FALSE(r.covers("Team.a"));
}

// `*` is exactly one segment: it covers every single-segment channel and nothing deeper.
TEST(AclCovers, StarIsExactlyOneSegment) {
  const AclRecord star = acl({"*"});
  EXPECT_TRUE(star.covers("general"));
  EXPECT_TRUE(star.covers("team"));
  EXPECT_FALSE(star.covers("team.a"));
  const AclRecord teamStar = acl({"team.*"});
  EXPECT_TRUE(teamStar.covers("team.a"));
  EXPECT_FALSE(teamStar.covers("team"));
  EXPECT_FALSE(teamStar.covers("team.a.b"));
  const AclRecord midStar = acl({"*.backend"});
  EXPECT_TRUE(midStar.covers("team.backend"));
  EXPECT_FALSE(midStar.covers("backend"));
  EXPECT_FALSE(midStar.covers("team.backend.eu"));
}

// `>` alone covers every channel; an exact pattern covers only itself.
TEST(AclCovers, FullWildcardAndExactPatterns) {
  const AclRecord all = acl({">"});
  EXPECT_TRUE(all.covers("general"));
  EXPECT_TRUE(all.covers("team.a.b"));
  const AclRecord exact = acl({"team.backend"});
  EXPECT_TRUE(exact.covers("team.backend"));
  EXPECT_FALSE(exact.covers("team"));
  EXPECT_FALSE(exact.covers("team.backend.eu"));
  EXPECT_FALSE(exact.covers("team.backen"));
}

// Some pattern matching is enough; none matching refuses.
TEST(AclCovers, AnyPatternSuffices) {
  const AclRecord r = acl({"ops.*", "team.>", "general"});
  EXPECT_TRUE(r.covers("ops.deploy"));
  EXPECT_TRUE(r.covers("team.a.b"));
  EXPECT_TRUE(r.covers("general"));
  EXPECT_FALSE(r.covers("ops.deploy.eu"));
  EXPECT_FALSE(r.covers("team"));
  EXPECT_FALSE(r.covers("random"));
}

}  // namespace
}  // namespace shoal::wire
