// mesh::Endpoint against a real nats-server with the space provisioned by the real manager
// plane: the SPEC §12 interop scenario, offline DMs, broker restarts, dedup and the receive
// admission rules.
#include "mesh/endpoint.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/ids.h"
#include "testing/eventually.h"
#include "testing/managed_space.h"
#include "wire/message.h"
#include "wire/names.h"

#include <gtest/gtest.h>

namespace shoal::mesh {
namespace {

using shoal::testing::eventually;
using std::chrono::milliseconds;

constexpr std::string_view kOwnerA = "u_aaaaaaaaaaaaaaaaaaaaaaaaaa";
constexpr std::string_view kOwnerB = "u_bbbbbbbbbbbbbbbbbbbbbbbbbb";
constexpr std::string_view kOwnerC = "u_cccccccccccccccccccccccccc";

wire::Principal principal(std::string_view owner, std::string_view actor) {
  return wire::Principal{std::string(owner), std::string(actor)};
}

// Everything one endpoint received, for the test thread to wait on.
class Inbox {
 public:
  HandlerVerdict take(const Delivery& d) {
    std::lock_guard lock(mu_);
    if (retryFirst_ && d.durable && d.numDelivered == 1) return HandlerVerdict::kRetryLater;
    got_.push_back(d);
    return HandlerVerdict::kAccepted;
  }
  std::vector<Delivery> all() const {
    std::lock_guard lock(mu_);
    return got_;
  }
  size_t count() const { return all().size(); }
  std::vector<Delivery> ofKind(wire::DeliveryKind kind) const {
    std::vector<Delivery> out;
    for (auto& d : all())
      if (d.kind == kind) out.push_back(d);
    return out;
  }
  std::set<std::string> ids() const {
    std::set<std::string> out;
    for (auto& d : all())
      out.insert(d.message.id);
    return out;
  }
  void retryFirstDelivery() {
    std::lock_guard lock(mu_);
    retryFirst_ = true;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Delivery> got_;
  bool retryFirst_ = false;
};

std::string textOf(const Delivery& d) {
  if (d.message.parts.empty()) return {};
  const auto* text = std::get_if<wire::TextPart>(&d.message.parts.front());
  return text ? text->text : std::string{};
}

class EndpointTest : public shoal::testing::ManagedSpaceTest {
 protected:
  void TearDown() override {
    endpoints_.clear();
    ManagedSpaceTest::TearDown();
  }

  EndpointOptions optionsFor(wire::Principal p, Inbox* inbox) {
    EndpointOptions o;
    o.servers = {server_->url()};
    o.principal = std::move(p);
    o.displayName = o.principal.actor;
    o.reconnectWait = milliseconds(50);
    o.fetchWait = milliseconds(200);
    o.retryDelay = milliseconds(100);
    if (inbox != nullptr) {
      o.onDelivery = [inbox](const Delivery& d) { return inbox->take(d); };
    } else {
      o.receiveDirect = false;
    }
    o.onWarning = [this](const Status& s) {
      std::lock_guard lock(warningsMu_);
      warnings_.push_back(s.toString());
    };
    return o;
  }

  Endpoint* open(EndpointOptions options) {
    auto endpoint = Endpoint::open(std::move(options));
    if (!endpoint.isOk()) {
      ADD_FAILURE() << "open: " << endpoint.status().toString();
      return nullptr;
    }
    endpoints_.push_back(std::move(endpoint).value());
    return endpoints_.back().get();
  }

  // Waits until `observer` sees every id in `ids` online in a current view.
  bool seesOnline(Endpoint& observer, const std::vector<std::string>& ids) {
    return eventually([&] {
      auto snapshot = observer.roster();
      if (!snapshot.view.fresh) return false;
      for (const auto& id : ids) {
        auto it = std::find_if(snapshot.rows.begin(), snapshot.rows.end(),
                               [&](const RosterRow& r) { return r.id == id; });
        if (it == snapshot.rows.end() || !it->online()) return false;
      }
      return true;
    });
  }

  bool warned(std::string_view needle) {
    std::lock_guard lock(warningsMu_);
    return std::any_of(warnings_.begin(), warnings_.end(),
                       [&](const std::string& w) { return w.find(needle) != std::string::npos; });
  }

  std::vector<std::unique_ptr<Endpoint>> endpoints_;
  std::mutex warningsMu_;
  std::vector<std::string> warnings_;
};

// SPEC §12: Alice and Bob of distinct owners; multicast is seen as kind=channel, unicast as
// kind=dm, anycast to `reviewer` by exactly one of its two holders; a late joiner gets the
// post again as a historical replay.
TEST_F(EndpointTest, InteropScenario) {
  Inbox aliceIn, bobIn, carolIn, daveIn;
  auto aliceOpts = optionsFor(principal(kOwnerA, "alice"), &aliceIn);
  aliceOpts.role = "planner";
  Endpoint* alice = open(aliceOpts);
  auto bobOpts = optionsFor(principal(kOwnerB, "bob"), &bobIn);
  bobOpts.role = "reviewer";
  bobOpts.serviceRoles = {"reviewer"};
  Endpoint* bob = open(bobOpts);
  auto carolOpts = optionsFor(principal(kOwnerC, "carol"), &carolIn);
  carolOpts.role = "reviewer";
  carolOpts.serviceRoles = {"reviewer"};
  Endpoint* carol = open(carolOpts);
  ASSERT_TRUE(alice && bob && carol);
  ASSERT_TRUE(seesOnline(*alice, {bob->id(), carol->id()}));

  ASSERT_TRUE(alice->join("team.backend").isOk());
  ASSERT_TRUE(bob->join("team.backend").isOk());

  auto posted = alice->post("team.backend", "Can you review this?", {"bob"});
  ASSERT_TRUE(posted.isOk()) << posted.status().toString();
  EXPECT_EQ(posted->stored.stream, "CHAT_main");
  EXPECT_EQ(posted->mentionIds, std::vector<std::string>{bob->id()});
  ASSERT_TRUE(eventually([&] { return bobIn.ofKind(wire::DeliveryKind::kChannel).size() == 1; }));
  auto post = bobIn.ofKind(wire::DeliveryKind::kChannel).front();
  EXPECT_EQ(post.message.from.id, alice->id());
  EXPECT_EQ(post.message.routing.target, "team.backend");
  EXPECT_EQ(post.message.mentions, std::vector<std::string>{"bob"});
  EXPECT_FALSE(post.historical);
  EXPECT_FALSE(post.durable);

  auto dm = alice->sendDirect("bob", "a direct word");
  ASSERT_TRUE(dm.isOk()) << dm.status().toString();
  EXPECT_EQ(dm->stored.stream, "DM_main");
  EXPECT_EQ(dm->target, bob->id());
  EXPECT_EQ(dm->recipientStatus, "idle");
  ASSERT_TRUE(eventually([&] { return bobIn.ofKind(wire::DeliveryKind::kDm).size() == 1; }));
  auto got = bobIn.ofKind(wire::DeliveryKind::kDm).front();
  EXPECT_EQ(textOf(got), "a direct word");
  EXPECT_EQ(got.message.id, dm->stored.messageId);
  EXPECT_TRUE(got.durable);
  EXPECT_EQ(got.message.routing.target, bob->id());

  auto work = alice->ask("reviewer", "review PR 7");
  ASSERT_TRUE(work.isOk()) << work.status().toString();
  EXPECT_EQ(work->stored.stream, "TASK_main");
  EXPECT_NE(work->note.find("2 present holder(s)"), std::string::npos) << work->note;
  ASSERT_TRUE(eventually([&] {
    return bobIn.ofKind(wire::DeliveryKind::kAnycast).size() +
               carolIn.ofKind(wire::DeliveryKind::kAnycast).size() ==
           1;
  }));
  // TASK is a work queue: once the one copy is acked the item is gone, so no second holder can
  // ever receive it. Wait for that ack rather than for time to pass.
  ASSERT_TRUE(eventually([&] {
    auto info = js_->consumerInfo("TASK_main", "svc_reviewer");
    return info.isOk() && info->ackFloor.streamSeq >= work->stored.seq &&
           info->numAckPending == 0 && info->numPending == 0;
  }));
  EXPECT_EQ(bobIn.ofKind(wire::DeliveryKind::kAnycast).size() +
                carolIn.ofKind(wire::DeliveryKind::kAnycast).size(),
            1u);

  // Alice never surfaces her own post; the channel copy was her own echo.
  EXPECT_EQ(aliceIn.count(), 0u);
  EXPECT_GE(alice->counters().ownEchoes, 1u);

  // A late joiner replays the post as historical.
  Endpoint* dave = open(optionsFor(principal(kOwnerC, "dave"), &daveIn));
  ASSERT_NE(dave, nullptr);
  JoinOptions replay;
  replay.replay = true;
  auto joined = dave->join("team.backend", replay);
  ASSERT_TRUE(joined.isOk()) << joined.status().toString();
  EXPECT_EQ(joined->replayed, 1u);
  auto historical = daveIn.ofKind(wire::DeliveryKind::kChannel);
  ASSERT_EQ(historical.size(), 1u);
  EXPECT_TRUE(historical.front().historical);
  EXPECT_EQ(historical.front().message.id, posted->stored.messageId);
}

// A DM sent while the recipient is offline is received after it connects again (same
// lifecycle, so the same durable).
TEST_F(EndpointTest, OfflineDmIsReceivedAfterConnect) {
  Inbox aliceIn, bobIn;
  Endpoint* alice = open(optionsFor(principal(kOwnerA, "alice"), &aliceIn));
  ASSERT_NE(alice, nullptr);
  auto bobOpts = optionsFor(principal(kOwnerB, "bob"), &bobIn);
  auto uid = newLifecycleUid();
  ASSERT_TRUE(uid.isOk());
  bobOpts.lifecycleUid = *uid;
  {
    auto bob = Endpoint::open(bobOpts);
    ASSERT_TRUE(bob.isOk()) << bob.status().toString();
    ASSERT_TRUE(seesOnline(*alice, {(*bob)->id()}));
    ASSERT_TRUE((*bob)->close().isOk());
  }
  // Bob's final record says offline; a DM by name still resolves (unique offline name).
  ASSERT_TRUE(eventually([&] {
    auto row = alice->roster();
    return row.view.fresh && !row.rows.empty() &&
           std::any_of(row.rows.begin(), row.rows.end(),
                       [](const RosterRow& r) { return !r.online(); });
  }));
  auto sent = alice->sendDirect("bob", "while you were out");
  ASSERT_TRUE(sent.isOk()) << sent.status().toString();
  EXPECT_EQ(sent->recipientStatus, "offline");
  EXPECT_EQ(bobIn.count(), 0u);

  Endpoint* bob = open(bobOpts);
  ASSERT_NE(bob, nullptr);
  ASSERT_TRUE(eventually([&] { return bobIn.count() == 1; }));
  EXPECT_EQ(textOf(bobIn.all().front()), "while you were out");
}

// deferReceiving: the durables are bound at open, but nothing is fetched — the DM stays
// pending at the broker — until startReceiving(); then it arrives once.
TEST_F(EndpointTest, ADeferredEndpointFetchesNothingUntilItStartsReceiving) {
  Inbox aliceIn, bobIn;
  Endpoint* alice = open(optionsFor(principal(kOwnerA, "alice"), &aliceIn));
  ASSERT_NE(alice, nullptr);
  auto bobOpts = optionsFor(principal(kOwnerB, "bob"), &bobIn);
  bobOpts.deferReceiving = true;
  Endpoint* bob = open(bobOpts);
  ASSERT_NE(bob, nullptr);
  ASSERT_FALSE(bob->dmDurable().empty());
  ASSERT_TRUE(alice->sendDirect(bob->id(), "held at the broker").isOk());
  // Stored and waiting for bob's durable; a pump would have it in flight within a fetch.
  ASSERT_TRUE(eventually([&] {
    auto info = js_->consumerInfo("DM_main", bob->dmDurable());
    return info.isOk() && info->numPending == 1;
  }));
  auto info = js_->consumerInfo("DM_main", bob->dmDurable());
  ASSERT_TRUE(info.isOk());
  EXPECT_EQ(info->numAckPending, 0u);
  EXPECT_EQ(bobIn.count(), 0u);

  bob->startReceiving();
  bob->startReceiving();  // idempotent: one pump per durable
  ASSERT_TRUE(eventually([&] { return bobIn.count() == 1; }));
  EXPECT_EQ(textOf(bobIn.all().front()), "held at the broker");
  ASSERT_TRUE(eventually([&] {
    auto after = js_->consumerInfo("DM_main", bob->dmDurable());
    return after.isOk() && after->numPending == 0 && after->numAckPending == 0;
  }));
}

// The broker restarted mid-stream on the same store loses no DM whose publish was acked.
TEST_F(EndpointTest, BrokerRestartLosesNoAckedDm) {
  Inbox aliceIn, bobIn;
  Endpoint* alice = open(optionsFor(principal(kOwnerA, "alice"), &aliceIn));
  Endpoint* bob = open(optionsFor(principal(kOwnerB, "bob"), &bobIn));
  ASSERT_TRUE(alice && bob);

  std::set<std::string> acked;
  std::atomic<int> sent{0};
  std::thread sender([&] {
    for (int i = 0; i < 200; ++i) {
      // Republish the same id until the stream acknowledges it (dedup keeps one copy).
      Outbound out;
      out.kind = wire::DeliveryKind::kDm;
      out.target = bob->id();
      out.text = "dm " + std::to_string(i);
      auto id = newUuidV7(Clock::real());
      ASSERT_TRUE(id.isOk());
      out.id = *id;
      for (int attempt = 0; attempt < 200; ++attempt) {
        auto r = publishMessage(alice->jetStream(), Clock::real(), "main",
                                Sender{alice->principal(), "alice", {}}, out);
        if (r.isOk()) {
          acked.insert(r->messageId);
          break;
        }
        // The broker is away: wait for the reconnect before publishing the same id again.
        (void)eventually(
            [&] { return alice->connection().state() == transport::ConnectionState::kConnected; });
      }
      sent.fetch_add(1);
    }
  });
  ASSERT_TRUE(eventually([&] { return sent.load() >= 60; }));
  int sentBeforeCrash = sent.load();
  ASSERT_TRUE(server_->kill9().isOk());
  ASSERT_TRUE(server_->restart().isOk());
  sender.join();
  EXPECT_LT(sentBeforeCrash, 200) << "the crash did not land mid-stream";
  EXPECT_GE(alice->connection().stats().reconnects, 1u);
  EXPECT_GE(bob->connection().stats().reconnects, 1u);
  ASSERT_EQ(acked.size(), 200u);
  ASSERT_TRUE(eventually(
      [&] {
        auto ids = bobIn.ids();
        return std::includes(ids.begin(), ids.end(), acked.begin(), acked.end());
      },
      milliseconds(30000)))
      << "received " << bobIn.ids().size() << " of " << acked.size();
  // Each id surfaced once, even if the broker redelivered after the restart.
  EXPECT_EQ(bobIn.count(), bobIn.ids().size());
}

// A copy seen live is not surfaced again by a replay, and `id:""` is never a dedup key.
TEST_F(EndpointTest, DedupAcrossLiveAndReplayButNeverOnEmptyId) {
  Inbox aliceIn, bobIn;
  Endpoint* alice = open(optionsFor(principal(kOwnerA, "alice"), &aliceIn));
  Endpoint* bob = open(optionsFor(principal(kOwnerB, "bob"), &bobIn));
  ASSERT_TRUE(alice && bob);
  ASSERT_TRUE(bob->join("ops").isOk());
  ASSERT_TRUE(alice->post("ops", "first").isOk());
  ASSERT_TRUE(eventually([&] { return bobIn.count() == 1; }));

  ASSERT_TRUE(bob->leave("ops").isOk());
  EXPECT_EQ(bob->leave("ops").reason(), "not-joined");
  JoinOptions replay;
  replay.replay = true;
  auto joined = bob->join("ops", replay);
  ASSERT_TRUE(joined.isOk());
  EXPECT_EQ(joined->replayed, 0u);
  EXPECT_EQ(bobIn.count(), 1u);
  EXPECT_GE(bob->counters().duplicates, 1u);

  // Two raw posts with id "" are both surfaced.
  auto subject = wire::chatSubject("main", alice->principal(), "ops");
  ASSERT_TRUE(subject.isOk());
  std::string body = R"({"id":"","ts":1710000000000,"space":"main","from":{"id":")" + alice->id() +
                     R"(","name":"alice"},"channel":"ops","parts":[{"kind":"text","text":"x"}]})";
  ASSERT_TRUE(conn_->publish(*subject, body).isOk());
  ASSERT_TRUE(conn_->publish(*subject, body).isOk());
  ASSERT_TRUE(eventually([&] { return bobIn.count() == 3; }));
}

// A DM whose from.id is not the subject's sender is a permanent anomaly: terminated with a
// warning, never surfaced; the next genuine DM still arrives.
TEST_F(EndpointTest, ForgedSenderIsTerminatedNotSurfaced) {
  Inbox bobIn;
  Endpoint* bob = open(optionsFor(principal(kOwnerB, "bob"), &bobIn));
  ASSERT_NE(bob, nullptr);
  auto subject = wire::instSubject("main", bob->principal(), principal(kOwnerA, "alice"));
  ASSERT_TRUE(subject.isOk());
  std::string forged = R"({"id":"forged-1","ts":1710000000000,"space":"main",)"
                       R"("from":{"id":"u_cccccccccccccccccccccccccc.mallory","name":"m"},)"
                       R"("to":")" +
                       bob->id() + R"(","parts":[{"kind":"text","text":"hi"}]})";
  ASSERT_TRUE(js_->publish(*subject, forged).isOk());
  ASSERT_TRUE(js_->publish(*subject, "{not json").isOk());
  ASSERT_TRUE(eventually([&] { return bob->counters().anomalies == 2; }));
  EXPECT_TRUE(warned("sender-mismatch"));
  EXPECT_TRUE(warned("malformed-json"));

  Inbox aliceIn;
  Endpoint* alice = open(optionsFor(principal(kOwnerA, "alice"), &aliceIn));
  ASSERT_NE(alice, nullptr);
  ASSERT_TRUE(alice->sendDirect(bob->id(), "genuine").isOk());
  ASSERT_TRUE(eventually([&] { return bobIn.count() == 1; }));
  EXPECT_EQ(textOf(bobIn.all().front()), "genuine");
  // Terminated, not left pending: the durable has nothing outstanding.
  ASSERT_TRUE(eventually([&] {
    auto info = js_->consumerInfo("DM_main", bob->dmDurable());
    return info.isOk() && info->numAckPending == 0 && info->numPending == 0;
  }));
}

// kRetryLater naks: the durable copy comes back and is surfaced once, marked redelivered.
TEST_F(EndpointTest, RetryLaterIsRedelivered) {
  Inbox aliceIn, bobIn;
  bobIn.retryFirstDelivery();
  Endpoint* alice = open(optionsFor(principal(kOwnerA, "alice"), &aliceIn));
  Endpoint* bob = open(optionsFor(principal(kOwnerB, "bob"), &bobIn));
  ASSERT_TRUE(alice && bob);
  ASSERT_TRUE(alice->sendDirect(bob->id(), "again").isOk());
  ASSERT_TRUE(eventually([&] { return bobIn.count() == 1; }));
  EXPECT_EQ(bobIn.all().front().numDelivered, 2u);
  EXPECT_EQ(bob->counters().retries, 1u);
}

// Sends that cannot be verified are refused before anything is stored.
TEST_F(EndpointTest, UnverifiableTargetsAreRefusedUnsent) {
  Inbox aliceIn;
  Endpoint* alice = open(optionsFor(principal(kOwnerA, "alice"), &aliceIn));
  ASSERT_NE(alice, nullptr);
  ASSERT_TRUE(alice->waitForRoster(milliseconds(5000)).isOk());
  auto before = js_->streamInfo("CHAT_main");
  ASSERT_TRUE(before.isOk());

  auto unknownMention = alice->post("ops", "hello", {"nobody"});
  ASSERT_FALSE(unknownMention.isOk());
  EXPECT_EQ(unknownMention.status().reason(), kReasonUnknownPeer);
  auto unknownName = alice->sendDirect("nobody", "hello");
  ASSERT_FALSE(unknownName.isOk());
  EXPECT_EQ(unknownName.status().reason(), kReasonUnknownPeer);
  EXPECT_EQ(alice->post("not a channel!", "x").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(alice->ask("bad role", "x").status().code(), StatusCode::kInvalidArgument);

  auto after = js_->streamInfo("CHAT_main");
  ASSERT_TRUE(after.isOk());
  EXPECT_EQ(after->state.lastSeq, before->state.lastSeq);

  // Two live peers named "twin" make the name ambiguous; the error lists both ids.
  Endpoint* t1 = open(optionsFor(principal(kOwnerB, "twin"), nullptr));
  Endpoint* t2 = open(optionsFor(principal(kOwnerC, "twin"), nullptr));
  ASSERT_TRUE(t1 && t2);
  ASSERT_TRUE(seesOnline(*alice, {t1->id(), t2->id()}));
  auto ambiguous = alice->sendDirect("twin", "which one?");
  ASSERT_FALSE(ambiguous.isOk());
  EXPECT_EQ(ambiguous.status().reason(), kReasonAmbiguousName);
  EXPECT_NE(ambiguous.status().message().find(t1->id()), std::string::npos);
  EXPECT_NE(ambiguous.status().message().find(t2->id()), std::string::npos);
  // An id needs no verification.
  EXPECT_TRUE(alice->sendDirect(t1->id(), "by id").isOk());
}

// Presence writes failing for a full TTL raise presence-write-stuck, which marks the
// endpoint's own roster view last-known.
TEST_F(EndpointTest, WriteStuckMarksRosterLastKnown) {
  auto o = optionsFor(principal(kOwnerA, "alice"), nullptr);
  o.heartbeat = milliseconds(300);
  o.ttl = milliseconds(1200);
  Endpoint* alice = open(o);
  ASSERT_NE(alice, nullptr);
  ASSERT_TRUE(alice->waitForRoster(milliseconds(5000)).isOk());
  EXPECT_TRUE(alice->roster().view.writeStuck.isOk());
  ASSERT_TRUE(server_->kill9().isOk());
  ASSERT_TRUE(eventually(
      [&] { return alice->roster().view.writeStuck.reason() == kReasonPresenceWriteStuck; },
      milliseconds(15000)));
  EXPECT_TRUE(alice->roster().view.lastKnown);
  EXPECT_TRUE(warned(std::string(kReasonPresenceWriteRefused)));
  // Back: the next successful write clears it.
  ASSERT_TRUE(server_->restart().isOk());
  ASSERT_TRUE(
      eventually([&] { return alice->roster().view.writeStuck.isOk(); }, milliseconds(15000)));
}

// An endpoint that cannot find its space says how to create it.
TEST_F(EndpointTest, UnprovisionedSpaceNamesTheRemedy) {
  auto o = optionsFor(principal(kOwnerA, "alice"), nullptr);
  o.space = "nowhere";
  auto endpoint = Endpoint::open(o);
  ASSERT_FALSE(endpoint.isOk());
  EXPECT_EQ(endpoint.status().reason(), "space-not-provisioned");
  EXPECT_NE(endpoint.status().message().find("shoal up"), std::string::npos);
}

}  // namespace
}  // namespace shoal::mesh
