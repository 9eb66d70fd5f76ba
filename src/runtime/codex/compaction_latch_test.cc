#include "runtime/codex/compaction_latch.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace shoal::runtime {
namespace {

using C = CompactionLatch::Completion;

// One step of a scripted frame sequence: a turn start, an upstream idle naming the running
// turn, or a completion, each tagged with the generation it came from.
struct Step {
  enum class Kind { kStarted, kIdle, kComplete } kind;
  uint64_t generation;
  std::string turn;
};

struct Row {
  const char* name;
  std::vector<Step> steps;
  // What the last step returned: started/upstreamIdle as 1/0, complete as its Completion.
  int last;
  int runtimeIdles;  // kEnds seen over the whole sequence
  bool idleSeen;
};

constexpr uint64_t kGen = 7;

TEST(CompactionLatchTest, OnlyTheMatchingSameGenerationCompletionEndsItOnce) {
  using K = Step::Kind;
  const std::vector<Row> rows = {
      {"early idle then completion: one idle",
       {{K::kStarted, kGen, "c1"}, {K::kIdle, kGen, "c1"}, {K::kComplete, kGen, "c1"}},
       static_cast<int>(C::kEnds),
       1,
       true},
      {"completion without an early idle: one idle",
       {{K::kStarted, kGen, "c1"}, {K::kComplete, kGen, "c1"}},
       static_cast<int>(C::kEnds),
       1,
       false},
      {"duplicate completion: dropped",
       {{K::kStarted, kGen, "c1"},
        {K::kIdle, kGen, "c1"},
        {K::kComplete, kGen, "c1"},
        {K::kComplete, kGen, "c1"}},
       static_cast<int>(C::kDuplicate),
       1,
       true},
      {"wrong turn's completion: not ours, latch still open",
       {{K::kStarted, kGen, "c1"}, {K::kIdle, kGen, "c1"}, {K::kComplete, kGen, "t0"}},
       static_cast<int>(C::kNotOurs),
       0,
       true},
      {"old generation's completion of the same turn id: not ours",
       {{K::kStarted, kGen, "c1"}, {K::kIdle, kGen, "c1"}, {K::kComplete, kGen - 1, "c1"}},
       static_cast<int>(C::kNotOurs),
       0,
       true},
      {"old generation's early idle: not recorded",
       {{K::kStarted, kGen, "c1"}, {K::kIdle, kGen - 1, "c1"}},
       0,
       0,
       false},
      {"idle while another turn runs: not recorded",
       {{K::kStarted, kGen, "c1"}, {K::kIdle, kGen, "t0"}},
       0,
       0,
       false},
      {"idle after the completion consumed it: not recorded",
       {{K::kStarted, kGen, "c1"}, {K::kComplete, kGen, "c1"}, {K::kIdle, kGen, "c1"}},
       0,
       1,
       false},
      {"turn started in another generation: not the compaction turn",
       {{K::kStarted, kGen - 1, "c1"}},
       0,
       0,
       false},
      {"wrong turn first, then the matching one: exactly one idle",
       {{K::kStarted, kGen, "c1"},
        {K::kComplete, kGen, "t0"},
        {K::kIdle, kGen, "c1"},
        {K::kComplete, kGen, "c1"}},
       static_cast<int>(C::kEnds),
       1,
       true},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    CompactionLatch latch;
    latch.request(kGen);
    int last = -1;
    int idles = 0;
    for (const Step& s : row.steps) {
      switch (s.kind) {
        case K::kStarted:
          last = latch.started(s.generation, s.turn) ? 1 : 0;
          break;
        case K::kIdle:
          last = latch.upstreamIdle(s.generation, s.turn) ? 1 : 0;
          break;
        case K::kComplete: {
          C c = latch.complete(s.generation, s.turn);
          if (c == C::kEnds) ++idles;
          last = static_cast<int>(c);
          break;
        }
      }
    }
    EXPECT_EQ(last, row.last);
    EXPECT_EQ(idles, row.runtimeIdles);
    EXPECT_EQ(latch.idleSeen(), row.idleSeen);
  }
}

TEST(CompactionLatchTest, OnlyTheFirstTurnAfterTheRequestIsTheCompactionTurn) {
  CompactionLatch latch;
  EXPECT_FALSE(latch.started(kGen, "t0")) << "no compaction requested";
  latch.request(kGen);
  EXPECT_TRUE(latch.requested());
  EXPECT_FALSE(latch.started(kGen, "")) << "a turn without an id binds nothing";
  EXPECT_TRUE(latch.started(kGen, "c1"));
  EXPECT_FALSE(latch.started(kGen, "t2")) << "bound already";
  EXPECT_EQ(latch.turn(), "c1");
  EXPECT_TRUE(latch.active());
  EXPECT_EQ(latch.complete(kGen, "c1"), C::kEnds);
  EXPECT_FALSE(latch.active());
  latch.request(kGen);  // the next compaction starts clean
  EXPECT_FALSE(latch.idleSeen());
  EXPECT_EQ(latch.complete(kGen, "c1"), C::kNotOurs) << "the old compaction's late duplicate";
}

}  // namespace
}  // namespace shoal::runtime
