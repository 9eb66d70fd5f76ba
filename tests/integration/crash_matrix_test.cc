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
#include <random>
#include <set>
#include <thread>

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

  mesh::EndpointOptions so;
  so.servers = {server_->url()};
  so.principal = wire::Principal{"local", "sender"};
  so.receiveDirect = false;
  so.onWarning = [](const Status&) {};
  auto sender = mesh::Endpoint::open(so);
  ASSERT_TRUE(sender.isOk()) << sender.status().toString();
  sender_ = std::move(sender).value();

  const int64_t t0 = Clock::real().monotonicNs();
  startDaemon();
  ASSERT_TRUE(eventually([&] { return sender_->findPeer("local.target").isOk(); },
                         std::chrono::seconds(20)));

  // The sender spreads its DMs over the kill phase; ids are recorded as the broker stores them.
  std::vector<std::string> ids;
  std::mutex idsMu;
  std::atomic<bool> sending{true};
  std::thread sendThread([&] {
    const auto pause = milliseconds(std::max(1, kKills * 450 / kDms));
    for (int i = 0; i < kDms; ++i) {
      auto sent = sender_->sendDirect("local.target", "crash-matrix message " + std::to_string(i));
      if (sent.isOk()) {
        std::lock_guard lock(idsMu);
        ids.push_back(sent->stored.messageId);
      } else {
        --i;  // the broker refused (e.g. a reconnect): the same DM again, a new id
        std::this_thread::sleep_for(milliseconds(20));
        continue;
      }
      std::this_thread::sleep_for(pause);
    }
    sending = false;
  });

  std::mt19937 rng(20261130);
  std::uniform_int_distribution<int> lifeMs(120, 700);
  int kills = 0;
  while (kills < kKills) {
    std::this_thread::sleep_for(milliseconds(lifeMs(rng)));
    ASSERT_TRUE(daemon_->signal(SIGKILL).isOk());
    (void)daemon_->wait();
    ++kills;
    startDaemon();
  }
  sendThread.join();
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
