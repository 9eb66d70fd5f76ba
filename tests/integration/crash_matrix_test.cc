// The crash matrix (issue 5): DMs flow into a fake-Claude seat while the real `shoal daemon`
// process is SIGKILLed at random points and restarted. Afterwards every DM must be surfaced
// exactly once or reported failed with a reason — none lost, none surfaced twice. The fake's
// own log (every stdin line any of its processes read) is the witness of what the runtime saw;
// the sender's receipts in WAKE_<space> are the daemon's account.
//
// CRASH_MATRIX_KILLS / CRASH_MATRIX_DMS (compile definitions) size the run: `make test` runs a
// short variant, the `slow` label the full one (≥ 50 kills, 1,000 DMs).
#include <csignal>
#include <map>
#include <mutex>
#include <random>
#include <set>

#include <boost/json.hpp>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/subprocess.h"
#include "daemon/profile_store.h"
#include "mesh/endpoint.h"
#include "testing/eventually.h"
#include "testing/managed_space.h"
#include "testing/temp_dir.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

namespace json = boost::json;
using shoal::testing::eventually;
using std::chrono::milliseconds;

class CrashMatrixTest : public shoal::testing::ManagedSpaceTest {
 protected:
  void SetUp() override {
    ManagedSpaceTest::SetUp();
    if (HasFatalFailure()) return;
    auto dir = shoal::testing::TempDir::create("crash-matrix");
    ASSERT_TRUE(dir.isOk());
    dir_.emplace(std::move(dir).value());
    ASSERT_TRUE(FileSystem::posix().createDirs(dir_->join("run")).isOk());
  }

  void TearDown() override {
    if (daemon_) (void)daemon_->terminate(milliseconds(5000));
    daemon_.reset();
    sender_.reset();
    ManagedSpaceTest::TearDown();
  }

  void startDaemon() {
    SpawnOptions o;
    o.argv = {SHOAL_BINARY, "daemon", "run", "--space", "main", "--server", server_->url()};
    o.env = {{"XDG_RUNTIME_DIR", dir_->join("run")}, {"HOME", dir_->path()}};
    o.stdoutTarget = StdioTarget::appendTo(dir_->join("daemon.out"));
    o.stderrTarget = StdioTarget::appendTo(dir_->join("daemon.out"));
    o.killOnDestroy = true;
    auto spawned = Subprocess::spawn(o);
    ASSERT_TRUE(spawned.isOk()) << spawned.status().toString();
    daemon_.emplace(std::move(spawned).value());
  }

  std::string fakeLog() { return dir_->join("fake.log"); }

  std::optional<shoal::testing::TempDir> dir_;
  std::optional<Subprocess> daemon_;
  std::unique_ptr<mesh::Endpoint> sender_;
};

TEST_F(CrashMatrixTest, EveryDmSurfacedOnceOrFailedWithAReasonAcrossDaemonKills) {
  constexpr int kKills = CRASH_MATRIX_KILLS;
  constexpr int kDms = CRASH_MATRIX_DMS;

  // The seat's profile is registered once; every daemon life opens it.
  auto store = daemon::ProfileStore::open(*js_, "main");
  ASSERT_TRUE(store.isOk()) << store.status().toString();
  daemon::SeatProfile p;
  p.name = "Crash Target";
  p.principal = wire::Principal{"local", "target"};
  p.runtime = daemon::RuntimeKind::kClaude;
  p.command = {FAKE_CLAUDE_BINARY, "--fake-log", fakeLog()};
  p.cwd = dir_->join("seat");
  p.lifecycleUid = "crashmatrixlifecycle000001";
  ASSERT_TRUE(store->create(p).isOk());

  sender_ = openSender("sender");
  ASSERT_NE(sender_, nullptr);

  const int64_t t0 = Clock::real().monotonicNs();
  startDaemon();
  ASSERT_TRUE(eventually([&] { return sender_->findPeer("local.target").isOk(); },
                         std::chrono::seconds(20)));

  // Each daemon life gets a batch of DMs; the daemon is killed at a random point of that
  // batch: as soon as r of its DMs (r random) were reported surfaced, while admission,
  // dispatch, acks and the Claude turns of the others are in flight. Kill points follow the
  // seat's own progress (its receipts, watched live), not a clock.
  std::mutex seenMu;
  std::set<std::string> surfacedSeen;
  auto receiptWatch = sender_->connection().subscribe(
      "cotal.main.rcpt.local.sender.local.target", [&](transport::Message m) {
        boost::system::error_code ec;
        json::value v = json::parse(m.data, ec);
        if (ec || !v.is_object() || !v.as_object().contains("surfacedAt")) return;
        std::lock_guard lock(seenMu);
        surfacedSeen.insert(std::string(v.at("id").as_string()));
      });
  ASSERT_TRUE(receiptWatch.isOk()) << receiptWatch.status().toString();
  std::mt19937 rng(20261130);
  const int perLife = std::max(1, kDms / (kKills + 1));
  std::vector<std::string> ids;
  int kills = 0;
  for (int life = 0; life <= kKills; ++life) {
    const int count = life < kKills ? perLife : kDms - static_cast<int>(ids.size());
    std::vector<std::string> batch;
    for (int i = 0; i < count; ++i) {
      auto sent =
          sender_->sendDirect("local.target", "crash-matrix message " + std::to_string(ids.size()));
      ASSERT_TRUE(sent.isOk()) << sent.status().toString();
      ids.push_back(sent->stored.messageId);
      batch.push_back(sent->stored.messageId);
    }
    if (life == kKills) break;  // the last life is not killed
    const size_t r = std::uniform_int_distribution<size_t>(1, batch.size())(rng);
    ASSERT_TRUE(eventually(
        [&] {
          std::lock_guard lock(seenMu);
          size_t n = 0;
          for (const auto& id : batch)
            n += surfacedSeen.count(id);
          return n >= r;
        },
        std::chrono::seconds(30)))
        << "life " << life << ": fewer than " << r << " of its DMs surfaced";
    ASSERT_TRUE(daemon_->signal(SIGKILL).isOk());
    (void)daemon_->wait();
    ++kills;
    startDaemon();
  }
  std::printf("crash matrix: kill phase done at +%lld ms\n",
              static_cast<long long>((Clock::real().monotonicNs() - t0) / 1000000));
  ASSERT_EQ(static_cast<int>(ids.size()), kDms);

  // The last daemon lives: every DM reaches a terminal state with a receipt to the sender.
  std::map<std::string, json::object> receipts;
  auto readReceipts = [&] {
    uint64_t seq = 1;
    receipts.clear();
    while (true) {
      auto m = js_->findMessage("WAKE_main", seq, "cotal.main.rcpt.local.sender.local.target");
      if (!m.isOk()) break;
      json::object o = json::parse(m->data).as_object();
      receipts[std::string(o.at("id").as_string())] = o;
      seq = m->seq + 1;
    }
    return receipts.size() == ids.size();
  };
  // A DM a killed daemon fetched but had not acked comes back only after the durable's ack
  // wait (60 s): the bound is that plus a margin.
  ASSERT_TRUE(eventually(readReceipts, std::chrono::seconds(100)))
      << receipts.size() << " of " << ids.size() << " receipts; daemon output:\n"
      << FileSystem::posix().readFile(dir_->join("daemon.out")).valueOr("").substr(0, 20000);

  std::printf("crash matrix: all receipts at +%lld ms\n",
              static_cast<long long>((Clock::real().monotonicNs() - t0) / 1000000));
  // What the runtime read, across every fake process of every daemon life.
  std::string log = FileSystem::posix().readFile(fakeLog()).valueOr("");
  std::map<std::string, int> readCount;
  std::set<std::string> idSet(ids.begin(), ids.end());
  size_t start = 0;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    boost::system::error_code ec;
    json::value v = json::parse(std::string_view(log).substr(start, end - start), ec);
    start = end + 1;
    if (ec || !v.is_object() || v.at("event").as_string() != "input") continue;
    std::string content(v.at("content").as_string());
    for (const auto& id : idSet) {
      if (content.find(id) != std::string::npos) ++readCount[id];
    }
  }

  int surfaced = 0, failed = 0;
  for (const auto& id : ids) {
    const json::object& r = receipts.at(id);
    if (r.contains("surfacedAt")) {
      ++surfaced;
      EXPECT_EQ(readCount[id], 1) << id << " surfaced but read " << readCount[id] << " times";
    } else {
      ++failed;
      ASSERT_TRUE(r.contains("reason")) << json::serialize(r);
      EXPECT_FALSE(r.at("reason").as_string().empty());
      EXPECT_LE(readCount[id], 1) << id << " failed but read " << readCount[id] << " times";
    }
  }
  std::printf("crash matrix: %d kills, %d DMs: %d surfaced exactly once, %d failed with a reason\n",
              kills, kDms, surfaced, failed);
  EXPECT_EQ(surfaced + failed, kDms);
  EXPECT_GT(surfaced, kDms / 2) << "most DMs should survive the kills";
}

}  // namespace
}  // namespace shoal
