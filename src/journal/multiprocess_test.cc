// Multi-process crash test: a child process admitting and transitioning owners through the
// real file system is SIGKILLed at random points. After each kill the journal reopens, and
// every operation the child reported as acknowledged is present, with no record regressed.
#include <chrono>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include <signal.h>

#include "base/subprocess.h"
#include "journal/ownership_journal.h"
#include "journal/test_util.h"

#include <gtest/gtest.h>

namespace shoal::journal {
namespace {

#if defined(SHOAL_JOURNAL_SLOW)
constexpr int kIterations = 200;
#else
constexpr int kIterations = 20;
#endif
constexpr int kIterationsPerWorkdir = 10;

// queued < inflight < terminal; a journal may move a record up this order, never down.
int rank(char op) {
  return op == 'A' ? 0 : op == 'I' ? 1 : 2;
}
int rank(OwnerState s) {
  return isLive(s) ? (s == OwnerState::kQueued ? 0 : 1) : 2;
}

struct Acked {
  char op = 'A';  // the strongest acknowledged operation
};

std::map<std::string, Acked> readAcks(const std::string& path) {
  std::map<std::string, Acked> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() < 3 || line[1] != ' ') continue;  // a torn last line cannot happen, but
    char op = line[0];                                // tolerate it: it is not acknowledged
    Acked& a = out[line.substr(2)];
    if (rank(op) >= rank(a.op)) a.op = op;
  }
  return out;
}

// Every acknowledged admission/transition survives SIGKILL at a random point, and no record
// moves back (queued < inflight < terminal; surfaced stays surfaced, failed stays terminal).
TEST(SHOAL_JOURNAL_SUITE(MultiProcessTest), SigkillAtRandomPointsLosesNoAcknowledgedOwnership) {
  testutil::ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  std::mt19937_64 rng(20240601);
  int killed = 0;
  size_t verified = 0;
  for (int iter = 0; iter < kIterations; ++iter) {
    std::string workdir = dir.path() + "/w" + std::to_string(iter / kIterationsPerWorkdir);
    std::string acks = workdir + ".acks";
    SpawnOptions options;
    options.argv = {SHOAL_JOURNAL_CRASH_CHILD, workdir, acks, std::to_string(rng()),
                    std::to_string(iter)};
    options.stderrTarget = StdioTarget::inherit();
    options.killOnDestroy = true;
    auto child = Subprocess::spawn(options);
    ASSERT_TRUE(child.isOk()) << child.status().toString();
    auto exited = child->wait(std::chrono::milliseconds(rng() % 150));  // the random kill point
    if (!exited.isOk()) {
      ASSERT_TRUE(child->signal(SIGKILL).isOk());
      exited = child->wait(std::chrono::seconds(30));
      ASSERT_TRUE(exited.isOk()) << exited.status().toString();
      killed++;
    }
    ASSERT_TRUE(exited->success() || (!exited->exited && exited->signal == SIGKILL))
        << "iteration " << iter << ": child " << exited->toString();

    auto view = OwnershipJournal::inspect(FileSystem::posix(), workdir);
    if (!view.isOk() && view.status().code() == StatusCode::kNotFound) {
      ASSERT_TRUE(readAcks(acks).empty()) << "acknowledged work but no journal file";
      continue;  // killed before the first commit of a fresh workdir
    }
    ASSERT_TRUE(view.isOk()) << "iteration " << iter << ": " << view.status().toString();
    std::map<std::string, const OwnershipRecord*> byId;
    for (const auto& r : view->live)
      byId[r.id] = &r;
    for (const auto& r : view->tombstones)
      byId[r.id] = &r;
    auto ackedOps = readAcks(acks);
    verified += ackedOps.size();
    for (const auto& [id, acked] : ackedOps) {
      auto it = byId.find(id);
      ASSERT_NE(it, byId.end()) << "iteration " << iter << ": acknowledged " << acked.op << " "
                                << id << " is missing";
      const OwnershipRecord& r = *it->second;
      EXPECT_GE(rank(r.state), rank(acked.op))
          << id << " regressed to " << ownerStateName(r.state) << " after " << acked.op;
      if (acked.op == 'S') {
        EXPECT_EQ(r.state, OwnerState::kSurfaced) << id;
      } else if (acked.op == 'F') {
        EXPECT_EQ(r.state, OwnerState::kFailed) << id;
      }
    }
    if (HasFailure()) return;
  }
  std::printf(
      "[ journal ] %d of %d children were SIGKILLed mid-run; %zu acknowledged-owner checks "
      "passed\n",
      killed, kIterations, verified);
}

}  // namespace
}  // namespace shoal::journal
