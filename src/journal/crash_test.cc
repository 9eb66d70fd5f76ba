// Crash tests: the fault-injecting FileSystem loses power at every call of the commit chain,
// or fails each call once, and recovery must keep exactly the acknowledged state — every
// acknowledged step present, nothing beyond the one step that was in flight.
#include <atomic>
#include <cerrno>
#include <random>
#include <set>
#include <thread>

#include "journal/ownership_journal.h"
#include "journal/reasons.h"
#include "journal/test_util.h"
#include "testing/fault_file_system.h"

#include <gtest/gtest.h>

namespace shoal::journal {
namespace {

using testutil::factsOf;
using testutil::StateFacts;

#if defined(SHOAL_JOURNAL_SLOW)
constexpr int kRandomScripts = 60;
constexpr int kRandomSteps = 30;
constexpr int kConcurrentSeeds = 400;
#else
constexpr int kRandomScripts = 4;
constexpr int kRandomSteps = 14;
constexpr int kConcurrentSeeds = 25;
#endif

const std::string kDir = "/w/seat";

Limits crashLimits() {
  Limits l;
  l.maxLiveRecords = 3;  // small, so scripts reach reclaim and pruning
  l.maxTombstones = 3;
  return l;
}

// One scripted step. Tokens are looked up at run time in whichever state runs it.
struct Step {
  enum Kind {
    kAdmit,
    kAdmitDispatching,
    kBegin,
    kUnknown,
    kRequeue,
    kSurfaced,
    kFailed,
    kRemove,
    kSection,
    kSafety,
    kPair
  } kind;
  std::string id;
  std::string value;
};

Transaction build(const Step& s, const JournalState& st) {
  auto tok = [&](const std::string& id) {
    const OwnershipRecord* r = st.find(id);
    return r ? r->token : OwnerToken{};
  };
  Transaction t;
  switch (s.kind) {
    case Step::kAdmit:
      t.add(testutil::admitOp(s.id, s.value));
      break;
    case Step::kAdmitDispatching:
      t.add(testutil::admitOp(s.id, s.value, true));
      break;
    case Step::kBegin:
      t.add(BeginInflight{s.id, tok(s.id), InflightPhase::kDispatching,
                          RuntimeIdentity{"thread", "", s.value}, ""});
      break;
    case Step::kUnknown:
      t.add(MarkOutcomeUnknown{s.id, tok(s.id), std::nullopt, "timeout"});
      break;
    case Step::kRequeue:
      t.add(Requeue{s.id, tok(s.id), "absent"});
      break;
    case Step::kSurfaced:
      t.add(MarkSurfaced{s.id, std::nullopt, "ack"});
      break;
    case Step::kFailed:
      t.add(MarkFailed{s.id, tok(s.id), "poison"});
      break;
    case Step::kRemove:
      t.add(RemoveLive{s.id, tok(s.id)});
      break;
    case Step::kSection:
      t.add(SetSection{s.id, s.value, std::nullopt});
      break;
    case Step::kSafety: {
      ResumeSafety cur = st.resumeSafety();
      t.add(SetResumeSafety{{false, cur.launchEpoch, cur.version + 1}});
      break;
    }
    case Step::kPair:
      t.add(testutil::admitOp(s.id, s.value)).add(SetSection{"pair", "\"" + s.id + "\"", {}});
      break;
  }
  return t;
}

std::vector<Step> fixedScript() {
  return {
      {Step::kAdmit, "a", "body-a"},
      {Step::kAdmitDispatching, "b", "stdin\n"},
      {Step::kSection, "identity", "1"},
      {Step::kBegin, "a", "rcpt-a"},
      {Step::kAdmit, "c", "body-c"},
      {Step::kUnknown, "b", ""},
      {Step::kSurfaced, "a", ""},
      {Step::kRequeue, "b", ""},
      {Step::kFailed, "c", ""},
      {Step::kAdmit, "d", std::string(300, 'd')},
      {Step::kSection, "runtimePolicy", "{\"m\":2}"},
      {Step::kSafety, "", ""},
      {Step::kRemove, "d", ""},
      {Step::kAdmit, "e", "e"},
      {Step::kAdmit, "f", "f"},
      {Step::kAdmit, "g", "g"},    // reclaims b (oldest live)
      {Step::kSurfaced, "b", ""},  // late evidence upgrades the reclaimed tombstone
      {Step::kPair, "h", "h"},
  };
}

// A random but always-valid script, generated against a model state.
std::vector<Step> randomScript(uint64_t seed, int steps) {
  std::mt19937_64 rng(seed);
  JournalState model(crashLimits());
  std::vector<Step> out;
  int next = 0;
  while (static_cast<int>(out.size()) < steps) {
    RestartView v = model.view();
    Step s{Step::kAdmit, "", ""};
    int pick = static_cast<int>(rng() % 10);
    if (pick < 3 || v.live.empty()) {
      s = {rng() % 4 == 0 ? Step::kAdmitDispatching : Step::kAdmit, "r" + std::to_string(next++),
           std::string(rng() % 200, 'x')};
    } else if (pick < 8) {
      const OwnershipRecord& r = v.live[rng() % v.live.size()];
      std::vector<Step::Kind> kinds = {Step::kSurfaced, Step::kFailed, Step::kRemove};
      if (r.state == OwnerState::kQueued) kinds.push_back(Step::kBegin);
      if (isInflight(r.state)) {
        kinds.push_back(Step::kUnknown);
        kinds.push_back(Step::kRequeue);
      }
      s = {kinds[rng() % kinds.size()], r.id, "rcpt"};
    } else if (pick == 8) {
      s = {Step::kSection, rng() % 2 ? "identity" : "deferredContinuation",
           std::to_string(rng() % 1000)};
    } else {
      s = {Step::kSafety, "", ""};
    }
    if (model.apply(build(s, model), 0).isOk()) out.push_back(s);
  }
  return out;
}

// The model's facts after the first `n` steps.
StateFacts modelAfter(const std::vector<Step>& script, size_t n) {
  JournalState model(crashLimits());
  model.attach(0);
  for (size_t i = 0; i < n; ++i) {
    auto r = model.apply(build(script[i], model), 0);
    EXPECT_TRUE(r.isOk()) << "script step " << i << ": " << r.status().toString();
  }
  return factsOf(model.view());
}

struct RunResult {
  bool opened = false;
  size_t acked = 0;         // steps acknowledged OK, in order
  bool stepFailed = false;  // a step failed (it may or may not have landed)
  uint64_t ops = 0;
};

RunResult runScript(FaultFileSystem& fs, const std::vector<Step>& script,
                    std::unique_ptr<OwnershipJournal>* keep = nullptr) {
  static FakeClock clock;  // outlives every journal the tests keep
  RunResult out;
  auto j = OwnershipJournal::open(fs, clock, kDir, {"crash-test", crashLimits()});
  if (!j.isOk()) return out;
  out.opened = true;
  for (const Step& s : script) {
    auto r = (*j)->commit(build(s,
                                [&] {
                                  // Build against the journal's own state: its tokens are the ones
                                  // that count.
                                  return JournalState::decode(
                                      *fs.contents(kDir + "/.daemon-state.json"), crashLimits());
                                }()
                                    .valueOr(JournalState(crashLimits()))));
    if (!r.isOk()) {
      out.stepFailed = true;
      break;
    }
    out.acked++;
  }
  out.ops = fs.opCount();
  if (keep != nullptr) *keep = std::move(*j);
  return out;
}

StateFacts reopenFacts(FaultFileSystem& fs) {
  FakeClock clock;
  auto j = OwnershipJournal::open(fs, clock, kDir, {"reopen", crashLimits()});
  EXPECT_TRUE(j.isOk()) << "recovery failed to open: " << j.status().toString();
  if (!j.isOk()) return {};
  return factsOf((*j)->view());
}

void checkPowerLossAtEveryCall(const std::vector<Step>& script, uint64_t seed) {
  FaultFileSystem dry;
  RunResult full = runScript(dry, script);
  ASSERT_EQ(full.acked, script.size());
  for (uint64_t crashAt = 0; crashAt <= full.ops; ++crashAt) {
    for (PowerLossMode mode :
         {PowerLossMode::kDropUnsynced, PowerLossMode::kKeepUnsynced, PowerLossMode::kRandom}) {
      FaultFileSystem fs;
      fs.crashAtOp(crashAt);
      RunResult run = runScript(fs, script);
      fs.powerLoss(mode, seed * 1000003 + crashAt);
      StateFacts got = reopenFacts(fs);
      StateFacts acked = modelAfter(script, run.acked);
      bool ok = got == acked;
      if (!ok && run.stepFailed) ok = got == modelAfter(script, run.acked + 1);
      ASSERT_TRUE(ok) << "crash at call " << crashAt << " (mode " << int(mode) << ", " << run.acked
                      << " steps acknowledged)\n got: " << testutil::describe(got)
                      << "\nwant: " << testutil::describe(acked);
    }
  }
}

// Power loss before every call of the fixed script (each write, fsync, close, rename and
// directory fsync of every commit, and every call of open) keeps exactly the acknowledged
// state, whether unsynced data is dropped, kept, or torn at random.
TEST(SHOAL_JOURNAL_SUITE(CrashTest), PowerLossAtEveryStepKeepsExactlyTheAcknowledgedState) {
  checkPowerLossAtEveryCall(fixedScript(), 1);
}

// The same for random valid scripts (reclaim, pruning, sections, safety, rollbacks).
TEST(SHOAL_JOURNAL_SUITE(CrashTest), PowerLossAtEveryStepOfRandomScripts) {
  for (int seed = 1; seed <= kRandomScripts; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    checkPowerLossAtEveryCall(randomScript(seed, kRandomSteps), seed);
  }
}

// Failing each call once (EIO or ENOSPC) either fails open (and a retry opens) or poisons the
// journal at that step: later mutations are refused with journal-poisoned, recover() brings
// back exactly the acknowledged state (plus, possibly, the uncertain step), and the script
// then completes to the same final state as an undisturbed run.
TEST(SHOAL_JOURNAL_SUITE(CrashTest), FailingEachCallOncePoisonsUntilRecovered) {
  std::vector<Step> script = fixedScript();
  FaultFileSystem dry;
  RunResult full = runScript(dry, script);
  StateFacts want = modelAfter(script, script.size());
  for (int err : {EIO, ENOSPC}) {
    for (uint64_t at = 0; at < full.ops; ++at) {
      SCOPED_TRACE("fail call " + std::to_string(at) + " errno " + std::to_string(err));
      FaultFileSystem fs;
      fs.failAtOp(at, err);
      std::unique_ptr<OwnershipJournal> j;
      RunResult run = runScript(fs, script, &j);
      if (!run.opened) {
        RunResult again = runScript(fs, script, &j);
        ASSERT_TRUE(again.opened);
        ASSERT_EQ(again.acked, script.size());
        EXPECT_EQ(factsOf(j->view()), want);
        continue;
      }
      if (!run.stepFailed) {  // the failed call was best-effort (e.g. an ancestor fsync)
        EXPECT_EQ(factsOf(j->view()), want);
        continue;
      }
      ASSERT_FALSE(j->poisonStatus().isOk());
      EXPECT_EQ(j->setSection({"x", "1", std::nullopt}).status().reason(), reason::kPoisoned);
      ASSERT_TRUE(j->recover().isOk()) << j->recover().toString();
      StateFacts got = factsOf(j->view());
      size_t done = run.acked;
      if (got == modelAfter(script, run.acked + 1))
        done++;
      else
        ASSERT_EQ(got, modelAfter(script, run.acked)) << testutil::describe(got);
      for (size_t i = done; i < script.size(); ++i) {
        RestartView v = j->view();
        JournalState mirror =
            JournalState::decode(*fs.contents(kDir + "/.daemon-state.json"), crashLimits()).value();
        auto r = j->commit(build(script[i], mirror));
        ASSERT_TRUE(r.isOk()) << "step " << i << ": " << r.status().toString();
      }
      EXPECT_EQ(factsOf(j->view()), want);
    }
  }
}

// Many threads admitting through group commit, power lost at a random call: every
// acknowledged admission survives, and nothing appears that was never attempted.
TEST(SHOAL_JOURNAL_SUITE(CrashTest), GroupCommitCrashKeepsEveryAcknowledgedAdmission) {
  for (int seed = 1; seed <= kConcurrentSeeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    FaultFileSystem fs;
    FakeClock clock;
    auto j = OwnershipJournal::open(fs, clock, kDir);
    ASSERT_TRUE(j.isOk());
    fs.crashAtOp(fs.opCount() + rng() % 120);
    constexpr int kThreads = 8;
    std::vector<std::vector<std::string>> acked(kThreads), tried(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 50; ++i) {
          std::string id = "t" + std::to_string(t) + "-" + std::to_string(i);
          tried[t].push_back(id);
          if (!(*j)->admit(testutil::admitOp(id, id)).isOk()) return;
          acked[t].push_back(id);
        }
      });
    }
    for (auto& t : threads)
      t.join();
    j->reset();
    fs.powerLoss(static_cast<PowerLossMode>(seed % 3), seed);
    auto reopened = OwnershipJournal::open(fs, clock, kDir);
    ASSERT_TRUE(reopened.isOk()) << reopened.status().toString();
    std::set<std::string> attempted;
    for (int t = 0; t < kThreads; ++t) {
      for (const std::string& id : acked[t]) {
        auto r = (*reopened)->find(id);
        ASSERT_TRUE(r.has_value()) << "acknowledged admission " << id << " lost";
        EXPECT_EQ(r->body, id);
      }
      attempted.insert(tried[t].begin(), tried[t].end());
    }
    for (const auto& r : (*reopened)->view().live)
      EXPECT_TRUE(attempted.count(r.id)) << r.id;
  }
}

}  // namespace
}  // namespace shoal::journal
