// journal_bench: group-commit throughput and latency of the ownership journal, printed beside
// the single atomic-replace fsync floor of the same directory, measured in the same run.
//
//   journal_bench [--dir DIR] [--seconds S]
//
// DIR (default $TMPDIR or /tmp) must be on the file system being measured. For each state-file
// size (~1 MiB and ~10 MiB) it measures:
//   floor   writeFileAtomically() of a file of that size (temp → write → fsync → close →
//           rename → fsync dir), one at a time: the best a journal without group commit can do;
//   journal 1, 8 and 64 concurrent callers, each looping admit(1 KiB body) → markSurfaced,
//           for S seconds (default 3). Admission latency percentiles are per admit() call.
// The output format is documented in docs/journal-format.md ("Benchmark").
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/file_system.h"
#include "journal/ownership_journal.h"

namespace {

using namespace shoal;
using namespace shoal::journal;

double nowMs() {
  return static_cast<double>(Clock::real().monotonicNs()) / 1e6;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

struct Shape {
  const char* name;
  size_t liveBodyBytes;  // prefilled live owners' bodies
  size_t targetBytes;    // opaque target data (kept in tombstones)
};

struct FloorResult {
  double p50Ms, p99Ms, perSecond;
};

FloorResult measureFloor(const std::string& dir, size_t bytes, double seconds) {
  std::string payload(bytes, 'f');
  std::vector<double> lat;
  double start = nowMs();
  while (nowMs() - start < seconds * 1000 || lat.size() < 5) {
    double t0 = nowMs();
    Status st = writeFileAtomically(FileSystem::posix(), dir + "/floor.json", payload);
    if (!st.isOk()) {
      std::fprintf(stderr, "floor write failed: %s\n", st.toString().c_str());
      std::exit(1);
    }
    lat.push_back(nowMs() - t0);
  }
  double total = nowMs() - start;
  (void)FileSystem::posix().remove(dir + "/floor.json");
  return {percentile(lat, 0.5), percentile(lat, 0.99),
          static_cast<double>(lat.size()) * 1000.0 / total};
}

std::unique_ptr<OwnershipJournal> prefill(const std::string& workdir, const Shape& shape) {
  auto j =
      OwnershipJournal::open(FileSystem::posix(), Clock::real(), workdir, {"journal_bench", {}});
  if (!j.isOk()) {
    std::fprintf(stderr, "open failed: %s\n", j.status().toString().c_str());
    std::exit(1);
  }
  // 512 tombstones, then 448 live owners: leaves room for 64 callers' owners without reclaim.
  Transaction tombs;
  for (int i = 0; i < 512; ++i) {
    Admit a;
    a.id = "prefill-t" + std::to_string(i);
    a.body = "x";
    a.target = std::string(shape.targetBytes, 't');
    tombs.add(a).add(MarkSurfaced{a.id, std::nullopt, "prefill"});
  }
  Transaction live;
  for (int i = 0; i < 448; ++i) {
    Admit a;
    a.id = "prefill-l" + std::to_string(i);
    a.body = std::string(shape.liveBodyBytes, 'b');
    a.target = std::string(shape.targetBytes, 't');
    live.add(a);
  }
  for (Transaction* t : {&tombs, &live}) {
    auto r = (*j)->commit(*t);
    if (!r.isOk()) {
      std::fprintf(stderr, "prefill failed: %s\n", r.status().toString().c_str());
      std::exit(1);
    }
  }
  return std::move(j).value();
}

size_t fileSize(const std::string& path) {
  auto bytes = FileSystem::posix().readFile(path);
  return bytes.isOk() ? bytes->size() : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = tmp && *tmp ? tmp : "/tmp";
  double seconds = 3.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--dir") == 0) base = argv[i + 1];
    if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::atof(argv[i + 1]);
  }
  std::string root = base + "/shoal-journal-bench-XXXXXX";
  if (::mkdtemp(root.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  std::printf("journal_bench: dir %s, %u hardware threads, %.1f s per run\n", root.c_str(),
              std::thread::hardware_concurrency(), seconds);
  std::printf(
      "op = admit(1 KiB body) then markSurfaced (2 durable transactions); latency = admit\n");
  std::printf("%-8s %-9s %8s %12s %10s %8s %8s %10s %10s %10s\n", "state", "run", "callers",
              "admissions/s", "txn/s", "p50 ms", "p99 ms", "txn/batch", "vs floor", "file MiB");

  const Shape shapes[] = {{"~1MiB", 1300, 400}, {"~10MiB", 17300, 3800}};
  int scenario = 0;
  for (const Shape& shape : shapes) {
    std::string workdir = root + "/seat" + std::to_string(scenario++);
    auto journal = prefill(workdir, shape);
    std::string statePath = journal->statePath();
    double mib = static_cast<double>(fileSize(statePath)) / (1024.0 * 1024.0);
    FloorResult floor = measureFloor(workdir, fileSize(statePath), seconds);
    std::printf("%-8s %-9s %8s %12s %10.1f %8.2f %8.2f %10s %10s %10.2f\n", shape.name, "floor",
                "1", "-", floor.perSecond, floor.p50Ms, floor.p99Ms, "1", "1.0x", mib);
    std::fflush(stdout);
    for (int callers : {1, 8, 64}) {
      std::atomic<bool> stop{false};
      std::vector<std::vector<double>> lat(callers);
      std::atomic<uint64_t> admissions{0}, failures{0};
      CommitStats before = journal->commitStats();
      std::vector<std::thread> threads;
      double start = nowMs();
      for (int c = 0; c < callers; ++c) {
        threads.emplace_back([&, c] {
          std::string body(1024, static_cast<char>('a' + c % 26));
          std::string target(shape.targetBytes, 't');
          for (uint64_t n = 0; !stop.load(std::memory_order_relaxed); ++n) {
            Admit a;
            a.id =
                "b" + std::to_string(callers) + "-" + std::to_string(c) + "-" + std::to_string(n);
            a.body = body;
            a.target = target;
            double t0 = nowMs();
            auto r = journal->admit(std::move(a));
            lat[c].push_back(nowMs() - t0);
            if (!r.isOk() ||
                !journal->markSurfaced({r->record->id, r->record->token, "ack"}).isOk()) {
              failures++;
              return;
            }
            admissions++;
          }
        });
      }
      while (nowMs() - start < seconds * 1000) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the run's duration
      }
      stop = true;
      for (auto& t : threads)
        t.join();
      double elapsed = (nowMs() - start) / 1000.0;
      CommitStats after = journal->commitStats();
      std::vector<double> all;
      for (auto& v : lat)
        all.insert(all.end(), v.begin(), v.end());
      double perSecond = static_cast<double>(admissions.load()) / elapsed;
      uint64_t txns = after.transactions - before.transactions;
      uint64_t batches = after.batches - before.batches;
      double txnPerSecond = static_cast<double>(txns) / elapsed;
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.1fx", txnPerSecond / floor.perSecond);
      char perBatch[32];
      std::snprintf(perBatch, sizeof perBatch, "%.1f",
                    batches ? static_cast<double>(txns) / static_cast<double>(batches) : 0.0);
      mib = static_cast<double>(fileSize(statePath)) / (1024.0 * 1024.0);
      std::printf("%-8s %-9s %8d %12.1f %10.1f %8.2f %8.2f %10s %10s %10.2f\n", shape.name,
                  "journal", callers, perSecond, txnPerSecond, percentile(all, 0.5),
                  percentile(all, 0.99), perBatch, ratio, mib);
      if (failures.load() != 0) {
        std::printf("  ! %llu callers stopped on an error\n",
                    static_cast<unsigned long long>(failures.load()));
      }
      std::fflush(stdout);
    }
  }
  std::string cleanup = "rm -rf '" + root + "'";
  return std::system(cleanup.c_str()) == 0 ? 0 : 1;
}
