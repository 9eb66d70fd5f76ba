// A seat whose runtime is the fake `codex app-server` (tests/fakes/fake_codex.cc), on a real
// broker: the Codex driver's handshake, surfacing on the echoed clientId, a terminal error that
// ends the turn once, resuming the saved thread across a restart, and the one fresh-thread
// fallback when that thread is lost (seed 004 §1.1, §2, §3).
#include <csignal>
#include <string>
#include <thread>

#include <boost/json.hpp>

#include "base/clock.h"
#include "daemon/fake_runtime_seat_test.h"

namespace shoal::daemon {
namespace {

namespace json = boost::json;
using shoal::testing::eventually;
using std::chrono::milliseconds;

class CodexSeatTest : public FakeRuntimeSeatTest {
 protected:
  SeatProfile profile() override {
    SeatProfile p;
    p.name = "Coder";
    p.principal = wire::Principal{"local", "coder"};
    p.runtime = RuntimeKind::kCodex;
    p.command = {FAKE_CODEX_BINARY, "app-server", "--fake-log", log(), "--state", state()};
    p.command.insert(p.command.end(), extraArgs_.begin(), extraArgs_.end());
    p.cwd = dir_->join("coder");
    p.lifecycleUid = "abcdefghijklmnopqrstuvwxyz";
    return p;
  }

  void tune(SeatOptions& o) override {
    o.reconcilePendingCeiling = pendingCeiling_;
    o.compactionTimeout = compactionTimeout_;
  }

  size_t compactTurns() {
    size_t n = 0;
    for (const auto& t : logged("turn")) {
      const auto* kind = t.if_contains("kind");
      n += kind != nullptr && kind->is_string() && kind->as_string() == "compact";
    }
    return n;
  }

  // One ordinary turn first: the thread exists and is idle.
  void firstTurn(Seat& seat) {
    send("hello FIRST_MARK");
    ASSERT_TRUE(eventually([&] { return seat.snapshot().counters.surfaced == 1; }));
    ASSERT_TRUE(eventually([&] { return seat.snapshot().state == "running"; }));
  }

  std::string state() { return dir_->join("fake-codex-state.json"); }

  size_t reads() {
    size_t n = 0;
    for (const auto& r : logged("request"))
      n += r.at("method").as_string() == "thread/read";
    return n;
  }

  std::vector<std::string> extraArgs_;
  milliseconds pendingCeiling_{std::chrono::minutes(15)};
  milliseconds compactionTimeout_{std::chrono::minutes(10)};
};

// A DM goes out as turn/start with clientUserMessageId = the handoff id and is surfaced exactly
// when the userMessage item echoes it; the turn's end is turn/completed.
TEST_F(CodexSeatTest, DmIsSurfacedOnTheEchoedClientIdExactlyOnce) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  const std::string id = send("please fix the build CODEX_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 1; }));
  ASSERT_TRUE(eventually([&] { return logged("turn").size() == 1; }));
  auto inputs = logged("input");
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_NE(std::string(inputs[0].at("text").as_string()).find("CODEX_MARK"), std::string::npos);
  EXPECT_EQ(inputs[0].at("via").as_string(), "turn/start");
  EXPECT_FALSE(inputs[0].at("clientId").as_string().empty());
  auto t = tombstone(id);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->state, journal::OwnerState::kSurfaced);
  ASSERT_TRUE(eventually([&] {
    auto kinds = wakeKinds();
    return std::count(kinds.begin(), kinds.end(), "turn-completed") == 1;
  }));
  EXPECT_EQ(logged("turn").front().at("status").as_string(), "completed");
}

// A non-retrying `error` ends the turn at once (the wake fails, with the runtime's words); the
// turn/completed(failed) that follows is not a second end.
TEST_F(CodexSeatTest, ATerminalErrorEndsTheTurnOnce) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  send("this one breaks FAKE_ERROR_FATAL");
  ASSERT_TRUE(eventually([&] {
    auto kinds = wakeKinds();
    return std::count(kinds.begin(), kinds.end(), "wake-failed") == 1;
  }));
  ASSERT_TRUE(eventually([&] { return logged("turn").size() == 1; }));
  send("and this one works AFTER_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 2; }));
  ASSERT_TRUE(eventually([&] {
    auto kinds = wakeKinds();
    return std::count(kinds.begin(), kinds.end(), "turn-completed") == 1;
  }));
  auto kinds = wakeKinds();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "wake-failed"), 1);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "runtime-error"), 0);  // no second turn end
  EXPECT_EQ(seat->snapshot().counters.turns, 2u);
}

// A restarted seat resumes its saved thread; when that thread is lost, the typed "no rollout
// found" refusal authorises exactly one fresh thread and the seat keeps working.
TEST_F(CodexSeatTest, RestartResumesTheThreadAndALostThreadFallsBackOnce) {
  std::string thread;
  {
    auto seat = open();
    ASSERT_NE(seat, nullptr);
    send("first FIRST_MARK");
    ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 1; }));
    ASSERT_TRUE(eventually([&] { return logged("turn").size() == 1; }));
    thread = std::string(logged("turn").back().at("threadId").as_string());
    ASSERT_FALSE(thread.empty());
  }
  {
    auto seat = open();
    ASSERT_NE(seat, nullptr);
    send("second SECOND_MARK");
    // Counters continue across seat lives (seat_history.h).
    ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 2; }));
    ASSERT_TRUE(eventually([&] { return logged("turn").size() == 2; }));
    EXPECT_EQ(logged("turn").back().at("threadId").as_string(), thread);  // resumed
  }
  // The runtime lost its threads (a wiped CODEX_HOME): resume is refused, one fresh thread.
  ASSERT_TRUE(FileSystem::posix().remove(state()).isOk());
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  send("third THIRD_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 3; }));
  ASSERT_TRUE(eventually([&] { return logged("turn").size() == 3; }));
  const std::string fresh(logged("turn").back().at("threadId").as_string());
  EXPECT_NE(fresh, thread);
  size_t resumes = 0, starts = 0;
  for (const auto& r : logged("request")) {
    resumes += r.at("method").as_string() == "thread/resume";
    starts += r.at("method").as_string() == "thread/start";
  }
  EXPECT_EQ(resumes, 2u);  // the second and the third launch
  EXPECT_EQ(starts, 2u);   // the first launch and the one fallback
}

// Busy-turn continuation (seed 004 §3): a DM arriving while a Codex turn runs is steered into it
// (turn/steer with the running turn's id) and surfaced on its own echoed clientId; one turn
// ends and its event names both DMs.
TEST_F(CodexSeatTest, ADmArrivingMidTurnIsSteeredIntoTheRunningTurn) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  const std::string first = send("long one FAKE_SLOW_1500 FIRST_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 1; }));
  const std::string second = send("and also STEER_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 2; }));
  auto inputs = logged("input");
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[1].at("via").as_string(), "turn/steer");
  EXPECT_EQ(inputs[1].at("turnId"), inputs[0].at("turnId"));
  EXPECT_NE(std::string(inputs[1].at("text").as_string()).find("STEER_MARK"), std::string::npos);
  ASSERT_TRUE(eventually([&] { return logged("turn").size() == 1; }));
  ASSERT_TRUE(eventually([&] {
    for (uint64_t seq = 1;;) {
      auto m = js_->findMessage("WAKE_main", seq, "cotal.main.wake.local.coder");
      if (!m.isOk()) return false;
      json::value v = json::parse(m->data);
      if (v.at("kind").as_string() == "turn-completed") {
        const auto& ids = v.at("messages").as_array();
        return ids.size() == 2 && ids[0].as_string() == first && ids[1].as_string() == second;
      }
      seq = m->seq + 1;
    }
  }));
  EXPECT_EQ(seat->snapshot().counters.turns, 1u);
  EXPECT_EQ(tombstone(second)->state, journal::OwnerState::kSurfaced);
}

// Reconciliation (seed 004 §3.2): a runtime killed after taking a handoff but before echoing it
// leaves the delivery's fate unknown; the next generation reads the saved thread, finds the
// handoff absent from its complete idle history, and only then hands it out again — it surfaces
// once and nothing fails.
TEST_F(CodexSeatTest, AnUnacknowledgedHandoffIsReconciledAgainstTheThreadBeforeAReplay) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  send("warm up WARM_MARK");  // a finished turn: the thread is saved and resumable
  ASSERT_TRUE(eventually([&] { return logged("turn").size() == 1; }));
  const std::string id = send("slow start FAKE_DELAY_STARTED_5000 LOST_MARK");
  ASSERT_TRUE(eventually([&] { return inputsWith("LOST_MARK") == 1; }));
  const int pid = seat->snapshot().pid;
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);  // before turn/started: written, never acknowledged
  ASSERT_TRUE(eventually([&] { return inputsWith("LOST_MARK") == 2; }, milliseconds(15000)))
      << FileSystem::posix().readFile(log()).valueOr("") << "\nseat: " << seat->snapshot().note
      << " / tombstone: " << (tombstone(id) ? tombstone(id)->reason : std::string("none"));
  ASSERT_TRUE(eventually([&] { return tombstone(id).has_value(); }, milliseconds(15000)));
  EXPECT_EQ(tombstone(id)->state, journal::OwnerState::kSurfaced) << tombstone(id)->reason;
  EXPECT_EQ(seat->snapshot().counters.failed, 0u);
  size_t reads = 0;
  for (const auto& r : logged("request"))
    reads += r.at("method").as_string() == "thread/read";
  EXPECT_EQ(reads, 1u);
}

// Seed 004 §3.2: a thread that is still active cannot prove a handoff absent — `pending` is
// read again (at least a second apart) until the elapsed ceiling, not cut short by the
// six-attempt budget of unknown results; then the delivery fails, never replayed.
TEST_F(CodexSeatTest, AnActiveThreadIsPendingUntilTheCeilingThenFailsWithoutReplay) {
  extraArgs_ = {"--read-active"};
  pendingCeiling_ = milliseconds(4000);
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  send("warm up WARM_MARK");
  ASSERT_TRUE(eventually([&] { return logged("turn").size() == 1; }));
  const std::string id = send("slow start FAKE_DELAY_STARTED_5000 PENDING_MARK");
  ASSERT_TRUE(eventually([&] { return inputsWith("PENDING_MARK") == 1; }));
  const int pid = seat->snapshot().pid;
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);  // written, never acknowledged
  ASSERT_TRUE(eventually([&] { return tombstone(id).has_value(); }, milliseconds(15000)))
      << "reads: " << reads();
  EXPECT_EQ(tombstone(id)->state, journal::OwnerState::kFailed);
  EXPECT_EQ(tombstone(id)->reason.rfind("reconcile-pending-ceiling", 0), 0u)
      << tombstone(id)->reason;
  EXPECT_GE(reads(), 3u);
  EXPECT_LE(reads(), 6u);  // about one a second, not a tight loop
  EXPECT_EQ(inputsWith("PENDING_MARK"), 1u);
}

// Seed 004 §3.3: reconciliation is a background lane. While an older owner waits on a thread
// that stays `pending`, a newly routed DM is admitted and handed off at once — it surfaces long
// before the old owner reaches its ceiling.
TEST_F(CodexSeatTest, ANewDmIsHandedOffWhileAnOlderOwnerIsStillBeingReconciled) {
  extraArgs_ = {"--read-active"};
  pendingCeiling_ = milliseconds(6000);
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  send("warm up WARM_MARK");
  ASSERT_TRUE(eventually([&] { return logged("turn").size() == 1; }));
  const std::string old = send("slow start FAKE_DELAY_STARTED_5000 OLD_MARK");
  ASSERT_TRUE(eventually([&] { return inputsWith("OLD_MARK") == 1; }));
  const int pid = seat->snapshot().pid;
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);  // written, never acknowledged
  ASSERT_TRUE(eventually([&] { return reads() >= 1; }, milliseconds(10000)));
  const std::string fresh = send("a new request FRESH_MARK");
  ASSERT_TRUE(eventually([&] { return tombstone(fresh).has_value(); }, milliseconds(10000)));
  EXPECT_EQ(tombstone(fresh)->state, journal::OwnerState::kSurfaced) << tombstone(fresh)->reason;
  EXPECT_FALSE(tombstone(old).has_value()) << "the old owner ended before the new DM surfaced";
  ASSERT_TRUE(eventually([&] { return tombstone(old).has_value(); }, milliseconds(15000)));
  EXPECT_EQ(tombstone(old)->reason.rfind("reconcile-pending-ceiling", 0), 0u)
      << tombstone(old)->reason;
  EXPECT_EQ(inputsWith("OLD_MARK"), 1u);
  EXPECT_EQ(inputsWith("FRESH_MARK"), 1u);
}

// Seed 004 §1.2: Codex may report the thread idle before the turn's turn/completed (the
// compaction race). That early idle ends nothing: a DM arriving in the gap is steered into the
// still-running turn, and the one turn/completed is the one turn end.
TEST_F(CodexSeatTest, AnEarlyIdleBeforeTurnCompletedEndsNothing) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  const std::string first = send("compacting FAKE_SLOW_300 FAKE_EARLY_IDLE_1500 FIRST_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 1; }));
  std::this_thread::sleep_for(milliseconds(600));  // into the gap between idle and completion
  ASSERT_EQ(logged("turn").size(), 0u) << "the fake's turn ended early: the gap was missed";
  const std::string second = send("in the gap GAP_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 2; }));
  ASSERT_TRUE(eventually([&] { return logged("turn").size() == 1; }));
  ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 1; }));
  auto inputs = logged("input");
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[1].at("via").as_string(), "turn/steer");
  EXPECT_EQ(inputs[1].at("turnId"), inputs[0].at("turnId"));
  EXPECT_EQ(seat->snapshot().counters.turns, 1u);
  EXPECT_EQ(tombstone(first)->state, journal::OwnerState::kSurfaced);
  EXPECT_EQ(tombstone(second)->state, journal::OwnerState::kSurfaced);
}

// Seed 004 §3.3: a delivery the runtime keeps dying on before reading it is proved absent each
// time and handed out again — three times, then it is poison and fails; the seat keeps working.
TEST_F(CodexSeatTest, ADeliveryTheRuntimeKeepsDyingOnIsPoisonAfterThreeHandoffs) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  send("warm up WARM_MARK");  // a finished turn: the thread is saved and resumable
  ASSERT_TRUE(eventually([&] { return logged("turn").size() == 1; }));
  const std::string id = send("kills it FAKE_CRASH_UNREAD POISON_MARK");
  ASSERT_TRUE(eventually([&] { return tombstone(id).has_value(); }, milliseconds(20000)))
      << "inputs: " << inputsWith("POISON_MARK");
  EXPECT_EQ(tombstone(id)->state, journal::OwnerState::kFailed);
  EXPECT_EQ(tombstone(id)->reason.rfind("poison:", 0), 0u) << tombstone(id)->reason;
  EXPECT_EQ(inputsWith("POISON_MARK"), 3u);
  send("after AFTER_MARK");
  ASSERT_TRUE(eventually([&] { return logged("turn").size() == 2; }, milliseconds(10000)));
  EXPECT_NE(seat->snapshot().state, "parked");
}

// `shoal seat compact` on a Codex seat: thread/compact/start at an idle boundary; a DM arriving
// meanwhile waits in the journal (a compact turn cannot be steered) and goes out as a turn/start
// after it; the early thread/status/changed idle ends nothing, the compaction's turn/completed
// ends it once; the session is unsafe while it runs and safe after.
TEST_F(CodexSeatTest, CompactionHoldsDeliveriesAndEndsOnceAfterTheEarlyIdle) {
  extraArgs_ = {"--compact-ms", "600"};
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  firstTurn(*seat);
  ASSERT_TRUE(eventually([&] { return seat->snapshot().resumeSafe; }));
  ASSERT_TRUE(seat->compact().isOk());
  EXPECT_EQ(seat->snapshot().compaction.state, "compacting");
  EXPECT_FALSE(seat->snapshot().resumeSafe) << "starting compaction marks the session unsafe";
  const std::string during = send("while compacting DURING_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().queued == 1; }));
  Status again = seat->compact();
  EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(again.toString().find("already-compacting"), std::string::npos) << again.toString();
  EXPECT_EQ(inputsWith("DURING_MARK"), 0u) << "nothing is handed to a compacting runtime";
  ASSERT_TRUE(eventually([&] { return seat->snapshot().compaction.state == "compacted"; }));
  ASSERT_TRUE(eventually([&] { return inputsWith("DURING_MARK") == 1; }));
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 2; }));
  EXPECT_EQ(tombstone(during)->state, journal::OwnerState::kSurfaced);
  for (const auto& input : logged("input")) {
    EXPECT_EQ(input.at("via").as_string(), "turn/start") << "never steered into the compaction";
  }
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.turns == 2; }));
  ASSERT_TRUE(eventually([&] { return seat->snapshot().resumeSafe; }));
  EXPECT_EQ(compactTurns(), 1u);
  EXPECT_EQ(wakesOf("compacted"), 1u);
  EXPECT_EQ(wakesOf("compaction-failed"), 0u);
  EXPECT_EQ(wakesOf("runtime-error"), 0u);
  EXPECT_EQ(wakesOf("turn-completed"), 2u);  // the two DM turns; the compaction is not one
}

// Compaction is refused while a turn runs (and for a seat that is not running).
TEST_F(CodexSeatTest, CompactionIsRefusedMidTurn) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  firstTurn(*seat);
  send("a long one FAKE_SLOW_1500 SLOW_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().state == "busy"; }));
  Status busy = seat->compact();
  EXPECT_EQ(busy.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(busy.toString().find("seat-busy"), std::string::npos) << busy.toString();
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.turns == 2; }));
  EXPECT_EQ(compactTurns(), 0u);
  ASSERT_TRUE(seat->sleep().isOk());
  Status asleep = seat->compact();
  EXPECT_NE(asleep.toString().find("seat-not-running"), std::string::npos) << asleep.toString();
}

// A compaction the model fails (systemError, a terminal error, turn/completed failed) ends once
// as `context_compaction_failed`; the seat keeps working on the uncompacted thread.
TEST_F(CodexSeatTest, AFailedCompactionEndsOnceAndTheSeatKeepsWorking) {
  extraArgs_ = {"--compact-fail"};
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  firstTurn(*seat);
  ASSERT_TRUE(seat->compact().isOk());
  ASSERT_TRUE(eventually([&] { return seat->snapshot().compaction.state == "failed"; }));
  EXPECT_EQ(seat->snapshot().compaction.detail.rfind("context_compaction_failed: ", 0), 0u)
      << seat->snapshot().compaction.detail;
  send("after the failure AFTER_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 2; }));
  ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 2; }));
  EXPECT_EQ(wakesOf("compaction-failed"), 1u);
  EXPECT_EQ(wakesOf("compacted"), 0u);
  EXPECT_EQ(seat->snapshot().counters.launches, 1u);
}

// A duplicate turn/completed of the compaction turn is dropped: it cannot end the turn of the
// DM handed out right after the compaction.
TEST_F(CodexSeatTest, ADuplicateCompactionCompletionEndsNothingElse) {
  extraArgs_ = {"--compact-duplicate", "--compact-ms", "300"};
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  firstTurn(*seat);
  ASSERT_TRUE(seat->compact().isOk());
  send("right after FAKE_SLOW_800 NEXT_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().compaction.state == "compacted"; }));
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 2; }));
  ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 2; }));
  EXPECT_EQ(seat->snapshot().counters.turns, 2u);
  EXPECT_EQ(seat->snapshot().counters.failed, 0u);
  EXPECT_EQ(wakesOf("compacted"), 1u);
  EXPECT_EQ(wakesOf("wake-failed"), 0u);
}

// A compaction that never ends retires the generation after the timeout; the next generation
// resumes the thread and takes the DM that waited.
TEST_F(CodexSeatTest, ACompactionThatNeverEndsRetiresTheGeneration) {
  extraArgs_ = {"--compact-hang"};
  compactionTimeout_ = milliseconds(1000);
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  firstTurn(*seat);
  const std::string thread = std::string(logged("turn").back().at("threadId").as_string());
  ASSERT_TRUE(seat->compact().isOk());
  send("waiting behind it WAIT_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().compaction.state == "failed"; }));
  EXPECT_NE(seat->snapshot().compaction.detail.find("did not end within 1 s"), std::string::npos)
      << seat->snapshot().compaction.detail;
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 2; }));
  EXPECT_EQ(seat->snapshot().counters.launches, 2u);
  ASSERT_TRUE(eventually([&] { return logged("turn").size() >= 2; }));
  EXPECT_EQ(logged("turn").back().at("threadId").as_string(), thread);  // resumed
  EXPECT_EQ(inputsWith("WAIT_MARK"), 1u);
}

// Seed 004 §2.1, last paragraph: inbox receipts a dead daemon left inflight on a Codex seat are
// reconciled against the thread's tool items after the restart — a page Codex received (its
// receipt marker in an mcpToolCall item) is surfaced, one absent from the complete idle thread
// is handed out again; neither fails (they used to end `no-read-reconciliation`).
TEST_F(CodexSeatTest, InboxReceiptsLeftByADeadDaemonAreReconciledByTheirMarker) {
  const std::string seenMarker = "shoal-rcpt-" + std::string(32, 'a');
  const std::string unseenMarker = "shoal-rcpt-" + std::string(31, 'b') + "c";
  std::string thread, seen, unseen;
  extraArgs_ = {"--compact-hang"};  // a compaction holds the two DMs in the journal
  {
    auto seat = open();
    ASSERT_NE(seat, nullptr);
    firstTurn(*seat);
    thread = std::string(logged("turn").back().at("threadId").as_string());
    ASSERT_TRUE(seat->compact().isOk());
    seen = send("read through the inbox ALPHA_PAGE_MARK");
    unseen = send("claimed but never received OMEGA_PAGE_MARK");
    ASSERT_TRUE(eventually([&] { return seat->snapshot().queued == 2; }));
  }
  // What a daemon killed between claiming a page and committing it leaves: both inflight under
  // their receipts, on the thread.
  {
    auto journal = journal::OwnershipJournal::open(FileSystem::posix(), Clock::real(),
                                                   seatFilesDir(profile().cwd));
    ASSERT_TRUE(journal.isOk()) << journal.status().toString();
    for (const auto& r : (*journal)->view().live) {
      const std::string& marker = r.id == seen ? seenMarker : unseenMarker;
      auto begun = (*journal)->beginInflight(journal::BeginInflight{
          r.id, r.token, journal::InflightPhase::kOutcomeUnknown,
          journal::RuntimeIdentity{"", thread, marker}, "inbox page claimed"});
      ASSERT_TRUE(begun.isOk()) << begun.status().toString();
    }
  }
  // Codex's history holds the tool call that received the first page only.
  {
    auto text = FileSystem::posix().readFile(state());
    ASSERT_TRUE(text.isOk());
    json::value st = json::parse(*text);
    json::object item{
        {"type", "mcpToolCall"},
        {"id", "item-inbox"},
        {"server", "shoal"},
        {"tool", "shoal_inbox"},
        {"status", "completed"},
        {"arguments", json::object{}},
        {"result", json::object{{"content", json::array{json::object{
                                                {"type", "text"},
                                                {"text", "shoal_inbox receipts [" + seenMarker +
                                                             "]\n1 message(s)"}}}}}},
        {"error", nullptr}};
    st.at("threads").at(thread).at("turns").as_array().push_back(
        json::object{{"id", "turn-inbox"},
                     {"status", "completed"},
                     {"items", json::array{item}},
                     {"error", nullptr}});
    ASSERT_TRUE(writeFileAtomically(FileSystem::posix(), state(), json::serialize(st)).isOk());
  }
  auto seat = open();  // the same command: a changed one would start a fresh thread
  ASSERT_NE(seat, nullptr);
  ASSERT_TRUE(eventually([&] { return tombstone(seen) && tombstone(unseen); }))
      << seat->snapshot().note;
  EXPECT_EQ(tombstone(seen)->state, journal::OwnerState::kSurfaced) << tombstone(seen)->reason;
  EXPECT_NE(tombstone(seen)->reason.find("reconciled"), std::string::npos)
      << tombstone(seen)->reason;
  EXPECT_EQ(tombstone(unseen)->state, journal::OwnerState::kSurfaced) << tombstone(unseen)->reason;
  EXPECT_EQ(inputsWith("ALPHA_PAGE_MARK"), 0u) << "a page Codex received was handed out again";
  EXPECT_EQ(inputsWith("OMEGA_PAGE_MARK"), 1u);
  EXPECT_EQ(seat->snapshot().counters.failed, 0u);
  EXPECT_EQ(reads(), 1u);
}

// `shoal seat interrupt` on Codex: turn/interrupt of the running turn; it ends `interrupted`
// (the wake fails, saying so), the thread and process stay, and the next DM is a new turn.
TEST_F(CodexSeatTest, InterruptStopsTheRunningTurnOnTheSameThread) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  firstTurn(*seat);
  send("never answered FAKE_HANG");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 2; }));
  ASSERT_TRUE(seat->interrupt().isOk());
  ASSERT_TRUE(eventually([&] { return wakesOf("wake-failed") == 1; }));
  auto turns = logged("turn");
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns.back().at("status").as_string(), "interrupted");
  const std::string detail = lastWakeDetail("wake-failed");
  EXPECT_EQ(detail, "interrupted by `shoal seat interrupt` (the turn was interrupted)");
  send("next one NEXT_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 3; }));
  ASSERT_TRUE(eventually([&] { return logged("turn").size() == 3u; }));
  EXPECT_EQ(logged("turn").back().at("threadId"), turns.front().at("threadId"));
  EXPECT_EQ(seat->snapshot().counters.launches, 1u);
  ASSERT_TRUE(eventually([&] { return seat->snapshot().state == "running"; }));
  EXPECT_EQ(seat->interrupt().reason(), "not-in-a-turn");
}

}  // namespace
}  // namespace shoal::daemon
