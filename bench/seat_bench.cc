// seat_bench: the seat daemon end to end (issue 5) — a DM from send to bytes at an exec
// runtime's stdin, with the journal's fsync chains in the path — beside the raw JetStream round
// trip and the fsync floor measured in the same run; and the daemon-side RSS of idle seats
// beside that of plain endpoints.
//
//   seat_bench [--quick] [--samples N] [--warmup N] [--seats N] [--text-bytes N]
//              [--settle-ms MS]
//
// Latency (one process, one server, interleaved rounds so a change of load hits every side
// alike). Each round measures, one message in flight at a time:
//   raw       nats.c js_Publish (Nats-Msg-Id) of a real envelope on a DM subject of DM_<space>
//             → natsSubscription_Fetch (batch 64) on a durable provisioned like a seat's → Ack;
//             sender and consumer on two connections, the consumer's with SendAsap — the
//             connection options mesh::Endpoint uses. The baseline of the ratios.
//   endpoint  mesh::Endpoint Alice sendDirect → Endpoint Bob's onDelivery handler (dm_bench's
//             `shoal` side): what the mesh alone costs.
//   seat      Alice sendDirect → a daemon::Seat (runtime `exec`) whose program is stdin_probe:
//             it writes one byte to a FIFO when a whole delivery block has arrived on its
//             stdin, and the bench thread reads it. On the way the seat commits two journal
//             transactions, each a full fsync chain (write temp, fsync, close, rename, fsync
//             dir): admission (`queued`, before the broker ack) and the handoff
//             (`inflight(dispatching)`, before the first byte). The third — `surfaced` — is
//             committed after the write, so it is NOT in the end-to-end sample; it is timed
//             beside it. Every commit renames the state file into place, so an inotify watch
//             on the seat's cwd timestamps each chain at its rename (before its dir fsync).
//             The next round starts once the seat published the receipt. A round that takes
//             more than 10 s is reported as a stall and given up to a minute.
//   fsync     writeFileAtomically (base/file_system.h: the journal's chain) of a file the size
//             the seat's state file has at that round, in a sibling directory of the seat's
//             cwd (same file system): one journal commit's floor.
// Ratios of the seat's p50: to raw, to fsync, (seat − raw) / fsync ("journal chains per DM")
// and (seat − endpoint) / fsync (the seat's cost above its endpoint, in fsync floors); the
// residual seat − endpoint − 2 × fsync (its work besides the two chains). Every commit
// rewrites the whole state file, which grows by one tombstone per DM up to the journal's cap
// (512), so the first and last quarter of the rounds are also shown side by side.
//
// Memory: the bench re-executes itself as a child (`--rss-child endpoints|seats`) for each
// kind, so neither measurement reuses memory the other freed. The child opens one of its kind
// (one-time setup), reads /proc/self/status, opens N more (idle: exec seats running /bin/cat;
// endpoints with a DM durable and presence, as the seat's own endpoint), waits --settle-ms,
// and reads it again; plus VmRSS of each seat's runtime child (a separate process).
//
// --quick (or SHOAL_BENCH_QUICK=1) is the CI size: 60 samples after 10 warm-up rounds (full:
// 300 after 30). The last line of the output is one JSON object with the numbers.
//
// Numbers are reported, never asserted (bench/README.md); read the ratios.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <fmt/format.h>
#include <nats/nats.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/subprocess.h"
#include "bench_mesh.h"
#include "daemon/seat.h"
#include "daemon/seat_files.h"
#include "journal/ownership_journal.h"
#include "mesh/endpoint.h"
#include "mesh/outbound.h"
#include "planes/space_provisioner.h"
#include "testing/temp_dir.h"
#include "wire/message.h"
#include "wire/names.h"
#include "wire/subject.h"

namespace {

using namespace shoal;
using bench::nowUs;
using bench::orDie;
using std::chrono::milliseconds;

constexpr std::string_view kSpace = "bench";
constexpr std::string_view kMarker = "seat-bench ";
constexpr int kIndexDigits = 7;
constexpr int64_t kSampleTimeoutUs = 10'000'000;
// A seat round that passes kSampleTimeoutUs is reported as a stall and given up to this long.
constexpr int64_t kStallLimitUs = 60'000'000;
// Journal commits per DM that the inotify watch waits for: admission, handoff, surfaced.
constexpr size_t kCommitsPerDm = 3;

struct Config {
  int samples = 300;
  int warmup = 30;
  int seats = 10;
  int textBytes = 128;
  milliseconds settle{2000};
  bool quick = false;
};

// The message text: the marker, a fixed-width index, then padding to `bytes`.
std::string textFor(int index, int bytes) {
  std::string text = fmt::format("{}{:0{}d} ", kMarker, index, kIndexDigits);
  if (static_cast<int>(text.size()) < bytes) {
    text.append(static_cast<size_t>(bytes) - text.size(), 'x');
  }
  return text;
}

// The index after the marker in `bytes`, or -1.
int indexIn(std::string_view bytes) {
  size_t at = bytes.find(kMarker);
  if (at == std::string_view::npos) return -1;
  at += kMarker.size();
  if (at + kIndexDigits > bytes.size()) return -1;
  int index = 0;
  for (int i = 0; i < kIndexDigits; ++i) {
    char c = bytes[at + static_cast<size_t>(i)];
    if (c < '0' || c > '9') return -1;
    index = index * 10 + (c - '0');
  }
  return index;
}

// The receive time of the one message in flight, recorded by a receiver thread.
class Arrival {
 public:
  void expect(int index) {
    std::lock_guard lock(mu_);
    want_ = index;
    at_ = 0;
  }
  void record(int index, int64_t us) {
    {
      std::lock_guard lock(mu_);
      if (index != want_ || at_ != 0) {
        ++strays_;  // late, or a redelivery: not this round's
        return;
      }
      at_ = us;
    }
    cv_.notify_all();
  }
  // The receive time, or 0 if nothing arrived before `deadlineUs`.
  int64_t waitUntil(int64_t deadlineUs) {
    std::unique_lock lock(mu_);
    while (at_ == 0) {
      int64_t left = deadlineUs - nowUs();
      if (left <= 0) return 0;
      cv_.wait_for(lock, std::chrono::microseconds(left));
    }
    return at_;
  }
  int strays() const {
    std::lock_guard lock(mu_);
    return strays_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int want_ = -1;
  int64_t at_ = 0;
  int strays_ = 0;
};

// --- The raw nats.c baseline (dm_bench's raw+asap side, sequential only) ---------------------

Status natsFailure(natsStatus s, std::string_view what) {
  return unavailable("nats",
                     fmt::format("{}: {} ({})", what, natsStatus_GetText(s),
                                 nats_GetLastError(nullptr) ? nats_GetLastError(nullptr) : ""));
}

struct RawOptions {
  std::string url;
  std::string subject;  // the DM subject published on
  std::string filter;   // the durable's filter subject
  std::string stream;
  std::string durable;
  std::string payloadTemplate;  // a real envelope; the index digits are replaced per message
  milliseconds fetchWait{500};  // the DurablePump's
  int batch = 64;               // the DurablePump's
};

class RawDm {
 public:
  explicit RawDm(RawOptions options) : o_(std::move(options)) {
    pubConn_ = connect(false);
    subConn_ = connect(true);
    natsStatus s = natsConnection_JetStream(&pubJs_, pubConn_, nullptr);
    if (s == NATS_OK) s = natsConnection_JetStream(&subJs_, subConn_, nullptr);
    if (s != NATS_OK) orDie(natsFailure(s, "raw JetStream"), "raw");
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = o_.stream.c_str();
    so.Consumer = o_.durable.c_str();
    jsErrCode err = static_cast<jsErrCode>(0);
    s = js_PullSubscribe(&sub_, subJs_, o_.filter.c_str(), o_.durable.c_str(), nullptr, &so, &err);
    if (s != NATS_OK) orDie(natsFailure(s, "raw pull subscribe"), "raw");
    markerAt_ = o_.payloadTemplate.find(kMarker) + kMarker.size();
    receiver_ = std::thread([this] { receive(); });
  }
  ~RawDm() {
    stopping_.store(true);
    receiver_.join();
    natsSubscription_Destroy(sub_);  // never Unsubscribe: that could delete the durable
    jsCtx_Destroy(subJs_);
    jsCtx_Destroy(pubJs_);
    natsConnection_Destroy(subConn_);
    natsConnection_Destroy(pubConn_);
  }
  RawDm(const RawDm&) = delete;
  RawDm& operator=(const RawDm&) = delete;

  Arrival& arrival() { return arrival_; }

  Status send(int index) {
    std::string payload = o_.payloadTemplate;
    std::string digits = fmt::format("{:0{}d}", index, kIndexDigits);
    payload.replace(markerAt_, digits.size(), digits);
    auto msgId = newUuidV7(Clock::real());
    if (!msgId.isOk()) return msgId.status();
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MsgId = msgId->c_str();
    jsPubAck* ack = nullptr;
    jsErrCode err = static_cast<jsErrCode>(0);
    natsStatus s = js_Publish(&ack, pubJs_, o_.subject.c_str(), payload.data(),
                              static_cast<int>(payload.size()), &po, &err);
    jsPubAck_Destroy(ack);
    return s == NATS_OK ? Status::ok() : natsFailure(s, "raw js_Publish");
  }

 private:
  natsConnection* connect(bool sendAsap) {
    natsOptions* opts = nullptr;
    natsStatus s = natsOptions_Create(&opts);
    if (s == NATS_OK) s = natsOptions_SetURL(opts, o_.url.c_str());
    if (s == NATS_OK && sendAsap) s = natsOptions_SetSendAsap(opts, true);
    natsConnection* nc = nullptr;
    if (s == NATS_OK) s = natsConnection_Connect(&nc, opts);
    natsOptions_Destroy(opts);
    if (s != NATS_OK) orDie(natsFailure(s, "raw connect"), "raw");
    return nc;
  }

  void receive() {
    while (!stopping_.load()) {
      natsMsgList list{nullptr, 0};
      jsErrCode err = static_cast<jsErrCode>(0);
      natsStatus s = natsSubscription_Fetch(&list, sub_, o_.batch, o_.fetchWait.count(), &err);
      if (s != NATS_OK) {
        if (s != NATS_TIMEOUT) std::this_thread::sleep_for(milliseconds(20));
        continue;
      }
      for (int i = 0; i < list.Count; ++i) {
        natsMsg* msg = list.Msgs[i];
        int64_t at = nowUs();
        std::string_view data(natsMsg_GetData(msg),
                              static_cast<size_t>(natsMsg_GetDataLength(msg)));
        arrival_.record(indexIn(data), at);
        natsMsg_Ack(msg, nullptr);
      }
      natsMsgList_Destroy(&list);
    }
  }

  const RawOptions o_;
  size_t markerAt_ = 0;
  natsConnection* pubConn_ = nullptr;
  natsConnection* subConn_ = nullptr;
  jsCtx* pubJs_ = nullptr;
  jsCtx* subJs_ = nullptr;
  natsSubscription* sub_ = nullptr;
  Arrival arrival_;
  std::atomic<bool> stopping_{false};
  std::thread receiver_;
};

// --- The probe's side in the bench -----------------------------------------------------------

// What one seat round saw, in steady-clock microseconds.
struct SeatObservation {
  int64_t byteAt = 0;            // stdin_probe's byte read from the FIFO
  std::vector<int64_t> commits;  // the state file renamed into place, in order
};

// The bench's ends of the probe: the FIFO's read end (plus a write end held open, so the FIFO
// never reads as closed between probe generations) and an inotify watch for the journal's
// renames in the seat's cwd. Owned by the main thread.
class ProbeWatch {
 public:
  ProbeWatch(const std::string& fifoPath, const std::string& seatCwd) {
    if (::mkfifo(fifoPath.c_str(), 0600) != 0) die("mkfifo " + fifoPath);
    fifo_ = ::open(fifoPath.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fifo_ < 0) die("opening the FIFO");
    holder_ = ::open(fifoPath.c_str(), O_WRONLY | O_CLOEXEC);  // a reader exists: no block
    if (holder_ < 0) die("opening the FIFO's write end");
    cwd_ = seatCwd;
  }
  ~ProbeWatch() {
    for (int fd : {fifo_, holder_, inotify_}) {
      if (fd >= 0) ::close(fd);
    }
  }
  ProbeWatch(const ProbeWatch&) = delete;
  ProbeWatch& operator=(const ProbeWatch&) = delete;

  // Starts watching the seat's files directory, `<cwd>/.shoal` (daemon/seat_files.h; it exists
  // once the seat is open); earlier commits are not seen.
  void watchCommits() {
    inotify_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (inotify_ < 0) die("inotify_init1");
    // IN_CREATE too, though only renames are counted: the kernel merges an event into an
    // identical unread one before it, so with IN_MOVED_TO alone two commits in quick
    // succession could read as one. Each chain creates its temp file before its rename, so
    // two renames are never adjacent in the queue.
    const std::string files = daemon::seatFilesDir(cwd_);
    if (::inotify_add_watch(inotify_, files.c_str(), IN_MOVED_TO | IN_CREATE) < 0) {
      die("inotify_add_watch");
    }
  }

  // Waits for the probe's byte and `commits` renames, or the deadline (false).
  bool wait(SeatObservation& seen, size_t commits, int64_t deadlineUs) {
    while (seen.byteAt == 0 || seen.commits.size() < commits) {
      int64_t left = deadlineUs - nowUs();
      if (left <= 0) return false;
      pollfd fds[2] = {{fifo_, POLLIN, 0}, {inotify_, POLLIN, 0}};
      int ready = ::poll(fds, 2, static_cast<int>(left / 1000) + 1);
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) die("poll");
      int64_t at = nowUs();
      if (fds[0].revents & POLLIN) {
        char buf[64];
        ssize_t n = ::read(fifo_, buf, sizeof buf);
        if (n > 0) {
          bytes_ += n;
          if (seen.byteAt == 0) seen.byteAt = at;
        }
      }
      if (fds[1].revents & POLLIN) readCommits(at, seen.commits);
    }
    return true;
  }

  // Renames that arrived since the last wait (none are expected between rounds).
  size_t drainCommits() {
    std::vector<int64_t> extra;
    readCommits(nowUs(), extra);
    return extra.size();
  }
  int64_t bytes() const { return bytes_; }

 private:
  [[noreturn]] static void die(const std::string& what) {
    char buf[256];
    const char* why = ::strerror_r(errno, buf, sizeof buf);  // GNU: returns the text
    orDie(unavailable("probe", what + ": " + why), "probe watch");
    std::abort();  // orDie exits; this only tells the compiler
  }

  void readCommits(int64_t at, std::vector<int64_t>& out) {
    alignas(inotify_event) char buf[4096];
    for (;;) {
      ssize_t n = ::read(inotify_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // EAGAIN: drained
      for (char* p = buf; p < buf + n;) {
        auto* e = reinterpret_cast<inotify_event*>(p);
        if ((e->mask & IN_MOVED_TO) && e->len > 0 && journal::kStateFileName == e->name) {
          out.push_back(at);
        }
        p += sizeof(inotify_event) + e->len;
      }
    }
  }

  std::string cwd_;
  int fifo_ = -1;
  int holder_ = -1;
  int inotify_ = -1;
  int64_t bytes_ = 0;
};

// One sampled round's endpoint, seat and fsync times (µs) and the state file's size then.
struct RoundTimes {
  int64_t endpointUs = -1;
  int64_t seatUs = -1;
  int64_t floorUs = -1;
  size_t stateBytes = 0;
};

// The seat's time besides its endpoint and its two commit chains, from p50s: seat − endpoint −
// 2 × fsync floor (the gate hop, rendering, encoding the journal state, the pipe, the probe).
double residualMs(double seatMs, double endpointMs, double floorMs) {
  return seatMs - endpointMs - 2 * floorMs;
}

double msSince(int64_t us, int64_t sinceUs) {
  return static_cast<double>(us - sinceUs) / 1e3;
}

size_t fileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
}

// --- /proc -----------------------------------------------------------------------------------

struct ProcMemory {
  long rssKb = -1;
  long anonKb = -1;
  long threads = -1;
  long fds = -1;
};

// VmRSS, RssAnon and Threads from /proc/<pid>/status ("self" for this process); fds counted
// only for "self".
ProcMemory readProcMemory(const std::string& pid) {
  ProcMemory m;
  std::ifstream in("/proc/" + pid + "/status");
  for (std::string line; std::getline(in, line);) {
    auto field = [&](std::string_view key, long& out) {
      if (line.rfind(key, 0) == 0) out = std::atol(line.c_str() + key.size());
    };
    field("VmRSS:", m.rssKb);
    field("RssAnon:", m.anonKb);
    field("Threads:", m.threads);
  }
  if (pid == "self") {
    std::error_code ec;
    long n = 0;
    for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      ++n;
    }
    m.fds = n;
  }
  return m;
}

std::string selfPath() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "/proc/self/exe";
  return std::string(buf, static_cast<size_t>(n));
}

std::optional<std::string> flagValue(int argc, char** argv, std::string_view flag) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (flag == argv[i]) return std::string(argv[i + 1]);
  }
  return std::nullopt;
}

// --- The RSS child ---------------------------------------------------------------------------

// `--rss-child endpoints|seats --url URL --dir DIR --count N --settle-ms MS`. Writes to stdout:
//   mem before <VmRSS kB> <RssAnon kB> <threads> <fds>   with one of its kind open
//   mem after  <VmRSS kB> <RssAnon kB> <threads> <fds>   with 1 + N open, after the settle
//   runtime <pid> <VmRSS kB> <RssAnon kB>                 per seat (seats only)
int runRssChild(const std::string& kind, const std::string& url, const std::string& dir, int count,
                milliseconds settle) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlives the bench
  if (getppid() == 1) return 1;
  log::initLogging(log::Level::kWarn);
  const bool seats = kind == "seats";
  std::vector<std::unique_ptr<mesh::Endpoint>> endpoints;
  std::vector<std::unique_ptr<daemon::Seat>> idle;
  auto openOne = [&](int i) {
    if (seats) {
      daemon::SeatProfile p;
      p.name = fmt::format("Idle {}", i);
      p.principal = wire::Principal{"local", fmt::format("idle_{}", i)};
      p.runtime = daemon::RuntimeKind::kExec;
      p.command = {"/bin/cat"};
      p.cwd = fmt::format("{}/idle_{}", dir, i);
      p.lifecycleUid = orDie(newLifecycleUid(), "lifecycle uid");
      daemon::SeatOptions so;
      so.url = url;
      so.space = std::string(kSpace);
      idle.push_back(orDie(daemon::Seat::open(p, so), "opening an idle seat"));
      if (!idle.back()->snapshot().processRunning) {
        orDie(unavailable("seat", idle.back()->snapshot().note), "idle seat runtime");
      }
    } else {
      mesh::EndpointOptions o;
      o.servers = {url};
      o.space = std::string(kSpace);
      o.principal = wire::Principal{"local", fmt::format("ep_{}", i)};
      o.displayName = fmt::format("Endpoint {}", i);
      o.onDelivery = [](const mesh::Delivery&) { return mesh::HandlerVerdict::kAccepted; };
      endpoints.push_back(orDie(mesh::Endpoint::open(std::move(o)), "opening an endpoint"));
    }
  };
  auto printMem = [](const char* when) {
    ProcMemory m = readProcMemory("self");
    std::printf("mem %s %ld %ld %ld %ld\n", when, m.rssKb, m.anonKb, m.threads, m.fds);
  };
  openOne(0);  // the first of its kind pays the one-time setup (library state, arenas)
  std::this_thread::sleep_for(settle);
  printMem("before");
  for (int i = 1; i <= count; ++i) {
    openOne(i);
  }
  std::this_thread::sleep_for(settle);
  printMem("after");
  for (size_t i = 1; i < idle.size(); ++i) {
    int pid = idle[i]->snapshot().pid;
    ProcMemory m = readProcMemory(std::to_string(pid));
    std::printf("runtime %d %ld %ld\n", pid, m.rssKb, m.anonKb);
  }
  std::fflush(stdout);
  idle.clear();
  for (auto& e : endpoints) {
    (void)e->close();
  }
  return 0;
}

struct RssResult {
  bool ok = false;
  ProcMemory before, after;
  std::vector<long> runtimeKb;      // seats: each runtime child's VmRSS
  std::vector<long> runtimeAnonKb;  // and its RssAnon (VmRSS counts shared libc pages too)
  int count = 0;
  double perItemKb() const { return static_cast<double>(after.rssKb - before.rssKb) / count; }
  double anonPerItemKb() const { return static_cast<double>(after.anonKb - before.anonKb) / count; }
  double threadsPerItem() const {
    return static_cast<double>(after.threads - before.threads) / count;
  }
  double fdsPerItem() const { return static_cast<double>(after.fds - before.fds) / count; }
};

RssResult measureRss(const std::string& kind, const Config& config, const std::string& url,
                     const testing::TempDir& dir) {
  RssResult result;
  result.count = config.seats;
  const std::string work = dir.join("rss-" + kind);
  orDie(FileSystem::posix().createDirs(work).status(), "rss dir");
  const std::string out = dir.join("rss-" + kind + ".out");
  SpawnOptions spawn;
  spawn.argv = {selfPath(),
                "--rss-child",
                kind,
                "--url",
                url,
                "--dir",
                work,
                "--count",
                std::to_string(config.seats),
                "--settle-ms",
                std::to_string(config.settle.count())};
  spawn.stdoutTarget = StdioTarget::appendTo(out);
  spawn.stderrTarget = StdioTarget::inherit();
  spawn.killOnDestroy = true;
  Subprocess child = orDie(Subprocess::spawn(spawn), "spawning the rss child");
  auto exit = orDie(child.wait(milliseconds(180000)), "waiting for the rss child");
  if (!exit.success()) {
    std::fprintf(stderr, "rss child '%s' ended with %s\n", kind.c_str(), exit.toString().c_str());
    return result;
  }
  std::ifstream in(out);
  int seen = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string tag, when;
    words >> tag;
    if (tag == "mem") {
      words >> when;
      ProcMemory& m = when == "before" ? result.before : result.after;
      words >> m.rssKb >> m.anonKb >> m.threads >> m.fds;
      ++seen;
    } else if (tag == "runtime") {
      long pid = 0, kb = 0, anonKb = 0;
      words >> pid >> kb >> anonKb;
      result.runtimeKb.push_back(kb);
      result.runtimeAnonKb.push_back(anonKb);
    }
  }
  result.ok = seen == 2;
  return result;
}

// --- Reporting -------------------------------------------------------------------------------

// `text` padded with spaces to `width` columns, counting UTF-8 code points (printf's %-Ns
// counts bytes, so a row with an arrow would come out short).
std::string padded(std::string_view text, size_t width) {
  size_t columns = 0;
  for (char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++columns;
  }
  std::string out(text);
  if (columns < width) out.append(width - columns, ' ');
  return out;
}

void printLatencyRow(std::string_view name, const bench::LatencySummary& s) {
  std::printf("  %s %5zu %9.3f %9.3f %9.3f %9.3f\n", padded(name, 44).c_str(), s.n, s.p50Ms,
              s.p99Ms, s.maxMs, s.meanMs);
}

std::string jsonLatency(const bench::LatencySummary& s) {
  return fmt::format(R"({{"n":{},"p50":{:.4f},"p99":{:.4f},"max":{:.4f},"mean":{:.4f}}})", s.n,
                     s.p50Ms, s.p99Ms, s.maxMs, s.meanMs);
}

double safeRatio(double a, double b) {
  return b > 0 ? a / b : 0;
}

Config parse(int argc, char** argv) {
  Config c;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read before any thread starts
  const char* env = std::getenv("SHOAL_BENCH_QUICK");
  bool quick = env != nullptr && *env != '\0' && std::strcmp(env, "0") != 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
  }
  if (quick) {
    c.quick = true;
    c.samples = 60;
    c.warmup = 10;
    c.settle = milliseconds(1000);
  }
  for (int i = 1; i + 1 < argc; ++i) {
    std::string_view flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--samples") c.samples = std::max(1, std::atoi(value));
    if (flag == "--warmup") c.warmup = std::max(0, std::atoi(value));
    if (flag == "--seats") c.seats = std::max(1, std::atoi(value));
    if (flag == "--text-bytes") c.textBytes = std::max(16, std::atoi(value));
    if (flag == "--settle-ms") c.settle = milliseconds(std::max(0, std::atoi(value)));
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  if (auto kind = flagValue(argc, argv, "--rss-child")) {
    auto url = flagValue(argc, argv, "--url");
    auto dir = flagValue(argc, argv, "--dir");
    auto count = flagValue(argc, argv, "--count");
    auto settle = flagValue(argc, argv, "--settle-ms");
    if ((*kind != "seats" && *kind != "endpoints") || !url || !dir || !count || !settle) {
      std::fprintf(stderr, "seat_bench --rss-child: bad kind or missing flag\n");
      return 2;
    }
    return runRssChild(*kind, *url, *dir, std::atoi(count->c_str()),
                       milliseconds(std::atoi(settle->c_str())));
  }

  Config config = parse(argc, argv);
  log::initLogging(log::Level::kWarn);  // the seat's info lines would interleave the tables
  auto mesh = bench::BenchMesh::start(std::string(kSpace));
  auto dir = orDie(testing::TempDir::create("seat-bench"), "temp dir");
  const std::string dmStream = orDie(wire::streamName(wire::Stream::kDm, kSpace), "stream name");
  FileSystem& fs = FileSystem::posix();

  // The endpoint side: Bob receives, Alice sends (to Bob and to the seat).
  Arrival bobArrival;
  mesh::EndpointOptions bobOptions;
  bobOptions.servers = {mesh->url()};
  bobOptions.space = std::string(kSpace);
  bobOptions.principal = wire::Principal{"local", "bob"};
  bobOptions.onDelivery = [&bobArrival](const mesh::Delivery& d) {
    int64_t at = nowUs();
    const auto* text =
        d.message.parts.empty() ? nullptr : std::get_if<wire::TextPart>(&d.message.parts.front());
    bobArrival.record(text ? indexIn(text->text) : -1, at);
    return mesh::HandlerVerdict::kAccepted;
  };
  auto bob = orDie(mesh::Endpoint::open(std::move(bobOptions)), "opening bob");
  mesh::EndpointOptions aliceOptions;
  aliceOptions.servers = {mesh->url()};
  aliceOptions.space = std::string(kSpace);
  aliceOptions.principal = wire::Principal{"local", "alice"};
  aliceOptions.receiveDirect = false;
  auto alice = orDie(mesh::Endpoint::open(std::move(aliceOptions)), "opening alice");

  // The raw side: a durable provisioned like a seat's, a real envelope of the same size.
  const wire::Principal rawFrom{"local", "rawalice"};
  const wire::Principal rawTo{"local", "rawbob"};
  const std::string rawUid = orDie(newLifecycleUid(), "lifecycle uid");
  auto provisioned =
      orDie(planes::provisionPrincipal(mesh->js(), kSpace, rawTo, rawUid, {}), "raw durable");
  mesh::Outbound outbound;
  outbound.kind = wire::DeliveryKind::kDm;
  outbound.target = rawTo.dotForm();
  outbound.text = textFor(0, config.textBytes);
  auto envelope =
      orDie(mesh::buildMessage(Clock::real(), kSpace,
                               mesh::Sender{rawFrom, rawFrom.actor, std::nullopt}, outbound),
            "raw envelope");
  RawOptions rawOptions;
  rawOptions.url = mesh->url();
  rawOptions.subject = orDie(mesh::outboundSubject(kSpace, rawFrom, outbound), "raw subject");
  rawOptions.filter = orDie(wire::dmFilter(kSpace, rawTo), "raw filter");
  rawOptions.stream = dmStream;
  rawOptions.durable = provisioned.dmDurable;
  rawOptions.payloadTemplate = orDie(wire::encodeMessage(envelope), "raw payload");
  const size_t envelopeBytes = rawOptions.payloadTemplate.size();
  auto raw = std::make_unique<RawDm>(std::move(rawOptions));

  // The seat: runtime `exec`, program stdin_probe writing to our FIFO.
  const std::string seatCwd = dir.join("probe-seat");
  const std::string floorDir = dir.join("fsync-floor");
  orDie(fs.createDirs(floorDir).status(), "floor dir");
  ProbeWatch probe(dir.join("probe.fifo"), seatCwd);
  daemon::SeatProfile profile;
  profile.name = "Probe";
  profile.principal = wire::Principal{"local", "probe"};
  profile.runtime = daemon::RuntimeKind::kExec;
  profile.command = {SHOAL_STDIN_PROBE, dir.join("probe.fifo")};
  profile.cwd = seatCwd;
  profile.lifecycleUid = orDie(newLifecycleUid(), "lifecycle uid");
  daemon::SeatOptions seatOptions;
  seatOptions.url = mesh->url();
  seatOptions.space = std::string(kSpace);
  auto seat = orDie(daemon::Seat::open(profile, seatOptions), "opening the probe seat");
  if (!seat->snapshot().processRunning) {
    orDie(unavailable("seat", seat->snapshot().note), "the probe seat's runtime");
  }
  probe.watchCommits();
  const std::string seatId = profile.principal.dotForm();
  const std::string seatDurable = fmt::format("dm_{}-{}-{}", profile.principal.owner,
                                              profile.principal.actor, profile.lifecycleUid);
  const std::string statePath =
      daemon::seatFilesDir(seatCwd) + "/" + std::string(journal::kStateFileName);

  std::printf("seat_bench: %s run, %u CPUs, nats-server pid %d, space '%.*s'\n",
              config.quick ? "quick" : "full", std::thread::hardware_concurrency(),
              mesh->serverPid(), static_cast<int>(kSpace.size()), kSpace.data());
  std::printf(
      "  %d interleaved rounds (raw, endpoint, seat, fsync) after %d warm-up rounds; text %d "
      "bytes → envelope %zu bytes\n"
      "  seat: exec runtime %s, cwd %s\n\n",
      config.samples, config.warmup, config.textBytes, envelopeBytes, SHOAL_STDIN_PROBE,
      seatCwd.c_str());
  std::fflush(stdout);

  std::vector<int64_t> rawUs, endpointUs, seatUs, sendCallUs, floorUs;
  std::vector<int64_t> toAdmitUs, admitToHandoffUs, handoffToByteUs, byteToSurfacedUs, toSurfacedUs;
  std::vector<RoundTimes> sampled;  // in order, for the drift table
  int rawLost = 0, endpointLost = 0, stalls = 0;
  size_t extraCommits = 0;
  size_t stateBytesFirst = 0, stateBytesLast = 0;
  uint64_t seatDone = seat->snapshot().counters.receipts;
  const int rounds = config.warmup + config.samples;
  for (int r = 0; r < rounds; ++r) {
    const bool sample = r >= config.warmup;
    const std::string text = textFor(r, config.textBytes);

    raw->arrival().expect(r);
    int64_t t0 = nowUs();
    orDie(raw->send(r), "raw send");
    int64_t at = raw->arrival().waitUntil(t0 + kSampleTimeoutUs);
    if (at == 0) ++rawLost;
    if (sample && at != 0) rawUs.push_back(at - t0);

    bobArrival.expect(r);
    t0 = nowUs();
    orDie(alice->sendDirect(bob->id(), text).status(), "endpoint send");
    at = bobArrival.waitUntil(t0 + kSampleTimeoutUs);
    if (at == 0) ++endpointLost;
    if (sample && at != 0) endpointUs.push_back(at - t0);
    RoundTimes round;
    round.endpointUs = at != 0 ? at - t0 : -1;

    // The seat: the probe's byte and the three commits, then the receipt (pacing only).
    extraCommits += probe.drainCommits();
    SeatObservation seen;
    t0 = nowUs();
    orDie(alice->sendDirect(seatId, text).status(), "seat send");
    int64_t t1 = nowUs();
    if (!probe.wait(seen, kCommitsPerDm, t0 + kSampleTimeoutUs)) {
      // A stall, not necessarily a loss: say what the seat is doing, then give it a minute.
      const daemon::SeatSnapshot stuck = seat->snapshot();
      std::printf(
          "  ! round %d stalled: after %.0f s probe byte %s, %zu of %zu commits; seat %s, "
          "queued %zu, inflight %zu, surfaced %llu, receipts %llu, note '%s'\n",
          r, kSampleTimeoutUs / 1e6, seen.byteAt != 0 ? "seen" : "missing", seen.commits.size(),
          kCommitsPerDm, stuck.state.c_str(), stuck.queued, stuck.inflight,
          static_cast<unsigned long long>(stuck.counters.surfaced),
          static_cast<unsigned long long>(stuck.counters.receipts), stuck.note.c_str());
      if (!probe.wait(seen, kCommitsPerDm, t0 + kStallLimitUs)) {
        orDie(
            deadlineExceeded("seat-round",
                             fmt::format("round {}: probe byte {}, {} of {} commits after {} s", r,
                                         seen.byteAt != 0 ? "seen" : "missing", seen.commits.size(),
                                         kCommitsPerDm, kStallLimitUs / 1'000'000)),
            "the seat round");
      }
      ++stalls;
      std::printf(
          "  ! round %d completed: byte at %.1f ms, commits at %.1f / %.1f / %.1f ms after the "
          "send\n",
          r, msSince(seen.byteAt, t0), msSince(seen.commits[0], t0), msSince(seen.commits[1], t0),
          msSince(seen.commits[2], t0));
      std::fflush(stdout);
    }
    ++seatDone;
    const int64_t paceBy = nowUs() + kSampleTimeoutUs;
    while (seat->snapshot().counters.receipts < seatDone && nowUs() < paceBy) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    round.seatUs = seen.byteAt - t0;
    if (sample) {
      seatUs.push_back(seen.byteAt - t0);
      sendCallUs.push_back(t1 - t0);
      toAdmitUs.push_back(seen.commits[0] - t0);
      admitToHandoffUs.push_back(seen.commits[1] - seen.commits[0]);
      handoffToByteUs.push_back(seen.byteAt - seen.commits[1]);
      byteToSurfacedUs.push_back(seen.commits[2] - seen.byteAt);
      toSurfacedUs.push_back(seen.commits[2] - t0);
    }

    // The fsync floor, at the state file's current size.
    const size_t stateBytes = fileSize(statePath);
    if (r == config.warmup) stateBytesFirst = stateBytes;
    stateBytesLast = stateBytes;
    const std::string payload(stateBytes, 'f');
    t0 = nowUs();
    orDie(writeFileAtomically(fs, floorDir + "/state.json", payload), "fsync floor");
    round.floorUs = nowUs() - t0;
    round.stateBytes = stateBytes;
    if (sample) {
      floorUs.push_back(round.floorUs);
      if (round.endpointUs >= 0) sampled.push_back(round);
    }
  }
  std::this_thread::sleep_for(milliseconds(300));  // the last acks and receipts land
  extraCommits += probe.drainCommits();

  const auto rawS = bench::summarize(rawUs);
  const auto endpointS = bench::summarize(endpointUs);
  const auto seatS = bench::summarize(seatUs);
  const auto floorS = bench::summarize(floorUs);
  const auto surfacedS = bench::summarize(toSurfacedUs);

  std::printf("DM end to end, one in flight (%d rounds)\n", config.samples);
  std::printf("  %-44s %5s %9s %9s %9s %9s\n", "", "n", "p50 ms", "p99 ms", "max ms", "mean ms");
  printLatencyRow("raw JetStream (publish → fetch; baseline)", rawS);
  printLatencyRow("endpoint (sendDirect → handler)", endpointS);
  printLatencyRow("seat (sendDirect → bytes at runtime stdin)", seatS);
  printLatencyRow("fsync floor (one journal commit chain)", floorS);
  const auto admitS = bench::summarize(toAdmitUs);
  const auto handoffS = bench::summarize(admitToHandoffUs);
  const auto bytesS = bench::summarize(handoffToByteUs);
  const auto surfacedStageS = bench::summarize(byteToSurfacedUs);
  std::printf("  seat, where the time goes (commit times are at each chain's rename)\n");
  printLatencyRow("send → admission (queued) committed", admitS);
  printLatencyRow("admission → handoff (inflight) committed", handoffS);
  printLatencyRow("handoff committed → bytes at the probe", bytesS);
  printLatencyRow("bytes at the probe → surfaced committed", surfacedStageS);
  printLatencyRow("send → surfaced committed (not in e2e)", surfacedS);
  printLatencyRow("sendDirect call alone", bench::summarize(sendCallUs));
  std::printf("  state file %zu → %zu bytes over the run; fsync floor written at that size\n",
              stateBytesFirst, stateBytesLast);

  const double chains = safeRatio(seatS.p50Ms - rawS.p50Ms, floorS.p50Ms);
  const double aboveEndpoint = safeRatio(seatS.p50Ms - endpointS.p50Ms, floorS.p50Ms);
  std::printf("\nRatios of the seat's p50\n");
  std::printf("  seat / raw                        %s   (p99: %s)\n",
              bench::ratio(seatS.p50Ms, rawS.p50Ms).c_str(),
              bench::ratio(seatS.p99Ms, rawS.p99Ms).c_str());
  std::printf("  seat / fsync floor                %s\n",
              bench::ratio(seatS.p50Ms, floorS.p50Ms).c_str());
  std::printf("  (seat − raw) / fsync floor        %.2f   journal chains per DM\n", chains);
  std::printf("  (seat − endpoint) / fsync floor   %.2f   the seat above its endpoint\n",
              aboveEndpoint);
  std::printf("  endpoint / raw                    %s\n",
              bench::ratio(endpointS.p50Ms, rawS.p50Ms).c_str());
  const double residual = residualMs(seatS.p50Ms, endpointS.p50Ms, floorS.p50Ms);
  std::printf(
      "  seat − endpoint − 2 × fsync floor %.3f ms   the seat's work besides its two chains\n",
      residual);

  // Each commit rewrites the whole state file, which grows by a tombstone per DM (up to the
  // journal's cap): the first and last quarter of the rounds side by side.
  std::printf("\nDrift over the run (p50 ms; the state file grows by one tombstone per DM)\n");
  std::printf("  %-16s %14s %10s %10s %10s %10s\n", "rounds", "state bytes", "endpoint", "seat",
              "fsync", "residual");
  const size_t quarter = std::max<size_t>(1, sampled.size() / 4);
  for (size_t from : {size_t{0}, sampled.size() - std::min(quarter, sampled.size())}) {
    std::vector<int64_t> e, st, f;
    for (size_t i = from; i < std::min(sampled.size(), from + quarter); ++i) {
      e.push_back(sampled[i].endpointUs);
      st.push_back(sampled[i].seatUs);
      f.push_back(sampled[i].floorUs);
    }
    if (e.empty()) continue;
    const size_t last = std::min(sampled.size(), from + quarter) - 1;
    std::printf("  %-16s %s %10.3f %10.3f %10.3f %10.3f\n",
                fmt::format("{}-{}", from + 1, last + 1).c_str(),
                padded(fmt::format("{}-{}", sampled[from].stateBytes, sampled[last].stateBytes), 14)
                    .c_str(),
                bench::summarize(e).p50Ms, bench::summarize(st).p50Ms, bench::summarize(f).p50Ms,
                residualMs(bench::summarize(st).p50Ms, bench::summarize(e).p50Ms,
                           bench::summarize(f).p50Ms));
  }

  std::printf("\nAfter the run (nothing should be pending, unacked, stray or extra)\n");
  auto pendingWords = [&](const std::string& durable) {
    auto info = mesh->js().consumerInfo(dmStream, durable);
    if (!info.isOk()) return "consumer info failed: " + info.status().toString();
    return fmt::format("pending {}, ack-pending {}, redelivered {}", info->numPending,
                       info->numAckPending, info->numRedelivered);
  };
  std::printf("  seat durable   %s\n", pendingWords(seatDurable).c_str());
  std::printf("  bob durable    %s\n", pendingWords(bob->dmDurable()).c_str());
  std::printf("  raw durable    %s\n", pendingWords(provisioned.dmDurable).c_str());
  const daemon::SeatSnapshot snap = seat->snapshot();
  std::printf(
      "  seat: admitted %llu, surfaced %llu, failed %llu, receipts %llu, launches %llu; probe "
      "bytes %lld for %d DMs; commits beyond 3 per DM: %zu\n",
      static_cast<unsigned long long>(snap.counters.admitted),
      static_cast<unsigned long long>(snap.counters.surfaced),
      static_cast<unsigned long long>(snap.counters.failed),
      static_cast<unsigned long long>(snap.counters.receipts),
      static_cast<unsigned long long>(snap.counters.launches),
      static_cast<long long>(probe.bytes()), rounds, extraCommits);
  std::printf(
      "  lost (no receive within 10 s): raw %d, endpoint %d; strays: raw %d, bob %d; seat rounds "
      "stalled past 10 s: %d\n",
      rawLost, endpointLost, raw->arrival().strays(), bobArrival.strays(), stalls);
  std::fflush(stdout);

  seat->stop();
  seat.reset();
  raw.reset();
  (void)alice->close();
  (void)bob->close();

  // Memory, each kind in a fresh child process.
  std::printf("\nRSS with %d idle seats (each kind in its own child process, after %lld ms)\n",
              config.seats, static_cast<long long>(config.settle.count()));
  std::fflush(stdout);
  RssResult endpoints = measureRss("endpoints", config, mesh->url(), dir);
  RssResult seats = measureRss("seats", config, mesh->url(), dir);
  std::printf("  %-30s %10s %10s %12s %12s %9s %7s\n", "", "VmRSS kB", "+kB", "+kB per one",
              "anon per one", "threads", "fds");
  auto rssRow = [](const char* name, const RssResult& r) {
    if (!r.ok) {
      std::printf("  %-30s (no result)\n", name);
      return;
    }
    std::printf("  %-30s %10ld %10ld %12.0f %12.0f %+9.1f %+7.1f\n", name, r.after.rssKb,
                r.after.rssKb - r.before.rssKb, r.perItemKb(), r.anonPerItemKb(),
                r.threadsPerItem(), r.fdsPerItem());
  };
  rssRow("endpoints (baseline)", endpoints);
  rssRow("idle exec seats", seats);
  const double seatAbove = seats.perItemKb() - endpoints.perItemKb();
  auto mean = [](const std::vector<long>& v) {
    double sum = 0;
    for (long x : v) {
      sum += static_cast<double>(x);
    }
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  const double runtimeMean = mean(seats.runtimeKb);
  const double runtimeAnonMean = mean(seats.runtimeAnonKb);
  std::printf("  a seat above its endpoint       %+.0f kB per seat (%s of an endpoint)\n",
              seatAbove, bench::ratio(seats.perItemKb(), endpoints.perItemKb()).c_str());
  std::printf(
      "  runtime children (/bin/cat)     %zu processes, each %.0f kB VmRSS (%.0f kB of it "
      "anonymous)\n",
      seats.runtimeKb.size(), runtimeMean, runtimeAnonMean);

  // One machine-readable line: milliseconds, kilobytes.
  std::string json =
      fmt::format(R"({{"bench":"seat_bench","run":"{}","cpus":{},"samples":{},"stalls":{},)"
                  R"("envelope_bytes":{},"state_file_bytes":[{},{}],)",
                  config.quick ? "quick" : "full", std::thread::hardware_concurrency(),
                  config.samples, stalls, envelopeBytes, stateBytesFirst, stateBytesLast);
  json += fmt::format(
      R"("ms":{{"raw":{},"endpoint":{},"seat":{},"fsync_floor":{},"seat_to_surfaced":{}}},)",
      jsonLatency(rawS), jsonLatency(endpointS), jsonLatency(seatS), jsonLatency(floorS),
      jsonLatency(surfacedS));
  json += fmt::format(R"("stages_p50_ms":{{"to_admission":{:.4f},"admission_to_handoff":{:.4f},)"
                      R"("handoff_to_bytes":{:.4f},"bytes_to_surfaced":{:.4f}}},)",
                      admitS.p50Ms, handoffS.p50Ms, bytesS.p50Ms, surfacedStageS.p50Ms);
  json += fmt::format(R"("ratios":{{"seat_over_raw":{:.3f},"seat_over_fsync":{:.3f},)"
                      R"("journal_chains_per_dm":{:.3f},"seat_above_endpoint_in_fsyncs":{:.3f}}},)"
                      R"("residual_ms":{:.4f},)",
                      safeRatio(seatS.p50Ms, rawS.p50Ms), safeRatio(seatS.p50Ms, floorS.p50Ms),
                      chains, aboveEndpoint, residual);
  json +=
      fmt::format(R"("rss_kb":{{"seats":{},"endpoint_each":{:.1f},"seat_each":{:.1f},)"
                  R"("seat_above_endpoint":{:.1f},"runtime_child_each":{:.1f},)"
                  R"("runtime_child_anon_each":{:.1f}}},)"
                  R"("threads_each":{{"endpoint":{:.1f},"seat":{:.1f}}}}})",
                  config.seats, endpoints.perItemKb(), seats.perItemKb(), seatAbove, runtimeMean,
                  runtimeAnonMean, endpoints.threadsPerItem(), seats.threadsPerItem());
  std::printf("%s\n", json.c_str());
  return 0;
}
