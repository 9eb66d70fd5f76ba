// Exec seats (raw stdin) against a real nats-server and manager plane: a DM reaches the
// runtime's stdin exactly once (also across a seat restart), with a receipt; inflight owners of
// a previous daemon end failed, never replayed; a partial stdin write fails its handoff; a
// runtime a killed daemon left behind is ended by the next one.
#include "daemon/seat.h"

#include <algorithm>
#include <csignal>
#include <map>

#include <boost/json.hpp>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/subprocess.h"
#include "daemon/seat_files.h"
#include "journal/ownership_journal.h"
#include "mesh/endpoint.h"
#include "planes/space_provisioner.h"
#include "testing/eventually.h"
#include "testing/managed_space.h"
#include "testing/occurrences.h"
#include "testing/temp_dir.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

using shoal::testing::eventually;
using std::chrono::milliseconds;

using shoal::testing::occurrences;

class SeatTest : public shoal::testing::ManagedSpaceTest {
 protected:
  void SetUp() override {
    ManagedSpaceTest::SetUp();
    if (HasFatalFailure()) return;
    auto dir = shoal::testing::TempDir::create("seat");
    ASSERT_TRUE(dir.isOk());
    dir_.emplace(std::move(dir).value());
    alice_ = openSender("alice");
    ASSERT_NE(alice_, nullptr);
  }

  void TearDown() override {
    alice_.reset();
    ManagedSpaceTest::TearDown();
  }

  SeatProfile profile() {
    SeatProfile p;
    p.name = "Reviewer";
    p.principal = wire::Principal{"local", "reviewer"};
    p.command = {"/bin/cat"};
    p.cwd = dir_->join("reviewer");
    p.lifecycleUid = "abcdefghijklmnopqrstuvwxyz";
    return p;
  }

  std::unique_ptr<Seat> startSeat(SeatProfile p,
                                  std::chrono::milliseconds stdinTimeout = milliseconds(10000)) {
    SeatOptions so;
    so.url = server_->url();
    so.space = "main";
    so.stdinWriteTimeout = stdinTimeout;
    so.restartBackoff = milliseconds(50);
    auto seat = Seat::open(p, so);
    EXPECT_TRUE(seat.isOk()) << seat.status().toString();
    return seat.isOk() ? std::move(seat).value() : nullptr;
  }

  std::string runtimeLog() {
    return FileSystem::posix().readFile(profile().cwd + "/.shoal/runtime.log").valueOr("");
  }

  std::optional<shoal::testing::TempDir> dir_;
  // What a daemon killed mid-handoff leaves — or killed between a direct admission (straight
  // to inflight(dispatching), direct_lane.h) and its write: an inflight DM `id` in the journal
  // at `workdir`.
  void leaveInflight(const std::string& workdir, const std::string& id) {
    ASSERT_TRUE(FileSystem::posix().createDirs(workdir).isOk());
    auto journal = journal::OwnershipJournal::open(FileSystem::posix(), Clock::real(), workdir);
    ASSERT_TRUE(journal.isOk()) << journal.status().toString();
    journal::Admit op;
    op.id = id;
    op.body = "dm\ncotal.main.inst.local.reviewer.local.alice\n--\n{}";
    op.target = "local.alice";
    op.dispatching = true;
    ASSERT_TRUE((*journal)->admit(op).isOk());
  }

  // A running seat that surfaced one DM `text` while WAKE_main (where receipts go) is gone;
  // nullptr (with a test failure) otherwise.
  std::unique_ptr<Seat> surfacedWhileReceiptsCannotBeStored(const std::string& text) {
    auto seat = startSeat(profile());
    if (seat == nullptr || !js_->deleteStream("WAKE_main").isOk() ||
        !alice_->sendDirect("local.reviewer", text).isOk() ||
        !eventually([&] { return seat->snapshot().counters.surfaced == 1; })) {
      ADD_FAILURE() << "the DM did not surface with WAKE_main gone";
      return nullptr;
    }
    return seat;
  }

  std::unique_ptr<mesh::Endpoint> alice_;
};

TEST_F(SeatTest, DmIsSurfacedOnceWithAReceipt) {
  auto seat = startSeat(profile());
  ASSERT_NE(seat, nullptr);
  auto sent = alice_->sendDirect("local.reviewer", "please review PR 12");
  ASSERT_TRUE(sent.isOk()) << sent.status().toString();
  ASSERT_TRUE(eventually([&] {
    return runtimeLog().find("please review PR 12") != std::string::npos;
  })) << runtimeLog();
  EXPECT_NE(runtimeLog().find("=== shoal delivery for Reviewer (local.reviewer)"),
            std::string::npos);
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.receipts == 1; }));
  EXPECT_EQ(seat->snapshot().counters.surfaced, 1u);

  // The receipt is stored for the sender, naming its evidence: cat read it from its stdin.
  auto rcpt = js_->findMessage("WAKE_main", 1, "cotal.main.rcpt.local.alice.>");
  ASSERT_TRUE(rcpt.isOk()) << rcpt.status().toString();
  EXPECT_EQ(rcpt->subject, "cotal.main.rcpt.local.alice.local.reviewer");
  EXPECT_NE(rcpt->data.find(R"("evidence":"stdin-read")"), std::string::npos) << rcpt->data;

  // Restarted on the same journal: nothing is surfaced twice; the next DM still arrives.
  seat->stop();
  seat.reset();
  seat = startSeat(profile());
  ASSERT_NE(seat, nullptr);
  ASSERT_TRUE(alice_->sendDirect("local.reviewer", "second request").isOk());
  ASSERT_TRUE(eventually([&] { return runtimeLog().find("second request") != std::string::npos; }));
  EXPECT_EQ(occurrences(runtimeLog(), "please review PR 12"), 1u) << runtimeLog();
  // The broker holds nothing unacknowledged for the seat.
  ASSERT_TRUE(eventually([&] {
    auto info = js_->consumerInfo("DM_main", "dm_local-reviewer-abcdefghijklmnopqrstuvwxyz");
    return info.isOk() && info->numAckPending == 0 && info->numPending == 0;
  }));
}

// The direct lane (seed 004 §2.1, direct_lane.h): a DM to a runtime that is accepting with
// nothing in hand or queued is admitted straight to inflight(dispatching) — one commit before
// its write — and a burst behind it is queued and follows in order, each DM surfaced once.
TEST_F(SeatTest, ADmToAnIdleRuntimeGoesStraightToInflightAndABurstFollowsInOrder) {
  auto seat = startSeat(profile());
  ASSERT_NE(seat, nullptr);
  for (uint64_t i = 1; i <= 3; ++i) {
    ASSERT_TRUE(alice_->sendDirect("local.reviewer", "one at a time " + std::to_string(i)).isOk());
    ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == i; }));
  }
  // The first may have come before the runtime was ready; the others found it idle.
  EXPECT_GE(seat->snapshot().counters.direct, 1u);

  constexpr int kBurst = 40;
  for (int i = 0; i < kBurst; ++i)
    ASSERT_TRUE(
        alice_->sendDirect("local.reviewer", "burst item " + std::to_string(i) + ".").isOk());
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 3 + kBurst; }))
      << seat->snapshot().counters.surfaced;
  const std::string log = runtimeLog();
  size_t last = 0;
  for (int i = 0; i < kBurst; ++i) {
    const std::string text = "burst item " + std::to_string(i) + ".";
    EXPECT_EQ(occurrences(log, text), 1u) << text;
    const size_t at = log.find(text);
    EXPECT_GE(at, last) << text << " came before the one sent ahead of it";
    last = at;
  }
  const SeatCounters c = seat->snapshot().counters;
  EXPECT_EQ(c.failed, 0u);
  EXPECT_EQ(c.admitted, 3u + kBurst);
  seat->stop();
  // Every one of them ended surfaced; none is left inflight.
  auto view = journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(profile().cwd));
  ASSERT_TRUE(view.isOk());
  EXPECT_TRUE(view->live.empty());
  for (const auto& t : view->tombstones)
    EXPECT_EQ(t.state, journal::OwnerState::kSurfaced) << t.id << ": " << t.reason;
}

// A seat whose journal is still where seats used to keep it (the cwd itself) keeps it: the
// journal moves into <cwd>/.shoal once at open and its records are honoured there; nothing of
// the seat's is left in the cwd but .shoal/.
TEST_F(SeatTest, AJournalOfTheOldLayoutIsMovedIntoShoalAndKept) {
  ASSERT_NO_FATAL_FAILURE(leaveInflight(profile().cwd, "m-old-layout"));
  auto seat = startSeat(profile());
  ASSERT_NE(seat, nullptr);
  EXPECT_EQ(seat->snapshot().counters.failed, 1u);  // the old record was read and settled
  seat->stop();
  EXPECT_FALSE(FileSystem::posix().exists(profile().cwd + "/.daemon-state.json"));
  EXPECT_FALSE(FileSystem::posix().exists(profile().cwd + "/.daemon-state.lock"));
  auto view = journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(profile().cwd));
  ASSERT_TRUE(view.isOk()) << view.status().toString();
  ASSERT_EQ(view->tombstones.size(), 1u);
  EXPECT_EQ(view->tombstones[0].id, "m-old-layout");
}

TEST_F(SeatTest, InflightOfAPreviousDaemonFailsWithoutReplay) {
  ASSERT_NO_FATAL_FAILURE(leaveInflight(seatFilesDir(profile().cwd), "m-inflight"));
  auto seat = startSeat(profile());
  ASSERT_NE(seat, nullptr);
  EXPECT_EQ(seat->snapshot().counters.failed, 1u);
  seat->stop();
  auto view = journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(profile().cwd));
  ASSERT_TRUE(view.isOk());
  ASSERT_EQ(view->tombstones.size(), 1u);
  EXPECT_EQ(view->tombstones[0].state, journal::OwnerState::kFailed);
  EXPECT_EQ(view->tombstones[0].reason.rfind("no-read-reconciliation", 0), 0u)
      << view->tombstones[0].reason;
  EXPECT_EQ(runtimeLog().find("m-inflight"), std::string::npos);
}

// Raw-stdin rules (seed 004 §2.1): a runtime that stops reading fills its pipe; a handoff that
// got only part of its bytes out is never replayed, and the generation is retired (a new Process
// takes the next handoffs). What the program read whole of it is surfaced; this one reads
// nothing, so every message of it fails `runtime-exited-before-reading`.
TEST_F(SeatTest, PartialStdinWriteFailsTheHandoffAndRetiresTheRuntime) {
  SeatProfile p = profile();
  const std::string agentLog = dir_->join("agent.log");
  p.command = {FAKE_STDIN_AGENT_BINARY, "--log", agentLog, "--stop-reading-after", "0"};
  auto seat = startSeat(p, milliseconds(300));
  ASSERT_NE(seat, nullptr);
  // Each DM renders to ~16 KiB (the item cap); a 64 KiB pipe takes three or four of them.
  const std::string big(20000, 'x');
  std::vector<std::string> ids;
  for (int i = 0; i < 8; ++i) {
    auto sent = alice_->sendDirect("local.reviewer", "part " + std::to_string(i) + " " + big);
    ASSERT_TRUE(sent.isOk()) << sent.status().toString();
    ids.push_back(sent->stored.messageId);
  }
  auto failedPartial = [&] {
    auto view =
        journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(profile().cwd));
    if (!view.isOk()) return std::string();
    for (const auto& t : view->tombstones) {
      // The agent read none of it: the handoff cut short by the write timeout fails as unread.
      if (t.state == journal::OwnerState::kFailed &&
          t.reason.rfind("runtime-exited-before-reading", 0) == 0) {
        return t.id;
      }
    }
    return std::string();
  };
  ASSERT_TRUE(eventually([&] { return !failedPartial().empty(); }, std::chrono::seconds(15)));
  // The generation was retired and replaced; the failed one was never handed out again.
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.launches >= 2; }));
  EXPECT_GE(seat->snapshot().counters.unexpectedExits, 1u);
  auto view = journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(profile().cwd));
  ASSERT_TRUE(view.isOk());
  for (const auto& t : view->tombstones) {
    if (t.state == journal::OwnerState::kFailed) {
      EXPECT_FALSE(t.reason.empty()) << t.id;
    }
  }
  // Nothing the agent logged can show a failed id twice (it reads nothing at all here).
  EXPECT_EQ(occurrences(FileSystem::posix().readFile(agentLog).valueOr(""), failedPartial()), 0u);
}

// The journal's terminal records, by state.
struct Ended {
  std::vector<journal::OwnershipRecord> surfaced, failed;
};
Ended endedIn(const std::string& cwd) {
  Ended out;
  auto view = journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(cwd));
  if (!view.isOk()) return out;
  for (const auto& t : view->tombstones)
    (t.state == journal::OwnerState::kSurfaced ? out.surfaced : out.failed).push_back(t);
  return out;
}

// A complete write is not "surfaced" for an exec program: bytes that wait in the pipe die with
// the program. A program that reads nothing holds its DMs unproven, and when it is stopped they
// fail `runtime-exited-before-reading` — no sender holds a `surfaced` receipt for them.
TEST_F(SeatTest, DmsAProgramNeverReadFailInsteadOfSurfacing) {
  SeatProfile p = profile();
  p.command = {FAKE_STDIN_AGENT_BINARY, "--stop-reading-after", "0"};
  auto seat = startSeat(p);
  ASSERT_NE(seat, nullptr);
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(alice_->sendDirect("local.reviewer", "unread " + std::to_string(i)).isOk());
  ASSERT_TRUE(eventually([&] {
    auto view = journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(p.cwd));
    if (!view.isOk() || view->live.size() != 5) return false;
    return std::all_of(view->live.begin(), view->live.end(),
                       [](const auto& r) { return journal::isInflight(r.state); });
  })) << "the five DMs are written and wait, unread, in the pipe";
  // Raw stdin has no read-back: the owner stays as it was made durable before the write (a
  // restart fails it, never replays it), and says what settles it.
  auto waiting = journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(p.cwd));
  ASSERT_TRUE(waiting.isOk());
  for (const auto& r : waiting->live)
    EXPECT_NE(r.reason.find("stdin; surfaced when it reads it"), std::string::npos) << r.reason;
  EXPECT_EQ(seat->snapshot().counters.surfaced, 0u);
  seat->stop();
  Ended ended = endedIn(p.cwd);
  EXPECT_TRUE(ended.surfaced.empty());
  ASSERT_EQ(ended.failed.size(), 5u);
  for (const auto& t : ended.failed)
    EXPECT_EQ(t.reason.rfind("runtime-exited-before-reading: the runtime was stopped", 0), 0u)
        << t.reason;
  EXPECT_FALSE(
      js_->findMessage("WAKE_main", 1, "cotal.main.rcpt.local.alice.>").isOk() &&
      js_->findMessage("WAKE_main", 1, "cotal.main.rcpt.local.alice.>")->data.find("surfacedAt") !=
          std::string::npos);
}

// A program that dies part way through its input: what it read is surfaced, what it never read
// fails with the reason, nothing it logged is failed and nothing is lost.
TEST_F(SeatTest, AProgramThatDiesMidInputSurfacesOnlyWhatItRead) {
  SeatProfile p = profile();
  const std::string agentLog = dir_->join("agent.log");
  p.command = {FAKE_STDIN_AGENT_BINARY, "--log", agentLog, "--exit-after", "12"};
  auto seat = startSeat(p);
  ASSERT_NE(seat, nullptr);
  const std::string pad(3000, 'p');
  std::vector<std::string> ids;
  std::map<std::string, std::string> textOf;  // by message id
  for (int i = 0; i < 40; ++i) {
    const std::string text = "dm-" + std::to_string(i) + "-end";
    auto sent = alice_->sendDirect("local.reviewer", text + " " + pad);
    ASSERT_TRUE(sent.isOk());
    ids.push_back(sent->stored.messageId);
    textOf[sent->stored.messageId] = text + " ";
  }
  ASSERT_TRUE(eventually(
      [&] {
        Ended e = endedIn(p.cwd);
        return e.surfaced.size() + e.failed.size() == ids.size();
      },
      std::chrono::seconds(20)))
      << "every DM ends surfaced or failed";
  seat->stop();
  Ended ended = endedIn(p.cwd);
  const std::string logged = FileSystem::posix().readFile(agentLog).valueOr("");
  for (const auto& t : ended.failed) {
    EXPECT_FALSE(t.reason.empty()) << t.id;
    EXPECT_EQ(logged.find(textOf[t.id]), std::string::npos)
        << textOf[t.id] << " was read but failed: " << t.reason;
  }
  EXPECT_FALSE(ended.surfaced.empty());
}

// The lifecycle events of the seat stored in WAKE_main, as JSON texts, oldest first.
std::vector<std::string> wakeEvents(transport::JetStream& js) {
  std::vector<std::string> out;
  for (uint64_t seq = 1;; ++seq) {
    auto m = js.findMessage("WAKE_main", seq, "cotal.main.wake.local.reviewer");
    if (!m.isOk()) break;
    seq = m->seq;
    out.push_back(m->data);
  }
  return out;
}

// `shoal ps` history survives a daemon restart: counters and the generation continue, and the
// new life says how the previous one ended (stopped cleanly, or killed).
TEST_F(SeatTest, CountersAndGenerationsSurviveARestart) {
  auto seat = startSeat(profile());
  ASSERT_NE(seat, nullptr);
  ASSERT_TRUE(alice_->sendDirect("local.reviewer", "first life").isOk());
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 1; }));
  const uint64_t firstGeneration = seat->snapshot().generation;
  seat->stop();
  seat.reset();

  seat = startSeat(profile());
  ASSERT_NE(seat, nullptr);
  ASSERT_TRUE(alice_->sendDirect("local.reviewer", "second life").isOk());
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 2; }))
      << seat->snapshot().counters.surfaced;
  EXPECT_GT(seat->snapshot().generation, firstGeneration);
  EXPECT_EQ(seat->snapshot().counters.launches, 2u);
  auto events = wakeEvents(*js_);
  ASSERT_TRUE(std::any_of(events.begin(), events.end(), [](const std::string& e) {
    return e.find(R"("kind":"daemon-restarted")") != std::string::npos &&
           e.find("stopped this seat cleanly") != std::string::npos;
  }));
  // Counters written while it ran (at most a second late) outlive a daemon that is killed.
  ASSERT_TRUE(eventually([&] {
    auto view =
        journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(profile().cwd));
    if (!view.isOk()) return false;
    auto it = view->sections.find("seat.history");
    return it != view->sections.end() &&
           it->second.valueJson.find(R"("surfaced":2)") != std::string::npos &&
           it->second.valueJson.find(R"("clean":false)") != std::string::npos;
  }));
}

// The receipt of a DM surfaced while the broker cannot store receipts (WAKE_<space> lost) is
// owed: stored once the stream is back, without a restart (the hour's soak lost one this way).
TEST_F(SeatTest, AReceiptTheBrokerCouldNotStoreIsStoredOnceItCan) {
  auto seat = surfacedWhileReceiptsCannotBeStored("while receipts cannot be stored");
  ASSERT_NE(seat, nullptr);
  EXPECT_EQ(seat->snapshot().counters.receipts, 0u);

  ASSERT_TRUE(planes::ensureSpace(*js_, "main").isOk());
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.receipts == 1; }))
      << "the owed receipt was never published again";
  auto rcpt = js_->findMessage("WAKE_main", 1, "cotal.main.rcpt.local.alice.>");
  ASSERT_TRUE(rcpt.isOk()) << rcpt.status().toString();
  EXPECT_NE(rcpt->data.find(R"("evidence":"stdin-read")"), std::string::npos) << rcpt->data;
}

// A seat stopped while it owes a receipt writes the debt into its journal; its next life
// publishes it.
TEST_F(SeatTest, AReceiptOwedAtAStopIsPublishedByTheNextLife) {
  auto seat = surfacedWhileReceiptsCannotBeStored("owed across a stop");
  ASSERT_NE(seat, nullptr);
  seat->stop();
  seat.reset();
  auto view = journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(profile().cwd));
  ASSERT_TRUE(view.isOk()) << view.status().toString();
  auto owed = view->sections.find("seat.receipts");
  ASSERT_NE(owed, view->sections.end());
  EXPECT_NE(owed->second.valueJson.find(R"("outcome":"surfaced")"), std::string::npos)
      << owed->second.valueJson;

  ASSERT_TRUE(planes::ensureSpace(*js_, "main").isOk());
  seat = startSeat(profile());
  ASSERT_NE(seat, nullptr);
  ASSERT_TRUE(eventually([&] {
    auto rcpt = js_->findMessage("WAKE_main", 1, "cotal.main.rcpt.local.alice.>");
    return rcpt.isOk() && rcpt->data.find("surfacedAt") != std::string::npos;
  }));
  ASSERT_TRUE(eventually([&] {
    auto after =
        journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(profile().cwd));
    if (!after.isOk()) return false;
    auto it = after->sections.find("seat.receipts");
    return it != after->sections.end() &&
           it->second.valueJson.find(R"("owed":[])") != std::string::npos;
  })) << "the debt, paid, leaves the journal";
}

// A daemon killed with SIGKILL leaves its runtime running in its own process group; the next
// daemon ends it before starting its own — and only if the pid still runs that program.
TEST_F(SeatTest, ARuntimeLeftByAKilledDaemonIsEnded) {
  ASSERT_TRUE(FileSystem::posix().createDirs(profile().cwd).isOk());
  SpawnOptions o;
  o.argv = {FAKE_STDIN_AGENT_BINARY, "--stop-reading-after", "0"};
  o.newSession = true;  // its own group, as a runtime is
  o.killOnDestroy = true;
  auto leftover = Subprocess::spawn(o);
  ASSERT_TRUE(leftover.isOk()) << leftover.status().toString();
  {
    auto journal = journal::OwnershipJournal::open(FileSystem::posix(), Clock::real(),
                                                   seatFilesDir(profile().cwd));
    ASSERT_TRUE(journal.isOk()) << journal.status().toString();
    boost::json::object process{{"pid", leftover->pid()}, {"program", FAKE_STDIN_AGENT_BINARY}};
    ASSERT_TRUE((*journal)
                    ->setSection(journal::SetSection{"runtime.process",
                                                     boost::json::serialize(process), std::nullopt})
                    .isOk());
  }
  SeatProfile p = profile();
  p.command = {FAKE_STDIN_AGENT_BINARY};
  auto seat = startSeat(p);
  ASSERT_NE(seat, nullptr);
  auto ended = leftover->wait(milliseconds(5000));
  ASSERT_TRUE(ended.isOk()) << "the leftover runtime is still running";
  EXPECT_FALSE(ended->exited);
  EXPECT_EQ(ended->signal, SIGKILL);
  EXPECT_TRUE(seat->snapshot().processRunning);
}

// A runtime that cannot even start (a missing program) is retried with backoff, then parked
// with the reason — never retried forever.
TEST_F(SeatTest, AMissingProgramParksTheSeatAfterRepeatedFailedLaunches) {
  SeatProfile p = profile();
  p.command = {dir_->join("no-such-agent")};
  auto seat = startSeat(p);
  ASSERT_NE(seat, nullptr);
  ASSERT_TRUE(
      eventually([&] { return seat->snapshot().state == "parked"; }, std::chrono::seconds(10)))
      << seat->snapshot().state;
  SeatSnapshot snap = seat->snapshot();
  EXPECT_EQ(snap.counters.launches, 0u);
  EXPECT_NE(snap.note.find("parked after 5 failed runtime starts"), std::string::npos) << snap.note;
  EXPECT_NE(snap.note.find("no-such-agent"), std::string::npos) << snap.note;
  // On the roster it is never `idle` (work would be sent to a seat that cannot take it).
  ASSERT_TRUE(eventually([&] {
    auto row = alice_->findPeer(p.principal.dotForm());
    return row.isOk() && row->presence.status == wire::PresenceStatus::kWaiting &&
           row->presence.condition && row->presence.condition->code == wire::ConditionCode::kFailed;
  }));
}

}  // namespace
}  // namespace shoal::daemon
