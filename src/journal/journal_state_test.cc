// The ownership rules of seed 004 §2.1 / §3.3, one test per rule, on the pure JournalState.
#include "journal/journal_state.h"

#include "journal/reasons.h"
#include "journal/test_util.h"

#include <gtest/gtest.h>

namespace shoal::journal {
namespace {

using testutil::admitOp;
using testutil::txnOf;

constexpr int64_t kNow = 1'700'000'000'000;

class StateTest : public ::testing::Test {
 protected:
  explicit StateTest(Limits limits = {}) : state_(limits) {}

  OperationResult ok(Operation op) {
    auto r = state_.apply(txnOf(std::move(op)), now_++);
    EXPECT_TRUE(r.isOk()) << r.status().toString();
    EXPECT_TRUE(state_.checkInvariants().isOk()) << state_.checkInvariants().toString();
    return r.isOk() ? r->results.front() : OperationResult{};
  }
  Status refused(Operation op) {
    std::string before = state_.encode();
    auto r = state_.apply(txnOf(std::move(op)), now_++);
    EXPECT_FALSE(r.isOk());
    EXPECT_EQ(state_.encode(), before) << "a refused operation changed the state";
    return r.isOk() ? Status::ok() : r.status();
  }
  OwnerToken tokenOf(const std::string& id) { return state_.find(id)->token; }
  OwnerState stateOf(const std::string& id) { return state_.find(id)->state; }

  JournalState state_;
  int64_t now_ = kNow;
};

// Admission writes a queued owner holding the exact body, stamped with a fresh token.
TEST_F(StateTest, AdmissionCreatesQueuedOwner) {
  OperationResult r = ok(admitOp("m1", "exact \x01 bytes"));
  EXPECT_EQ(r.disposition, AdmitDisposition::kAdmitted);
  ASSERT_TRUE(r.record.has_value());
  EXPECT_EQ(r.record->state, OwnerState::kQueued);
  EXPECT_EQ(state_.find("m1")->body, "exact \x01 bytes");
  EXPECT_EQ(r.record->token, tokenOf("m1"));
  EXPECT_GT(r.record->token.generation, 0u);
}

// A direct runtime mutation may admit straight into inflight(dispatching).
TEST_F(StateTest, AdmissionCanStartInflightDispatching) {
  ok(admitOp("m1", "b", /*dispatching=*/true));
  EXPECT_EQ(stateOf("m1"), OwnerState::kDispatching);
}

// Such an admission carries its inflight diagnostic; a queued one has none to carry.
TEST_F(StateTest, ADispatchingAdmissionKeepsItsReasonAndAQueuedOneDropsIt) {
  Admit direct = admitOp("m1", "b", /*dispatching=*/true);
  direct.reason = "handed to generation 3's stdin";
  ok(direct);
  EXPECT_EQ(state_.find("m1")->reason, "handed to generation 3's stdin");
  Admit queued = admitOp("m2", "b");
  queued.reason = "ignored";
  ok(queued);
  EXPECT_EQ(state_.find("m2")->reason, "");
}

// A state transition keeps the body's encoding: the record's bytes are still exactly its
// canonical encoding (checkInvariants, run after every operation here, re-encodes it).
TEST_F(StateTest, ATransitionReusesTheBodyEncodingAndStaysCanonical) {
  const std::string body = "line \"one\"\n\xff not utf-8";
  OperationResult a = ok(admitOp("m1", body));
  OperationResult b = ok(BeginInflight{"m1", a.record->token, InflightPhase::kDispatching,
                                       RuntimeIdentity{"", "s", "r/0"}, "handing"});
  ok(MarkOutcomeUnknown{"m1", b.record->token, std::nullopt, "written"});
  EXPECT_EQ(state_.find("m1")->body, body);
  EXPECT_EQ(state_.encode(), JournalState::decode(state_.encode())->encode());
}

// The same MessageID is never owned twice: a live owner dedups a second admission unchanged.
TEST_F(StateTest, SameIdAdmissionIsDeduplicatedAgainstLiveOwner) {
  ok(admitOp("m1", "first"));
  OwnerToken t = tokenOf("m1");
  OperationResult again = ok(admitOp("m1", "second"));
  EXPECT_EQ(again.disposition, AdmitDisposition::kAlreadyLive);
  EXPECT_FALSE(again.changed);
  EXPECT_EQ(state_.find("m1")->body, "first");
  EXPECT_EQ(tokenOf("m1"), t);
}

// A tombstone dedups a redelivered MessageID: terminal work is never re-run.
TEST_F(StateTest, SameIdAdmissionIsDeduplicatedAgainstTombstone) {
  ok(admitOp("m1"));
  ok(MarkSurfaced{"m1", tokenOf("m1"), "ack"});
  OperationResult again = ok(admitOp("m1", "replayed"));
  EXPECT_EQ(again.disposition, AdmitDisposition::kAlreadyTerminal);
  EXPECT_EQ(stateOf("m1"), OwnerState::kSurfaced);
}

// Every mutation issues a new, never reused generation.
TEST_F(StateTest, EveryMutationIssuesAFreshToken) {
  ok(admitOp("m1"));
  OwnerToken a = tokenOf("m1");
  ok(BeginInflight{"m1", a, InflightPhase::kDispatching, std::nullopt, ""});
  OwnerToken b = tokenOf("m1");
  ok(MarkOutcomeUnknown{"m1", b, std::nullopt, "timeout"});
  OwnerToken c = tokenOf("m1");
  EXPECT_LT(a.generation, b.generation);
  EXPECT_LT(b.generation, c.generation);
}

// A write carrying an older generation is refused (kAborted) and changes nothing.
TEST_F(StateTest, StaleGenerationWriteIsRefused) {
  ok(admitOp("m1"));
  OwnerToken old = tokenOf("m1");
  ok(BeginInflight{"m1", old, InflightPhase::kDispatching, std::nullopt, ""});
  Status st = refused(Requeue{"m1", old, "stale absent"});
  EXPECT_EQ(st.code(), StatusCode::kAborted);
  EXPECT_EQ(st.reason(), reason::kStaleGeneration);
  st = refused(MarkFailed{"m1", old, "stale"});
  EXPECT_EQ(st.reason(), reason::kStaleGeneration);
  st = refused(RemoveLive{"m1", old});
  EXPECT_EQ(st.reason(), reason::kStaleGeneration);
  EXPECT_EQ(stateOf("m1"), OwnerState::kDispatching);
}

// Surfaced is the strongest state: failed never replaces it (refused, unchanged).
TEST_F(StateTest, SurfacedIsNeverDowngraded) {
  ok(admitOp("m1"));
  OwnerToken t = tokenOf("m1");
  ok(MarkSurfaced{"m1", t, "ack"});
  Status st = refused(MarkFailed{"m1", tokenOf("m1"), "late failure"});
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.reason(), reason::kTerminalIsFinal);
  EXPECT_EQ(stateOf("m1"), OwnerState::kSurfaced);
}

// No transition returns a terminal record to live ownership.
TEST_F(StateTest, TerminalNeverReturnsToLive) {
  ok(admitOp("m1"));
  ok(MarkFailed{"m1", tokenOf("m1"), "poison"});
  OwnerToken t = tokenOf("m1");
  EXPECT_EQ(refused(BeginInflight{"m1", t, InflightPhase::kDispatching, std::nullopt, ""}).reason(),
            reason::kTerminalIsFinal);
  EXPECT_EQ(refused(Requeue{"m1", t, ""}).reason(), reason::kTerminalIsFinal);
  EXPECT_EQ(refused(MarkOutcomeUnknown{"m1", t, std::nullopt, ""}).reason(),
            reason::kTerminalIsFinal);
  EXPECT_EQ(ok(admitOp("m1")).disposition, AdmitDisposition::kAlreadyTerminal);
  EXPECT_EQ(stateOf("m1"), OwnerState::kFailed);
}

// Late correlated evidence upgrades failed to surfaced, even with an old token.
TEST_F(StateTest, FailedUpgradesToSurfacedOnLateEvidence) {
  ok(admitOp("m1"));
  OwnerToken live = tokenOf("m1");
  ok(MarkFailed{"m1", live, "reconcile budget exhausted"});
  OperationResult r = ok(MarkSurfaced{"m1", live, "late ack"});
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(stateOf("m1"), OwnerState::kSurfaced);
  EXPECT_EQ(state_.find("m1")->reason, "late ack");
  EXPECT_FALSE(ok(MarkSurfaced{"m1", std::nullopt, "again"}).changed);  // idempotent
}

// Surfaced evidence on a live owner is generation-checked when a token is given, and
// authoritative (unchecked) when none is.
TEST_F(StateTest, SurfacedOnLiveOwnerChecksTheTokenWhenGiven) {
  ok(admitOp("m1"));
  OwnerToken old = tokenOf("m1");
  ok(BeginInflight{"m1", old, InflightPhase::kOutcomeUnknown, std::nullopt, ""});
  EXPECT_EQ(refused(MarkSurfaced{"m1", old, "stale reconcile"}).reason(), reason::kStaleGeneration);
  ok(MarkSurfaced{"m1", std::nullopt, "correlated ack"});
  EXPECT_EQ(stateOf("m1"), OwnerState::kSurfaced);
}

// A rollback/delete removes a live owner only; a tombstone is never deleted by it.
TEST_F(StateTest, StaleRollbackRemovesOnlyLiveOwner) {
  ok(admitOp("live"));
  ok(admitOp("done"));
  ok(MarkSurfaced{"done", tokenOf("done"), "ack"});
  Status st = refused(RemoveLive{"done", tokenOf("done")});
  EXPECT_EQ(st.reason(), reason::kTerminalIsFinal);
  ok(RemoveLive{"live", tokenOf("live")});
  EXPECT_EQ(state_.find("live"), nullptr);
  EXPECT_NE(state_.find("done"), nullptr);
}

// A tombstone drops the replay body and wake data but keeps reason, target and runtime identity.
TEST_F(StateTest, TombstoneDropsBodyAndWakeButKeepsReasonTargetRuntime) {
  Admit a = admitOp("m1", "payload");
  a.target = "dm:alice";
  a.wake = "{\"token\":1}";
  ok(a);
  RuntimeIdentity rt{"thread-1", "session-1", "receipt-1"};
  ok(BeginInflight{"m1", tokenOf("m1"), InflightPhase::kOutcomeUnknown, rt, ""});
  ok(MarkFailed{"m1", tokenOf("m1"), "runtime_error"});
  const OwnershipRecord* r = state_.find("m1");
  EXPECT_TRUE(r->body.empty());
  EXPECT_TRUE(r->wake.empty());
  EXPECT_EQ(r->reason, "runtime_error");
  EXPECT_EQ(r->target, "dm:alice");
  EXPECT_EQ(r->runtime, rt);
}

// An inflight owner keeps its body, so an authoritative `absent` requeues it for exact replay.
TEST_F(StateTest, InflightKeepsBodySoAbsentCanRequeue) {
  ok(admitOp("m1", "exact"));
  ok(BeginInflight{"m1", tokenOf("m1"), InflightPhase::kDispatching, std::nullopt, ""});
  ok(MarkOutcomeUnknown{"m1", tokenOf("m1"), std::nullopt, "transport closed"});
  ok(Requeue{"m1", tokenOf("m1"), "absent"});
  EXPECT_EQ(stateOf("m1"), OwnerState::kQueued);
  EXPECT_EQ(state_.find("m1")->body, "exact");
}

// Requeue starts only from inflight; begin-inflight only from queued.
TEST_F(StateTest, TransitionsStartOnlyFromTheirSourceState) {
  ok(admitOp("m1"));
  EXPECT_EQ(refused(Requeue{"m1", tokenOf("m1"), ""}).reason(), reason::kWrongState);
  EXPECT_EQ(refused(MarkOutcomeUnknown{"m1", tokenOf("m1"), std::nullopt, ""}).reason(),
            reason::kWrongState);
  ok(BeginInflight{"m1", tokenOf("m1"), InflightPhase::kDispatching, std::nullopt, ""});
  EXPECT_EQ(
      refused(BeginInflight{"m1", tokenOf("m1"), InflightPhase::kDispatching, std::nullopt, ""})
          .reason(),
      reason::kWrongState);
}

// A runtime receipt correlates one MessageID only: a colliding receipt fails closed and the
// body stays queued; the receipt finds its record (tombstones included, for late evidence).
TEST_F(StateTest, ReceiptCollisionFailsClosedAndLeavesTheBodyQueued) {
  ok(admitOp("m1"));
  ok(admitOp("m2"));
  RuntimeIdentity rt{"", "", "rcpt-1"};
  ok(BeginInflight{"m1", tokenOf("m1"), InflightPhase::kOutcomeUnknown, rt, "freshness page"});
  Status st = refused(BeginInflight{"m2", tokenOf("m2"), InflightPhase::kOutcomeUnknown, rt, ""});
  EXPECT_EQ(st.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(st.reason(), reason::kReceiptCollision);
  EXPECT_EQ(stateOf("m2"), OwnerState::kQueued);
  ok(MarkFailed{"m1", tokenOf("m1"), "lease expired"});
  ASSERT_NE(state_.findByReceipt("rcpt-1"), nullptr);
  EXPECT_EQ(state_.findByReceipt("rcpt-1")->id, "m1");
  EXPECT_EQ(state_.findByReceipt("nope"), nullptr);
}

// Operations on a MessageID the journal never saw are kNotFound.
TEST_F(StateTest, UnknownOwnerIsNotFound) {
  EXPECT_EQ(refused(MarkFailed{"nope", {}, ""}).code(), StatusCode::kNotFound);
  EXPECT_EQ(refused(MarkSurfaced{"nope", std::nullopt, ""}).code(), StatusCode::kNotFound);
}

// A transaction applies every operation or none (reclaim and unsafe marking included).
TEST_F(StateTest, TransactionIsAllOrNothing) {
  ok(admitOp("m1"));
  ok(SetResumeSafety{{false, 1, 1}});
  std::string before = state_.encode();
  Transaction t;
  t.add(admitOp("m2")).add(SetSection{"identity", "{\"a\":1}", std::nullopt});
  t.add(MarkFailed{"m1", OwnerToken{99, 99}, "stale"});
  auto r = state_.apply(t, now_);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().reason(), reason::kStaleGeneration);
  EXPECT_EQ(state_.encode(), before);
  EXPECT_EQ(state_.find("m2"), nullptr);
  EXPECT_TRUE(state_.checkInvariants().isOk());
}

// Every live-owner upsert sets resume safety to unsafe in the same transaction.
TEST_F(StateTest, LiveUpsertMarksResumeUnsafeInTheSameTransaction) {
  ok(SetResumeSafety{{true, 1, 1}});
  EXPECT_TRUE(state_.resumeSafety().safe);
  ok(admitOp("m1"));
  EXPECT_FALSE(state_.resumeSafety().safe);
  EXPECT_EQ(state_.resumeSafety().launchEpoch, 1u);
}

// safe=true is refused while any queued or inflight owner exists.
TEST_F(StateTest, ResumeSafetyRefusesSafeWhileLiveOwnerExists) {
  ok(admitOp("m1"));
  Status st = refused(SetResumeSafety{{true, 1, 1}});
  EXPECT_EQ(st.reason(), reason::kLiveOwnerPresent);
  ok(MarkSurfaced{"m1", tokenOf("m1"), "ack"});
  ok(SetResumeSafety{{true, 1, 1}});
  EXPECT_TRUE(state_.resumeSafety().safe);
}

// Resume safety is compare-and-set by (launchEpoch, version): an older launch cannot
// overwrite a newer baseline, nor can a repeat of the same version with other content.
TEST_F(StateTest, StaleResumeSafetyWriteIsRefused) {
  ok(SetResumeSafety{{false, 2, 0}});
  EXPECT_EQ(refused(SetResumeSafety{{true, 1, 9}}).reason(), reason::kStaleResumeSafety);
  ok(SetResumeSafety{{true, 2, 1}});
  ok(admitOp("m1"));  // sets unsafe at (2, 1)
  ok(MarkSurfaced{"m1", tokenOf("m1"), "ack"});
  EXPECT_EQ(refused(SetResumeSafety{{true, 2, 1}}).reason(), reason::kStaleResumeSafety);
  ok(SetResumeSafety{{true, 2, 2}});
}

// Sections are independent fields: writers of different sections both survive; a section
// compare-and-set on a stale revision is refused.
TEST_F(StateTest, SectionsUpdateIndependently) {
  OperationResult a = ok(SetSection{"identity", "{\"owner\":\"local\"}", 0});
  OperationResult b = ok(SetSection{"runtimePolicy", "{\"model\":\"x\"}", 0});
  EXPECT_EQ(a.sectionRevision, 1u);
  EXPECT_EQ(b.sectionRevision, 1u);
  ok(SetSection{"identity", "{\"owner\":\"u_1\"}", 1});
  EXPECT_EQ(state_.sections().at("runtimePolicy").valueJson, "{\"model\":\"x\"}");
  EXPECT_EQ(state_.sections().at("identity").valueJson, "{\"owner\":\"u_1\"}");
  Status st = refused(SetSection{"identity", "{}", 1});
  EXPECT_EQ(st.code(), StatusCode::kAborted);
  EXPECT_EQ(st.reason(), reason::kStaleSection);
}

// Section values must be JSON and bounded; names are restricted.
TEST_F(StateTest, SectionValuesAreValidatedAndBounded) {
  EXPECT_EQ(refused(SetSection{"identity", "{not json", std::nullopt}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(refused(SetSection{"bad name", "1", std::nullopt}).code(),
            StatusCode::kInvalidArgument);
  std::string big = "\"" + std::string(kMaxSectionBytes, 'x') + "\"";
  EXPECT_EQ(refused(SetSection{"big", big, std::nullopt}).reason(), reason::kSectionTooLarge);
}

// Attaching (an open) advances the store epoch and turns every inflight(dispatching) into
// inflight(outcome_unknown): restart never assumes a dispatch did not happen.
TEST_F(StateTest, AttachTurnsEveryInflightIntoOutcomeUnknown) {
  ok(admitOp("a"));
  ok(admitOp("b", "b", true));
  ok(admitOp("c"));
  ok(BeginInflight{"c", tokenOf("c"), InflightPhase::kDispatching, std::nullopt, ""});
  uint64_t epoch = state_.header().storeEpoch;
  OwnerToken before = tokenOf("b");
  state_.attach(now_);
  EXPECT_EQ(state_.header().storeEpoch, epoch + 1);
  EXPECT_EQ(stateOf("a"), OwnerState::kQueued);
  EXPECT_EQ(stateOf("b"), OwnerState::kOutcomeUnknown);
  EXPECT_EQ(stateOf("c"), OwnerState::kOutcomeUnknown);
  EXPECT_NE(tokenOf("b"), before);
  EXPECT_EQ(tokenOf("b").epoch, epoch + 1);
  EXPECT_TRUE(state_.checkInvariants().isOk());
}

// The restart view lists live owners oldest admission first (restore handles only the head),
// independent of later transitions, plus tombstones oldest terminal first.
TEST_F(StateTest, RestartViewListsLiveOldestFirst) {
  for (const char* id : {"m1", "m2", "m3", "m4"})
    ok(admitOp(id));
  ok(BeginInflight{"m1", tokenOf("m1"), InflightPhase::kDispatching, std::nullopt, ""});
  ok(Requeue{"m1", tokenOf("m1"), "absent"});
  ok(MarkSurfaced{"m3", tokenOf("m3"), "ack"});
  ok(MarkFailed{"m2", tokenOf("m2"), "x"});
  RestartView v = state_.view();
  ASSERT_EQ(v.live.size(), 2u);
  EXPECT_EQ(v.live[0].id, "m1");
  EXPECT_EQ(v.live[1].id, "m4");
  ASSERT_EQ(v.tombstones.size(), 2u);
  EXPECT_EQ(v.tombstones[0].id, "m3");
  EXPECT_EQ(v.tombstones[1].id, "m2");
}

// Attempt counters live in memory only: they change no token and no byte of the file.
TEST_F(StateTest, NoteAttemptIsMemoryOnly) {
  ok(admitOp("m1"));
  std::string before = state_.encode();
  OwnerToken t = tokenOf("m1");
  auto n = state_.noteAttempt("m1", t);
  ASSERT_TRUE(n.isOk());
  EXPECT_EQ(*n, 1u);
  EXPECT_EQ(*state_.noteAttempt("m1", t), 2u);
  EXPECT_EQ(state_.encode(), before);
  EXPECT_EQ(tokenOf("m1"), t);
  EXPECT_EQ(state_.noteAttempt("m1", OwnerToken{}).status().reason(), reason::kStaleGeneration);
}

// Malformed input is refused with kInvalidArgument before anything changes.
TEST_F(StateTest, InvalidFieldsAreRefused) {
  EXPECT_EQ(refused(admitOp("")).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused(admitOp(std::string(kMaxIdBytes + 1, 'x'))).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(refused(admitOp("bad\nid")).code(), StatusCode::kInvalidArgument);
  Admit a = admitOp("m1");
  a.target = "\xff\xfe";
  EXPECT_EQ(refused(a).code(), StatusCode::kInvalidArgument);
  a = admitOp("m1");
  a.wake = std::string(kMaxWakeBytes + 1, 'w');
  EXPECT_EQ(refused(a).code(), StatusCode::kInvalidArgument);
}

// Diagnostics never block a terminal transition: long or non-UTF-8 reasons are bounded.
TEST_F(StateTest, ReasonsAreBoundedNotRefused) {
  ok(admitOp("m1"));
  ok(MarkFailed{"m1", tokenOf("m1"), std::string(5000, 'r') + "\xff"});
  EXPECT_LE(state_.find("m1")->reason.size(), kMaxReasonBytes);
  ok(admitOp("m2"));
  ok(MarkFailed{"m2", tokenOf("m2"), "bad \xc3 utf8"});
  EXPECT_EQ(state_.find("m2")->reason, "bad ? utf8");
}

// ---- Capacity (seed §2.1 caps, §3.3 reclaim), with small limits so tests stay small ----------

Limits smallLimits() {
  Limits l;
  l.maxLiveRecords = 3;
  l.maxLiveBytes = 4096;
  l.maxTombstones = 2;
  l.maxTombstoneBytes = 4096;
  l.maxTotalRecords = 5;
  l.maxTotalBytes = 8192;
  l.maxLiveRecordBytes = 1024;
  return l;
}

class CapacityTest : public StateTest {
 protected:
  CapacityTest() : StateTest(smallLimits()) {}
};

// When live is full, admitting a new owner turns the oldest live owner (only) into a failed
// tombstone with reason ownership_backlog_reclaimed, and reports it.
TEST_F(CapacityTest, ReclaimChoosesOldestLiveOnly) {
  ok(admitOp("old"));
  ok(admitOp("mid"));
  ok(MarkSurfaced{"mid", tokenOf("mid"), "ack"});  // a tombstone is never a reclaim victim
  ok(admitOp("a"));
  ok(admitOp("b"));
  OperationResult r = ok(admitOp("new"));
  ASSERT_EQ(r.reclaimed.size(), 1u);
  EXPECT_EQ(r.reclaimed[0].id, "old");
  EXPECT_EQ(r.reclaimed[0].previousState, OwnerState::kQueued);
  EXPECT_EQ(stateOf("old"), OwnerState::kFailed);
  EXPECT_EQ(state_.find("old")->reason, reason::kBacklogReclaimed);
  EXPECT_EQ(r.reclaimed[0].token, tokenOf("old"));
  EXPECT_EQ(stateOf("mid"), OwnerState::kSurfaced);
  EXPECT_EQ(state_.stats().liveRecords, 3u);
}

// Reclaim victims are chosen by admission order, whatever their state (inflight included).
TEST_F(CapacityTest, ReclaimTakesOldestLiveEvenWhenInflight) {
  ok(admitOp("a"));
  ok(BeginInflight{"a", tokenOf("a"), InflightPhase::kOutcomeUnknown, std::nullopt, ""});
  ok(admitOp("b"));
  ok(admitOp("c"));
  OperationResult r = ok(admitOp("d"));
  ASSERT_EQ(r.reclaimed.size(), 1u);
  EXPECT_EQ(r.reclaimed[0].id, "a");
  EXPECT_EQ(r.reclaimed[0].previousState, OwnerState::kOutcomeUnknown);
}

// Byte caps reclaim as many oldest owners as needed for the new record to fit.
TEST(CapacityBytesTest, ReclaimByBytesFreesEnoughForTheNewRecord) {
  Limits l = smallLimits();
  l.maxLiveRecords = 10;
  l.maxLiveBytes = 2000;
  JournalState s(l);
  for (const char* id : {"a", "b"}) {
    ASSERT_TRUE(s.apply(txnOf(admitOp(id, std::string(400, 'x'))), kNow).isOk());
  }
  ASSERT_TRUE(s.apply(txnOf(admitOp("c", std::string(800, 'x'))), kNow).isOk());
  // a + b + c ≈ 528 + 528 + 928 bytes: a new 928-byte record needs both a and b reclaimed.
  auto r = s.apply(txnOf(admitOp("d", std::string(800, 'x'))), kNow);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  ASSERT_EQ(r->results[0].reclaimed.size(), 2u);
  EXPECT_EQ(r->results[0].reclaimed[0].id, "a");
  EXPECT_EQ(r->results[0].reclaimed[1].id, "b");
  EXPECT_LE(s.stats().liveBytes, l.maxLiveBytes);
  EXPECT_EQ(s.find("c")->state, OwnerState::kQueued);
  EXPECT_TRUE(s.checkInvariants().isOk());
}

// Existing-owner transitions never pick reclaim victims, even when they grow the record past
// the aggregate cap; the next admission recovers capacity.
TEST(CapacityBytesTest, ExistingOwnerTransitionNeverReclaims) {
  Limits l = smallLimits();
  size_t one = encodeRecord([] {
                 OwnershipRecord r;
                 r.id = "a";
                 r.body = std::string(600, 'x');
                 r.seq = 1;
                 r.token = {1, 1};
                 r.admittedAtMs = r.stateSinceMs = kNow;
                 return r;
               }())
                   .size();
  l.maxLiveBytes = 3 * one;  // exactly full after three admissions
  JournalState s(l);
  for (const char* id : {"a", "b", "c"}) {
    ASSERT_TRUE(s.apply(txnOf(admitOp(id, std::string(600, 'x'))), kNow).isOk());
  }
  ASSERT_EQ(s.stats().liveBytes, l.maxLiveBytes);
  RuntimeIdentity big{std::string(60, 't'), std::string(60, 's'), std::string(60, 'r')};
  auto r = s.apply(
      txnOf(BeginInflight{"c", s.find("c")->token, InflightPhase::kDispatching, big, ""}), kNow);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_TRUE(r->results[0].reclaimed.empty());
  EXPECT_GT(s.stats().liveBytes, l.maxLiveBytes);
  EXPECT_EQ(s.find("a")->state, OwnerState::kQueued);
  EXPECT_EQ(s.find("b")->state, OwnerState::kQueued);
  // The next new owner's admission reclaims until every cap holds again.
  auto next = s.apply(txnOf(admitOp("d", std::string(600, 'x'))), kNow);
  ASSERT_TRUE(next.isOk());
  EXPECT_LE(s.stats().liveBytes, l.maxLiveBytes);
  EXPECT_FALSE(next->results[0].reclaimed.empty());
}

// The only admission failure is a record larger than one live record may ever be; a full
// journal never refuses a valid new MessageID.
TEST_F(CapacityTest, OversizedRecordIsTheOnlyAdmissionFailure) {
  for (int i = 0; i < 20; ++i) {
    ok(admitOp("m" + std::to_string(i), std::string(500 + 20 * i, 'x')));
    if (i % 3 == 0) ok(MarkFailed{"m" + std::to_string(i), tokenOf("m" + std::to_string(i)), "x"});
  }
  Status st = refused(admitOp("huge", std::string(1024, 'h')));
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(st.reason(), reason::kOversized);
  ok(admitOp("fits", std::string(850, 'f')));
}

// Tombstones are pruned oldest terminal first when their caps are reached.
TEST_F(CapacityTest, TombstonesArePrunedOldestFirst) {
  for (const char* id : {"t1", "t2", "t3"})
    ok(admitOp(id));
  ok(MarkFailed{"t2", tokenOf("t2"), "x"});
  ok(MarkFailed{"t1", tokenOf("t1"), "x"});
  ok(MarkFailed{"t3", tokenOf("t3"), "x"});
  EXPECT_EQ(state_.find("t2"), nullptr);  // oldest terminal, pruned
  EXPECT_NE(state_.find("t1"), nullptr);
  EXPECT_NE(state_.find("t3"), nullptr);
  EXPECT_EQ(state_.stats().tombstones, 2u);
}

// Caps are measured on the exact serialized bytes of each record.
TEST_F(CapacityTest, CapsAreMeasuredOnExactSerializedBytes) {
  ok(admitOp("a", "quote\" backslash\\ newline\n \x01"));
  ok(admitOp("b", "\xff\xfe binary"));
  ok(MarkFailed{"b", tokenOf("b"), "r"});
  size_t live = encodeRecord(*state_.find("a")).size();
  size_t tomb = encodeRecord(*state_.find("b")).size();
  EXPECT_EQ(state_.stats().liveBytes, live);
  EXPECT_EQ(state_.stats().tombstoneBytes, tomb);
  std::string file = state_.encode();
  EXPECT_NE(file.find(encodeRecord(*state_.find("a"))), std::string::npos);
}

// A failed admission inside a multi-operation transaction also undoes its reclaim.
TEST_F(CapacityTest, UndoneAdmissionUndoesItsReclaim) {
  for (const char* id : {"a", "b", "c"})
    ok(admitOp(id));
  std::string before = state_.encode();
  Transaction t;
  t.add(admitOp("d")).add(MarkFailed{"nope", {}, ""});
  EXPECT_FALSE(state_.apply(t, now_).isOk());
  EXPECT_EQ(state_.encode(), before);
  EXPECT_EQ(stateOf("a"), OwnerState::kQueued);
}

}  // namespace
}  // namespace shoal::journal
