// journal_crash_child: the process multiprocess_test.cc starts and SIGKILLs at random points.
//
//   journal_crash_child <workdir> <ack-file> <seed> <iteration>
//
// Opens the workdir's journal (real files, real clock), settles the owners a killed
// predecessor left (queued → inflight → surfaced; outcome_unknown → failed, as a daemon
// without a reconciler would), then admits and transitions new owners from several threads.
// After each operation returns OK it appends "<op> <id>\n" to the ack file (A admitted,
// I inflight, S surfaced, F failed) with one write(2): every line there is acknowledged.
// Exits 0 when done, 2 on a usage error, 3 if the journal refuses to open, 4 on a refusal
// that should never happen.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file_system.h"
#include "journal/ownership_journal.h"

namespace {

using namespace shoal::journal;

int gAckFd = -1;
std::atomic<bool> gBroken{false};

void ack(char op, const std::string& id) {
  std::string line = std::string(1, op) + " " + id + "\n";
  if (::write(gAckFd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    gBroken = true;
  }
}

void expectOk(const shoal::Status& st, const char* what) {
  if (!st.isOk()) {
    std::fprintf(stderr, "crash child: %s refused: %s\n", what, st.toString().c_str());
    std::_Exit(4);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: journal_crash_child <workdir> <ack-file> <seed> <iteration>\n");
    return 2;
  }
  std::string workdir = argv[1];
  gAckFd = ::open(argv[2], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (gAckFd < 0) return 2;
  uint64_t seed = std::strtoull(argv[3], nullptr, 10);
  std::string iteration = argv[4];

  auto opened =
      OwnershipJournal::open(shoal::FileSystem::posix(), shoal::Clock::real(), workdir,
                             {"journal_crash_child pid " + std::to_string(::getpid()), {}});
  if (!opened.isOk()) {
    std::fprintf(stderr, "crash child: %s\n", opened.status().toString().c_str());
    return 3;
  }
  OwnershipJournal& journal = **opened;

  // Settle what a killed predecessor left, oldest first.
  for (const OwnershipRecord& r : journal.view().live) {
    if (r.state == OwnerState::kQueued) {
      auto begun =
          journal.beginInflight({r.id, r.token, InflightPhase::kDispatching, std::nullopt, ""});
      expectOk(begun.status(), "restored begin");
      ack('I', r.id);
      expectOk(journal.markSurfaced({r.id, begun->record->token, "ack"}).status(), "surface");
      ack('S', r.id);
    } else {
      expectOk(journal.markFailed({r.id, r.token, "no reconciler"}).status(), "restored fail");
      ack('F', r.id);
    }
  }

  constexpr int kThreads = 4;
  constexpr int kOpsPerThread = 10;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(seed * 131 + t);
      for (int n = 0; n < kOpsPerThread && !gBroken; ++n) {
        std::string id = "i" + iteration + "-t" + std::to_string(t) + "-" + std::to_string(n);
        Admit a;
        a.id = id;
        a.body = std::string(100 + rng() % 2000, static_cast<char>('a' + rng() % 26));
        auto admitted = journal.admit(a);
        expectOk(admitted.status(), "admit");
        ack('A', id);
        if (rng() % 3 == 0) continue;  // stays queued
        auto begun = journal.beginInflight(
            {id, admitted->record->token, InflightPhase::kDispatching, std::nullopt, ""});
        expectOk(begun.status(), "begin");
        ack('I', id);
        if (rng() % 3 == 0) continue;  // stays inflight
        if (rng() % 2 == 0) {
          expectOk(journal.markSurfaced({id, begun->record->token, "ack"}).status(), "surface");
          ack('S', id);
        } else {
          expectOk(journal.markFailed({id, begun->record->token, "error"}).status(), "fail");
          ack('F', id);
        }
      }
    });
  }
  for (auto& t : threads)
    t.join();
  return gBroken ? 4 : 0;
}
