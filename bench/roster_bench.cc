// roster_bench: the roster with many simulated peers — 500 peers heartbeating every 2 s into
// the presence bucket (direct KV puts of valid wire::Presence records, 250 puts/s), watched by
// 3 observers. Measured per observer kind, in the same run, against the same server:
//
//   snapshot  open → current view with every peer (connect included), sequential rounds;
//   change    one peer's record changes (status flipped, activity "chg-<j>"): time from just
//             before the KV put to the moment each observer sees it (p50/p99 over all
//             change × observer pairs);
//   CPU       the observers' CPU over an interval of steady heartbeating (no changes), as % of
//             one core and µs per update delivered to one observer; the broker's CPU beside it.
//
// Observer kinds:
//   kv-watch         the baseline: a raw KvWatcher (watchAll) per observer on its own
//                    connection and thread; a change is found by a substring search of the value
//   kv-watch+decode  the same plus wire::decodePresence of every entry (the record checks)
//   endpoint         a presence-only mesh::Endpoint (presence = false, receiveDirect = false):
//                    KvPresenceWatchSource → RosterView state machine → onRoster handler
//
// How the CPU is kept honest: the observers of one kind run in a child process (this binary
// re-executed with --observer KIND), so /proc/<child>/stat utime+stime is exactly their cost —
// watch threads, nats.c threads and the roster's event loop included — with none of the
// writers' work mixed in. CLOCK_MONOTONIC (steady_clock) is system-wide, so the child's "seen"
// times and the parent's put times are comparable. A writers-only interval (no observers) gives
// the broker's CPU floor.
//
//   roster_bench [--quick] [--peers N] [--observers N] [--changes N] [--cpu-seconds S]
//                [--snapshots N]
// --quick (or SHOAL_BENCH_QUICK=1) is the CI size. Numbers are reported, never asserted.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/ids.h"
#include "base/subprocess.h"
#include "bench_mesh.h"
#include "mesh/endpoint.h"
#include "testing/temp_dir.h"
#include "transport/connection.h"
#include "transport/jetstream.h"
#include "transport/kv.h"
#include "wire/names.h"
#include "wire/presence.h"

namespace {

using namespace shoal;
using bench::nowUs;
using bench::orDie;
using std::chrono::milliseconds;

constexpr std::string_view kSpace = "bench";
constexpr std::string_view kChangePrefix = "chg-";
constexpr milliseconds kHeartbeat{2000};

struct Config {
  int peers = 500;
  int observers = 3;
  int changes = 200;
  milliseconds changeSpacing{20};
  double cpuSeconds = 10;
  int snapshots = 10;
  bool quick = false;
};

// The j of an activity "chg-<j>" inside `text`, or -1.
int changeIn(std::string_view text) {
  size_t at = text.find(kChangePrefix);
  if (at == std::string_view::npos) return -1;
  at += kChangePrefix.size();
  int j = 0;
  bool any = false;
  while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
    j = j * 10 + (text[at++] - '0');
    any = true;
  }
  return any ? j : -1;
}

// =============================================================================================
// Observers (the child process)
// =============================================================================================

enum class Kind { kKvWatch, kKvWatchDecode, kEndpoint };

std::optional<Kind> parseKind(std::string_view s) {
  if (s == "kv-watch") return Kind::kKvWatch;
  if (s == "kv-watch+decode") return Kind::kKvWatchDecode;
  if (s == "endpoint") return Kind::kEndpoint;
  return std::nullopt;
}

// What one observer saw: the first time each change appeared.
class Sightings {
 public:
  void update(int change, int64_t at) {
    if (change < 0) return;
    std::lock_guard lock(mu_);
    firstSeen_.emplace(change, at);  // keeps the first sighting
  }
  std::map<int, int64_t> firstSeen() const {
    std::lock_guard lock(mu_);
    return firstSeen_;
  }

 private:
  mutable std::mutex mu_;
  std::map<int, int64_t> firstSeen_;
};

class Observer {
 public:
  virtual ~Observer() = default;
  // Starts consuming updates in the background (kv-watch kinds; the endpoint always does).
  virtual void startPump() {}
  // Blocks until the view says it is current (the KV watch's initial-values marker); returns
  // how many distinct peers it holds then.
  virtual size_t waitCurrent() = 0;
  // After waitCurrent: blocks until the view holds `peers` distinct peers (false after 10 s).
  virtual bool waitComplete(size_t peers) = 0;
  virtual void stop() = 0;
  Sightings& sightings() { return sightings_; }

 protected:
  Sightings sightings_;
};

// A raw KvWatcher of the whole bucket, pumped by its own thread.
class KvWatchObserver final : public Observer {
 public:
  KvWatchObserver(const std::string& url, const std::string& bucket, bool decode)
      : decode_(decode) {
    transport::ConnectOptions options;
    options.servers = {url};
    options.name = "bench kv-watch observer";
    conn_ = orDie(transport::Connection::connect(std::move(options)), "observer connect");
    js_.emplace(orDie(transport::JetStream::create(*conn_), "observer JetStream"));
    kv_.emplace(orDie(transport::KeyValue::openBucket(*js_, bucket), "observer bucket"));
    watcher_.emplace(orDie(kv_->watchAll(), "observer watch"));
  }
  ~KvWatchObserver() override { stop(); }

  size_t waitCurrent() override {
    for (;;) {
      auto next = orDie(watcher_->next(milliseconds(10000)), "observer snapshot");
      if (!next) {
        if (watcher_->initialValuesDone()) break;
        orDie(deadlineExceeded("snapshot", "no initial-values marker in 10 s"), "snapshot");
      }
      if (take(*next)) keys_.insert(next->key);
    }
    return keys_.size();
  }

  bool waitComplete(size_t peers) override {
    const int64_t deadline = nowUs() + 10'000'000;
    while (keys_.size() < peers && nowUs() < deadline) {
      auto next = orDie(watcher_->next(milliseconds(100)), "observer catch-up");
      if (next && take(*next)) keys_.insert(next->key);
    }
    return keys_.size() >= peers;
  }

  // Hands the watcher to a pump thread (after waitCurrent / waitComplete).
  void startPump() override {
    thread_ = std::thread([this] { pump(); });
  }

  void stop() override {
    if (watcher_) watcher_->stop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  // Returns whether the entry is a live record.
  bool take(const transport::KvEntry& entry) {
    int64_t at = nowUs();
    if (entry.operation != transport::KvOperation::kPut) return false;
    if (entry.key == wire::kPresenceCanaryKey) return false;
    int change;
    if (decode_) {
      auto record = wire::decodePresence(entry.key, entry.value);
      if (!record.isOk()) return false;
      change = record->activity ? changeIn(*record->activity) : -1;
    } else {
      change = changeIn(entry.value);
    }
    sightings_.update(change, at);
    return true;
  }

  void pump() {
    for (;;) {
      auto next = watcher_->next(milliseconds(250));
      if (!next.isOk()) return;  // stopped
      if (next->has_value()) take(**next);
    }
  }

  const bool decode_;
  std::set<std::string> keys_;  // before the pump starts: a key rewritten meanwhile comes twice
  std::unique_ptr<transport::Connection> conn_;
  std::optional<transport::JetStream> js_;
  std::optional<transport::KeyValue> kv_;
  std::optional<transport::KvWatcher> watcher_;
  std::thread thread_;
};

// A presence-only endpoint: the roster view as `shoal endpoints` / `watch` use it.
class EndpointObserver final : public Observer {
 public:
  explicit EndpointObserver(const std::string& url) {
    mesh::EndpointOptions options;
    options.servers = {url};
    options.space = std::string(kSpace);
    options.principal = wire::Principal{"local", "observer"};
    options.presence = false;
    options.receiveDirect = false;
    options.onRoster = [this](const mesh::RosterEvent& event,
                              const std::optional<mesh::RosterRow>& row) {
      if (event.kind == mesh::RosterEvent::Kind::kViewChanged || !row) return;
      int64_t at = nowUs();
      int change = row->presence.activity ? changeIn(*row->presence.activity) : -1;
      sightings_.update(change, at);
    };
    endpoint_ = orDie(mesh::Endpoint::open(std::move(options)), "observer endpoint");
  }
  ~EndpointObserver() override { stop(); }

  size_t waitCurrent() override {
    auto snapshot = orDie(endpoint_->waitForRoster(milliseconds(20000)), "observer roster");
    return snapshot.rows.size();
  }
  bool waitComplete(size_t peers) override {
    const int64_t deadline = nowUs() + 10'000'000;
    while (nowUs() < deadline) {
      if (endpoint_->roster().rows.size() >= peers) return true;
      std::this_thread::sleep_for(milliseconds(1));
    }
    return false;
  }
  void stop() override {
    if (endpoint_) (void)endpoint_->close();
  }

 private:
  std::unique_ptr<mesh::Endpoint> endpoint_;
};

std::unique_ptr<Observer> openObserver(Kind kind, const std::string& url,
                                       const std::string& bucket) {
  if (kind == Kind::kEndpoint) return std::make_unique<EndpointObserver>(url);
  return std::make_unique<KvWatchObserver>(url, bucket, kind == Kind::kKvWatchDecode);
}

// The child: `--observer KIND --url URL --peers N --observers N --snapshots N`. Writes to
// stdout:
//   snapshot <current us> <rows at current> <complete us, -1 if never>   one per round
//   ready                         the long-lived observers are current
// then, after SIGTERM:
//   seen <observer> <change> <us> first sighting of each change
int runObserverChild(Kind kind, const std::string& url, int peers, int observers, int snapshots) {
  // Block SIGTERM before any thread exists, so every thread inherits the mask and sigwait
  // below is the only place it is taken.
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, nullptr);
  // An observer child never outlives the bench: its parent's death sends the same SIGTERM.
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() == 1) return 1;  // the parent is already gone

  const std::string bucket =
      orDie(wire::bucketName(wire::Bucket::kPresence, kSpace), "bucket name");
  for (int i = 0; i < snapshots; ++i) {
    int64_t t0 = nowUs();
    auto observer = openObserver(kind, url, bucket);
    size_t rows = observer->waitCurrent();
    int64_t current = nowUs();
    bool complete = observer->waitComplete(static_cast<size_t>(peers));
    int64_t completed = nowUs();
    observer->stop();
    std::printf("snapshot %lld %zu %lld\n", static_cast<long long>(current - t0), rows,
                complete ? static_cast<long long>(completed - t0) : -1LL);
  }
  std::vector<std::unique_ptr<Observer>> live;
  for (int i = 0; i < observers; ++i) {
    live.push_back(openObserver(kind, url, bucket));
    live.back()->waitCurrent();
    live.back()->startPump();
  }
  std::printf("ready\n");
  std::fflush(stdout);

  int sig = 0;
  sigwait(&term, &sig);
  for (auto& observer : live)
    observer->stop();
  for (size_t i = 0; i < live.size(); ++i) {
    for (const auto& [change, at] : live[i]->sightings().firstSeen())
      std::printf("seen %zu %d %lld\n", i, change, static_cast<long long>(at));
  }
  std::fflush(stdout);
  live.clear();
  return 0;
}

// =============================================================================================
// Peers (the parent process)
// =============================================================================================

// N simulated peers: one record each, rewritten every heartbeat by one thread (evenly spread),
// and changed on demand. A put holds the table lock, so a heartbeat never reorders a change.
class PeerWriter {
 public:
  PeerWriter(const std::string& url, int peers) {
    transport::ConnectOptions options;
    options.servers = {url};
    options.name = "bench peers";
    conn_ = orDie(transport::Connection::connect(std::move(options)), "peers connect");
    js_.emplace(orDie(transport::JetStream::create(*conn_), "peers JetStream"));
    const std::string bucket =
        orDie(wire::bucketName(wire::Bucket::kPresence, kSpace), "bucket name");
    kv_.emplace(orDie(transport::KeyValue::openBucket(*js_, bucket), "peers bucket"));
    const double now = static_cast<double>(Clock::real().wallMs());
    for (int i = 0; i < peers; ++i) {
      wire::Presence p;
      p.card.id = fmt::format("local.peer{:03d}", i);
      p.card.name = fmt::format("peer {}", i);
      p.card.owner = "local";
      p.card.actor = fmt::format("peer{:03d}", i);
      p.card.role = i % 5 == 0 ? std::optional<std::string>("reviewer") : std::nullopt;
      p.card.meta = {{"connector", "bench"}, {"host", "bench-host"}};
      p.lifecycleUid = orDie(newLifecycleUid(), "lifecycle uid");
      p.status = wire::PresenceStatus::kIdle;
      p.activity = "waiting for work";
      p.ts = now;
      p.statusSince = now;
      p.activitySince = now;
      records_.push_back(std::move(p));
    }
    for (int i = 0; i < peers; ++i) {
      std::lock_guard lock(mu_);
      orDie(putLocked(static_cast<size_t>(i)), "initial put");
    }
    thread_ = std::thread([this] { heartbeat(); });
  }
  ~PeerWriter() {
    stopping_.store(true);
    thread_.join();
  }
  PeerWriter(const PeerWriter&) = delete;
  PeerWriter& operator=(const PeerWriter&) = delete;

  // Change j: flips peer (7·j mod N)'s status and sets its activity to "chg-<j>". Returns the
  // time taken just before the record is encoded and put.
  int64_t change(int j) {
    std::lock_guard lock(mu_);
    size_t i = static_cast<size_t>(7 * j) % records_.size();
    wire::Presence& p = records_[i];
    double now = static_cast<double>(Clock::real().wallMs());
    p.status = p.status == wire::PresenceStatus::kIdle ? wire::PresenceStatus::kWorking
                                                       : wire::PresenceStatus::kIdle;
    p.activity = fmt::format("{}{}", kChangePrefix, j);
    p.statusSince = now;
    p.activitySince = now;
    int64_t t0 = nowUs();
    Status put = putLocked(i);
    if (!put.isOk()) ++failures_;
    return t0;
  }

  uint64_t puts() const { return puts_.load(); }
  uint64_t failures() const { return failures_.load(); }

 private:
  Status putLocked(size_t i) {
    wire::Presence& p = records_[i];
    p.ts = static_cast<double>(Clock::real().wallMs());
    SHOAL_ASSIGN_OR_RETURN(std::string value, wire::encodePresence(p));
    ++puts_;
    return kv_->put(p.card.id, value).status();
  }

  void heartbeat() {
    const auto spacing = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        kHeartbeat / static_cast<int64_t>(records_.size()));
    auto due = std::chrono::steady_clock::now();
    for (size_t i = 0; !stopping_.load(); i = (i + 1) % records_.size()) {
      due += spacing;
      std::this_thread::sleep_until(due);
      std::lock_guard lock(mu_);
      if (!putLocked(i).isOk()) ++failures_;
    }
  }

  std::unique_ptr<transport::Connection> conn_;
  std::optional<transport::JetStream> js_;
  std::optional<transport::KeyValue> kv_;
  std::mutex mu_;
  std::vector<wire::Presence> records_;  // guarded by mu_
  std::atomic<uint64_t> puts_{0};
  std::atomic<uint64_t> failures_{0};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

struct KindResult {
  std::string name;
  bench::LatencySummary snapshot;  // open → current
  bench::LatencySummary complete;  // open → every peer present
  size_t rowsMin = 0;              // rows at "current", fewest over the rounds
  int shortRounds = 0;             // rounds where "current" lacked a peer
  int neverComplete = 0;
  bench::LatencySummary change;
  int missed = 0;
  double observerCpuSeconds = 0;
  double serverCpuSeconds = 0;
  double intervalSeconds = 0;
  uint64_t updatesInInterval = 0;  // summed over observers (estimated from the put rate)
  bool ok = false;
};

std::string selfPath() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "/proc/self/exe";
  return std::string(buf, static_cast<size_t>(n));
}

std::vector<std::string> readLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

// Change ids run on across kinds (`firstChange`…): a peer keeps its last "chg-<j>" activity in
// every later heartbeat, so an id must never be reused within a run.
KindResult measureKind(const std::string& kindName, const Config& config, bench::BenchMesh& mesh,
                       PeerWriter& peers, const testing::TempDir& dir, int firstChange) {
  KindResult result;
  result.name = kindName;
  const std::string out = dir.join("observer-" + kindName + ".out");
  SpawnOptions spawn;
  spawn.argv = {selfPath(),
                "--observer",
                kindName,
                "--url",
                mesh.url(),
                "--peers",
                std::to_string(config.peers),
                "--observers",
                std::to_string(config.observers),
                "--snapshots",
                std::to_string(config.snapshots)};
  spawn.stdoutTarget = StdioTarget::appendTo(out);
  spawn.stderrTarget = StdioTarget::inherit();
  spawn.killOnDestroy = true;
  Subprocess child = orDie(Subprocess::spawn(spawn), "spawning the observer child");

  // Wait for "ready" (the snapshot rounds and the long-lived observers' first view).
  const int64_t readyBy = nowUs() + 120'000'000;
  for (;;) {
    auto lines = readLines(out);
    if (std::find(lines.begin(), lines.end(), "ready") != lines.end()) break;
    auto exited = child.poll();
    if ((exited.isOk() && exited->has_value()) || nowUs() > readyBy) {
      std::fprintf(stderr, "observer child '%s' never became ready\n", kindName.c_str());
      return result;
    }
    std::this_thread::sleep_for(milliseconds(20));
  }

  // Steady heartbeating, no changes: the observers' CPU and the broker's.
  std::this_thread::sleep_for(milliseconds(500));
  const uint64_t puts0 = peers.puts();
  const double child0 = bench::processCpuSeconds(child.pid());
  const double server0 = bench::processCpuSeconds(mesh.serverPid());
  const int64_t wall0 = nowUs();
  std::this_thread::sleep_for(std::chrono::duration<double>(config.cpuSeconds));
  result.observerCpuSeconds = bench::processCpuSeconds(child.pid()) - child0;
  result.serverCpuSeconds = bench::processCpuSeconds(mesh.serverPid()) - server0;
  result.intervalSeconds = static_cast<double>(nowUs() - wall0) / 1e6;
  result.updatesInInterval = (peers.puts() - puts0) * static_cast<uint64_t>(config.observers);

  // Changes, paced, over the same steady heartbeating.
  std::vector<int64_t> putAt(static_cast<size_t>(config.changes), 0);
  auto due = std::chrono::steady_clock::now();
  for (int j = 0; j < config.changes; ++j) {
    due += config.changeSpacing;
    std::this_thread::sleep_until(due);
    putAt[static_cast<size_t>(j)] = peers.change(firstChange + j);
  }
  std::this_thread::sleep_for(milliseconds(500));  // the last change's sightings
  orDie(child.signal(SIGTERM), "stopping the observer child");
  auto exit = orDie(child.wait(milliseconds(30000)), "waiting for the observer child");
  if (!exit.success()) {
    std::fprintf(stderr, "observer child '%s' ended with %s\n", kindName.c_str(),
                 exit.toString().c_str());
    return result;
  }

  std::vector<int64_t> snapshotUs, completeUs, changeUs;
  result.rowsMin = static_cast<size_t>(config.peers);
  std::map<std::pair<int, int>, int64_t> seen;  // (observer, change) → first sighting
  for (const auto& line : readLines(out)) {
    std::istringstream in(line);
    std::string tag;
    in >> tag;
    if (tag == "snapshot") {
      long long us = 0, completed = 0;
      size_t rows = 0;
      in >> us >> rows >> completed;
      snapshotUs.push_back(us);
      result.rowsMin = std::min(result.rowsMin, rows);
      if (rows < static_cast<size_t>(config.peers)) ++result.shortRounds;
      if (completed < 0) {
        ++result.neverComplete;
      } else {
        completeUs.push_back(completed);
      }
    } else if (tag == "seen") {
      int observer = 0, change = 0;
      long long at = 0;
      in >> observer >> change >> at;
      seen[{observer, change}] = at;
    }
  }
  for (int observer = 0; observer < config.observers; ++observer) {
    for (int j = 0; j < config.changes; ++j) {
      auto it = seen.find({observer, firstChange + j});
      if (it == seen.end()) {
        ++result.missed;
        continue;
      }
      changeUs.push_back(it->second - putAt[static_cast<size_t>(j)]);
    }
  }
  result.snapshot = bench::summarize(snapshotUs);
  result.complete = bench::summarize(completeUs);
  result.change = bench::summarize(changeUs);
  result.ok = true;
  return result;
}

Config parse(int argc, char** argv) {
  Config c;
  const char* env = std::getenv("SHOAL_BENCH_QUICK");
  bool quick = env != nullptr && *env != '\0' && std::strcmp(env, "0") != 0;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
  if (quick) {
    c.quick = true;
    c.changes = 100;
    c.changeSpacing = milliseconds(10);
    c.cpuSeconds = 2;
    c.snapshots = 3;
  }
  for (int i = 1; i + 1 < argc; ++i) {
    std::string_view flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--peers") c.peers = std::max(1, std::atoi(value));
    if (flag == "--observers") c.observers = std::max(1, std::atoi(value));
    if (flag == "--changes") c.changes = std::max(1, std::atoi(value));
    if (flag == "--cpu-seconds") c.cpuSeconds = std::max(0.5, std::atof(value));
    if (flag == "--snapshots") c.snapshots = std::max(1, std::atoi(value));
  }
  return c;
}

std::optional<std::string> flagValue(int argc, char** argv, std::string_view flag) {
  for (int i = 1; i + 1 < argc; ++i)
    if (flag == argv[i]) return std::string(argv[i + 1]);
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  if (auto kindName = flagValue(argc, argv, "--observer")) {
    auto kind = parseKind(*kindName);
    auto url = flagValue(argc, argv, "--url");
    if (!kind || !url) {
      std::fprintf(stderr, "roster_bench --observer: bad kind or no --url\n");
      return 2;
    }
    auto number = [&](std::string_view flag) {
      auto value = flagValue(argc, argv, flag);
      return value ? std::atoi(value->c_str()) : 1;
    };
    return runObserverChild(*kind, *url, number("--peers"), number("--observers"),
                            number("--snapshots"));
  }

  Config config = parse(argc, argv);
  auto mesh = bench::BenchMesh::start(std::string(kSpace));
  auto dir = orDie(testing::TempDir::create("roster-bench"), "temp dir");
  PeerWriter peers(mesh->url(), config.peers);

  std::printf("roster_bench: %s run, %u CPUs, nats-server pid %d\n",
              config.quick ? "quick" : "full", std::thread::hardware_concurrency(),
              mesh->serverPid());
  std::printf(
      "  %d peers heartbeating every %lld ms (%.0f puts/s, direct KV puts of wire::Presence), "
      "%d observers per kind in a child process\n",
      config.peers, static_cast<long long>(kHeartbeat.count()),
      config.peers * 1000.0 / static_cast<double>(kHeartbeat.count()), config.observers);
  std::printf("  %d changes %lld ms apart; CPU over %.0f s of steady heartbeating\n\n",
              config.changes, static_cast<long long>(config.changeSpacing.count()),
              config.cpuSeconds);

  // The broker's floor: writers only, nobody watching.
  const double server0 = bench::processCpuSeconds(mesh->serverPid());
  const double self0 = bench::processCpuSeconds(getpid());
  const int64_t wall0 = nowUs();
  std::this_thread::sleep_for(std::chrono::duration<double>(config.cpuSeconds));
  const double floorSeconds = static_cast<double>(nowUs() - wall0) / 1e6;
  const double serverFloor = (bench::processCpuSeconds(mesh->serverPid()) - server0) / floorSeconds;
  const double writersFloor = (bench::processCpuSeconds(getpid()) - self0) / floorSeconds;

  std::vector<KindResult> results;
  int firstChange = 0;
  for (const char* kind : {"kv-watch", "kv-watch+decode", "endpoint"}) {
    results.push_back(measureKind(kind, config, *mesh, peers, dir, firstChange));
    firstChange += config.changes;
  }
  const KindResult& base = results.front();

  std::printf(
      "Snapshot: open (connect included) → view current (the watch's initial-values marker)\n"
      "          → complete (all %d peers held); %d sequential rounds per kind\n",
      config.peers, config.snapshots);
  std::printf("  %-18s %4s %9s %9s %9s %9s %10s %11s %8s\n", "kind", "n", "current", "max ms",
              "complete", "max ms", "p50 ratio", "short rnds", "min rows");
  std::printf("  %-18s %4s %9s %9s %9s %9s %10s %11s %8s\n", "", "", "p50 ms", "", "p50 ms", "",
              "(current)", "", "");
  for (const auto& r : results) {
    std::printf("  %-18s %4zu %9.2f %9.2f %9.2f %9.2f %10s %7d/%-3zu %8zu\n", r.name.c_str(),
                r.snapshot.n, r.snapshot.p50Ms, r.snapshot.maxMs, r.complete.p50Ms,
                r.complete.maxMs, bench::ratio(r.snapshot.p50Ms, base.snapshot.p50Ms).c_str(),
                r.shortRounds, r.snapshot.n, r.rowsMin);
    if (r.neverComplete > 0)
      std::printf("  %-18s %d round(s) never held every peer within 10 s\n", "", r.neverComplete);
  }
  std::printf(
      "  short rnds: rounds whose view was already current while lacking a peer (the marker\n"
      "  came before every key was delivered; the missing keys arrive right after it).\n");

  std::printf("\nChange → seen by each observer (put start → handler / watcher)\n");
  std::printf("  %-18s %6s %6s %9s %9s %9s %10s %10s\n", "kind", "n", "missed", "p50 ms", "p99 ms",
              "max ms", "p50 ratio", "p99 ratio");
  for (const auto& r : results) {
    std::printf("  %-18s %6zu %6d %9.2f %9.2f %9.2f %10s %10s\n", r.name.c_str(), r.change.n,
                r.missed, r.change.p50Ms, r.change.p99Ms, r.change.maxMs,
                bench::ratio(r.change.p50Ms, base.change.p50Ms).c_str(),
                bench::ratio(r.change.p99Ms, base.change.p99Ms).c_str());
  }

  std::printf("\nCPU during steady heartbeating (observer child, all %d observers together)\n",
              config.observers);
  std::printf("  %-18s %10s %13s %10s %14s\n", "kind", "% of core", "µs / update", "ratio",
              "broker % core");
  for (const auto& r : results) {
    double pct = r.intervalSeconds > 0 ? 100.0 * r.observerCpuSeconds / r.intervalSeconds : 0;
    double perUpdate = r.updatesInInterval > 0
                           ? 1e6 * r.observerCpuSeconds / static_cast<double>(r.updatesInInterval)
                           : 0;
    double server = r.intervalSeconds > 0 ? 100.0 * r.serverCpuSeconds / r.intervalSeconds : 0;
    std::printf("  %-18s %9.1f%% %12.1f %10s %13.1f%%\n", r.name.c_str(), pct, perUpdate,
                bench::ratio(r.observerCpuSeconds, base.observerCpuSeconds).c_str(), server);
  }
  std::printf("  %-18s %10s %12s %10s %13.1f%%  (writers alone: %.1f%% of a core)\n",
              "no observers", "", "", "", 100.0 * serverFloor, 100.0 * writersFloor);
  std::printf(
      "  CPU = utime+stime from /proc/<pid>/stat at 10 ms tick resolution; an update is one\n"
      "  heartbeat put delivered to one observer. The writers run in this process, never in the\n"
      "  observer child.\n");
  std::printf("\nPeer writer: %llu puts, %llu failed\n",
              static_cast<unsigned long long>(peers.puts()),
              static_cast<unsigned long long>(peers.failures()));
  return 0;
}
