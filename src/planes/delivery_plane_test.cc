// The delivery plane against a real nats-server, with real endpoints as members: the durable
// backstop's acceptance list (issue 7) — offline durable members, live mentions, late joiners,
// leave as a hard boundary, the reader's ACL rule, and the shard lease with liveness grading.
// Killing a `shoal serve` mid-fan-out and two planes started at once as processes are in
// tests/integration/cli_delivery_test.cc.
#include "planes/delivery_plane.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/ids.h"
#include "mesh/delivery_rail.h"
#include "mesh/endpoint.h"
#include "mesh/liveness_probe.h"
#include "planes/shard_lease.h"
#include "testing/eventually.h"
#include "testing/managed_space.h"
#include "transport/kv.h"
#include "wire/delivery_frame.h"
#include "wire/membership.h"
#include "wire/subject.h"

#include <gtest/gtest.h>

namespace shoal::planes {
namespace {

using shoal::testing::eventually;
using std::chrono::milliseconds;

class Inbox {
 public:
  mesh::HandlerVerdict take(const mesh::Delivery& d) {
    std::lock_guard lock(mu_);
    got_.push_back(d);
    return mesh::HandlerVerdict::kAccepted;
  }
  std::vector<mesh::Delivery> all() const {
    std::lock_guard lock(mu_);
    return got_;
  }
  size_t count() const { return all().size(); }
  size_t countOf(const std::string& id) const {
    auto a = all();
    return std::count_if(a.begin(), a.end(),
                         [&](const mesh::Delivery& d) { return d.message.id == id; });
  }

 private:
  mutable std::mutex mu_;
  std::vector<mesh::Delivery> got_;
};

class DeliveryPlaneTest : public shoal::testing::ManagedSpaceTest {
 protected:
  void SetUp() override {
    ManagedSpaceTest::SetUp();
    if (HasFatalFailure()) return;
    auto options = optionsForServer();
    options.sendAsap = true;
    planeConn_ = connect(options);
    ASSERT_NE(planeConn_, nullptr);
    auto js = transport::JetStream::create(*planeConn_);
    ASSERT_TRUE(js.isOk());
    planeJs_.emplace(std::move(js).value());
    startPlane();
  }

  void TearDown() override {
    endpoints_.clear();
    if (plane_) (void)plane_->stop();
    plane_.reset();
    planeJs_.reset();
    planeConn_.reset();
    ManagedSpaceTest::TearDown();
  }

  DeliveryPlaneOptions planeOptions() {
    DeliveryPlaneOptions o;
    o.space = "main";
    o.holder = "local.delivery-test";
    o.renewEvery = milliseconds(200);
    o.ackWait = milliseconds(2000);
    o.retryDelay = milliseconds(100);
    o.maxDeliveries = 3;
    o.onLost = [this](const Status&) { lost_.store(true); };
    return o;
  }

  void startPlane() {
    auto plane = DeliveryPlane::start(*planeConn_, *planeJs_, planeOptions());
    ASSERT_TRUE(plane.isOk()) << plane.status().toString();
    plane_ = std::move(plane).value();
  }

  // A member `local.<actor>` with a fixed lifecycle (so it can come back as itself).
  mesh::Endpoint* open(const std::string& actor, const std::string& uid, Inbox* inbox) {
    mesh::EndpointOptions o;
    o.servers = {server_->url()};
    o.principal = wire::Principal{"local", actor};
    o.displayName = actor;
    o.lifecycleUid = uid;
    o.fetchWait = milliseconds(200);
    o.onDelivery = [inbox](const mesh::Delivery& d) { return inbox->take(d); };
    o.onWarning = [](const Status&) {};
    auto opened = mesh::Endpoint::open(o);
    if (!opened.isOk()) {
      ADD_FAILURE() << opened.status().toString();
      return nullptr;
    }
    endpoints_.push_back(std::move(opened).value());
    return endpoints_.back().get();
  }

  void closeEndpoint(mesh::Endpoint* e) {
    auto it = std::find_if(endpoints_.begin(), endpoints_.end(),
                           [e](const auto& p) { return p.get() == e; });
    ASSERT_NE(it, endpoints_.end());
    (void)(*it)->close();
    endpoints_.erase(it);
  }

  // The messages waiting on (and not yet acked at) `actor`'s DLV durable.
  uint64_t dlvBacklog(const std::string& actor, const std::string& uid) {
    auto name = wire::dlvDurable(wire::Principal{"local", actor}, uid);
    auto info = js_->consumerInfo("DLV_main", *name);
    if (!info.isOk()) return 999;
    return info->numPending + static_cast<uint64_t>(info->numAckPending);
  }

  std::optional<FanoutJob> jobFor(const std::string& messageId) {
    for (const auto& j : plane_->jobs().snapshot()) {
      if (j.messageId == messageId && j.key.rfind("chat:", 0) == 0) return j;
    }
    return std::nullopt;
  }

  bool fannedOut(const std::string& messageId) {
    return eventually([&] {
      auto j = jobFor(messageId);
      return j && (j->state == JobState::kDelivered || j->state == JobState::kSuppressed);
    });
  }

  // Both planes' consumers have nothing left in flight.
  bool planeIdle() {
    return eventually([&] {
      auto f = js_->consumerInfo("CHAT_main", kFanoutDurable);
      auto r = js_->consumerInfo("INBOX_main", kReaderDurable);
      return f.isOk() && r.isOk() && f->numPending == 0 && f->numAckPending == 0 &&
             r->numPending == 0 && r->numAckPending == 0;
    });
  }

  void setChannel(const std::string& channel, const std::string& json) {
    auto kv = transport::KeyValue::openBucket(*js_, "cotal_channels_main");
    ASSERT_TRUE(kv.isOk());
    ASSERT_TRUE(kv->put(channel, json).isOk());
  }

  void setAcl(const std::string& actor, const std::string& uid, const std::string& json) {
    auto kv = transport::KeyValue::openBucket(*js_, "cotal_acl_main");
    ASSERT_TRUE(kv.isOk());
    ASSERT_TRUE(kv->put("local." + actor + "." + uid, json).isOk());
  }

  std::optional<wire::MembershipRecord> membership(const std::string& channel,
                                                   const std::string& actor,
                                                   const std::string& uid) {
    auto kv = transport::KeyValue::openBucket(*js_, "cotal_members_main");
    auto row = kv->get(channel + "/local." + actor + "." + uid);
    if (!row.isOk()) return std::nullopt;
    auto r = wire::decodeMembership(row->value);
    return r.isOk() ? std::optional(*r) : std::nullopt;
  }

  wire::Responder probe() {
    auto v = mesh::probeLiveness(*conn_, "main", wire::Principal{"local", "prober"}, "delivery",
                                 milliseconds(1000));
    return v.isOk() ? v->responder : wire::Responder::kUnknown;
  }

  std::string uid() { return newLifecycleUid().valueOr(""); }

  std::unique_ptr<transport::Connection> planeConn_;
  std::optional<transport::JetStream> planeJs_;
  std::unique_ptr<DeliveryPlane> plane_;
  // Inboxes outlive the endpoints that write into them (endpoints_ is destroyed first).
  Inbox& inbox() { return inboxes_.emplace_back(); }

  std::atomic<bool> lost_{false};
  std::deque<Inbox> inboxes_;
  std::vector<std::unique_ptr<mesh::Endpoint>> endpoints_;
};

// A durable channel member that is offline when a post is made receives it exactly once after
// reconnecting — from its DLV durable, without joining again.
TEST_F(DeliveryPlaneTest, OfflineDurableMemberGetsThePostExactlyOnceAfterReconnecting) {
  const std::string aliceUid = uid();
  Inbox& first = inbox();
  auto* alice = open("alice", aliceUid, &first);
  ASSERT_NE(alice, nullptr);
  auto joined = alice->join("team");
  ASSERT_TRUE(joined.isOk()) << joined.status().toString();
  EXPECT_EQ(joined->deliveryClass, "durable");
  EXPECT_TRUE(joined->durable) << joined->backstop;
  EXPECT_EQ(joined->generation, 1u);
  closeEndpoint(alice);  // offline; the membership stays

  auto bob = openSender("bob");
  ASSERT_NE(bob, nullptr);
  auto sent = bob->post("team", "while you were away");
  ASSERT_TRUE(sent.isOk()) << sent.status().toString();
  const std::string id = sent->stored.messageId;
  ASSERT_TRUE(fannedOut(id));
  EXPECT_EQ(jobFor(id)->copies, 1u);  // alice only: never the sender
  ASSERT_TRUE(eventually([&] { return dlvBacklog("alice", aliceUid) == 1; }));

  Inbox& second = inbox();
  auto* back = open("alice", aliceUid, &second);
  ASSERT_NE(back, nullptr);
  ASSERT_TRUE(eventually([&] { return second.count() >= 1; }));
  auto again = back->join("team");  // the membership is kept as it was
  ASSERT_TRUE(again.isOk());
  EXPECT_TRUE(again->durable);
  EXPECT_EQ(again->generation, 1u);
  ASSERT_TRUE(eventually([&] { return dlvBacklog("alice", aliceUid) == 0; }));
  // Everything on the DLV durable is acked, so handled: nothing else can arrive.
  ASSERT_EQ(second.count(), 1u);
  const auto got = second.all().front();
  EXPECT_EQ(got.message.id, id);
  EXPECT_EQ(got.kind, wire::DeliveryKind::kChannel);
  EXPECT_TRUE(got.durable);
  EXPECT_FALSE(got.historical);
  EXPECT_EQ(got.message.from.id, "local.bob");
  EXPECT_EQ(first.countOf(id), 0u);
}

// A live channel member offline at publish time gets nothing, unless @mentioned and authorised
// to read the channel.
TEST_F(DeliveryPlaneTest, LiveChannelCopiesOnlyForAuthorisedMentions) {
  setChannel("lobby", R"({"deliveryClass":"live"})");
  const std::string aliceUid = uid();
  const std::string carolUid = uid();
  Inbox& a0 = inbox();
  Inbox& c0 = inbox();
  auto* alice = open("alice", aliceUid, &a0);
  auto* carol = open("carol", carolUid, &c0);
  ASSERT_TRUE(alice && carol);
  auto joined = alice->join("lobby");
  ASSERT_TRUE(joined.isOk());
  EXPECT_EQ(joined->deliveryClass, "live");
  EXPECT_FALSE(joined->durable);
  EXPECT_TRUE(joined->backstop.empty());
  ASSERT_TRUE(carol->join("lobby").isOk());
  setAcl("carol", carolUid, R"({"allowSubscribe":["ops.>"],"revision":2})");
  auto bob = openSender("bob");
  ASSERT_NE(bob, nullptr);
  ASSERT_TRUE(bob->waitForRoster(milliseconds(5000)).isOk());
  closeEndpoint(alice);
  closeEndpoint(carol);  // their last presence rows (offline) still name them

  auto plain = bob->post("lobby", "nobody is here");
  ASSERT_TRUE(plain.isOk());
  auto mention = bob->post("lobby", "alice, carol: look", {"alice", "carol"});
  ASSERT_TRUE(mention.isOk()) << mention.status().toString();
  ASSERT_TRUE(fannedOut(plain->stored.messageId));
  ASSERT_TRUE(fannedOut(mention->stored.messageId));
  EXPECT_EQ(jobFor(plain->stored.messageId)->state, JobState::kSuppressed);
  EXPECT_EQ(jobFor(plain->stored.messageId)->copies, 0u);
  EXPECT_EQ(jobFor(mention->stored.messageId)->copies, 1u);  // carol's ACL does not cover it
  ASSERT_TRUE(planeIdle());

  Inbox& a1 = inbox();
  Inbox& c1 = inbox();
  ASSERT_NE(open("alice", aliceUid, &a1), nullptr);
  ASSERT_NE(open("carol", carolUid, &c1), nullptr);
  ASSERT_TRUE(eventually([&] { return a1.count() >= 1; }));
  ASSERT_TRUE(eventually([&] { return dlvBacklog("alice", aliceUid) == 0; }));
  ASSERT_EQ(a1.count(), 1u);
  EXPECT_EQ(a1.all().front().message.id, mention->stored.messageId);
  EXPECT_TRUE(a1.all().front().durable);
  EXPECT_EQ(c1.count(), 0u);
  EXPECT_EQ(dlvBacklog("carol", carolUid), 0u);
}

// A late joiner with replay on gets the history up to its watermark marked historical, and no
// duplicate of a post it already has (live tail + durable copy = one delivery).
TEST_F(DeliveryPlaneTest, LateJoinerGetsHistoryMarkedHistoricalAndNoDuplicates) {
  auto bob = openSender("bob");
  ASSERT_NE(bob, nullptr);
  auto h1 = bob->post("team", "old one");
  auto h2 = bob->post("team", "old two");
  ASSERT_TRUE(h1.isOk() && h2.isOk());
  ASSERT_TRUE(fannedOut(h2->stored.messageId));

  const std::string aliceUid = uid();
  Inbox& got = inbox();
  auto* alice = open("alice", aliceUid, &got);
  ASSERT_NE(alice, nullptr);
  auto joined = alice->join("team");  // replay comes from the registry (default on)
  ASSERT_TRUE(joined.isOk());
  EXPECT_TRUE(joined->replay);
  EXPECT_EQ(joined->replayed, 2u);
  EXPECT_TRUE(joined->durable);
  EXPECT_EQ(membership("team", "alice", aliceUid)->joinCursor, joined->watermark);

  auto live = bob->post("team", "new one");
  ASSERT_TRUE(live.isOk());
  ASSERT_TRUE(fannedOut(live->stored.messageId));
  ASSERT_TRUE(planeIdle());
  ASSERT_TRUE(eventually([&] { return dlvBacklog("alice", aliceUid) == 0; }));
  EXPECT_EQ(plane_->jobs().reader().handedOver, 1u);  // no copy at or below the watermark

  ASSERT_EQ(got.count(), 3u);
  EXPECT_EQ(got.countOf(h1->stored.messageId), 1u);
  EXPECT_EQ(got.countOf(h2->stored.messageId), 1u);
  EXPECT_EQ(got.countOf(live->stored.messageId), 1u);
  for (const auto& d : got.all()) {
    EXPECT_EQ(d.historical, d.message.id != live->stored.messageId) << d.message.id;
  }
  EXPECT_EQ(alice->counters().duplicates, 1u);  // the durable copy of the live post
}

// A lifecycle that comes back (a restarted seat: same principal, same uid) continues its durable
// membership: its rejoin replays nothing, so posts it took in long ago are not handed over
// again as historical (a seat whose journal pruned their tombstones would take them in again);
// a new lifecycle's first join still replays them.
TEST_F(DeliveryPlaneTest, ARejoinThatContinuesTheMembershipReplaysNothing) {
  const std::string aliceUid = uid();
  Inbox& first = inbox();
  auto* alice = open("alice", aliceUid, &first);
  ASSERT_NE(alice, nullptr);
  auto joined = alice->join("team");  // replay on (the registry's default)
  ASSERT_TRUE(joined.isOk() && joined->durable) << joined->backstop;
  EXPECT_FALSE(joined->continued);
  auto bob = openSender("bob");
  ASSERT_NE(bob, nullptr);
  auto post = bob->post("team", "taken in once");
  ASSERT_TRUE(post.isOk());
  ASSERT_TRUE(fannedOut(post->stored.messageId));
  ASSERT_TRUE(eventually([&] { return dlvBacklog("alice", aliceUid) == 0; }));
  ASSERT_EQ(first.countOf(post->stored.messageId), 1u);
  closeEndpoint(alice);  // alice's daemon ends

  Inbox& again = inbox();
  auto* aliceAgain = open("alice", aliceUid, &again);
  ASSERT_NE(aliceAgain, nullptr);
  auto rejoined = aliceAgain->join("team");
  ASSERT_TRUE(rejoined.isOk()) << rejoined.status().toString();
  EXPECT_TRUE(rejoined->continued);
  EXPECT_FALSE(rejoined->replay);
  EXPECT_EQ(rejoined->replayed, 0u);
  EXPECT_EQ(rejoined->generation, joined->generation);

  Inbox& carolGot = inbox();
  auto* carol = open("carol", uid(), &carolGot);
  ASSERT_NE(carol, nullptr);
  auto fresh = carol->join("team");
  ASSERT_TRUE(fresh.isOk());
  EXPECT_FALSE(fresh->continued);
  EXPECT_EQ(fresh->replayed, 1u);
  EXPECT_EQ(again.countOf(post->stored.messageId), 0u) << "alice took it in before her restart";
}

// The same rejoin while the delivery plane is down (a whole-mesh crash restarted the seat before
// the plane): the plane cannot say the membership continues, but the caller remembers holding it
// (JoinOptions::heldDurably, as a seat's journal does), so nothing is replayed, and the copy of
// the post made meanwhile arrives once the plane is back. A join without that memory replays.
TEST_F(DeliveryPlaneTest, ARejoinThePlaneCannotAnswerReplaysNothingWhenTheMembershipWasHeld) {
  const std::string aliceUid = uid();
  Inbox& first = inbox();
  auto* alice = open("alice", aliceUid, &first);
  ASSERT_NE(alice, nullptr);
  auto joined = alice->join("team");
  ASSERT_TRUE(joined.isOk() && joined->durable) << joined->backstop;
  auto bob = openSender("bob");
  ASSERT_NE(bob, nullptr);
  auto before = bob->post("team", "taken in once");
  ASSERT_TRUE(before.isOk());
  ASSERT_TRUE(fannedOut(before->stored.messageId));
  ASSERT_TRUE(eventually([&] { return dlvBacklog("alice", aliceUid) == 0; }));
  closeEndpoint(alice);
  ASSERT_TRUE(plane_->stop().isOk());
  plane_.reset();
  auto meanwhile = bob->post("team", "posted while both were down");
  ASSERT_TRUE(meanwhile.isOk());

  Inbox& again = inbox();
  auto* aliceAgain = open("alice", aliceUid, &again);
  ASSERT_NE(aliceAgain, nullptr);
  mesh::JoinOptions held;
  held.heldDurably = true;
  auto rejoined = aliceAgain->join("team", held);
  ASSERT_TRUE(rejoined.isOk()) << rejoined.status().toString();
  EXPECT_TRUE(rejoined->continued);
  EXPECT_FALSE(rejoined->durable);
  EXPECT_FALSE(rejoined->replay);
  EXPECT_EQ(rejoined->replayed, 0u);
  EXPECT_NE(rejoined->backstop.find("taken to continue"), std::string::npos) << rejoined->backstop;

  Inbox& carolGot = inbox();
  auto* carol = open("carol", uid(), &carolGot);
  ASSERT_NE(carol, nullptr);
  auto unknown = carol->join("team");  // nothing remembered: the replay is its only catch-up
  ASSERT_TRUE(unknown.isOk());
  EXPECT_FALSE(unknown->continued);
  EXPECT_EQ(unknown->replayed, 2u);

  startPlane();
  ASSERT_TRUE(eventually([&] { return again.countOf(meanwhile->stored.messageId) == 1; }))
      << "the plane, back, sends the copy of the post made meanwhile";
  ASSERT_TRUE(eventually([&] { return dlvBacklog("alice", aliceUid) == 0; }));
  EXPECT_EQ(again.countOf(before->stored.messageId), 0u) << "taken in before the restart";
  for (const auto& d : again.all())
    EXPECT_FALSE(d.historical) << d.message.id;
}

// A leave is a hard boundary: no copy of a later post, not even one that reaches the reader
// after the leave (a redelivered entry), and a rejoin starts a new interval.
TEST_F(DeliveryPlaneTest, LeaveIsAHardBoundary) {
  const std::string aliceUid = uid();
  Inbox& got = inbox();
  auto* alice = open("alice", aliceUid, &got);
  ASSERT_NE(alice, nullptr);
  auto joined = alice->join("team");
  ASSERT_TRUE(joined.isOk() && joined->durable);
  ASSERT_TRUE(alice->leave("team").isOk());
  auto left = membership("team", "alice", aliceUid);
  ASSERT_TRUE(left && left->leaveCursor);

  auto bob = openSender("bob");
  auto after = bob->post("team", "after the leave");
  ASSERT_TRUE(after.isOk());
  ASSERT_TRUE(fannedOut(after->stored.messageId));
  EXPECT_EQ(jobFor(after->stored.messageId)->copies, 0u);

  // An entry for that post written before the leave was recorded, arriving only now.
  wire::FanoutEntry stale;
  stale.channel = "team";
  stale.seq = after->stored.seq;
  stale.generation = joined->generation;
  auto msg = planeJs_->findMessage("CHAT_main", after->stored.seq, "cotal.main.chat.>");
  ASSERT_TRUE(msg.isOk());
  stale.msg = *wire::decodeMessage(msg->data);
  stale.msg.routing = wire::Routing{wire::RoutingField::kChannel, "team"};
  auto body = wire::encodeFanoutEntry(stale);
  ASSERT_TRUE(body.isOk()) << body.status().toString();
  auto subject = wire::dinboxSubject("main", wire::Principal{"local", "alice"}, aliceUid);
  ASSERT_TRUE(js_->publish(*subject, *body).isOk());
  ASSERT_TRUE(planeIdle());
  EXPECT_EQ(plane_->jobs().reader().suppressed, 1u);
  EXPECT_EQ(plane_->jobs().reader().handedOver, 0u);
  EXPECT_EQ(dlvBacklog("alice", aliceUid), 0u);

  auto rejoined = alice->join("team");
  ASSERT_TRUE(rejoined.isOk() && rejoined->durable);
  EXPECT_EQ(rejoined->generation, 2u);
  EXPECT_GE(membership("team", "alice", aliceUid)->joinCursor, after->stored.seq);
  // The rejoin's replay may show the post as history; it never comes as a durable copy.
  for (const auto& d : got.all()) {
    if (d.message.id == after->stored.messageId) {
      EXPECT_TRUE(d.historical);
      EXPECT_FALSE(d.durable);
    }
  }
}

// The trusted reader never hands a copy over without a read ACL: unknown ⇒ retried with a
// delay, then given up with the reason on the job; a revoked ACL ⇒ dropped.
TEST_F(DeliveryPlaneTest, ReaderDefersUnknownAclAndDropsRevokedOnes) {
  const std::string aliceUid = uid();
  Inbox& got = inbox();
  auto* alice = open("alice", aliceUid, &got);
  ASSERT_NE(alice, nullptr);
  ASSERT_TRUE(alice->join("team").isOk());
  auto acl = transport::KeyValue::openBucket(*js_, "cotal_acl_main");
  ASSERT_TRUE(acl->remove("local.alice." + aliceUid).isOk());

  auto bob = openSender("bob");
  auto unknown = bob->post("team", "no ACL yet");
  ASSERT_TRUE(unknown.isOk());
  ASSERT_TRUE(eventually([&] { return plane_->jobs().reader().failed == 1; }, milliseconds(10000)));
  EXPECT_GE(plane_->jobs().reader().deferred, 2u);
  bool reasoned = false;
  for (const auto& j : plane_->jobs().snapshot()) {
    if (j.key.rfind("copy:", 0) == 0 && j.state == JobState::kFailed) {
      reasoned = j.lastError.find("acl-unknown") != std::string::npos;
    }
  }
  EXPECT_TRUE(reasoned);

  setAcl("alice", aliceUid, R"({"allowSubscribe":["ops"],"revision":3})");
  auto revoked = bob->post("team", "not yours any more");
  ASSERT_TRUE(revoked.isOk());
  ASSERT_TRUE(planeIdle());
  EXPECT_EQ(plane_->jobs().reader().suppressed, 1u);
  EXPECT_EQ(plane_->jobs().reader().handedOver, 0u);
  EXPECT_EQ(dlvBacklog("alice", aliceUid), 0u);
}

// One plane per space: a second start is refused naming the holder; the probe grades bound,
// stale (the row now names another holder) and unbound; a lost lease quiesces the plane.
TEST_F(DeliveryPlaneTest, OneLeasePerSpaceAndTheProbeGradesIt) {
  EXPECT_EQ(probe(), wire::Responder::kBound);
  auto second = DeliveryPlane::start(*managerConn_, *managerJs_, planeOptions());
  ASSERT_FALSE(second.isOk());
  EXPECT_EQ(second.status().reason(), "lease-held");
  EXPECT_NE(second.status().message().find("local.delivery-test"), std::string::npos);

  auto lease = transport::KeyValue::openBucket(*js_, "cotal_delivery_main");
  ASSERT_TRUE(lease.isOk());
  LeaseRow other{"local.someone-else", 1, true, "feedface"};
  ASSERT_TRUE(lease->put("lease.0", encodeLeaseRow(other)).isOk());
  EXPECT_EQ(probe(), wire::Responder::kStale);
  ASSERT_TRUE(eventually([&] { return lost_.load() && plane_->quiesced(); }));
  ASSERT_TRUE(lease->remove("lease.0").isOk());
  EXPECT_EQ(probe(), wire::Responder::kUnbound);  // still answering, lease gone
  EXPECT_TRUE(plane_->stop().isOk());             // never deletes a row it does not own
  plane_.reset();
  EXPECT_EQ(probe(), wire::Responder::kUnbound);  // no responders

  startPlane();  // the lease is free again
  EXPECT_EQ(probe(), wire::Responder::kBound);
}

// The soak's broker stall: a renewal sent into a SIGSTOPped broker times out, then lands when
// the broker resumes. The next renewal adopts that write (its row carries this incarnation)
// instead of reporting `lease-lost` and stopping the plane as it did.
TEST_F(DeliveryPlaneTest, ARenewalThatLandedAfterItsTimeoutKeepsTheLease) {
  ASSERT_TRUE(plane_->stop().isOk());
  plane_.reset();
  transport::JetStreamOptions quick;
  quick.defaultTimeout = std::chrono::milliseconds(300);
  auto js = transport::JetStream::create(*managerConn_, quick);
  ASSERT_TRUE(js.isOk()) << js.status().toString();
  auto lease = ShardLease::acquire(*js, "main", "local.delivery-test");
  ASSERT_TRUE(lease.isOk()) << lease.status().toString();
  const uint64_t before = lease->revision();

  ASSERT_TRUE(server_->stall().isOk());
  Status stalled = lease->renew();
  ASSERT_TRUE(server_->resume().isOk());
  ASSERT_EQ(stalled.code(), StatusCode::kDeadlineExceeded) << stalled.toString();
  auto rows = transport::KeyValue::openBucket(*js_, "cotal_delivery_main");
  ASSERT_TRUE(rows.isOk());
  ASSERT_TRUE(eventually([&] { return rows->get("lease.0")->revision > before; }))
      << "the timed-out renewal never landed";

  Status renewed = lease->renew();
  ASSERT_TRUE(renewed.isOk()) << renewed.toString();
  EXPECT_GT(lease->revision(), before);
  EXPECT_TRUE(lease->release().isOk());
  EXPECT_EQ(rows->get("lease.0").status().code(), StatusCode::kNotFound);
}

// The rail refuses what it must: wildcards, an ACL that does not cover the channel, a stale
// leave generation.
TEST_F(DeliveryPlaneTest, RailRefusalsAreNamed) {
  const std::string aliceUid = uid();
  Inbox& got = inbox();
  auto* alice = open("alice", aliceUid, &got);
  ASSERT_NE(alice, nullptr);
  const wire::Principal p{"local", "alice"};
  auto wildcard =
      mesh::requestDurableJoin(*conn_, "main", p, aliceUid, "team.>", 0, milliseconds(3000));
  EXPECT_EQ(wildcard.status().reason(), "bad-delivery-request");
  setAcl("alice", aliceUid, R"({"allowSubscribe":["ops"],"revision":2})");
  auto denied =
      mesh::requestDurableJoin(*conn_, "main", p, aliceUid, "team", 0, milliseconds(3000));
  EXPECT_EQ(denied.status().reason(), "acl-denies");
  auto ok = mesh::requestDurableJoin(*conn_, "main", p, aliceUid, "ops", 0, milliseconds(3000));
  ASSERT_TRUE(ok.isOk()) << ok.status().toString();
  auto stale = mesh::requestDurableLeave(*conn_, "main", p, aliceUid, "ops", ok->generation + 1,
                                         milliseconds(3000));
  EXPECT_EQ(stale.status().reason(), "stale-leave");
  auto left = mesh::requestDurableLeave(*conn_, "main", p, aliceUid, "ops", ok->generation,
                                        milliseconds(3000));
  ASSERT_TRUE(left.isOk());
  auto again = mesh::requestDurableLeave(*conn_, "main", p, aliceUid, "ops", ok->generation,
                                         milliseconds(3000));
  ASSERT_TRUE(again.isOk());
  EXPECT_TRUE(again->alreadyLeft);
  auto list = mesh::requestMemberships(*conn_, "main", p, aliceUid, milliseconds(3000));
  ASSERT_TRUE(list.isOk());
  EXPECT_TRUE(list->empty());
}

}  // namespace
}  // namespace shoal::planes
