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
// Then the commit cost without fsync (issue goal: at the tombstone cap within 1.2x of empty):
//   the same DM-shaped pair of transactions (admit a 600-byte body, then markSurfaced) on a
//   journal whose file system makes sync and syncDir no-ops, on an empty journal and on one
//   holding 512 tombstones (the cap) of the seat's shape, beside the in-memory part alone
//   (apply + the snapshot and the file's image with its checksum).
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
#include "journal/journal_state.h"
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

// The real file system with durability switched off: what a commit costs besides its fsyncs.
class NoSyncFileSystem final : public FileSystem {
 public:
  Result<std::unique_ptr<WritableFile>> openForWrite(const std::string& path,
                                                     CreateMode mode) override {
    SHOAL_ASSIGN_OR_RETURN(auto file, real().openForWrite(path, mode));
    return std::unique_ptr<WritableFile>(new File(std::move(file)));
  }
  Result<std::string> readFile(const std::string& path) override { return real().readFile(path); }
  Status rename(const std::string& from, const std::string& to) override {
    return real().rename(from, to);
  }
  Status syncDir(const std::string&) override { return Status::ok(); }
  Status remove(const std::string& path) override { return real().remove(path); }
  Result<std::vector<std::string>> createDirs(const std::string& dir) override {
    return real().createDirs(dir);
  }
  bool exists(const std::string& path) override { return real().exists(path); }
  Result<std::unique_ptr<FileLock>> lockFile(const std::string& path,
                                             std::string_view holder) override {
    return real().lockFile(path, holder);
  }

 private:
  class File final : public WritableFile {
   public:
    explicit File(std::unique_ptr<WritableFile> inner) : inner_(std::move(inner)) {}
    Status append(std::string_view data) override { return inner_->append(data); }
    Status sync() override { return Status::ok(); }
    Status close() override { return inner_->close(); }

   private:
    std::unique_ptr<WritableFile> inner_;
  };
  static FileSystem& real() { return FileSystem::posix(); }
};

// A tombstone as a seat leaves it: a 26-character message id, the sender's id as the target,
// a surfaced reason and a runtime session id.
Transaction seatTombstones(int count) {
  Transaction t;
  for (int i = 0; i < count; ++i) {
    Admit a;
    a.id = "01JE" + std::to_string(1000000000000000000ull + static_cast<uint64_t>(i)) + "ABCD";
    a.body = "x";
    a.target = "01JEPEERSENDERIDXXXXXXXXXX";
    t.add(a).add(MarkSurfaced{a.id, std::nullopt, "correlated_ack"});
  }
  return t;
}

struct CommitCost {
  double commitUs;  // per transaction, file system without fsync
  double memoryUs;  // per transaction, JournalState::apply + the file's image (what a commit
                    // hands to its vectored write) only
  size_t fileBytes;
};

// `tombstones` 0: the journal keeps at most one tombstone (it stays empty); else it is filled
// to the cap first and stays there (each surfaced DM prunes the oldest).
CommitCost measureCommitCost(const std::string& workdir, int tombstones, double seconds) {
  static NoSyncFileSystem fs;
  Limits limits;
  if (tombstones == 0) limits.maxTombstones = 1;
  auto j = OwnershipJournal::open(fs, Clock::real(), workdir, {"journal_bench", limits});
  if (!j.isOk()) {
    std::fprintf(stderr, "open failed: %s\n", j.status().toString().c_str());
    std::exit(1);
  }
  JournalState memory(limits);
  if (tombstones > 0) {
    Transaction prefill = seatTombstones(tombstones);
    if (!(*j)->commit(prefill).isOk() || !memory.apply(prefill, 0).isOk()) {
      std::fprintf(stderr, "prefill failed\n");
      std::exit(1);
    }
  }
  const std::string body(600, 'b');
  auto dm = [&](uint64_t n) {
    Admit a;
    a.id = "01JF" + std::to_string(2000000000000000000ull + n) + "WXYZ";
    a.body = body;
    a.target = "01JEPEERSENDERIDXXXXXXXXXX";
    return a;
  };
  uint64_t n = 0;
  double start = nowMs();
  while (nowMs() - start < seconds * 500 || n < 200) {
    auto r = (*j)->admit(dm(n++));
    if (!r.isOk() || !(*j)->markSurfaced({r->record->id, r->record->token, "ack"}).isOk()) {
      std::fprintf(stderr, "commit failed\n");
      std::exit(1);
    }
  }
  double commitUs = (nowMs() - start) * 1000.0 / static_cast<double>(2 * n);
  size_t bytes = 0;
  uint64_t m = 0;
  start = nowMs();
  while (nowMs() - start < seconds * 500 || m < 200) {
    Admit a = dm(m++);
    std::string id = a.id;
    Transaction admit;
    admit.add(std::move(a));
    Transaction surfaced;
    surfaced.add(MarkSurfaced{id, std::nullopt, "ack"});
    if (!memory.apply(admit, 0).isOk()) std::exit(1);
    bytes = memory.snapshot().image().size();
    if (!memory.apply(surfaced, 0).isOk()) std::exit(1);
    bytes = memory.snapshot().image().size();
  }
  double memoryUs = (nowMs() - start) * 1000.0 / static_cast<double>(2 * m);
  return {commitUs, memoryUs, bytes};
}

void reportCommitCost(const std::string& root, double seconds) {
  std::printf("\ncommit cost without fsync (admit 600 B, then markSurfaced; per transaction)\n");
  std::printf("%-22s %10s %12s %12s\n", "state", "file KiB", "commit us", "in-memory us");
  CommitCost empty = measureCommitCost(root + "/cost-empty", 0, seconds);
  CommitCost full = measureCommitCost(root + "/cost-cap", 512, seconds);
  auto row = [](const char* name, const CommitCost& c) {
    std::printf("%-22s %10.1f %12.1f %12.1f\n", name, static_cast<double>(c.fileBytes) / 1024.0,
                c.commitUs, c.memoryUs);
  };
  row("empty", empty);
  row("512 tombstones (cap)", full);
  std::printf("%-22s %10s %11.2fx %11.2fx   (goal <= 1.2x)\n", "cap / empty", "",
              full.commitUs / empty.commitUs, full.memoryUs / empty.memoryUs);
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
  reportCommitCost(root, seconds);
  std::string cleanup = "rm -rf '" + root + "'";
  return std::system(cleanup.c_str()) == 0 ? 0 : 1;
}
