// The crash matrix (issues 5 and 8): DMs flow into a seat while the real `shoal daemon`
// process is SIGKILLed at random points and restarted. Afterwards every DM must be surfaced
// exactly once or reported failed with a reason — none lost, none surfaced twice. The receipts
// the daemon publishes to the sender are its account; the runtime's own record is the witness:
// for the fake Claude (and an exec seat's fake stdin agent), every stdin line any of its
// processes read; for the fake Codex, the
// persisted thread history (its rollout store), which is what a resumed session holds — a
// Codex handoff the daemon could not account for is reconciled against it, and replayed only
// when the history proves it absent.
//
// CRASH_MATRIX_KILLS / CRASH_MATRIX_DMS (compile definitions) size the run: `make test` runs a
// short variant, the `slow` label the full one (≥ 50 kills, 1,000 DMs). The short variant also
// runs in auth mode (its `.auth` copy): the daemon, the seat and the sender under credentials.
#include <csignal>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>

#include <boost/json.hpp>

#include "base/clock.h"
#include "base/file_system.h"
#include "cli_fixture.h"
#include "mesh/endpoint.h"
#include "testing/eventually.h"
#include "transport/creds_file.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

namespace json = boost::json;
using shoal::testing::eventually;
using std::chrono::milliseconds;

// How many times the runtime's record shows each of `ids`.
using Witness = std::function<std::map<std::string, int>(const std::set<std::string>& ids)>;

// The mesh comes up as a user brings it up (`shoal up --no-daemon`, with `--auth` in the
// `.auth` copy), the daemon is the real `shoal daemon run` this test kills, the seat is added
// with `shoal seat add`, and the sender is an endpoint under the person's broker secret (open
// mode) or a credential minted by `shoal creds mint` (auth mode).
class CrashMatrixTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    ASSERT_EQ(upWithoutDaemon().code, 0);
    startDaemon();
    ASSERT_NE(daemon_, nullptr);
    ASSERT_TRUE(outputShows(*daemon_, "✓ daemon serving space itest")) << daemon_->output();
  }

  void TearDown() override {
    receiptWatch_.reset();
    sender_.reset();
    CliTest::TearDown();
  }

  void startDaemon() { daemon_ = spawnShoal({"daemon", "run"}); }

  // The peer `<owner>.sender` that only sends; nullptr (with a test failure) if it cannot open.
  std::unique_ptr<mesh::Endpoint> openSender() {
    auto rec = record();
    if (!rec.isOk()) {
      ADD_FAILURE() << rec.status().toString();
      return nullptr;
    }
    mesh::EndpointOptions o;
    o.servers = {rec->url};
    o.space = "itest";
    o.tlsCaFile = rec->caFile;
    o.principal = wire::Principal{owner(), "sender"};
    o.receiveDirect = false;
    o.onWarning = [](const Status&) {};
    if (authMode()) {
      const std::string file = home_->join("sender.creds");
      CliRun minted = shoal({"creds", "mint", "sender", "--out", file, "--json"});
      EXPECT_EQ(minted.code, 0) << minted.out << minted.err;
      auto creds = transport::readCredsFile(FileSystem::posix(), file);
      if (!creds.isOk()) {
        ADD_FAILURE() << creds.status().toString();
        return nullptr;
      }
      o.credentialsFile = file;
      o.inboxPrefix = creds->inboxPrefix;
    } else {
      o.nkeySeedFile = rec->secretFile;
    }
    auto opened = mesh::Endpoint::open(o);
    if (!opened.isOk()) {
      ADD_FAILURE() << "opening the sender: " << opened.status().toString();
      return nullptr;
    }
    return std::move(opened).value();
  }

  std::string fakeLog() { return home_->join("fake.log"); }

  // What a stalled life left: each of `batch` without a surfaced receipt (with its failure, if
  // any, and how often the runtime read it) and the seat's own account of its lifecycle.
  std::string stalled(const std::vector<std::string>& batch,
                      const std::map<std::string, json::object>& surfaced,
                      const std::map<std::string, json::object>& failed, std::mutex& mu) {
    const std::string log = FileSystem::posix().readFile(fakeLog()).valueOr("");
    std::string out;
    std::lock_guard lock(mu);
    for (const auto& id : batch) {
      if (surfaced.count(id)) continue;
      size_t reads = 0;
      for (size_t at = log.find(id); at != std::string::npos; at = log.find(id, at + 1))
        ++reads;
      out += "  not surfaced: " + id + " (read " + std::to_string(reads) + "x)";
      if (auto f = failed.find(id); f != failed.end())
        out += " failed " + json::serialize(f->second);
      out += "\n";
    }
    CliRun events = shoal({"seat", "events", "Crash Target", "--limit", "40"});
    return out + "seat events:\n" + events.out + events.err;
  }
  // `suffix` ends every DM's text (a marker the fake runtime acts on).
  // `witness` counts what the runtime's session holds; `reads`, when given, what its processes
  // read (a surfaced DM: held at most once and read at least once); without it a surfaced DM
  // must be held exactly once.
  void runMatrix(const std::vector<std::string>& seatArgs, int kills, int dms,
                 const Witness& witness, const Witness& reads, const std::string& suffix);

  Background* daemon_ = nullptr;  // the current daemon life (owned by CliTest)
  std::unique_ptr<mesh::Endpoint> sender_;
  std::optional<transport::Subscription> receiptWatch_;
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

// A witness over a fake runtime's JSON-lines log: the string `field` of every line that has it
// and, when `event` is given, whose "event" is that.
Witness logField(std::string logPath, std::string field, std::optional<std::string> event) {
  return [logPath, field, event](const std::set<std::string>& ids) {
    std::string log = FileSystem::posix().readFile(logPath).valueOr("");
    std::vector<std::string> texts;
    size_t start = 0;
    while (start < log.size()) {
      size_t end = log.find('\n', start);
      if (end == std::string::npos) end = log.size();
      boost::system::error_code ec;
      json::value v = json::parse(std::string_view(log).substr(start, end - start), ec);
      start = end + 1;
      if (ec || !v.is_object()) continue;
      const json::object& o = v.as_object();
      const json::value* text = o.if_contains(field);
      const json::value* kind = o.if_contains("event");
      if (text == nullptr || !text->is_string()) continue;
      if (event && (kind == nullptr || !kind->is_string() || kind->as_string() != *event)) continue;
      texts.emplace_back(text->as_string());
    }
    return countIn(texts, ids);
  };
}

// The `field` of every `input` line of a fake runtime's log: what any of its processes read
// (fake Claude: `content`, each stdin line; fake Codex: `text`, each accepted user message).
Witness inputLog(std::string logPath, std::string field) {
  return logField(std::move(logPath), std::move(field), "input");
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
  runMatrix({"--runtime", "claude", "--", FAKE_CLAUDE_BINARY, "--fake-log", fakeLog()},
            CRASH_MATRIX_KILLS, CRASH_MATRIX_DMS, inputLog(fakeLog(), "content"), nullptr, "");
}

// The same for a Codex seat: what the daemon could not account for is reconciled against the
// runtime's thread after each restart.
TEST_F(CrashMatrixTest, EveryDmToACodexSeatSurfacedOnceOrFailedAcrossDaemonKills) {
  const std::string state = home_->join("codex-state.json");
  // Each turn takes 40 ms, so kills land while turns, steers and acks are in flight.
  // The witness is the persisted history (a surfaced DM is there at most once); the fake
  // persists a turn only when it finishes, so a DM acknowledged in a turn its process did not
  // live to finish is surfaced yet absent from the history: the fake's input log shows it read.
  runMatrix({"--runtime", "codex", "--", FAKE_CODEX_BINARY, "app-server", "--fake-log", fakeLog(),
             "--state", state},
            std::max(3, CRASH_MATRIX_KILLS / 2), CRASH_MATRIX_DMS / 3, codexWitness(state),
            inputLog(fakeLog(), "text"), " FAKE_SLOW_40");
}

// Every line a fake stdin agent logged, across all its processes: what they read from stdin
// (a DM's item head holds its id once).
Witness stdinLog(std::string logPath) {
  return logField(std::move(logPath), "line", std::nullopt);
}

// The same for an exec seat (raw stdin: surfaced once the program has read the bytes). A DM a
// killed daemon had admitted straight to inflight for the idle program (the direct lane), or
// had written without seeing it read, fails with a reason and is never written again.
TEST_F(CrashMatrixTest, EveryDmToAnExecSeatSurfacedOnceOrFailedAcrossDaemonKills) {
  // Each read waits 5 ms, so kills can land while blocks are written and still in the pipe.
  runMatrix({"--runtime", "exec", "--", FAKE_STDIN_AGENT_BINARY, "--log", fakeLog(),
             "--read-pause-ms", "5"},
            CRASH_MATRIX_KILLS, CRASH_MATRIX_DMS, stdinLog(fakeLog()), nullptr, "");
}

void CrashMatrixTest::runMatrix(const std::vector<std::string>& seatArgs, int kKills, int kDms,
                                const Witness& witness, const Witness& reads,
                                const std::string& suffix) {
  // The seat's profile is registered once; every daemon life opens it.
  std::vector<std::string> add = {
      "seat", "add", "Crash Target", "--cwd", home_->join("seat"), "--create-cwd"};
  add.insert(add.end(), seatArgs.begin(), seatArgs.end());
  CliRun added = shoal(add);
  ASSERT_EQ(added.code, 0) << added.out << added.err;
  const std::string target = owner() + ".crash_target";
  const std::string sender = owner() + ".sender";

  sender_ = openSender();
  ASSERT_NE(sender_, nullptr);
  const int64_t t0 = Clock::real().monotonicNs();
  ASSERT_TRUE(
      eventually([&] { return sender_->findPeer(target).isOk(); }, std::chrono::seconds(20)));

  // Every receipt the seat's daemons publish to the sender, as the sender receives them (its
  // grant reads its own receipts; the subscription outlives every daemon life). An id's
  // receipts never contradict each other: surfaced and failed both would be a double account.
  std::mutex seenMu;
  std::map<std::string, json::object> surfaced, failed;
  auto watch = sender_->connection().subscribe(
      "cotal.itest.rcpt." + sender + "." + target, [&](transport::Message m) {
        boost::system::error_code ec;
        json::value v = json::parse(m.data, ec);
        if (ec || !v.is_object() || !v.as_object().contains("id")) return;
        const json::object& o = v.as_object();
        std::lock_guard lock(seenMu);
        if (o.contains("surfacedAt")) {
          surfaced[std::string(o.at("id").as_string())] = o;
        } else if (o.contains("reason")) {
          failed[std::string(o.at("id").as_string())] = o;
        }
      });
  ASSERT_TRUE(watch.isOk()) << watch.status().toString();
  receiptWatch_.emplace(std::move(watch).value());

  // Each daemon life gets a batch of DMs; the daemon is killed at a random point of that
  // batch: as soon as r of its DMs (r random) were reported surfaced, while admission,
  // dispatch, acks and the Claude turns of the others are in flight. Kill points follow the
  // seat's own progress (its receipts, watched live), not a clock.
  std::mt19937 rng(20261130);
  const int perLife = std::max(1, kDms / (kKills + 1));
  std::vector<std::string> ids;
  int kills = 0;
  for (int life = 0; life <= kKills; ++life) {
    const int count = life < kKills ? perLife : kDms - static_cast<int>(ids.size());
    std::vector<std::string> batch;
    for (int i = 0; i < count; ++i) {
      auto sent = sender_->sendDirect(
          target, "crash-matrix message " + std::to_string(ids.size()) + suffix);
      ASSERT_TRUE(sent.isOk()) << sent.status().toString();
      ids.push_back(sent->stored.messageId);
      batch.push_back(sent->stored.messageId);
    }
    if (life == kKills) break;  // the last life is not killed
    const size_t r = std::uniform_int_distribution<size_t>(1, batch.size())(rng);
    // The bound is the durable's ack wait (60 s) and a margin: a DM published in the first
    // moments after a kill can still be handed to the dead daemon's pull request (the broker has
    // not yet seen its connection close), and only the ack wait brings it back.
    ASSERT_TRUE(eventually(
        [&] {
          std::lock_guard lock(seenMu);
          size_t n = 0;
          for (const auto& id : batch)
            n += surfaced.count(id);
          return n >= r;
        },
        std::chrono::seconds(90)))
        << "life " << life << ": fewer than " << r << " of its DMs surfaced\n"
        << stalled(batch, surfaced, failed, seenMu) << daemon_->output().substr(0, 20000);
    ASSERT_TRUE(daemon_->child.signal(SIGKILL).isOk());
    (void)daemon_->child.wait();
    ++kills;
    startDaemon();
    ASSERT_NE(daemon_, nullptr);
  }
  std::printf("crash matrix: kill phase done at +%lld ms\n",
              static_cast<long long>((Clock::real().monotonicNs() - t0) / 1000000));
  ASSERT_EQ(static_cast<int>(ids.size()), kDms);

  // The last daemon lives: every DM reaches a terminal state with a receipt to the sender.
  // A DM a killed daemon fetched but had not acked comes back only after the durable's ack
  // wait (60 s): the bound is that plus a margin.
  auto accounted = [&] {
    std::lock_guard lock(seenMu);
    size_t n = 0;
    for (const auto& id : ids)
      n += surfaced.count(id) + failed.count(id) > 0 ? 1 : 0;
    return n;
  };
  ASSERT_TRUE(eventually([&] { return accounted() == ids.size(); }, std::chrono::seconds(100)))
      << accounted() << " of " << ids.size() << " DMs have a terminal receipt; daemon output:\n"
      << daemon_->output().substr(0, 20000);
  std::printf("crash matrix: all receipts at +%lld ms\n",
              static_cast<long long>((Clock::real().monotonicNs() - t0) / 1000000));

  // What the runtime read, across every process of every daemon life.
  const std::set<std::string> idSet(ids.begin(), ids.end());
  std::map<std::string, int> readCount = witness(idSet);
  std::map<std::string, int> rawReads = reads ? reads(idSet) : readCount;
  std::lock_guard lock(seenMu);
  int nSurfaced = 0, nFailed = 0;
  for (const auto& id : ids) {
    if (surfaced.count(id)) {
      ++nSurfaced;
      EXPECT_EQ(failed.count(id), 0u)
          << id << " surfaced and failed: " << json::serialize(failed.at(id));
      if (reads) {
        EXPECT_LE(readCount[id], 1) << id << " surfaced and held " << readCount[id] << " times";
        EXPECT_GE(rawReads[id], 1) << id << " surfaced but never read";
      } else {
        EXPECT_EQ(readCount[id], 1) << id << " surfaced but read " << readCount[id] << " times";
      }
    } else {
      ++nFailed;
      EXPECT_FALSE(failed.at(id).at("reason").as_string().empty())
          << json::serialize(failed.at(id));
      EXPECT_LE(readCount[id], 1) << id << " failed but read " << readCount[id] << " times";
    }
  }
  std::printf(
      "crash matrix (%s mode): %d kills, %d DMs: %d surfaced exactly once, %d failed "
      "with a reason\n",
      authMode() ? "auth" : "open", kills, kDms, nSurfaced, nFailed);
  EXPECT_EQ(nSurfaced + nFailed, kDms);
  EXPECT_GT(nSurfaced, kDms / 2) << "most DMs should survive the kills";
}

}  // namespace
}  // namespace shoal
