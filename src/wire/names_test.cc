#include "wire/names.h"

#include <string>

#include "wire/reasons.h"
#include "wire/spec_vectors.h"

#include <gtest/gtest.h>

namespace shoal::wire {
namespace {

Principal alice() {
  return {std::string(spec::kOwnerA), "alice"};
}
constexpr std::string_view kUid = "abcdefghijklmnopqrstuvwxyz";

// Streams are `<KIND>_<space>` and store their kind's subtree (WAKE also stores receipts).
TEST(Names, StreamNamesAndSubjects) {
  EXPECT_EQ(*streamName(Stream::kChat, "main"), "CHAT_main");
  EXPECT_EQ(*streamName(Stream::kDm, "main"), "DM_main");
  EXPECT_EQ(*streamName(Stream::kTask, "main"), "TASK_main");
  EXPECT_EQ(*streamName(Stream::kInbox, "main"), "INBOX_main");
  EXPECT_EQ(*streamName(Stream::kDlv, "main"), "DLV_main");
  EXPECT_EQ(*streamName(Stream::kWake, "main"), "WAKE_main");
  EXPECT_EQ(*streamSubjects(Stream::kChat, "main"), std::vector<std::string>{"cotal.main.chat.>"});
  EXPECT_EQ(*streamSubjects(Stream::kDm, "main"), std::vector<std::string>{"cotal.main.inst.>"});
  EXPECT_EQ(*streamSubjects(Stream::kTask, "main"), std::vector<std::string>{"cotal.main.svc.>"});
  EXPECT_EQ(*streamSubjects(Stream::kInbox, "main"),
            std::vector<std::string>{"cotal.main.dinbox.>"});
  EXPECT_EQ(*streamSubjects(Stream::kDlv, "main"), std::vector<std::string>{"cotal.main.dlv.>"});
  EXPECT_EQ(*streamSubjects(Stream::kWake, "main"),
            (std::vector<std::string>{"cotal.main.wake.>", "cotal.main.rcpt.>"}));
  EXPECT_EQ(streamName(Stream::kChat, "a.b").status().reason(), reason::kBadToken);
}

// Buckets are `cotal_<what>_<space>`.
TEST(Names, BucketNames) {
  EXPECT_EQ(*bucketName(Bucket::kPresence, "main"), "cotal_presence_main");
  EXPECT_EQ(*bucketName(Bucket::kChannels, "main"), "cotal_channels_main");
  EXPECT_EQ(*bucketName(Bucket::kMembers, "main"), "cotal_members_main");
  EXPECT_EQ(*bucketName(Bucket::kAcl, "main"), "cotal_acl_main");
  EXPECT_EQ(*bucketName(Bucket::kDelivery, "main"), "cotal_delivery_main");
  EXPECT_EQ(*bucketName(Bucket::kMembership, "main"), "cotal_membership_main");
  EXPECT_EQ(*bucketName(Bucket::kManager, "main"), "cotal_manager_main");
  EXPECT_EQ(bucketName(Bucket::kAcl, "").status().reason(), reason::kBadToken);
}

// Per-instance durables use the dash-form plus the lifecycle uid; svc durables are per role.
TEST(Names, DurableNames) {
  const std::string base = "u_aaaaaaaaaaaaaaaaaaaaaaaaaa-alice-" + std::string(kUid);
  EXPECT_EQ(*lifecycleNameForm(alice(), kUid), base);
  EXPECT_EQ(*lifecycleKeyForm(alice(), kUid),
            "u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice." + std::string(kUid));
  EXPECT_EQ(*dmDurable(alice(), kUid), "dm_" + base);
  EXPECT_EQ(*dlvDurable(alice(), kUid), "dlv_" + base);
  EXPECT_EQ(*chathistDurable(alice(), kUid), "chathist_" + base);
  EXPECT_EQ(*svcDurable("reviewer"), "svc_reviewer");
  EXPECT_EQ(*memberKey("team.backend", alice(), kUid),
            "team.backend/u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice." + std::string(kUid));
}

// Name builders refuse inputs that would make an illegal or ambiguous name.
TEST(Names, RefuseBadInputs) {
  EXPECT_EQ(dmDurable(alice(), "UPPER").status().reason(), reason::kBadLifecycleUid);
  EXPECT_EQ(dmDurable({"bogus", "alice"}, kUid).status().reason(), reason::kNotAPrincipalOwner);
  EXPECT_EQ(dmDurable({"local", "a-b"}, kUid).status().reason(), reason::kBadActorToken);
  EXPECT_EQ(svcDurable("a b").status().reason(), reason::kBadToken);
  EXPECT_EQ(memberKey("team.*", alice(), kUid).status().reason(),
            reason::kChannelWildcardInPublish);
}

}  // namespace
}  // namespace shoal::wire
