// The grant tables against a real broker in operator mode (issue 19 item 2): for each profile,
// a connection holding exactly the minted permissions uses every allow row without a refusal,
// and every deny row — and every forgery the profile must not be able to commit — is refused
// by the broker itself (a permission violation in the error handler).
#include "planes/grants.h"

#include <set>

#include "testing/operator_fixture.h"

#include <gtest/gtest.h>

namespace shoal::planes {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr std::string_view kUid = "abcdefghijklmnopqrstuvwxyz";
constexpr std::string_view kConnId = "ibxgrantstest0000000000000000001";

// A concrete subject the pattern matches: each wildcard token becomes `x`.
std::string concrete(const std::string& pattern) {
  std::string out;
  size_t start = 0;
  while (start <= pattern.size()) {
    size_t dot = pattern.find('.', start);
    std::string token = pattern.substr(start, dot == std::string::npos ? dot : dot - start);
    out += (token == "*" || token == ">") ? "x" : token;
    if (dot == std::string::npos) break;
    out += '.';
    start = dot + 1;
  }
  return out;
}

AgentScope adaScope() {
  AgentScope s;
  s.space = "main";
  s.principal = wire::Principal{"local", "ada"};
  s.lifecycleUid = std::string(kUid);
  s.connId = std::string(kConnId);
  s.readChannels = {"team.*"};
  s.postChannels = {"team.backend"};
  s.role = "reviewer";
  return s;
}

class GrantsTest : public shoal::testing::OperatorModeServerTest {
 protected:
  struct Probe {
    GrantRow::Direction direction;
    std::string subject;
  };

  // Connects with `rows` as its permissions and runs every probe; returns the subjects the
  // broker refused. One probe at a time, each ended by a flush: when several refusals arrive
  // together nats.c keeps only the last one's text, so a refusal is counted, not read.
  std::set<std::string> refused(const std::vector<GrantRow>& rows,
                                const std::vector<Probe>& probes) {
    auto conn = connectWith(mintCreds("probe", permissionsOf(rows)), nullptr,
                            "_INBOX_" + std::string(kConnId));
    EXPECT_TRUE(conn.isOk()) << conn.status().toString() << "\n" << server_->logTail();
    if (!conn.isOk()) return {};
    std::set<std::string> out;
    std::vector<transport::Subscription> subs;
    for (const auto& p : probes) {
      const uint64_t before = (*conn)->stats().permissionViolations;
      if (p.direction == GrantRow::Direction::kPublish) {
        EXPECT_TRUE((*conn)->publish(p.subject, "probe").isOk()) << p.subject;
      } else {
        auto sub = (*conn)->subscribe(p.subject, [](transport::Message) {});
        EXPECT_TRUE(sub.isOk()) << p.subject;
        if (sub.isOk()) subs.push_back(std::move(sub).value());
      }
      // The broker's -ERR precedes the flush's PONG; the handler (its own thread) counts it
      // just after — 500 ms leaves room for a loaded machine.
      EXPECT_TRUE((*conn)->flush(seconds(5)).isOk());
      if (shoal::testing::eventually([&] { return (*conn)->stats().permissionViolations > before; },
                                     milliseconds(500)))
        out.insert(p.subject);
    }
    return out;
  }

  // Every row as a probe of its own subject made concrete; the deny rows' subjects.
  static std::vector<Probe> rowProbes(const std::vector<GrantRow>& rows,
                                      std::set<std::string>* denied) {
    std::vector<Probe> probes;
    for (const auto& row : rows) {
      if (row.direction == GrantRow::Direction::kRespond) continue;  // no subject of its own
      probes.push_back({row.direction, concrete(row.subject)});
      if (row.effect == GrantRow::Effect::kDeny) denied->insert(concrete(row.subject));
    }
    return probes;
  }
};

TEST_F(GrantsTest, TheAgentProfileHoldsExactlyItsRows) {
  auto rows = agentGrants(adaScope());
  ASSERT_TRUE(rows.isOk()) << rows.status().toString();
  std::set<std::string> denied;
  std::vector<Probe> probes = rowProbes(*rows, &denied);
  EXPECT_EQ(denied.size(), 9u) << "creates on DM, TASK and DLV, three forms each";
  EXPECT_EQ(refused(*rows, probes), denied);
}

// What a seat's credential must never do, each refused by the broker.
TEST_F(GrantsTest, AnAgentCannotForgeReadOthersOrCreateConsumers) {
  auto rows = agentGrants(adaScope());
  ASSERT_TRUE(rows.isOk());
  using D = GrantRow::Direction;
  const std::vector<Probe> forgeries = {
      {D::kPublish, "cotal.main.inst.local.bob.local.mallory"},  // a DM as someone else
      {D::kPublish, "cotal.main.svc.reviewer.local.mallory"},    // work as someone else
      {D::kPublish, "cotal.main.chat.local.mallory.team.backend"},
      {D::kPublish, "cotal.main.chat.local.ada.team.secret"},  // an undeclared channel
      {D::kPublish, "$KV.cotal_presence_main.local.bob"},      // another's presence
      {D::kPublish, "$JS.API.CONSUMER.MSG.NEXT.DM_main.dm_local-bob-" + std::string(kUid)},
      {D::kPublish, "$JS.API.CONSUMER.CREATE.DM_main"},
      {D::kPublish, "$JS.API.CONSUMER.DURABLE.CREATE.DLV_main.mine"},
      {D::kPublish, "cotal.main.live.manager.local.ada.reply.n1"},  // answering a probe
      {D::kPublish, "cotal.main.live.manager.local.bob"},           // probing as someone else
      {D::kPublish, "cotal.main.wake.local.bob"},                   // another seat's events
      {D::kPublish, "cotal.main.rcpt.local.bob.local.mallory"},     // a receipt as someone else
      {D::kPublish, "cotal.main.ep.one.manager.provision.local.bob." + std::string(kUid) + ".n"},
      {D::kPublish, "cotal.main.ep.one.delivery.join.local.bob." + std::string(kUid) + ".n"},
      {D::kSubscribe, "cotal.main.inst.local.bob.>"},               // another's DMs, live
      {D::kSubscribe, "cotal.main.chat.>"},                         // channels it may not read
      {D::kSubscribe, "_INBOX_ibxsomeoneelse00000000000000000.>"},  // another connection's inbox
      {D::kSubscribe, "cotal.main.live.manager.local.ada"},         // the responders' filter
  };
  std::set<std::string> expected;
  for (const auto& f : forgeries)
    expected.insert(f.subject);
  EXPECT_EQ(refused(*rows, forgeries), expected);
}

TEST_F(GrantsTest, ObserverAndAdminReadButNeverPublishApplicationTraffic) {
  using D = GrantRow::Direction;
  const std::vector<Probe> writes = {
      {D::kPublish, "cotal.main.inst.local.bob.local.ada"},
      {D::kPublish, "cotal.main.chat.local.ada.team.backend"},
      {D::kPublish, "cotal.main.svc.reviewer.local.ada"},
      {D::kPublish, "$KV.cotal_presence_main.local.ada"},
      {D::kPublish, "$JS.API.CONSUMER.CREATE.DM_main"},
  };
  std::set<std::string> expectedWrites;
  for (const auto& w : writes)
    expectedWrites.insert(w.subject);
  for (auto grants : {&observerGrants, &adminGrants}) {
    auto rows = grants(ReaderScope{"main", std::string(kConnId)});
    ASSERT_TRUE(rows.isOk()) << rows.status().toString();
    std::set<std::string> denied;
    std::vector<Probe> probes = rowProbes(*rows, &denied);
    EXPECT_EQ(refused(*rows, probes), denied);
    EXPECT_EQ(refused(*rows, writes), expectedWrites);
  }
  // Only the admin reads the messaging plane.
  auto observer = observerGrants(ReaderScope{"main", std::string(kConnId)});
  EXPECT_EQ(refused(*observer, {{D::kSubscribe, "cotal.main.inst.>"}}),
            std::set<std::string>{"cotal.main.inst.>"});
  auto admin = adminGrants(ReaderScope{"main", std::string(kConnId)});
  EXPECT_TRUE(refused(*admin, {{D::kSubscribe, "cotal.main.inst.>"}}).empty());
}

// The person's mail reader reads only its own mail: the pinned creates with its own filters,
// never another's, never the body-only form, never application traffic.
TEST_F(GrantsTest, TheMailboxReadsOnlyItsOwnMail) {
  auto rows = mailboxGrants(adaScope());
  ASSERT_TRUE(rows.isOk()) << rows.status().toString();
  std::set<std::string> denied;
  std::vector<Probe> probes = rowProbes(*rows, &denied);
  EXPECT_EQ(refused(*rows, probes), denied);
  const std::string dmhist = "dmhist_local-ada-" + std::string(kUid);
  using D = GrantRow::Direction;
  const std::vector<Probe> forgeries = {
      {D::kPublish, "$JS.API.CONSUMER.CREATE.DM_main." + dmhist + ".cotal.main.inst.local.bob.>"},
      {D::kPublish, "$JS.API.CONSUMER.CREATE.DM_main." + dmhist + ".cotal.main.inst.>"},
      {D::kPublish, "$JS.API.CONSUMER.CREATE.DM_main.dmhist_local-bob-" + std::string(kUid) +
                        ".cotal.main.inst.local.bob.>"},
      {D::kPublish, "$JS.API.CONSUMER.DURABLE.CREATE.DM_main." + dmhist},
      {D::kPublish, "$JS.API.CONSUMER.MSG.NEXT.DM_main.dm_local-bob-" + std::string(kUid)},
      {D::kPublish, "$JS.API.STREAM.MSG.GET.DM_main"},
      {D::kPublish, "cotal.main.inst.local.bob.local.ada"},
      {D::kPublish, "cotal.main.chat.local.ada.team.backend"},
      {D::kSubscribe, "cotal.main.inst.local.ada.>"},
  };
  std::set<std::string> expected;
  for (const auto& f : forgeries)
    expected.insert(f.subject);
  EXPECT_EQ(refused(*rows, forgeries), expected);
}

// The seat keeper (the space admin removing a dead machine's seats) writes seat records of any
// machine and nothing else: no application traffic, no other bucket, no DM history.
TEST_F(GrantsTest, TheSeatKeeperWritesSeatRecordsOnly) {
  auto rows = seatKeeperGrants(ReaderScope{"main", std::string(kConnId)});
  ASSERT_TRUE(rows.isOk()) << rows.status().toString();
  std::set<std::string> denied;
  std::vector<Probe> probes = rowProbes(*rows, &denied);
  EXPECT_EQ(refused(*rows, probes), denied);
  using D = GrantRow::Direction;
  const std::vector<Probe> allowed = {
      {D::kPublish, "$KV.shoal_seats_main.beta.u_bbbbbbbbbbbbbbbbbbbbbbbbbb.bea"},
      {D::kPublish, "$KV.shoal_seats_main.alpha.u_aaaaaaaaaaaaaaaaaaaaaaaaaa.ann"},
  };
  EXPECT_TRUE(refused(*rows, allowed).empty());
  const std::vector<Probe> forgeries = {
      {D::kPublish, "cotal.main.inst.local.bob.local.ada"},
      {D::kPublish, "cotal.main.chat.local.ada.team.backend"},
      {D::kPublish, "$KV.cotal_presence_main.local.ada"},
      {D::kPublish, "$KV.cotal_channels_main.team.backend"},
      {D::kPublish, "$KV.shoal_machines_main.beta"},
      {D::kPublish, "$JS.API.STREAM.MSG.GET.DM_main"},
      {D::kSubscribe, "cotal.main.inst.>"},
  };
  std::set<std::string> expected;
  for (const auto& f : forgeries)
    expected.insert(f.subject);
  EXPECT_EQ(refused(*rows, forgeries), expected);
}

// The registry editor writes channel records and nothing else; it reads the membership registry.
TEST_F(GrantsTest, TheRegistrarWritesTheChannelRegistryOnly) {
  auto rows = registrarGrants(ReaderScope{"main", std::string(kConnId)});
  ASSERT_TRUE(rows.isOk()) << rows.status().toString();
  std::set<std::string> denied;
  std::vector<Probe> probes = rowProbes(*rows, &denied);
  EXPECT_EQ(refused(*rows, probes), denied);
  using D = GrantRow::Direction;
  const std::vector<Probe> forgeries = {
      {D::kPublish, "cotal.main.inst.local.bob.local.ada"},
      {D::kPublish, "cotal.main.chat.local.ada.team.backend"},
      {D::kPublish, "$KV.cotal_presence_main.local.ada"},
      {D::kPublish, "$KV.shoal_seats_main.local.ada"},
      {D::kPublish, "$KV.cotal_acl_main.team.backend"},
      {D::kPublish, "$JS.API.STREAM.MSG.GET.DM_main"},
      {D::kSubscribe, "cotal.main.chat.>"},
  };
  std::set<std::string> expected;
  for (const auto& f : forgeries)
    expected.insert(f.subject);
  EXPECT_EQ(refused(*rows, forgeries), expected);
  EXPECT_TRUE(refused(*rows, {{D::kPublish, "$KV.cotal_channels_main.team.backend"}}).empty());
}

// The planes' profiles: every row usable, and what each plane must never do refused — no
// application publish, no reads of anyone's directed durables, no probe sent, and neither plane
// can serve (or answer) the other's liveness.
TEST_F(GrantsTest, EachPlaneHoldsExactlyItsRowsAndCannotActAsAnother) {
  using D = GrantRow::Direction;
  const std::string uid(kUid);
  const std::vector<Probe> neither = {
      {D::kPublish, "cotal.main.inst.local.bob.local.ada"},
      {D::kPublish, "cotal.main.chat.local.ada.team.backend"},
      {D::kPublish, "cotal.main.svc.reviewer.local.ada"},
      {D::kPublish, "$KV.cotal_presence_main.local.ada"},
      {D::kPublish, "$JS.API.CONSUMER.MSG.NEXT.DM_main.dm_local-bob-" + uid},
      {D::kPublish, "$JS.API.CONSUMER.MSG.NEXT.TASK_main.svc_reviewer"},
      {D::kPublish, "$JS.API.STREAM.DELETE.DM_main"},
      {D::kPublish, "$JS.API.STREAM.PURGE.CHAT_main"},
      {D::kPublish, "$JS.API.STREAM.UPDATE.CHAT_main"},
      {D::kPublish, "cotal.main.wake.local.ada"},
      {D::kSubscribe, "cotal.main.inst.>"},
      {D::kSubscribe, "cotal.main.rcpt.>"},
  };
  struct Case {
    Result<std::vector<GrantRow>> (*grants)(const PlaneScope&);
    std::vector<Probe> forbidden;
  };
  const Case cases[] = {
      {&managerGrants,
       {{D::kPublish, "cotal.main.live.manager.local.ada"},  // a probe
        {D::kPublish, "cotal.main.live.delivery.local.ada.reply.n1"},
        {D::kSubscribe, "cotal.main.live.delivery.*.*"},
        {D::kPublish, "cotal.main.dlv.local.bob." + uid},  // a forged durable copy
        {D::kPublish, "$KV.cotal_members_main.local.bob." + uid},
        {D::kPublish, "$KV.cotal_delivery_main.lease.0"}}},
      {&deliveryGrants,
       {{D::kPublish, "cotal.main.live.delivery.local.ada"},
        {D::kPublish, "cotal.main.live.manager.local.ada.reply.n1"},
        {D::kSubscribe, "cotal.main.live.manager.*.*"},
        {D::kPublish, "$KV.cotal_acl_main.local.bob." + uid},      // ACL rows are the manager's
        {D::kSubscribe, "cotal.main.ep.one.manager.issue.*.*.*"},  // minting is the manager's
        {D::kPublish, "$JS.API.CONSUMER.CREATE.DM_main"},
        {D::kPublish, "$JS.API.CONSUMER.CREATE.CHAT_main.another"},
        {D::kPublish, "$JS.API.STREAM.CREATE.DM_main"}}},
  };
  for (const Case& c : cases) {
    auto rows = c.grants(PlaneScope{"main", std::string(kConnId)});
    ASSERT_TRUE(rows.isOk()) << rows.status().toString();
    EXPECT_TRUE(permissionsOf(*rows).responses.has_value()) << "rail replies to inboxes";
    std::set<std::string> denied;
    EXPECT_EQ(refused(*rows, rowProbes(*rows, &denied)), denied);
    std::vector<Probe> forbidden = neither;
    forbidden.insert(forbidden.end(), c.forbidden.begin(), c.forbidden.end());
    std::set<std::string> expected;
    for (const auto& f : forbidden)
      expected.insert(f.subject);
    EXPECT_EQ(refused(*rows, forbidden), expected);
  }
  auto agent = agentGrants(adaScope());
  EXPECT_FALSE(permissionsOf(*agent).responses.has_value()) << "an agent answers nothing";
}

// The daemon profile: the seat bucket and its own credential requests, nothing else — no
// application traffic, no durable, and no credential request as another owner or machine.
TEST_F(GrantsTest, TheDaemonHoldsItsBucketAndItsOwnCredentialRequestsOnly) {
  using D = GrantRow::Direction;
  const std::string owner = "u_aaaaaaaaaaaaaaaaaaaaaaaaaa";
  const std::string other = "u_bbbbbbbbbbbbbbbbbbbbbbbbbb";
  auto rows = daemonGrants(DaemonScope{"main", owner, "laptop", std::string(kConnId)});
  ASSERT_TRUE(rows.isOk()) << rows.status().toString();
  EXPECT_FALSE(permissionsOf(*rows).responses.has_value()) << "a daemon answers nothing";
  std::set<std::string> denied;
  EXPECT_EQ(refused(*rows, rowProbes(*rows, &denied)), denied);
  const std::string issue = "cotal.main.ep.one.manager.issue.";
  const std::vector<Probe> forbidden = {
      {D::kPublish, issue + other + ".laptop.n1"},       // a credential as another owner
      {D::kPublish, issue + owner + ".desktop.n1"},      // as another machine
      {D::kPublish, "$KV.shoal_machines_main.desktop"},  // another machine's name
      // Seat profiles: another machine's, another owner's on this machine, the legacy form.
      {D::kPublish, "$KV.shoal_seats_main.desktop." + owner + ".ada"},
      {D::kPublish, "$KV.shoal_seats_main.laptop." + other + ".ada"},
      {D::kPublish, "$KV.shoal_seats_main." + owner + ".ada"},
      {D::kPublish, "cotal.main.inst." + owner + ".ada." + owner + ".laptop"},
      {D::kPublish, "cotal.main.chat." + owner + ".ada.general"},
      {D::kPublish, "cotal.main.wake." + owner + ".ada"},
      {D::kPublish, "$KV.cotal_presence_main." + owner + ".ada"},
      {D::kPublish, "$JS.API.CONSUMER.CREATE.DM_main"},
      {D::kPublish, "$JS.API.CONSUMER.MSG.NEXT.DM_main.dm_x"},
      {D::kPublish, "$JS.API.STREAM.CREATE.DM_main"},
      {D::kPublish,
       "cotal.main.ep.one.manager.provision." + owner + ".ada." + std::string(kUid) + ".n"},
      {D::kPublish, "cotal.main.live.manager." + owner + ".ada"},
      {D::kSubscribe, "cotal.main.ep.one.manager.issue.*.*.*"},  // serving the rail
      {D::kSubscribe, "cotal.main.inst.>"},
  };
  std::set<std::string> expected;
  for (const auto& f : forbidden)
    expected.insert(f.subject);
  EXPECT_EQ(refused(*rows, forbidden), expected);
  EXPECT_EQ(
      daemonGrants(DaemonScope{"main", "local", "laptop", std::string(kConnId)}).status().reason(),
      "bad-caller");
}

// An invite's bootstrap credential can do one thing: send its own invite to the join rail.
TEST_F(GrantsTest, AnInvitesBootstrapSendsItsOwnInviteOnly) {
  using D = GrantRow::Direction;
  const std::string owner = "u_aaaaaaaaaaaaaaaaaaaaaaaaaa";
  const std::string other = "u_bbbbbbbbbbbbbbbbbbbbbbbbbb";
  const std::string invite = "0123456789abcdef0123456789abcdef";
  auto rows = bootstrapGrants(BootstrapScope{"main", owner, "beta", invite, std::string(kConnId)});
  ASSERT_TRUE(rows.isOk()) << rows.status().toString();
  EXPECT_EQ(rows->size(), 2u);
  std::set<std::string> denied;
  EXPECT_EQ(refused(*rows, rowProbes(*rows, &denied)), denied);
  const std::string join = "cotal.main.ep.one.manager.join.";
  const std::vector<Probe> forbidden = {
      {D::kPublish, join + owner + ".gamma." + invite},  // another machine name
      {D::kPublish, join + other + ".beta." + invite},   // another owner
      {D::kPublish, join + owner + ".beta.ffffffffffffffffffffffffffffffff"},  // another invite
      {D::kPublish, "cotal.main.ep.one.manager.issue." + owner + ".beta.n1"},
      {D::kPublish, "$KV.shoal_seats_main." + owner + ".ada"},
      {D::kPublish, "$JS.API.INFO"},
      {D::kPublish, "cotal.main.chat." + owner + ".ada.general"},
      {D::kSubscribe, "cotal.main.ep.one.manager.join.*.*.*"},  // serving the rail
      {D::kSubscribe, "cotal.main.chat.>"},
  };
  std::set<std::string> expected;
  for (const auto& f : forbidden)
    expected.insert(f.subject);
  EXPECT_EQ(refused(*rows, forbidden), expected);
  auto open = bootstrapGrants(BootstrapScope{"main", owner, "", invite, std::string(kConnId)});
  ASSERT_TRUE(open.isOk());
  EXPECT_TRUE(refused(*open, {{D::kPublish, join + owner + ".gamma." + invite}}).empty())
      << "an invite without a machine lets the joiner name it";
}

TEST(GrantRows, BadScopesAreRefusedWithTheirReason) {
  AgentScope s = adaScope();
  s.connId = "short";
  EXPECT_EQ(agentGrants(s).status().reason(), "bad-conn-id");
  s = adaScope();
  s.postChannels = {"team.*"};
  EXPECT_FALSE(agentGrants(s).isOk()) << "a post grant names a concrete channel";
  s = adaScope();
  s.lifecycleUid = "UPPER";
  EXPECT_FALSE(agentGrants(s).isOk());
  EXPECT_FALSE(observerGrants(ReaderScope{"bad space", std::string(kConnId)}).isOk());
  EXPECT_EQ(managerGrants(PlaneScope{"main", "short"}).status().reason(), "bad-conn-id");
  EXPECT_FALSE(deliveryGrants(PlaneScope{"bad space", std::string(kConnId)}).isOk());
}

}  // namespace
}  // namespace shoal::planes
