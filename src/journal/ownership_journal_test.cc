// The durable journal: commit chain, group commit, poisoning, locking, version rules on disk.
#include "journal/ownership_journal.h"

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <fstream>
#include <sstream>
#include <thread>

#include <sys/stat.h>

#include "journal/journal_state.h"
#include "journal/reasons.h"
#include "journal/test_util.h"
#include "testing/fault_file_system.h"

#include <gtest/gtest.h>

namespace shoal::journal {
namespace {

using testutil::admitOp;

const std::string kDir = "/data/seats/alice";
const std::string kState = kDir + "/.daemon-state.json";

// A FileSystem that can hold commit-chain fsyncs of the state temp file at a gate, so tests
// can line callers up behind a leader without sleeping.
class GateFileSystem final : public FileSystem {
 public:
  explicit GateFileSystem(FaultFileSystem& inner) : inner_(inner) {}

  // Holds every later sync; arrivals and releases count from here.
  void close() {
    std::lock_guard<std::mutex> l(mu_);
    open_ = false;
    arrived_ = 0;
    released_ = 0;
  }
  void release() {
    std::lock_guard<std::mutex> l(mu_);
    released_++;
    cv_.notify_all();
  }
  void openGate() {
    std::lock_guard<std::mutex> l(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // Blocks until `n` syncs have arrived at the gate.
  void waitForArrivals(int n) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return arrived_ >= n; });
  }

  Result<std::unique_ptr<WritableFile>> openForWrite(const std::string& path,
                                                     CreateMode mode) override {
    SHOAL_ASSIGN_OR_RETURN(auto file, inner_.openForWrite(path, mode));
    return std::unique_ptr<WritableFile>(new GatedFile(this, std::move(file)));
  }
  Result<std::string> readFile(const std::string& p) override { return inner_.readFile(p); }
  Status rename(const std::string& a, const std::string& b) override { return inner_.rename(a, b); }
  Status syncDir(const std::string& d) override { return inner_.syncDir(d); }
  Status remove(const std::string& p) override { return inner_.remove(p); }
  Result<std::vector<std::string>> createDirs(const std::string& d) override {
    return inner_.createDirs(d);
  }
  bool exists(const std::string& p) override { return inner_.exists(p); }
  Result<std::unique_ptr<FileLock>> lockFile(const std::string& p, std::string_view h) override {
    return inner_.lockFile(p, h);
  }

 private:
  class GatedFile final : public WritableFile {
   public:
    GatedFile(GateFileSystem* fs, std::unique_ptr<WritableFile> inner)
        : fs_(fs), inner_(std::move(inner)) {}
    Status append(std::string_view d) override { return inner_->append(d); }
    Status sync() override {
      {
        std::unique_lock<std::mutex> l(fs_->mu_);
        int me = ++fs_->arrived_;
        fs_->cv_.notify_all();
        fs_->cv_.wait(l, [&] { return fs_->open_ || fs_->released_ >= me; });
      }
      return inner_->sync();
    }
    Status close() override { return inner_->close(); }

   private:
    GateFileSystem* fs_;
    std::unique_ptr<WritableFile> inner_;
  };

  FaultFileSystem& inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int arrived_ = 0;
  int released_ = 0;
};

class JournalTest : public ::testing::Test {
 protected:
  std::unique_ptr<OwnershipJournal> openOk(FileSystem& fs, OpenOptions options = {}) {
    auto j = OwnershipJournal::open(fs, clock_, kDir, std::move(options));
    EXPECT_TRUE(j.isOk()) << j.status().toString();
    return j.isOk() ? std::move(j).value() : nullptr;
  }
  OwnerToken tokenOf(OwnershipJournal& j, const std::string& id) { return j.find(id)->token; }

  FaultFileSystem fs_;
  FakeClock clock_;
};

// An admission that returned OK survives an immediate power loss.
TEST_F(JournalTest, AdmissionIsDurableBeforeItReturns) {
  auto j = openOk(fs_);
  ASSERT_TRUE(j->admit(admitOp("m1", "payload")).isOk());
  j.reset();
  fs_.powerLoss(PowerLossMode::kDropUnsynced);
  auto view = OwnershipJournal::inspect(fs_, kDir);
  ASSERT_TRUE(view.isOk()) << view.status().toString();
  ASSERT_EQ(view->live.size(), 1u);
  EXPECT_EQ(view->live[0].body, "payload");
}

// A resume-safety write on its own (no record changes with it) is durable before it returns:
// the unsafe baseline of a launch must survive a power loss right after it.
TEST_F(JournalTest, ResumeSafetyIsDurableBeforeItReturns) {
  auto j = openOk(fs_);
  ASSERT_TRUE(j->setResumeSafety(SetResumeSafety{{false, 4, 0}}).isOk());
  ASSERT_TRUE(j->setResumeSafety(SetResumeSafety{{true, 4, 1}}).isOk());
  j.reset();
  fs_.powerLoss(PowerLossMode::kDropUnsynced);
  auto view = OwnershipJournal::inspect(fs_, kDir);
  ASSERT_TRUE(view.isOk()) << view.status().toString();
  EXPECT_EQ(view->resumeSafety, (ResumeSafety{true, 4, 1}));
}

// Each commit is: open temp in the workdir → write → fsync → close → rename → fsync workdir.
TEST_F(JournalTest, CommitFollowsTheAtomicReplaceRecipe) {
  auto j = openOk(fs_);
  size_t from = fs_.trace().size();
  ASSERT_TRUE(j->admit(admitOp("m1")).isOk());
  std::vector<std::string> t = fs_.trace();
  std::vector<std::string> ops;
  for (size_t i = from; i < t.size(); ++i)
    ops.push_back(t[i].substr(t[i].find(' ') + 1));
  ASSERT_EQ(ops.size(), 6u);
  EXPECT_EQ(ops[0], "open " + kDir + "/.daemon-state.json.tmp");
  EXPECT_EQ(ops[1].rfind("append " + kDir + "/.daemon-state.json.tmp", 0), 0u);
  EXPECT_EQ(ops[2], "sync " + kDir + "/.daemon-state.json.tmp");
  EXPECT_EQ(ops[3], "close " + kDir + "/.daemon-state.json.tmp");
  EXPECT_EQ(ops[4], "rename " + kDir + "/.daemon-state.json.tmp -> " + kState);
  EXPECT_EQ(ops[5], "syncDir " + kDir);
}

// A newly created workdir's directory-entry chain is fsynced before the first admission, so
// an acknowledged admission survives a power loss even in a brand-new workdir.
TEST_F(JournalTest, NewWorkdirChainIsSyncedBeforeFirstAdmission) {
  auto j = openOk(fs_);
  std::vector<std::string> t = fs_.trace();
  size_t firstRename = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].find(" rename ") != std::string::npos) {
      firstRename = i;
      break;
    }
  }
  for (const char* parent : {"/", "/data", "/data/seats"}) {
    bool synced = false;
    for (size_t i = 0; i < firstRename; ++i) {
      synced = synced || t[i].substr(t[i].find(' ') + 1) == std::string("syncDir ") + parent;
    }
    EXPECT_TRUE(synced) << "no fsync of " << parent << " before the first commit";
  }
  ASSERT_TRUE(j->admit(admitOp("m1")).isOk());
  j.reset();
  fs_.powerLoss(PowerLossMode::kDropUnsynced);
  auto view = OwnershipJournal::inspect(fs_, kDir);
  ASSERT_TRUE(view.isOk()) << view.status().toString();
  EXPECT_EQ(view->live.size(), 1u);
}

// A second opener of the same workdir is refused clearly, naming the holder and the remedy.
TEST_F(JournalTest, SecondOpenerIsRefusedNamingTheHolder) {
  auto j = openOk(fs_, OpenOptions{"pid 4242 (shoal daemon)", {}});
  auto second = OwnershipJournal::open(fs_, clock_, kDir);
  ASSERT_FALSE(second.isOk());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(second.status().reason(), reason::kLocked);
  EXPECT_NE(second.status().message().find("pid 4242 (shoal daemon)"), std::string_view::npos);
  EXPECT_NE(second.status().message().find("stop the other one"), std::string_view::npos);
  j.reset();
  EXPECT_TRUE(OwnershipJournal::open(fs_, clock_, kDir).isOk());
}

// The same refusal holds on the real file system (flock), across open file descriptions.
TEST(PosixJournalTest, SecondOpenerIsRefusedOnRealFiles) {
  testutil::ScratchDir dir;
  FakeClock clock;
  std::string workdir = dir.path() + "/seat";
  auto first = OwnershipJournal::open(FileSystem::posix(), clock, workdir, {"pid 1 (first)", {}});
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  auto second = OwnershipJournal::open(FileSystem::posix(), clock, workdir);
  ASSERT_FALSE(second.isOk());
  EXPECT_EQ(second.status().reason(), reason::kLocked);
  EXPECT_NE(second.status().message().find("pid 1 (first)"), std::string_view::npos);
  ASSERT_TRUE((*first)->admit(admitOp("m1")).isOk());
  struct stat st {};
  ASSERT_EQ(::stat((workdir + "/.daemon-state.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  first->reset();
  auto again = OwnershipJournal::open(FileSystem::posix(), clock, workdir);
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  EXPECT_TRUE((*again)->find("m1").has_value());
}

// A failed write, fsync, close, rename or directory fsync poisons the journal: the admission is
// refused, every later mutation is refused with journal-poisoned, and recover() heals it.
TEST_F(JournalTest, FailedCommitStepPoisonsTheJournal) {
  for (FsOp op :
       {FsOp::kOpen, FsOp::kAppend, FsOp::kSync, FsOp::kClose, FsOp::kRename, FsOp::kSyncDir}) {
    SCOPED_TRACE(std::string(fsOpName(op)));
    FaultFileSystem fs;
    auto j = openOk(fs);
    ASSERT_TRUE(j->admit(admitOp("owned")).isOk());
    fs.failOnce(op, EIO);
    auto failed = j->admit(admitOp("m1"));
    ASSERT_FALSE(failed.isOk());
    EXPECT_EQ(failed.status().code(), StatusCode::kDataLoss) << failed.status().toString();
    EXPECT_FALSE(j->poisonStatus().isOk());
    auto later = j->admit(admitOp("m2"));
    ASSERT_FALSE(later.isOk());
    EXPECT_EQ(later.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(later.status().reason(), reason::kPoisoned);
    EXPECT_EQ(j->markFailed({"owned", tokenOf(*j, "owned"), "x"}).status().reason(),
              reason::kPoisoned);
    EXPECT_EQ(j->noteAttempt("owned", tokenOf(*j, "owned")).status().reason(), reason::kPoisoned);
    ASSERT_TRUE(j->recover().isOk());
    EXPECT_TRUE(j->poisonStatus().isOk());
    EXPECT_TRUE(j->find("owned").has_value());
    EXPECT_FALSE(j->find("m2").has_value());
    // m1's write failed before or after its rename: either outcome is a consistent journal.
    bool landed = j->find("m1").has_value();
    EXPECT_EQ(landed, op == FsOp::kSyncDir);
    ASSERT_TRUE(j->admit(admitOp("m3")).isOk());
  }
}

// A full disk refuses the admission (kResourceExhausted) and loses nothing already owned.
TEST_F(JournalTest, EnospcRefusesAdmissionAndLosesNothingOwned) {
  auto j = openOk(fs_);
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(j->admit(admitOp("m" + std::to_string(i))).isOk());
  ASSERT_TRUE(
      j->beginInflight({"m0", tokenOf(*j, "m0"), InflightPhase::kDispatching, std::nullopt, ""})
          .isOk());
  fs_.failAlways(FsOp::kAppend, ENOSPC);
  auto r = j->admit(admitOp("new"));
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(j->admit(admitOp("new2")).status().reason(), reason::kPoisoned);
  EXPECT_FALSE(j->recover().isOk());  // still no space: stays poisoned, file untouched
  EXPECT_FALSE(fs_.contents(kDir + "/.daemon-state.json.tmp").has_value());
  j.reset();
  fs_.clearFaults();
  fs_.powerLoss(PowerLossMode::kDropUnsynced);
  auto again = openOk(fs_);
  RestartView v = again->view();
  ASSERT_EQ(v.live.size(), 5u);
  EXPECT_EQ(v.live[0].state, OwnerState::kOutcomeUnknown);
  EXPECT_FALSE(again->find("new").has_value());
}

// Recovery is right whichever way an uncertain write landed: after a failed directory fsync
// the admission may be present (redelivery dedups to "already live") or absent (redelivery
// admits it) — never half-present, and the acknowledged owner is there either way.
TEST_F(JournalTest, RecoveryIsRightWhicheverWayTheUncertainWriteLanded) {
  for (bool powerLost : {false, true}) {
    SCOPED_TRACE(powerLost ? "power lost" : "no power loss");
    FaultFileSystem fs;
    auto j = openOk(fs);
    ASSERT_TRUE(j->admit(admitOp("acked")).isOk());
    fs.failOnce(FsOp::kSyncDir, EIO);
    ASSERT_FALSE(j->admit(admitOp("uncertain")).isOk());
    if (powerLost) {
      j.reset();
      fs.powerLoss(PowerLossMode::kDropUnsynced);
      j = openOk(fs);
    } else {
      ASSERT_TRUE(j->recover().isOk());
    }
    EXPECT_TRUE(j->find("acked").has_value());
    auto redelivered = j->admit(admitOp("uncertain"));
    ASSERT_TRUE(redelivered.isOk());
    EXPECT_EQ(redelivered->disposition,
              powerLost ? AdmitDisposition::kAdmitted : AdmitDisposition::kAlreadyLive);
  }
}

// Concurrent callers share commit chains: while a leader writes, later callers apply in memory
// and the next leader writes all of them with one chain.
TEST_F(JournalTest, GroupCommitSharesOneChainAcrossCallers) {
  GateFileSystem gate(fs_);
  auto j = openOk(gate);
  gate.close();
  std::thread leader([&] { EXPECT_TRUE(j->admit(admitOp("lead")).isOk()); });
  gate.waitForArrivals(1);
  constexpr int kFollowers = 15;
  std::vector<std::thread> followers;
  for (int i = 0; i < kFollowers; ++i) {
    followers.emplace_back(
        [&, i] { EXPECT_TRUE(j->admit(admitOp("f" + std::to_string(i))).isOk()); });
  }
  while (j->stats().liveRecords < 1 + kFollowers)
    std::this_thread::yield();
  gate.openGate();
  leader.join();
  for (auto& t : followers)
    t.join();
  CommitStats cs = j->commitStats();
  EXPECT_EQ(cs.transactions, 1u + kFollowers);
  EXPECT_EQ(cs.batches, 2u);
}

// A caller's result is released only when its bytes are durable.
TEST_F(JournalTest, CallerIsReleasedOnlyWhenItsBytesAreDurable) {
  auto j = openOk(fs_);
  std::vector<std::thread> threads;
  std::atomic<int> notDurable{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        std::string id = "t" + std::to_string(t) + "-" + std::to_string(i);
        if (!j->admit(admitOp(id)).isOk()) continue;
        auto durable = fs_.durableContents(kState);
        auto state = durable ? JournalState::decode(*durable) : Result<JournalState>(Status());
        if (!state.isOk() || state->find(id) == nullptr) notDurable++;
      }
    });
  }
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(notDurable.load(), 0);
  EXPECT_EQ(j->stats().liveRecords, 200u);
  EXPECT_LT(j->commitStats().batches, 200u);
}

// A failed batch fails every caller in it, and the journal is poisoned for the rest.
TEST_F(JournalTest, FailedBatchFailsAllItsCallers) {
  GateFileSystem gate(fs_);
  auto j = openOk(gate);
  gate.close();
  std::thread leader([&] { EXPECT_TRUE(j->admit(admitOp("lead")).isOk()); });
  gate.waitForArrivals(1);
  constexpr int kFollowers = 6;
  std::atomic<int> failedWithIo{0};
  std::vector<std::thread> followers;
  for (int i = 0; i < kFollowers; ++i) {
    followers.emplace_back([&, i] {
      auto r = j->admit(admitOp("f" + std::to_string(i)));
      if (!r.isOk() && r.status().code() == StatusCode::kDataLoss) failedWithIo++;
    });
  }
  while (j->stats().liveRecords < 1 + kFollowers)
    std::this_thread::yield();
  gate.release();           // the leader's batch commits
  gate.waitForArrivals(2);  // the followers' single batch reached its fsync
  fs_.failOnce(FsOp::kSync, EIO);
  gate.openGate();
  leader.join();
  for (auto& t : followers)
    t.join();
  EXPECT_EQ(failedWithIo.load(), kFollowers);
  EXPECT_EQ(j->admit(admitOp("after")).status().reason(), reason::kPoisoned);
}

// Writers of different sections, running concurrently, both survive (no whole-state lost
// update), and ownership mutations in between keep every section.
TEST_F(JournalTest, ConcurrentSectionWritersBothSurvive) {
  auto j = openOk(fs_);
  auto writer = [&](const std::string& name) {
    for (int i = 0; i < 40; ++i) {
      ASSERT_TRUE(j->setSection({name, "{\"n\":" + std::to_string(i) + "}", std::nullopt}).isOk());
    }
  };
  std::thread a(writer, "identity");
  std::thread b(writer, "deferredContinuation");
  std::thread c([&] {
    for (int i = 0; i < 40; ++i)
      ASSERT_TRUE(j->admit(admitOp("m" + std::to_string(i))).isOk());
  });
  a.join();
  b.join();
  c.join();
  j.reset();
  fs_.powerLoss(PowerLossMode::kDropUnsynced);
  auto v = OwnershipJournal::inspect(fs_, kDir);
  ASSERT_TRUE(v.isOk());
  EXPECT_EQ(v->sections.at("identity").valueJson, "{\"n\":39}");
  EXPECT_EQ(v->sections.at("identity").revision, 40u);
  EXPECT_EQ(v->sections.at("deferredContinuation").valueJson, "{\"n\":39}");
  EXPECT_EQ(v->live.size(), 40u);
}

// Opening advances the store epoch durably and turns every dispatching owner into
// outcome_unknown (restart never blind-replays an inflight owner).
TEST_F(JournalTest, OpenAttachesAndMarksInflightOutcomeUnknown) {
  auto j = openOk(fs_);
  ASSERT_TRUE(j->admit(admitOp("q")).isOk());
  ASSERT_TRUE(j->admit(admitOp("d", "b", true)).isOk());
  uint64_t epoch = j->view().storeEpoch;
  j.reset();
  fs_.powerLoss(PowerLossMode::kDropUnsynced);
  j = openOk(fs_);
  RestartView v = j->view();
  EXPECT_EQ(v.storeEpoch, epoch + 1);
  ASSERT_EQ(v.live.size(), 2u);
  EXPECT_EQ(v.live[0].id, "q");
  EXPECT_EQ(v.live[0].state, OwnerState::kQueued);
  EXPECT_EQ(v.live[1].state, OwnerState::kOutcomeUnknown);
  j.reset();
  fs_.powerLoss(PowerLossMode::kDropUnsynced);
  auto disk = OwnershipJournal::inspect(fs_, kDir);
  ASSERT_TRUE(disk.isOk());
  EXPECT_EQ(disk->storeEpoch, epoch + 1);
  EXPECT_EQ(disk->live[1].state, OwnerState::kOutcomeUnknown);
}

// A state file version 1 wrote, with live owners in every state, opens under this build with
// nothing lost (the read rule of version 1), and the open's attach commit writes it as version
// 2; the owners then move on as usual.
TEST_F(JournalTest, AVersion1StateFileWithLiveOwnersOpensWithNothingLost) {
  std::ifstream in(std::string(SHOAL_JOURNAL_TESTDATA) + "/golden_v1.json", std::ios::binary);
  std::stringstream v1;
  v1 << in.rdbuf();
  ASSERT_TRUE(fs_.createDirs(kDir).isOk());
  ASSERT_TRUE(writeFileAtomically(fs_, kState, v1.str()).isOk());
  auto before = JournalState::decode(v1.str());
  ASSERT_TRUE(before.isOk()) << before.status().toString();
  auto j = openOk(fs_);
  RestartView view = j->view();
  RestartView old = before->view();
  ASSERT_EQ(view.live.size(), 3u);
  ASSERT_EQ(view.live.size(), old.live.size());
  for (size_t i = 0; i < old.live.size(); ++i) {
    EXPECT_EQ(view.live[i].id, old.live[i].id);
    EXPECT_EQ(view.live[i].body, old.live[i].body) << old.live[i].id;
    EXPECT_EQ(view.live[i].target, old.live[i].target);
    EXPECT_EQ(view.live[i].runtime, old.live[i].runtime);
  }
  ASSERT_EQ(view.tombstones.size(), old.tombstones.size());
  for (size_t i = 0; i < old.tombstones.size(); ++i)
    EXPECT_EQ(view.tombstones[i].reason, old.tombstones[i].reason);
  EXPECT_EQ(view.sections, old.sections);
  EXPECT_EQ(view.resumeSafety, old.resumeSafety);
  ASSERT_EQ(fs_.contents(kState)->rfind("{\"schemaVersion\":2,", 0), 0u)
      << "the attach commit writes the current version";
  const auto& queued = view.live.front();
  EXPECT_TRUE(j->markSurfaced({queued.id, queued.token, "ack"}).isOk());
}

// An unknown version is refused with a clear error and the file is not rewritten (no temp
// file, no rename, identical bytes).
TEST_F(JournalTest, UnknownVersionIsRejectedWithoutRewrite) {
  {
    auto j = openOk(fs_);
    ASSERT_TRUE(j->admit(admitOp("m1")).isOk());
  }
  std::string bytes = *fs_.contents(kState);
  bytes.replace(0, std::string("{\"schemaVersion\":2").size(), "{\"schemaVersion\":3");
  ASSERT_TRUE(writeFileAtomically(fs_, kState, bytes).isOk());
  size_t from = fs_.trace().size();
  auto j = OwnershipJournal::open(fs_, clock_, kDir);
  ASSERT_FALSE(j.isOk());
  EXPECT_EQ(j.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(j.status().reason(), reason::kUnknownVersion);
  EXPECT_NE(j.status().message().find("not modified"), std::string_view::npos);
  EXPECT_EQ(*fs_.contents(kState), bytes);
  std::vector<std::string> t = fs_.trace();
  for (size_t i = from; i < t.size(); ++i) {
    EXPECT_EQ(t[i].find(" rename "), std::string::npos) << t[i];
    EXPECT_EQ(t[i].find(" open "), std::string::npos) << t[i];
  }
}

// A truncated or corrupt file fails closed with kDataLoss; it is never replaced by an empty
// journal.
TEST_F(JournalTest, CorruptFileFailsClosedWithoutRewrite) {
  {
    auto j = openOk(fs_);
    ASSERT_TRUE(j->admit(admitOp("m1")).isOk());
  }
  std::string bytes = *fs_.contents(kState);
  std::string truncated = bytes.substr(0, bytes.size() / 2);
  ASSERT_TRUE(writeFileAtomically(fs_, kState, truncated).isOk());
  auto j = OwnershipJournal::open(fs_, clock_, kDir);
  ASSERT_FALSE(j.isOk());
  EXPECT_EQ(j.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(*fs_.contents(kState), truncated);
  ASSERT_TRUE(writeFileAtomically(fs_, kState, "").isOk());
  EXPECT_EQ(OwnershipJournal::open(fs_, clock_, kDir).status().code(), StatusCode::kDataLoss);
}

// A read error while opening fails closed; it is never mistaken for a missing (fresh) file.
TEST_F(JournalTest, ReadErrorFailsOpenClosed) {
  {
    auto j = openOk(fs_);
    ASSERT_TRUE(j->admit(admitOp("m1")).isOk());
  }
  std::string before = *fs_.contents(kState);
  fs_.failOnce(FsOp::kRead, EIO);
  auto j = OwnershipJournal::open(fs_, clock_, kDir);
  ASSERT_FALSE(j.isOk());
  EXPECT_EQ(j.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(*fs_.contents(kState), before);
}

// inspect() reads without taking the lock or writing anything.
TEST_F(JournalTest, InspectReadsWithoutLockingOrWriting) {
  auto j = openOk(fs_);
  ASSERT_TRUE(j->admit(admitOp("m1")).isOk());
  size_t from = fs_.trace().size();
  auto v = OwnershipJournal::inspect(fs_, kDir);
  ASSERT_TRUE(v.isOk());
  EXPECT_EQ(v->live.size(), 1u);
  std::vector<std::string> t = fs_.trace();
  ASSERT_EQ(t.size(), from + 1);
  EXPECT_NE(t[from].find(" read "), std::string::npos);
  EXPECT_EQ(OwnershipJournal::inspect(fs_, "/nowhere").status().code(), StatusCode::kNotFound);
}

// A leftover temp file from an interrupted commit is never read as state, and is removed.
TEST_F(JournalTest, LeftoverTempFileIsIgnored) {
  {
    auto j = openOk(fs_);
    ASSERT_TRUE(j->admit(admitOp("m1")).isOk());
  }
  ASSERT_TRUE(writeFileAtomically(fs_, kDir + "/.daemon-state.json.tmp", "garbage").isOk());
  auto j = openOk(fs_);
  EXPECT_TRUE(j->find("m1").has_value());
  EXPECT_FALSE(fs_.contents(kDir + "/.daemon-state.json.tmp").has_value());
}

// Reclaimed victims are reported to the admitting caller and are durable with the new owner.
TEST_F(JournalTest, ReclaimIsDurableWithTheNewOwner) {
  Limits small;
  small.maxLiveRecords = 2;
  auto j = openOk(fs_, OpenOptions{"", small});
  ASSERT_TRUE(j->admit(admitOp("a")).isOk());
  ASSERT_TRUE(j->admit(admitOp("b")).isOk());
  auto r = j->admit(admitOp("c"));
  ASSERT_TRUE(r.isOk());
  ASSERT_EQ(r->reclaimed.size(), 1u);
  EXPECT_EQ(r->reclaimed[0].id, "a");
  j.reset();
  fs_.powerLoss(PowerLossMode::kDropUnsynced);
  auto v = OwnershipJournal::inspect(fs_, kDir);
  ASSERT_TRUE(v.isOk());
  ASSERT_EQ(v->tombstones.size(), 1u);
  EXPECT_EQ(v->tombstones[0].reason, reason::kBacklogReclaimed);
  EXPECT_EQ(v->live.size(), 2u);
}

}  // namespace
}  // namespace shoal::journal
