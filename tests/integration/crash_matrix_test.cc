// The crash matrix (issues 5 and 8): DMs flow into a seat while the real `shoal daemon`
// process is SIGKILLed at random points and restarted. Afterwards every DM must be surfaced
// exactly once or reported failed with a reason — none lost, none surfaced twice. The sender's
// receipts in WAKE_<space> are the daemon's account; the runtime's own record is the witness:
// for the fake Claude, every stdin line any of its processes read; for the fake Codex, the
// persisted thread history (its rollout store), which is what a resumed session holds — a
// Codex handoff the daemon could not account for is reconciled against it, and replayed only
// when the history proves it absent.
//
// CRASH_MATRIX_KILLS / CRASH_MATRIX_DMS (compile definitions) size the run: `make test` runs a
// short variant, the `slow` label the full one (≥ 50 kills, 1,000 DMs).
#include <csignal>
#include <functional>
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

// How many times the runtime's record shows each of `ids`.
using Witness = std::function<std::map<std::string, int>(const std::set<std::string>& ids)>;

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
  // `suffix` ends every DM's text (a marker the fake runtime acts on).
  // `witness` counts what the runtime's session holds; `reads`, when given, what its processes
  // read (a surfaced DM: held at most once and read at least once); without it a surfaced DM
  // must be held exactly once.
  void runMatrix(daemon::SeatProfile p, int kills, int dms, const Witness& witness,
                 const Witness& reads, const std::string& suffix);

  std::optional<shoal::testing::TempDir> dir_;
  std::optional<Subprocess> daemon_;
  std::unique_ptr<mesh::Endpoint> sender_;
};

std::map<std::string, int> countIn(const std::vector<std::string>& texts,
                                   const std::set<std::string>& ids) {
  std::map<std::string, int> out;
  for (const auto& text : texts) {
    for (const auto& id : ids) {
      if (text.find(id) != std::string::npos) ++out[id];
    }
  }
  return out;
}

// The `field` of every `input` line of a fake runtime's log: what any of its processes read
// (fake Claude: `content`, each stdin line; fake Codex: `text`, each accepted user message).
Witness inputLog(std::string logPath, std::string field) {
  return [logPath, field](const std::set<std::string>& ids) {
    std::string log = FileSystem::posix().readFile(logPath).valueOr("");
    std::vector<std::string> texts;
    size_t start = 0;
    while (start < log.size()) {
      size_t end = log.find('\n', start);
      if (end == std::string::npos) end = log.size();
      boost::system::error_code ec;
      json::value v = json::parse(std::string_view(log).substr(start, end - start), ec);
      start = end + 1;
      if (ec || !v.is_object() || v.at("event").as_string() != "input") continue;
      texts.emplace_back(v.at(field).as_string());
    }
    return countIn(texts, ids);
  };
}

// Every userMessage of every turn of every thread in the fake Codex's rollout store.
Witness codexWitness(std::string statePath) {
  return [statePath](const std::set<std::string>& ids) {
    std::vector<std::string> texts;
    boost::system::error_code ec;
    json::value v = json::parse(FileSystem::posix().readFile(statePath).valueOr("{}"), ec);
    if (ec || !v.is_object() || !v.as_object().contains("threads")) return countIn(texts, ids);
    for (const auto& [id, thread] : v.at("threads").as_object()) {
      for (const auto& turn : thread.at("turns").as_array()) {
        for (const auto& item : turn.at("items").as_array()) {
          if (item.at("type").as_string() != "userMessage") continue;
          for (const auto& part : item.at("content").as_array()) {
            if (part.as_object().contains("text")) texts.emplace_back(part.at("text").as_string());
          }
        }
      }
    }
    return countIn(texts, ids);
  };
}

TEST_F(CrashMatrixTest, EveryDmSurfacedOnceOrFailedWithAReasonAcrossDaemonKills) {
  daemon::SeatProfile p;
  p.runtime = daemon::RuntimeKind::kClaude;
  p.command = {FAKE_CLAUDE_BINARY, "--fake-log", fakeLog()};
  runMatrix(p, CRASH_MATRIX_KILLS, CRASH_MATRIX_DMS, inputLog(fakeLog(), "content"), nullptr, "");
}

// The same for a Codex seat: what the daemon could not account for is reconciled against the
// runtime's thread after each restart.
TEST_F(CrashMatrixTest, EveryDmToACodexSeatSurfacedOnceOrFailedAcrossDaemonKills) {
  daemon::SeatProfile p;
  p.runtime = daemon::RuntimeKind::kCodex;
  const std::string state = dir_->join("codex-state.json");
  p.command = {FAKE_CODEX_BINARY, "app-server", "--fake-log", fakeLog(), "--state", state};
  // Each turn takes 40 ms, so kills land while turns, steers and acks are in flight.
  // The witness is the persisted history (a surfaced DM is there at most once); the fake
  // persists a turn only when it finishes, so a DM acknowledged in a turn its process did not
  // live to finish is surfaced yet absent from the history: the fake's input log shows it read.
  runMatrix(p, std::max(3, CRASH_MATRIX_KILLS / 2), CRASH_MATRIX_DMS / 3, codexWitness(state),
            inputLog(fakeLog(), "text"), " FAKE_SLOW_40");
}

void CrashMatrixTest::runMatrix(daemon::SeatProfile p, int kKills, int kDms, const Witness& witness,
                                const Witness& reads, const std::string& suffix) {
  // The seat's profile is registered once; every daemon life opens it.
  // Sealed with the key the daemon (HOME = dir_) will read.
  auto sealer =
      daemon::ProfileSealer::open(dir_->join(".local/state/shoal/secrets/main-seats.key"));
  ASSERT_TRUE(sealer.isOk()) << sealer.status().toString();
  auto store = daemon::ProfileStore::open(*js_, "main", std::move(sealer).value());
  ASSERT_TRUE(store.isOk()) << store.status().toString();
  p.name = "Crash Target";
  p.principal = wire::Principal{"local", "target"};
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
      auto sent = sender_->sendDirect(
          "local.target", "crash-matrix message " + std::to_string(ids.size()) + suffix);
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
  // What the runtime read, across every process of every daemon life.
  const std::set<std::string> idSet(ids.begin(), ids.end());
  std::map<std::string, int> readCount = witness(idSet);
  std::map<std::string, int> rawReads = reads ? reads(idSet) : readCount;

  int surfaced = 0, failed = 0;
  for (const auto& id : ids) {
    const json::object& r = receipts.at(id);
    if (r.contains("surfacedAt")) {
      ++surfaced;
      if (reads) {
        EXPECT_LE(readCount[id], 1) << id << " surfaced and held " << readCount[id] << " times";
        EXPECT_GE(rawReads[id], 1) << id << " surfaced but never read";
      } else {
        EXPECT_EQ(readCount[id], 1) << id << " surfaced but read " << readCount[id] << " times";
      }
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
