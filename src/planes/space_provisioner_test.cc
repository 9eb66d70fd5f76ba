// Integration tests (real nats-server): space and principal provisioning.
#include "planes/space_provisioner.h"

#include "base/ids.h"
#include "testing/nats_fixture.h"
#include "transport/jetstream.h"
#include "transport/kv.h"
#include "transport/pull_consumer.h"
#include "wire/membership.h"
#include "wire/subject.h"

#include <gtest/gtest.h>

namespace shoal::planes {
namespace {

using std::chrono::milliseconds;

class SpaceProvisionerTest : public testing::NatsServerTest {
 protected:
  void SetUp() override {
    NatsServerTest::SetUp();
    conn_ = connect();
    ASSERT_NE(conn_, nullptr);
    auto js = transport::JetStream::create(*conn_);
    ASSERT_TRUE(js.isOk()) << js.status().toString();
    js_.emplace(std::move(js).value());
  }
  std::string uid() { return newLifecycleUid().valueOr(""); }

  std::unique_ptr<transport::Connection> conn_;
  std::optional<transport::JetStream> js_;
};

const wire::Principal kAlice{"local", "alice"};
const wire::Principal kBob{"local", "bob"};

// ensureSpace creates the six streams and five buckets with Shoal's configs.
TEST_F(SpaceProvisionerTest, EnsureSpaceCreatesEveryStreamAndBucketWithItsConfig) {
  auto report = ensureSpace(*js_, "main");
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  EXPECT_EQ(report->namesIn(ResourceState::kCreated),
            (std::vector<std::string>{
                "CHAT_main", "DM_main", "TASK_main", "WAKE_main", "INBOX_main", "DLV_main",
                "cotal_presence_main", "cotal_channels_main", "cotal_channels_main/=defaults",
                "cotal_delivery_main", "cotal_members_main", "cotal_acl_main"}));

  auto chat = js_->streamInfo("CHAT_main");
  ASSERT_TRUE(chat.isOk());
  EXPECT_EQ(chat->config.subjects, std::vector<std::string>{"cotal.main.chat.>"});
  EXPECT_EQ(chat->config.maxMsgsPerSubject, kChatMaxMsgsPerSubject);
  EXPECT_TRUE(chat->config.allowDirect);
  EXPECT_EQ(chat->config.discard, transport::DiscardPolicy::kOld);
  EXPECT_EQ(chat->config.duplicateWindow, kStreamDuplicateWindow);
  EXPECT_EQ(chat->config.storage, transport::StorageType::kFile);

  auto dm = js_->streamInfo("DM_main");
  ASSERT_TRUE(dm.isOk());
  EXPECT_FALSE(dm->config.allowDirect);
  EXPECT_EQ(dm->config.subjects, std::vector<std::string>{"cotal.main.inst.>"});
  auto task = js_->streamInfo("TASK_main");
  ASSERT_TRUE(task.isOk());
  EXPECT_EQ(task->config.retention, transport::RetentionPolicy::kWorkQueue);
  EXPECT_FALSE(task->config.allowDirect);
  auto wake = js_->streamInfo("WAKE_main");
  ASSERT_TRUE(wake.isOk());
  EXPECT_EQ(wake->config.subjects.size(), 2u);

  for (const char* name : {"INBOX_main", "DLV_main"}) {
    auto backstop = js_->streamInfo(name);
    ASSERT_TRUE(backstop.isOk()) << name;
    EXPECT_EQ(backstop->config.duplicateWindow, kBackstopDuplicateWindow) << name;
    EXPECT_EQ(backstop->config.maxMsgsPerSubject, kBackstopMaxMsgsPerSubject) << name;
  }

  auto presence = js_->streamInfo("KV_cotal_presence_main");
  ASSERT_TRUE(presence.isOk());
  EXPECT_EQ(presence->config.maxAge, kPresenceTtl);
  EXPECT_EQ(presence->config.maxMsgsPerSubject, 1);
  auto delivery = js_->streamInfo("KV_cotal_delivery_main");
  ASSERT_TRUE(delivery.isOk());
  EXPECT_EQ(delivery->config.maxAge, kDeliveryLeaseTtl);
  auto channels = transport::KeyValue::openBucket(*js_, "cotal_channels_main");
  ASSERT_TRUE(channels.isOk());
  auto defaults = channels->get("=defaults");
  ASSERT_TRUE(defaults.isOk()) << defaults.status().toString();
  EXPECT_EQ(defaults->value, R"({"deliveryClass":"durable"})");
}

// A second run creates nothing and says so.
TEST_F(SpaceProvisionerTest, SecondEnsureSpaceChangesNothing) {
  ASSERT_TRUE(ensureSpace(*js_, "main").isOk());
  auto again = ensureSpace(*js_, "main");
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  EXPECT_TRUE(again->changedNothing());
  EXPECT_EQ(again->namesIn(ResourceState::kAlreadyPresent).size(), again->resources.size());
}

// An operator's `=defaults` row is kept: the manager writes it only if absent.
TEST_F(SpaceProvisionerTest, DefaultsRowIsNeverOverwritten) {
  ASSERT_TRUE(ensureSpace(*js_, "main").isOk());
  auto channels = transport::KeyValue::openBucket(*js_, "cotal_channels_main");
  ASSERT_TRUE(channels.isOk());
  ASSERT_TRUE(channels->put("=defaults", R"({"deliveryClass":"live"})").isOk());
  ASSERT_TRUE(ensureSpace(*js_, "main").isOk());
  EXPECT_EQ(channels->get("=defaults")->value, R"({"deliveryClass":"live"})");
}

// A stream that exists with another config is reported as drift and left as it is.
TEST_F(SpaceProvisionerTest, DriftIsReportedNeverRewritten) {
  auto chat = spaceStreamConfig(wire::Stream::kChat, "main", {});
  chat.maxMsgsPerSubject = 500;
  ASSERT_TRUE(js_->addStream(chat).isOk());
  auto report = ensureSpace(*js_, "main");
  ASSERT_TRUE(report.isOk());
  EXPECT_EQ(report->namesIn(ResourceState::kDrifted), std::vector<std::string>{"CHAT_main"});
  EXPECT_EQ(report->resources[0].drift,
            std::vector<std::string>{"max_msgs_per_subject is 500, want 1000"});
  EXPECT_EQ(js_->streamInfo("CHAT_main")->config.maxMsgsPerSubject, 500);
}

// The DM durable starts after the activation frontier: earlier DMs are never delivered.
TEST_F(SpaceProvisionerTest, DmDurableStartsAfterTheActivationFrontier) {
  ASSERT_TRUE(ensureSpace(*js_, "main").isOk());
  auto subject = wire::instSubject("main", kAlice, kBob);
  ASSERT_TRUE(subject.isOk());
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(js_->publish(*subject, "old").isOk());
  auto report = provisionPrincipal(*js_, "main", kAlice, uid(), {});
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  EXPECT_TRUE(report->dmCreated);
  EXPECT_EQ(report->frontier, 3u);
  ASSERT_TRUE(js_->publish(*subject, "new").isOk());

  auto consumer = transport::PullConsumer::bind(*js_, "DM_main", report->dmDurable);
  ASSERT_TRUE(consumer.isOk()) << consumer.status().toString();
  auto msgs = consumer->fetch(10, milliseconds(500));
  ASSERT_TRUE(msgs.isOk());
  ASSERT_EQ(msgs->size(), 1u);
  EXPECT_EQ((*msgs)[0].data(), "new");
  EXPECT_EQ((*msgs)[0].metadata().streamSeq, 4u);
  auto info = js_->consumerInfo("DM_main", report->dmDurable);
  EXPECT_EQ(info->config.ackWait, kMessagingAckWait);
  EXPECT_EQ(info->config.filterSubject, "cotal.main.inst.local.alice.>");
}

// Provisioning again leaves the existing durable exactly as it was, original frontier included.
TEST_F(SpaceProvisionerTest, ReprovisionKeepsTheOriginalDurable) {
  ASSERT_TRUE(ensureSpace(*js_, "main").isOk());
  auto subject = wire::instSubject("main", kAlice, kBob);
  ASSERT_TRUE(js_->publish(*subject, "before").isOk());
  const std::string u = uid();
  auto first = provisionPrincipal(*js_, "main", kAlice, u, {});
  ASSERT_TRUE(first.isOk());
  ASSERT_TRUE(js_->publish(*subject, "after").isOk());
  auto second = provisionPrincipal(*js_, "main", kAlice, u, {});
  ASSERT_TRUE(second.isOk());
  EXPECT_FALSE(second->dmCreated);
  EXPECT_EQ(second->frontier, 1u);
  EXPECT_EQ(js_->consumerInfo("DM_main", first->dmDurable)->config.optStartSeq, 2u);

  // The lifecycle's DLV durable and read-ACL row are made once; an operator's ACL is kept.
  EXPECT_TRUE(first->dlvCreated);
  EXPECT_TRUE(first->aclCreated);
  EXPECT_FALSE(second->dlvCreated);
  EXPECT_FALSE(second->aclCreated);
  auto dlv = js_->consumerInfo("DLV_main", first->dlvDurable);
  ASSERT_TRUE(dlv.isOk()) << dlv.status().toString();
  EXPECT_EQ(dlv->config.filterSubject, "cotal.main.dlv.local.alice." + u);
  auto acl = transport::KeyValue::openBucket(*js_, "cotal_acl_main");
  ASSERT_TRUE(acl.isOk());
  auto row = acl->get("local.alice." + u);
  ASSERT_TRUE(row.isOk()) << row.status().toString();
  auto decoded = wire::decodeAcl(row->value);
  ASSERT_TRUE(decoded.isOk());
  EXPECT_EQ(decoded->allowSubscribe, std::vector<std::string>{">"});
  ASSERT_TRUE(acl->put("local.alice." + u, R"({"allowSubscribe":["ops"],"revision":2})").isOk());
  ASSERT_TRUE(provisionPrincipal(*js_, "main", kAlice, u, {}).isOk());
  EXPECT_EQ(wire::decodeAcl(acl->get("local.alice." + u)->value)->allowSubscribe,
            std::vector<std::string>{"ops"});
}

// An empty DM stream gives frontier 0 and a durable that delivers everything.
TEST_F(SpaceProvisionerTest, EmptyStreamFrontierIsZero) {
  ASSERT_TRUE(ensureSpace(*js_, "main").isOk());
  auto report = provisionPrincipal(*js_, "main", kAlice, uid(), {});
  ASSERT_TRUE(report.isOk());
  EXPECT_EQ(report->frontier, 0u);
  EXPECT_EQ(js_->consumerInfo("DM_main", report->dmDurable)->config.deliverPolicy,
            transport::DeliverPolicy::kAll);
}

// svc_<role> is one work-queue durable shared by every holder: a task goes to exactly one.
TEST_F(SpaceProvisionerTest, SvcDurableIsSharedWorkQueue) {
  ASSERT_TRUE(ensureSpace(*js_, "main").isOk());
  auto a = provisionPrincipal(*js_, "main", kAlice, uid(), {"reviewer"});
  auto b = provisionPrincipal(*js_, "main", kBob, uid(), {"reviewer"});
  ASSERT_TRUE(a.isOk() && b.isOk());
  EXPECT_TRUE(a->roleCreated.at("reviewer"));
  EXPECT_FALSE(b->roleCreated.at("reviewer"));
  EXPECT_EQ(b->roleDurables.at("reviewer"), "svc_reviewer");

  auto task = wire::svcSubject("main", "reviewer", kBob);
  ASSERT_TRUE(js_->publish(*task, "t1").isOk());
  ASSERT_TRUE(js_->publish(*task, "t2").isOk());
  auto holder1 = transport::PullConsumer::bind(*js_, "TASK_main", "svc_reviewer");
  auto holder2 = transport::PullConsumer::bind(*js_, "TASK_main", "svc_reviewer");
  ASSERT_TRUE(holder1.isOk() && holder2.isOk());
  auto m1 = holder1->fetch(1, milliseconds(500));
  auto m2 = holder2->fetch(1, milliseconds(500));
  ASSERT_TRUE(m1.isOk() && m2.isOk());
  ASSERT_EQ(m1->size(), 1u);
  ASSERT_EQ(m2->size(), 1u);
  EXPECT_NE((*m1)[0].data(), (*m2)[0].data());
  ASSERT_TRUE((*m1)[0].ackSync(milliseconds(2000)).isOk());
  ASSERT_TRUE((*m2)[0].ackSync(milliseconds(2000)).isOk());
  EXPECT_TRUE(testing::eventually([&] { return js_->streamInfo("TASK_main")->state.msgs == 0; }));
}

// Provisioning before the space exists fails with the missing stream named.
TEST_F(SpaceProvisionerTest, ProvisionWithoutSpaceFails) {
  auto report = provisionPrincipal(*js_, "main", kAlice, uid(), {});
  EXPECT_EQ(report.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace shoal::planes
