// A seat whose runtime is the fake `opencode serve` (tests/fakes/fake_opencode.cc), on a real
// broker: the OpenCode driver's readiness (listening line, event stream, session), the
// daemon-minted messageID surfaced only on the exact-parent assistant, idle boundaries, the
// saved session and its one fresh fallback, and every retirement path — none replays a prompt
// OpenCode may have read (seed 004 §1.1, §2, §3; docs/daemon.md, Runtimes).
#include <csignal>
#include <string>

#include <boost/json.hpp>

#include "daemon/fake_runtime_seat_test.h"

namespace shoal::daemon {
namespace {

namespace json = boost::json;
using shoal::testing::eventually;
using std::chrono::milliseconds;

class OpenCodeSeatTest : public FakeRuntimeSeatTest {
 protected:
  SeatProfile profile() override {
    SeatProfile p;
    p.name = "Builder";
    p.principal = wire::Principal{"local", "builder"};
    p.runtime = RuntimeKind::kOpenCode;
    p.command = {FAKE_OPENCODE_BINARY, "serve", "--fake-log", log(), "--state", state()};
    p.command.insert(p.command.end(), extraArgs_.begin(), extraArgs_.end());
    p.cwd = dir_->join("builder");
    p.lifecycleUid = "abcdefghijklmnopqrstuvwxyz";
    return p;
  }
  void tune(SeatOptions& o) override { o.admissionWatchdog = watchdog_; }

  // One ordinary prompt first: the session has a model to summarize with.
  void firstTurn(Seat& seat) {
    send("hello FIRST_MARK");
    ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 1; })) << runtimeLog();
    ASSERT_TRUE(eventually([&] { return seat.snapshot().state == "running"; }));
  }

  // Starts a compaction and waits for its end; the state it ended in.
  std::string compactAndWait(Seat& seat) {
    Status started = seat.compact();
    EXPECT_TRUE(started.isOk()) << started.toString();
    if (!started.isOk()) return "refused";
    EXPECT_TRUE(eventually([&] { return seat.snapshot().compaction.state != "compacting"; }))
        << runtimeLog();
    return seat.snapshot().compaction.state;
  }

  std::string state() { return dir_->join("fake-opencode-state.json"); }

  // The fake's `turn` lines (an answer ended).
  size_t turnsLogged() { return logged("turn").size(); }

  size_t requests(const std::string& method, const std::string& pathPrefix) {
    size_t n = 0;
    for (const auto& r : logged("request")) {
      n += r.at("method").as_string() == method &&
           std::string(r.at("path").as_string()).rfind(pathPrefix, 0) == 0;
    }
    return n;
  }

  std::string runtimeLog() {
    return FileSystem::posix().readFile(profile().cwd + "/.shoal/runtime.log").valueOr("");
  }

  journal::ResumeSafety resumeSafety() {
    auto view =
        journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(profile().cwd));
    return view.isOk() ? view->resumeSafety : journal::ResumeSafety{};
  }

  milliseconds watchdog_{60000};
  std::vector<std::string> extraArgs_;
};

// One DM: one prompt_async whose messageID the daemon minted in OpenCode's format; it is
// surfaced on the assistant answering exactly that id, and the idle after it ends the turn.
TEST_F(OpenCodeSeatTest, ADmIsSurfacedOnTheExactParentAssistant) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  const std::string id = send("please fix the build OC_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 1; })) << runtimeLog();
  ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 1; }));
  auto inputs = logged("input");
  ASSERT_EQ(inputs.size(), 1u);
  const std::string messageId(inputs[0].at("messageId").as_string());
  EXPECT_EQ(messageId.rfind("msg_", 0), 0u);
  EXPECT_EQ(messageId.size(), 30u);
  EXPECT_NE(std::string(inputs[0].at("text").as_string()).find("OC_MARK"), std::string::npos);
  ASSERT_EQ(turnsLogged(), 1u);
  EXPECT_EQ(logged("turn")[0].at("userMessageId").as_string(), messageId);
  auto t = tombstone(id);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->state, journal::OwnerState::kSurfaced);
  EXPECT_EQ(seat->snapshot().counters.turns, 1u);
  EXPECT_EQ(seat->snapshot().counters.launches, 1u);
}

// A DM arriving while a run is active waits in the journal (OpenCode has no active-turn
// delivery): its prompt goes out only after the first run's idle, with a fresh, later id.
TEST_F(OpenCodeSeatTest, ADmArrivingMidRunWaitsForTheIdleBoundary) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  send("long one FAKE_SLOW_1200 FIRST_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 1; }));
  send("second SECOND_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 2; }));
  ASSERT_TRUE(eventually([&] { return turnsLogged() == 2; }));
  // The fake logs an input before its 204 and a turn when an answer ends: the second prompt
  // came after the first answer ended.
  std::string text = FileSystem::posix().readFile(log()).valueOr("");
  const size_t firstTurn = text.find("\"event\":\"turn\"");
  const size_t secondInput = text.find("SECOND_MARK");
  ASSERT_NE(firstTurn, std::string::npos);
  ASSERT_NE(secondInput, std::string::npos);
  EXPECT_LT(firstTurn, secondInput);
  auto inputs = logged("input");
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_LT(inputs[0].at("messageId").as_string(), inputs[1].at("messageId").as_string());
  EXPECT_EQ(inputs[0].at("sessionId"), inputs[1].at("sessionId"));
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.turns == 2; }));
}

// Frames that are not admission proof change nothing: an idle before the run started does not
// end the turn, and a multi-step answer (a tool step, then a second assistant with the same
// parent) is one acknowledgement and one turn.
TEST_F(OpenCodeSeatTest, EarlyIdleAndMultiStepAnswersAreOneTurn) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  const std::string early = send("idle first FAKE_IDLE_EARLY EARLY_MARK");
  ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 1; })) << runtimeLog();
  const std::string tools = send("use a tool FAKE_TOOLS TOOLS_MARK");
  ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 2; })) << runtimeLog();
  EXPECT_EQ(tombstone(early)->state, journal::OwnerState::kSurfaced);
  EXPECT_EQ(tombstone(tools)->state, journal::OwnerState::kSurfaced);
  EXPECT_EQ(seat->snapshot().counters.turns, 2u);
  EXPECT_EQ(seat->snapshot().counters.failed, 0u);
  EXPECT_EQ(wakesOf("wake-failed"), 0u);
  EXPECT_EQ(seat->snapshot().counters.launches, 1u);
}

// A restarted seat checks its saved session (GET /session/:id) and prompts into it; when the
// server no longer knows it (HTTP 404), exactly one fresh session is created.
TEST_F(OpenCodeSeatTest, RestartKeepsTheSessionAndALostSessionFallsBackOnce) {
  std::string session;
  {
    auto seat = open();
    ASSERT_NE(seat, nullptr);
    send("first FIRST_MARK");
    ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 1; }));
    session = std::string(logged("input").back().at("sessionId").as_string());
  }
  {
    auto seat = open();
    ASSERT_NE(seat, nullptr);
    send("second SECOND_MARK");
    ASSERT_TRUE(eventually([&] { return inputsWith("SECOND_MARK") == 1; }));
    EXPECT_EQ(logged("input").back().at("sessionId").as_string(), session);
    ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 2; }));
  }
  ASSERT_TRUE(FileSystem::posix().remove(state()).isOk());  // the server lost its sessions
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  send("third THIRD_MARK");
  ASSERT_TRUE(eventually([&] { return inputsWith("THIRD_MARK") == 1; })) << runtimeLog();
  EXPECT_NE(logged("input").back().at("sessionId").as_string(), session);
  // Counters continue across seat lives (seat_history.h): the third DM is the third surfaced.
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 3; }));
  EXPECT_EQ(requests("POST", "/session?"), 0u);
  EXPECT_EQ(requests("GET", "/session/ses_"), 2u);  // the second and third launches checked
  size_t created = 0;
  for (const auto& r : logged("request"))
    created += r.at("method").as_string() == "POST" && r.at("path").as_string() == "/session";
  EXPECT_EQ(created, 2u);  // the first launch and the one fallback
}

// An error that survives to idle fails the wake with OpenCode's words and the server is
// replaced (it may still publish its outer error); the next DM runs on the new one.
TEST_F(OpenCodeSeatTest, AnErrorThatSurvivesToIdleFailsTheWakeAndReplacesTheServer) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  send("this breaks FAKE_ERROR_FATAL");
  ASSERT_TRUE(eventually([&] { return wakesOf("wake-failed") == 1; })) << runtimeLog();
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.launches == 2; })) << runtimeLog();
  bool named = false;
  for (const auto& w : wakes()) {
    if (w.at("kind").as_string() == "wake-failed") {
      named = json::serialize(w).find("fake forced error 400") != std::string::npos;
    }
  }
  EXPECT_TRUE(named);
  send("then this RECOVER_MARK");
  ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 1; })) << runtimeLog();
  // An error OpenCode recovers from is only a condition.
  send("wobble FAKE_ERROR_RECOVER WOBBLE_MARK");
  ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 2; })) << runtimeLog();
  EXPECT_EQ(wakesOf("wake-failed"), 1u);
  EXPECT_EQ(seat->snapshot().counters.launches, 2u);
}

// OpenCode retries a 5xx without end; the daemon bounds it: the wake fails
// `runtime-retry-bounded` and the next DM gets a fresh server.
TEST_F(OpenCodeSeatTest, EndlessModelRetriesAreBoundedByTheDaemon) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  const std::string id = send("trap FAKE_RETRY_FOREVER TRAP_MARK");
  ASSERT_TRUE(eventually([&] { return wakesOf("wake-failed") == 1; }, milliseconds(15000)))
      << runtimeLog();
  bool bounded = false;
  for (const auto& w : wakes())
    bounded |= json::serialize(w).find("runtime-retry-bounded") != std::string::npos;
  EXPECT_TRUE(bounded);
  EXPECT_EQ(inputsWith("TRAP_MARK"), 1u);  // never replayed
  send("after AFTER_MARK");
  ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 1; })) << runtimeLog();
  EXPECT_EQ(seat->snapshot().counters.launches, 2u);
}

// A run that goes idle without ever answering our prompt, a prompt no run takes within the
// admission watchdog, and an event stream lost after readiness each retire the server; the
// prompt is failed with the reason, never sent twice.
TEST_F(OpenCodeSeatTest, UnprovableOutcomesRetireTheServerAndFailWithoutReplay) {
  watchdog_ = milliseconds(1500);
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  const std::string none = send("no answer FAKE_NO_ASSISTANT NONE_MARK");
  ASSERT_TRUE(eventually([&] { return tombstone(none).has_value(); })) << runtimeLog();
  EXPECT_EQ(tombstone(none)->state, journal::OwnerState::kFailed);
  EXPECT_NE(runtimeLog().find("without an answer to prompt"), std::string::npos);

  const std::string silent = send("nothing happens FAKE_SILENT SILENT_MARK");
  ASSERT_TRUE(eventually([&] { return tombstone(silent).has_value(); }, milliseconds(15000)))
      << runtimeLog();
  EXPECT_EQ(tombstone(silent)->state, journal::OwnerState::kFailed);
  EXPECT_NE(runtimeLog().find("no run took prompt"), std::string::npos);

  const std::string dropped = send("stream goes FAKE_DROP_SSE DROP_MARK");
  ASSERT_TRUE(
      eventually([&] { return seat->snapshot().counters.launches == 4; }, milliseconds(15000)))
      << runtimeLog();
  EXPECT_NE(runtimeLog().find("event stream was lost"), std::string::npos);
  ASSERT_TRUE(eventually([&] { return tombstone(dropped).has_value(); }));
  EXPECT_EQ(inputsWith("NONE_MARK"), 1u);
  EXPECT_EQ(inputsWith("SILENT_MARK"), 1u);
  EXPECT_EQ(inputsWith("DROP_MARK"), 1u);
  send("still works AFTER_MARK");
  ASSERT_TRUE(eventually([&] { return inputsWith("AFTER_MARK") == 1; })) << runtimeLog();
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced >= 1; }));
}

// An automatic compaction inside the admitted run moves the correlation to the compaction
// user: the summary answering it acknowledges our prompt.
TEST_F(OpenCodeSeatTest, AnAutomaticCompactionCarriesTheAcknowledgement) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  const std::string id = send("big context FAKE_AUTO_COMPACT COMPACT_MARK");
  ASSERT_TRUE(eventually([&] { return tombstone(id).has_value(); })) << runtimeLog();
  EXPECT_EQ(tombstone(id)->state, journal::OwnerState::kSurfaced) << tombstone(id)->reason;
  EXPECT_EQ(seat->snapshot().counters.launches, 1u);
}

// OpenCode is acknowledgement-only: a prompt written but unacknowledged when the daemon went
// down cannot be read back, so the restarted seat fails it without replay.
TEST_F(OpenCodeSeatTest, ARestoredUnacknowledgedPromptFailsWithoutReplay) {
  std::string id;
  {
    auto seat = open();
    ASSERT_NE(seat, nullptr);
    id = send("never answered FAKE_SILENT LOST_MARK");
    ASSERT_TRUE(eventually([&] { return inputsWith("LOST_MARK") == 1; }));
  }
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  ASSERT_TRUE(eventually([&] { return tombstone(id).has_value(); })) << runtimeLog();
  EXPECT_EQ(tombstone(id)->state, journal::OwnerState::kFailed);
  send("next NEXT_MARK");
  ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 1; })) << runtimeLog();
  EXPECT_EQ(inputsWith("LOST_MARK"), 1u);
}

// Seed 004 §1.1 restart safety: every launch persists an unsafe baseline under a new epoch
// before its Process exists; a turn end with no live owner marks it safe; a saved session is
// resumed only under the command and instructions it ran with.
TEST_F(OpenCodeSeatTest, LaunchEpochsResumeSafetyAndTheSessionFingerprint) {
  std::string session;
  {
    auto seat = open();
    ASSERT_NE(seat, nullptr);
    send("first FIRST_MARK");
    ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 1; }));
    session = std::string(logged("input").back().at("sessionId").as_string());
    ASSERT_TRUE(eventually([&] { return resumeSafety().safe; }))
        << resumeSafety().launchEpoch << "/" << resumeSafety().version << " live "
        << journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(profile().cwd))
               ->live.size();
    EXPECT_EQ(resumeSafety().launchEpoch, 1u);
  }
  {
    // A prompt left unanswered: the session stays unsafe across the stop.
    auto seat = open();
    ASSERT_NE(seat, nullptr);
    ASSERT_TRUE(eventually([&] { return resumeSafety().launchEpoch == 2; }));
    send("hangs FAKE_SILENT HANG_MARK");
    ASSERT_TRUE(eventually([&] { return inputsWith("HANG_MARK") == 1; }));
    EXPECT_EQ(logged("input").back().at("sessionId").as_string(), session);  // resumed
    EXPECT_FALSE(resumeSafety().safe);
  }
  EXPECT_FALSE(resumeSafety().safe);
  // Another command: the saved session is not resumed; a fresh one is made.
  extraArgs_ = {"--turn-ms", "20"};
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  send("third THIRD_MARK");
  ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 2; })) << runtimeLog();
  EXPECT_NE(logged("input").back().at("sessionId").as_string(), session);
  EXPECT_EQ(resumeSafety().launchEpoch, 3u);
  ASSERT_TRUE(eventually([&] { return resumeSafety().safe; }));
  bool told = false;
  for (const auto& w : wakes())
    told |= json::serialize(w).find("command or instructions changed") != std::string::npos;
  EXPECT_TRUE(told);
}

// `shoal seat compact` on an OpenCode seat: summarize with the session's model; a DM arriving
// meanwhile stays in the journal (no prompt_async while the fence is open) and goes out after it;
// the fence ends the compaction once, on the same server.
TEST_F(OpenCodeSeatTest, SummarizeHoldsPromptsUntilItsFenceCompletes) {
  extraArgs_ = {"--summarize-ms", "500"};
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  ASSERT_TRUE(eventually([&] { return seat->snapshot().state == "running"; }));
  Status early = seat->compact();
  EXPECT_NE(early.toString().find("nothing-to-compact"), std::string::npos) << early.toString();
  firstTurn(*seat);
  Status started = seat->compact();
  ASSERT_TRUE(started.isOk()) << started.toString();
  const std::string during = send("while summarizing DURING_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().queued == 1; }));
  EXPECT_EQ(inputsWith("DURING_MARK"), 0u) << "a prompt went out while the fence was open";
  ASSERT_TRUE(eventually([&] { return seat->snapshot().compaction.state == "compacted"; }))
      << runtimeLog();
  auto summarized = logged("summarize");
  ASSERT_EQ(summarized.size(), 1u);
  EXPECT_EQ(summarized[0].at("providerID").as_string(), "fake");
  EXPECT_EQ(summarized[0].at("modelID").as_string(), "fake-model");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 2; })) << runtimeLog();
  EXPECT_EQ(tombstone(during)->state, journal::OwnerState::kSurfaced);
  ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 2; }));
  EXPECT_EQ(wakesOf("compacted"), 1u);
  EXPECT_EQ(seat->snapshot().counters.launches, 1u);
  EXPECT_EQ(runtimeLog().find("[shoal] retiring"), std::string::npos) << runtimeLog();
  ASSERT_TRUE(eventually([&] { return resumeSafety().safe; }));
}

// Every unprovable summarize retires the server with `context_compaction_failed` (a failed
// compaction can leave OpenCode compacting instead of answering the next prompt): a summary
// error, no session.compacted, endless model retries. The next server takes the next DM.
TEST_F(OpenCodeSeatTest, AnUnprovenSummarizeFailsAndReplacesTheServer) {
  for (const char* mode : {"--summarize-fail", "--summarize-no-compacted", "--summarize-retry"}) {
    SCOPED_TRACE(mode);
    extraArgs_ = {mode};
    (void)FileSystem::posix().remove(state());
    auto seat = open();
    ASSERT_NE(seat, nullptr);
    const size_t completedBefore = wakesOf("turn-completed");
    send(std::string("hello ") + mode);
    ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == completedBefore + 1; }))
        << runtimeLog();
    ASSERT_TRUE(eventually([&] { return seat->snapshot().state == "running"; }));
    // Counters continue across seat lives (seat_history.h): count from this server on.
    const uint64_t launchesBefore = seat->snapshot().counters.launches;
    const uint64_t surfacedBefore = seat->snapshot().counters.surfaced;
    const size_t failedBefore = wakesOf("compaction-failed");
    EXPECT_EQ(compactAndWait(*seat), "failed");
    EXPECT_EQ(seat->snapshot().compaction.detail.rfind("context_compaction_failed: ", 0), 0u)
        << seat->snapshot().compaction.detail;
    ASSERT_TRUE(eventually([&] { return wakesOf("compaction-failed") == failedBefore + 1; }));
    ASSERT_TRUE(eventually([&] {
      auto snap = seat->snapshot();
      return snap.counters.launches == launchesBefore + 1 && snap.state == "running";
    })) << runtimeLog();
    send(std::string("after ") + mode);
    ASSERT_TRUE(eventually([&] {
      return seat->snapshot().counters.surfaced == surfacedBefore + 1;
    })) << runtimeLog();
  }
}

// A context overflow under `compaction.auto=false` (seed 004 §3, the two-idle machine): the
// processor's idle starts the cleanup drain, the errored assistant proves it, the Runner's idle
// ends the turn in error — naming the remedy — on the same server; the session can then be
// summarized and the next DM is answered there.
TEST_F(OpenCodeSeatTest, AContextOverflowEndsTheTurnAtTheRunnersIdleOnTheSameServer) {
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  send("a huge request FAKE_OVERFLOW");
  ASSERT_TRUE(eventually([&] { return wakesOf("wake-failed") == 1; })) << runtimeLog();
  const std::string detail = lastWakeDetail("wake-failed");
  EXPECT_EQ(detail.rfind("context_overflow: ContextOverflowError", 0), 0u) << detail;
  EXPECT_NE(detail.find("shoal seat compact"), std::string::npos) << detail;
  EXPECT_EQ(runtimeLog().find("[shoal] retiring"), std::string::npos) << runtimeLog();
  ASSERT_TRUE(eventually([&] { return seat->snapshot().state == "running"; }));
  EXPECT_EQ(compactAndWait(*seat), "compacted") << seat->snapshot().compaction.detail;
  send("a smaller one AFTER_MARK");
  ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 1; })) << runtimeLog();
  EXPECT_EQ(seat->snapshot().counters.launches, 1u);
  EXPECT_EQ(seat->snapshot().counters.surfaced, 2u);
}

// Native interrupt (seed 004 §3): refused while the Runner has not taken the prompt (an abort
// then can be lost); once its exact-parent assistant exists, /abort ends the turn at the idle
// after the aborted assistant — failed, `interrupted` — and a fresh server takes the session
// on (OpenCode aborts runs started soon after an abort); the next DM is answered there.
TEST_F(OpenCodeSeatTest, InterruptAbortsTheAdmittedRunThenReplacesTheServer) {
  watchdog_ = milliseconds(1500);
  auto seat = open();
  ASSERT_NE(seat, nullptr);
  send("not taken yet FAKE_SILENT");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().state == "busy"; }));
  Status early = seat->interrupt();
  EXPECT_EQ(early.reason(), "interrupt-not-safe-yet") << early.toString();
  // The watchdog retires that server (the unanswered DM fails, never replayed).
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.launches == 2; })) << runtimeLog();
  ASSERT_TRUE(eventually([&] { return seat->snapshot().state == "running"; }));
  send("long one FAKE_HANG");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 1; })) << runtimeLog();
  const size_t failedBefore = wakesOf("wake-failed");  // the silent DM's, at the retirement
  Status asked = seat->interrupt();
  ASSERT_TRUE(asked.isOk()) << asked.toString();
  ASSERT_TRUE(eventually([&] { return wakesOf("wake-failed") == failedBefore + 1; }))
      << runtimeLog();
  const std::string detail = lastWakeDetail("wake-failed");
  EXPECT_EQ(detail, "interrupted by `shoal seat interrupt` (MessageAbortedError: Aborted)");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.launches == 3; })) << runtimeLog();
  EXPECT_NE(runtimeLog().find("retiring this OpenCode server: interrupted"), std::string::npos)
      << runtimeLog();
  const std::string after = send("after the interrupt AFTER_MARK");
  ASSERT_TRUE(eventually([&] { return wakesOf("turn-completed") == 1; })) << runtimeLog();
  EXPECT_EQ(seat->snapshot().counters.surfaced, 2u);
  EXPECT_EQ(tombstone(after)->state, journal::OwnerState::kSurfaced);
}

}  // namespace
}  // namespace shoal::daemon
