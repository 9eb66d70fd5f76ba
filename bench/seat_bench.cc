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
//             stdin, and the bench thread reads it. Every journal commit on the way is a full
//             fsync chain (write temp, fsync, close, rename, fsync dir); a DM takes one of two
//             paths:
//               direct lane  the runtime accepting and idle (nothing in hand, nothing queued):
//                            admitted straight to `inflight(dispatching)` in its admission
//                            transaction (before the broker ack) and written with no second
//                            commit — one chain before the write;
//               queued       the seat busy: admitted `queued`, then the handoff
//                            (`inflight(dispatching)`) before the first byte — two chains.
//             After the write both commit one more: `surfaced`, once the program read the block
//             (runtime::execTraits: surfaced on the program's read; raw stdin has no read-back,
//             so the write itself is not recorded — the dispatching owner already says it was
//             handed). It is not in the end-to-end sample and is timed beside it. So an
//             idle-seat DM costs 2 commits, a queued one 3. Every commit renames the state file
//             into place, so an inotify watch on the seat's `.shoal/` timestamps each chain at its
//             rename (before its dir fsync). A round waits for the byte and its commits, and the
//             next starts once the seat published the receipt; the round is then classified by its
//             renames and by the seat's lane counters (SeatCounters::direct, directRequeued): 2
//             renames and a direct handoff is direct, 3 and none queued, anything else anomalous
//             (reported: a requeued lane claim, a missing commit, or an extra one — the seat's
//             history and receipt-outbox sections commit at most about once a second). A round that
//             takes more than 10 s is reported as a stall and given up to a minute.
//   fsync     writeFileAtomically (base/file_system.h: the journal's chain) of a file the size
//             the seat's state file has at that round, in a sibling directory of the seat's
//             cwd (same file system): one journal commit's floor.
// The seat's stages: send → admission committed (inflight when direct, queued otherwise); for
// queued rounds, admission → handoff committed; the last commit before the write → bytes at the
// probe; bytes → surfaced committed; and how many rounds
// went each way. Ratios of the seat's p50: to raw, to fsync, (seat − raw) / fsync ("journal
// chains per DM before the write"), (seat − endpoint) / fsync (the seat's cost above its
// endpoint, in fsync floors); the residual seat − endpoint − N × fsync, N the chains before the
// write in the typical round (the p50 over the classified rounds: 1 direct, 2 queued) — its
// work besides them; and the issue's goal, seat / (raw + fsync) ≤ 1.3×. Every commit rewrites
// the whole state file, which grows by one tombstone per DM up to the journal's cap (512), so
// the first and last quarter of the rounds are also shown side by side.
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
// Journal commits (state-file renames) per DM. Before the write: the direct lane (an idle
// runtime, nothing queued) admits straight to inflight(dispatching), one commit; the queued
// path commits queued, then the handoff (inflight(dispatching)), two. After it one: surfaced
// (on the write, or — exec, which counts unread bytes — once the program read the block).
constexpr size_t kDirectBeforeWrite = 1;
constexpr size_t kQueuedBeforeWrite = 2;
constexpr size_t kAfterWrite = 1;
constexpr size_t kDirectCommits = kDirectBeforeWrite + kAfterWrite;
constexpr size_t kQueuedCommits = kQueuedBeforeWrite + kAfterWrite;
// While a round waits with no event, the seat's counters are read this often.
constexpr int64_t kCounterTickUs = 50'000;

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
  // Renames that arrived since the last wait, appended to `out` (timestamped now).
  void takeCommits(std::vector<int64_t>& out) { readCommits(nowUs(), out); }
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

// The seat's time besides its endpoint and its `chains` commit chains before the write, from
// p50s: seat − endpoint − chains × fsync floor (the gate hop, rendering, encoding the journal
// state, the pipe, the probe).
double residualMs(double seatMs, double endpointMs, double floorMs, int chains) {
  return seatMs - endpointMs - chains * floorMs;
}

double msSince(int64_t us, int64_t sinceUs) {
  return static_cast<double>(us - sinceUs) / 1e3;
}

size_t fileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
}

// --- One seat round --------------------------------------------------------------------------

enum class SeatPath { kDirect, kQueued, kAnomalous };

// One DM to the seat: when it was sent, what the probe watch saw, and the seat's lane counters
// over the round.
struct SeatRound {
  int index = 0;
  int64_t sentAt = 0;
  int64_t callUs = 0;  // the sendDirect call alone
  SeatObservation seen;
  uint64_t direct = 0;    // SeatCounters::direct delta: handed by the direct lane
  uint64_t requeued = 0;  // SeatCounters::directRequeued delta: a lane claim put back
  bool stalled = false;
  SeatPath path = SeatPath::kAnomalous;
  // Commits before the write: direct, the admission as inflight; queued, queued and the handoff.
  size_t chainsBefore() const {
    return path == SeatPath::kDirect ? kDirectBeforeWrite : kQueuedBeforeWrite;
  }
};

// The round's rename times, in ms after the send ("1.2 / 2.5").
std::string commitTimes(const SeatRound& round) {
  std::string out;
  for (int64_t at : round.seen.commits) {
    out += fmt::format("{}{:.1f}", out.empty() ? "" : " / ", msSince(at, round.sentAt));
  }
  return out.empty() ? "none" : out;
}

void reportStall(const SeatRound& round, const daemon::SeatSnapshot& stuck) {
  std::printf(
      "  ! round %d stalled: after %.0f s probe byte %s, %zu commits; seat %s, queued %zu, "
      "inflight %zu, surfaced %llu, receipts %llu, direct %llu, note '%s'\n",
      round.index, kSampleTimeoutUs / 1e6, round.seen.byteAt != 0 ? "seen" : "missing",
      round.seen.commits.size(), stuck.state.c_str(), stuck.queued, stuck.inflight,
      static_cast<unsigned long long>(stuck.counters.surfaced),
      static_cast<unsigned long long>(stuck.counters.receipts),
      static_cast<unsigned long long>(stuck.counters.direct), stuck.note.c_str());
  std::fflush(stdout);
}

// Waits for the probe's byte and `commits` renames in `round`. Each kCounterTickUs without
// them it reads the seat's counters: a round the seat has surfaced (`surfacedBy`) with its byte
// seen but fewer renames ends the wait (false). Past kSampleTimeoutUs it reports a stall once;
// past kStallLimitUs it gives up the run.
bool awaitSeat(ProbeWatch& probe, daemon::Seat& seat, SeatRound& round, size_t commits,
               uint64_t surfacedBy) {
  for (;;) {
    if (probe.wait(round.seen, commits, nowUs() + kCounterTickUs)) return true;
    const daemon::SeatSnapshot now = seat.snapshot();
    if (round.seen.byteAt != 0 && now.counters.surfaced >= surfacedBy) {
      probe.takeCommits(round.seen.commits);  // a commit renames before it counts
      return round.seen.commits.size() >= commits;
    }
    const int64_t waited = nowUs() - round.sentAt;
    if (waited > kStallLimitUs) {
      orDie(deadlineExceeded(
                "seat-round",
                fmt::format("round {}: probe byte {}, {} of {} commits after {} s", round.index,
                            round.seen.byteAt != 0 ? "seen" : "missing", round.seen.commits.size(),
                            commits, kStallLimitUs / 1'000'000)),
            "the seat round");
    }
    if (waited > kSampleTimeoutUs && !round.stalled) {
      round.stalled = true;  // a stall, not necessarily a loss: give it a minute
      reportStall(round, now);
    }
  }
}

// One DM to the seat: sends it, waits for the probe's byte and the round's commits, paces on
// the receipt, then classifies the round by its renames and the seat's lane counters:
// kDirectCommits renames and a direct handoff is the direct lane, kQueuedCommits and none the
// queued path; anything else is anomalous (a requeued claim, a missing or an extra commit — the
// seat's own bookkeeping sections, history and receipt outbox, commit at most every second or
// so and make the round they land in one).
SeatRound runSeatRound(ProbeWatch& probe, daemon::Seat& seat, mesh::Endpoint& alice,
                       const std::string& seatId, const std::string& text, int index) {
  SeatRound round;
  round.index = index;
  const daemon::SeatCounters before = seat.snapshot().counters;
  const uint64_t surfacedBy = before.surfaced + 1;
  round.sentAt = nowUs();
  orDie(alice.sendDirect(seatId, text).status(), "seat send");
  round.callUs = nowUs() - round.sentAt;
  // First the byte and a direct round's commits (a queued round has as many by then or soon
  // after); the lane counters are final once the byte is out: the gate counts a direct handoff
  // before its write, and a claim it puts back before the handoff that follows.
  if (awaitSeat(probe, seat, round, kDirectCommits, surfacedBy)) {
    const daemon::SeatCounters mid = seat.snapshot().counters;
    round.direct = mid.direct - before.direct;
    round.requeued = mid.directRequeued - before.directRequeued;
    // A queued DM commits once more (the handoff); a claim put back once more again.
    const size_t expected = (round.direct > 0 ? kDirectCommits : kQueuedCommits) + round.requeued;
    (void)awaitSeat(probe, seat, round, expected, surfacedBy);
  }
  // The next round starts once the seat surfaced this one and published its receipt.
  const int64_t paceBy = nowUs() + kSampleTimeoutUs;
  for (;;) {
    const daemon::SeatCounters c = seat.snapshot().counters;
    round.direct = c.direct - before.direct;
    round.requeued = c.directRequeued - before.directRequeued;
    if ((c.surfaced >= surfacedBy && c.receipts > before.receipts) || nowUs() >= paceBy) break;
    std::this_thread::sleep_for(milliseconds(1));
  }
  probe.takeCommits(round.seen.commits);  // a late rename makes the round anomalous
  const size_t n = round.seen.commits.size();
  if (round.requeued == 0 && round.direct == 1 && n == kDirectCommits) {
    round.path = SeatPath::kDirect;
  } else if (round.requeued == 0 && round.direct == 0 && n == kQueuedCommits) {
    round.path = SeatPath::kQueued;
  }
  if (round.stalled) {
    std::printf("  ! round %d completed: byte at %.1f ms, commits at %s ms after the send\n", index,
                msSince(round.seen.byteAt, round.sentAt), commitTimes(round).c_str());
    std::fflush(stdout);
  }
  return round;
}

// The sampled seat rounds, by path and by stage (commit times at each chain's rename).
struct SeatSamples {
  std::vector<int64_t> seatUs, directUs, queuedUs, callUs;
  std::vector<int64_t> toAdmitUs;         // send → admission committed (either path)
  std::vector<int64_t> admitToHandoffUs;  // queued rounds: admission → handoff committed
  std::vector<int64_t> lastToByteUs;      // the last commit before the write → the byte
  std::vector<int64_t> byteToSurfacedUs, toSurfacedUs;
  std::vector<size_t> chainsBefore;  // per classified round: 1 direct, 2 queued
  int direct = 0, queued = 0, anomalous = 0;

  void add(const SeatRound& r) {
    const SeatObservation& s = r.seen;
    seatUs.push_back(s.byteAt - r.sentAt);
    callUs.push_back(r.callUs);
    if (r.path == SeatPath::kAnomalous) {
      ++anomalous;
      return;
    }
    const size_t before = r.chainsBefore();
    if (r.path == SeatPath::kDirect) {
      ++direct;
      directUs.push_back(s.byteAt - r.sentAt);
    } else {
      ++queued;
      queuedUs.push_back(s.byteAt - r.sentAt);
      admitToHandoffUs.push_back(s.commits[1] - s.commits[0]);
    }
    toAdmitUs.push_back(s.commits[0] - r.sentAt);
    lastToByteUs.push_back(s.byteAt - s.commits[before - 1]);
    byteToSurfacedUs.push_back(s.commits.back() - s.byteAt);
    toSurfacedUs.push_back(s.commits.back() - r.sentAt);
    chainsBefore.push_back(before);
  }
  // The p50 (nearest rank) of the chains before the write over the classified rounds; 1 when
  // there are none.
  int typicalChains() const {
    if (chainsBefore.empty()) return 1;
    std::vector<size_t> sorted = chainsBefore;
    std::sort(sorted.begin(), sorted.end());
    return static_cast<int>(sorted[(sorted.size() + 1) / 2 - 1]);
  }
};

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

// The label column of the latency tables: the longest stage name.
constexpr size_t kLabelWidth = 67;

void printLatencyRow(std::string_view name, const bench::LatencySummary& s) {
  if (s.n == 0) {  // e.g. no round took that path
    std::printf("  %s %5zu %9s %9s %9s %9s\n", padded(name, kLabelWidth).c_str(), s.n, "—", "—",
                "—", "—");
    return;
  }
  std::printf("  %s %5zu %9.3f %9.3f %9.3f %9.3f\n", padded(name, kLabelWidth).c_str(), s.n,
              s.p50Ms, s.p99Ms, s.maxMs, s.meanMs);
}

std::string jsonLatency(const bench::LatencySummary& s) {
  return fmt::format(R"({{"n":{},"p50":{:.4f},"p99":{:.4f},"max":{:.4f},"mean":{:.4f}}})", s.n,
                     s.p50Ms, s.p99Ms, s.maxMs, s.meanMs);
}

double safeRatio(double a, double b) {
  return b > 0 ? a / b : 0;
}

// The seat's rows under the end-to-end table: each path's end to end, then the stages.
void printSeatStages(const SeatSamples& s, int warmup, const int (&warmPaths)[3]) {
  std::printf(
      "  seat, by path and where the time goes (commit times are at each chain's rename)\n");
  printLatencyRow(fmt::format("seat, direct lane ({} commits per DM)", kDirectCommits),
                  bench::summarize(s.directUs));
  printLatencyRow(fmt::format("seat, queued ({} commits per DM)", kQueuedCommits),
                  bench::summarize(s.queuedUs));
  printLatencyRow("send → admission committed (inflight when direct, queued otherwise)",
                  bench::summarize(s.toAdmitUs));
  printLatencyRow("admission → handoff (inflight) committed (queued rounds)",
                  bench::summarize(s.admitToHandoffUs));
  printLatencyRow("last commit before the write → bytes at the probe",
                  bench::summarize(s.lastToByteUs));
  printLatencyRow("bytes at the probe → surfaced committed", bench::summarize(s.byteToSurfacedUs));
  printLatencyRow("send → surfaced committed (not in e2e)", bench::summarize(s.toSurfacedUs));
  printLatencyRow("sendDirect call alone", bench::summarize(s.callUs));
  std::printf(
      "  paths: direct lane %d, queued %d, anomalous (neither %zu commits direct nor %zu queued) "
      "%d of %zu sampled rounds; warm-up (%d): direct %d, queued %d, anomalous %d\n",
      s.direct, s.queued, kDirectCommits, kQueuedCommits, s.anomalous, s.seatUs.size(), warmup,
      warmPaths[0], warmPaths[1], warmPaths[2]);
}

// The ratios of the seat's p50.
struct SeatRatios {
  double overRaw = 0, overRawP99 = 0, overFsync = 0, chains = 0, aboveEndpoint = 0;
  double endpointOverRaw = 0, residual = 0, overRawPlusChain = 0;
  int residualChains = 1;  // chains before the write in the typical round
};

SeatRatios seatRatios(const bench::LatencySummary& raw, const bench::LatencySummary& endpoint,
                      const bench::LatencySummary& seat, const bench::LatencySummary& floor,
                      int chainsBefore) {
  SeatRatios r;
  r.overRaw = safeRatio(seat.p50Ms, raw.p50Ms);
  r.overRawP99 = safeRatio(seat.p99Ms, raw.p99Ms);
  r.overFsync = safeRatio(seat.p50Ms, floor.p50Ms);
  r.chains = safeRatio(seat.p50Ms - raw.p50Ms, floor.p50Ms);
  r.aboveEndpoint = safeRatio(seat.p50Ms - endpoint.p50Ms, floor.p50Ms);
  r.endpointOverRaw = safeRatio(endpoint.p50Ms, raw.p50Ms);
  r.residualChains = chainsBefore;
  r.residual = residualMs(seat.p50Ms, endpoint.p50Ms, floor.p50Ms, chainsBefore);
  r.overRawPlusChain = safeRatio(seat.p50Ms, raw.p50Ms + floor.p50Ms);
  return r;
}

void printRatios(const SeatRatios& r) {
  std::printf("\nRatios of the seat's p50\n");
  std::printf("  seat / raw                          %.2f×   (p99: %.2f×)\n", r.overRaw,
              r.overRawP99);
  std::printf("  seat / fsync floor                  %.2f×\n", r.overFsync);
  std::printf(
      "  (seat − raw) / fsync floor          %.2f   journal chains per DM before the write\n",
      r.chains);
  std::printf("  (seat − endpoint) / fsync floor     %.2f   the seat above its endpoint\n",
              r.aboveEndpoint);
  std::printf("  endpoint / raw                      %.2f×\n", r.endpointOverRaw);
  std::printf(
      "  seat − endpoint − %d × fsync floor   %.3f ms   the seat's work besides its %s before "
      "the write (the typical round: %s)\n",
      r.residualChains, r.residual, r.residualChains == 1 ? "one chain" : "two chains",
      r.residualChains == 1 ? "direct lane" : "queued");
  std::printf(
      "  seat / (raw + fsync floor)          %.2f×   the issue's goal: ≤ 1.3× (raw JetStream plus "
      "one fsync chain)\n",
      r.overRawPlusChain);
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

  std::vector<int64_t> rawUs, endpointUs, floorUs;
  SeatSamples seatSamples;
  int warmPaths[3] = {0, 0, 0};     // warm-up rounds by SeatPath
  std::vector<RoundTimes> sampled;  // in order, for the drift table
  int rawLost = 0, endpointLost = 0, stalls = 0, anomalies = 0;
  size_t outsideCommits = 0;  // renames between rounds
  size_t stateBytesFirst = 0, stateBytesLast = 0;
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

    // The seat: the probe's byte and the round's commits, then the receipt (pacing only).
    outsideCommits += probe.drainCommits();
    const SeatRound seen = runSeatRound(probe, *seat, *alice, seatId, text, r);
    if (seen.stalled) ++stalls;
    if (seen.path == SeatPath::kAnomalous && ++anomalies <= 10) {
      std::printf(
          "  ! round %d anomalous: %zu commits (at %s ms), direct %llu, requeued %llu; byte at "
          "%.1f ms\n",
          r, seen.seen.commits.size(), commitTimes(seen).c_str(),
          static_cast<unsigned long long>(seen.direct),
          static_cast<unsigned long long>(seen.requeued), msSince(seen.seen.byteAt, seen.sentAt));
      std::fflush(stdout);
    }
    round.seatUs = seen.seen.byteAt - seen.sentAt;
    if (sample) {
      seatSamples.add(seen);
    } else {
      ++warmPaths[static_cast<int>(seen.path)];
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
  outsideCommits += probe.drainCommits();

  const auto rawS = bench::summarize(rawUs);
  const auto endpointS = bench::summarize(endpointUs);
  const auto seatS = bench::summarize(seatSamples.seatUs);
  const auto floorS = bench::summarize(floorUs);
  const auto surfacedS = bench::summarize(seatSamples.toSurfacedUs);

  std::printf("DM end to end, one in flight (%d rounds)\n", config.samples);
  std::printf("  %s %5s %9s %9s %9s %9s\n", padded("", kLabelWidth).c_str(), "n", "p50 ms",
              "p99 ms", "max ms", "mean ms");
  printLatencyRow("raw JetStream (publish → fetch; baseline)", rawS);
  printLatencyRow("endpoint (sendDirect → handler)", endpointS);
  printLatencyRow("seat (sendDirect → bytes at runtime stdin)", seatS);
  printLatencyRow("fsync floor (one journal commit chain)", floorS);
  printSeatStages(seatSamples, config.warmup, warmPaths);
  std::printf("  state file %zu → %zu bytes over the run; fsync floor written at that size\n",
              stateBytesFirst, stateBytesLast);

  const int chainsBefore = seatSamples.typicalChains();
  const SeatRatios ratios = seatRatios(rawS, endpointS, seatS, floorS, chainsBefore);
  printRatios(ratios);

  // Each commit rewrites the whole state file, which grows by a tombstone per DM (up to the
  // journal's cap): the first and last quarter of the rounds side by side.
  std::printf("\nDrift over the run (p50 ms; the state file grows by one tombstone per DM)\n");
  std::printf("  %-16s %14s %10s %10s %10s %10s   (residual: seat − endpoint − %d × fsync)\n",
              "rounds", "state bytes", "endpoint", "seat", "fsync", "residual", chainsBefore);
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
                           bench::summarize(f).p50Ms, chainsBefore));
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
      "  seat: admitted %llu, surfaced %llu, failed %llu, receipts %llu, launches %llu, direct "
      "%llu, direct requeued %llu; probe bytes %lld for %d DMs\n",
      static_cast<unsigned long long>(snap.counters.admitted),
      static_cast<unsigned long long>(snap.counters.surfaced),
      static_cast<unsigned long long>(snap.counters.failed),
      static_cast<unsigned long long>(snap.counters.receipts),
      static_cast<unsigned long long>(snap.counters.launches),
      static_cast<unsigned long long>(snap.counters.direct),
      static_cast<unsigned long long>(snap.counters.directRequeued),
      static_cast<long long>(probe.bytes()), rounds);
  std::printf(
      "  commits: rounds with neither the direct lane's %zu nor the queued path's %zu (warm-up "
      "included): %d; renames between rounds: %zu\n",
      kDirectCommits, kQueuedCommits, anomalies, outsideCommits);
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
      R"("ms":{{"raw":{},"endpoint":{},"seat":{},"fsync_floor":{},"seat_to_surfaced":{},)"
      R"("seat_direct":{},"seat_queued":{}}},)",
      jsonLatency(rawS), jsonLatency(endpointS), jsonLatency(seatS), jsonLatency(floorS),
      jsonLatency(surfacedS), jsonLatency(bench::summarize(seatSamples.directUs)),
      jsonLatency(bench::summarize(seatSamples.queuedUs)));
  json += fmt::format(R"("direct_rounds":{},"queued_rounds":{},"anomalous_rounds":{},)"
                      R"("commits_per_dm":{{"direct":{},"queued":{}}},)",
                      seatSamples.direct, seatSamples.queued, seatSamples.anomalous, kDirectCommits,
                      kQueuedCommits);
  json += fmt::format(R"("stages_p50_ms":{{"to_admission":{:.4f},"admission_to_handoff":{:.4f},)"
                      R"("last_commit_to_bytes":{:.4f},)"
                      R"("bytes_to_surfaced":{:.4f}}},)",
                      bench::summarize(seatSamples.toAdmitUs).p50Ms,
                      bench::summarize(seatSamples.admitToHandoffUs).p50Ms,
                      bench::summarize(seatSamples.lastToByteUs).p50Ms,
                      bench::summarize(seatSamples.byteToSurfacedUs).p50Ms);
  json += fmt::format(R"("ratios":{{"seat_over_raw":{:.3f},"seat_over_fsync":{:.3f},)"
                      R"("journal_chains_per_dm":{:.3f},"seat_above_endpoint_in_fsyncs":{:.3f},)"
                      R"("seat_over_raw_plus_one_chain":{:.3f}}},)"
                      R"("residual_ms":{:.4f},"residual_chains":{},)",
                      ratios.overRaw, ratios.overFsync, ratios.chains, ratios.aboveEndpoint,
                      ratios.overRawPlusChain, ratios.residual, ratios.residualChains);
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
