// channel_bench: the durable channel fan-out (seed 000 "Channel delivery") — one post to a
// durable channel with 100 members, timed until every member has fetched and acked its copy,
// beside 100 raw JetStream publishes measured in the same run against the same server.
//
//   channel_bench [--quick] [--rounds N] [--warmup N] [--members N] [--fetchers N]
//                 [--text-bytes N] [--renew-ms MS] [--no-tap]
//
// The mesh: BenchMesh (a throw-away nats-server, space `bench`, the manager plane) plus a
// planes::DeliveryPlane started in-process on its own connection (sendAsap, as `shoal serve`
// opens it) with default options except a short lease renewal (--renew-ms, 1 s instead of 15 s,
// so renewals land inside the timed rounds instead of outside them). Each member is provisioned
// like a real lifecycle (planes::provisionPrincipal: its `dlv_<o>-<a>-<uid>` durable and its
// read ACL row) and granted membership of the durable channel `team` over the plane's rail
// (mesh::requestDurableJoin, cursor 0). The poster is a mesh::Endpoint (presence off, no DM
// durable) and not a member.
//
// Each round (warm-up rounds first, then --rounds timed ones), one message in flight at a time:
//   baseline  100 sequential js.publish calls on one connection (sendAsap), each waiting for the
//             server's ack: a DeliveryFrame of the same post (the bytes a member's copy has),
//             with the frame header and a unique Nats-Msg-Id, on the DLV subject of a lifecycle
//             that has no durable — the stream, subject shape, body and dedup the plane's copies
//             have. Timed from the first call to the last ack. The baseline of the ratios.
//   floor     the trusted reader's two round trips per copy done back to back by one thread,
//             100 times: a KV get of the member's read ACL row, then the same publish. Context
//             for where the fan-out's time goes, not a second baseline.
//   fan-out   Endpoint::post("team") → the plane's fan-out (CHAT `fanout` durable: 100
//             FanoutEntry publishes on `dinbox…`, INBOX) → the trusted reader (INBOX `reader`
//             durable: ACL re-read, membership check, one DeliveryFrame publish on `dlv…` each)
//             → each member's own durable: fetch (batch 1) + ack. Timed from just before the
//             post call to the last member's ack; also to the first member's ack, and each copy.
// Members are read by --fetchers threads (4: one per 25 members), each with its own connection
// (sendAsap, as the endpoint's) and a long-poll fetch per member. Each thread takes its members
// in the order the plane writes the copies (the plane's membership map order), interleaved across
// threads, so a thread is normally waiting on the copy that comes next. On the development
// machine `--fetchers 100` (one thread per member) is no faster and `--fetchers 1` only 10–20%
// slower (bench/README.md): fetching is not what is measured.
// A core subscription on a separate connection taps the plane's two writes (`dinbox.>`,
// `dlv.>`): when the last copy of a round reached INBOX and the last frame reached DLV, and the
// per-copy pace of each, which says which stage sets the fan-out's pace (--no-tap: without it).
// The CPU the server and this process (plane, poster, fetchers, tap) used in the baseline and in
// the fan-out phases is read from /proc (10 ms ticks, summed over the rounds).
// After the run every member's durable is checked: nothing pending, nothing unacked, nothing
// redelivered; the plane's counters and the reader's backlog are printed beside.
// --quick (or SHOAL_BENCH_QUICK=1) is the CI size: 20 rounds after 3 warm-up (full: 200 after 10).
//
// Numbers are reported, never asserted (bench/README.md); read the fan-out/baseline ratios.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/ids.h"
#include "base/log.h"
#include "bench_mesh.h"
#include "mesh/delivery_rail.h"
#include "mesh/endpoint.h"
#include "mesh/outbound.h"
#include "planes/delivery_plane.h"
#include "planes/space_provisioner.h"
#include "transport/connection.h"
#include "transport/jetstream.h"
#include "transport/kv.h"
#include "transport/pull_consumer.h"
#include "wire/delivery_frame.h"
#include "wire/names.h"
#include "wire/subject.h"

namespace {

using namespace shoal;
using bench::nowUs;
using bench::orDie;
using std::chrono::milliseconds;

constexpr std::string_view kSpace = "bench";
constexpr std::string_view kChannel = "team";
constexpr std::string_view kMarker = "channel-bench ";
constexpr int kIndexDigits = 7;
constexpr int64_t kRoundDeadlineUs = 10'000'000;  // a copy not acked by then is counted lost
constexpr milliseconds kFetchWait{500};           // the DurablePump's default long poll

struct Config {
  int rounds = 200;
  int warmup = 10;
  int members = 100;
  int fetchers = 4;
  int textBytes = 128;
  milliseconds renewEvery{1000};
  bool tap = true;  // --no-tap: no stage split (to see what the tap itself costs)
  bool quick = false;
};

// The post text: the marker, a fixed-width round index, then padding to `bytes`.
std::string textFor(int round, int bytes) {
  std::string text = fmt::format("{}{:0{}d} ", kMarker, round, kIndexDigits);
  if (static_cast<int>(text.size()) < bytes) {
    text.append(static_cast<size_t>(bytes) - text.size(), 'x');
  }
  return text;
}

// The round index after the marker in `bytes` (a DeliveryFrame's JSON), or -1.
int roundIn(std::string_view bytes) {
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

struct Member {
  wire::Principal principal;
  std::string uid;
  std::string durable;
  std::string key;     // the plane's membership key: the order the fan-out writes copies in
  std::string aclKey;  // its read ACL row (the reader reads it for every copy)
};

// Ack times by round and member, written by the fetcher threads, read by the driver.
class Acks {
 public:
  Acks(int rounds, int members)
      : members_(members),
        at_(static_cast<size_t>(rounds), std::vector<int64_t>(static_cast<size_t>(members), 0)),
        count_(static_cast<size_t>(rounds), 0) {}

  void record(int round, int member, int64_t us) {
    {
      std::lock_guard lock(mu_);
      if (round < 0 || static_cast<size_t>(round) >= at_.size()) {
        ++strays_;
        return;
      }
      int64_t& slot = at_[static_cast<size_t>(round)][static_cast<size_t>(member)];
      if (slot != 0) {
        ++strays_;  // a second copy of the same post: a redelivery
        return;
      }
      slot = us;
      ++count_[static_cast<size_t>(round)];
    }
    cv_.notify_all();
  }
  void stray() {
    std::lock_guard lock(mu_);
    ++strays_;
  }
  // True once every member acked round `round`, false at the deadline.
  bool waitForRound(int round, int64_t deadlineUs) {
    std::unique_lock lock(mu_);
    while (count_[static_cast<size_t>(round)] < members_) {
      int64_t left = deadlineUs - nowUs();
      if (left <= 0) return false;
      cv_.wait_for(lock, std::chrono::microseconds(left));
    }
    return true;
  }
  std::vector<int64_t> times(int round) const {
    std::lock_guard lock(mu_);
    return at_[static_cast<size_t>(round)];
  }
  int strays() const {
    std::lock_guard lock(mu_);
    return strays_;
  }

 private:
  const int members_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::vector<int64_t>> at_;  // guarded by mu_; 0: not acked yet
  std::vector<int> count_;                // guarded by mu_
  int strays_ = 0;                        // guarded by mu_
};

transport::ConnectOptions asapOptions(const std::string& url, std::string name) {
  transport::ConnectOptions o;
  o.servers = {url};
  o.name = std::move(name);
  o.sendAsap = true;
  return o;
}

// One fetcher thread: its own connection, a PullConsumer bound to each of its members' DLV
// durables, and for every round one fetch + ack per member, in the plane's write order.
class Fetcher {
 public:
  Fetcher(const std::string& url, const std::string& stream, int id,
          const std::vector<Member>& members, std::vector<int> mine, int totalRounds, Acks& acks)
      : mine_(std::move(mine)), totalRounds_(totalRounds), acks_(acks) {
    conn_ = orDie(transport::Connection::connect(
                      asapOptions(url, fmt::format("channel_bench fetcher {}", id))),
                  "fetcher connect");
    js_.emplace(orDie(transport::JetStream::create(*conn_), "fetcher JetStream"));
    for (int m : mine_) {
      consumers_.push_back(orDie(
          transport::PullConsumer::bind(*js_, stream, members[static_cast<size_t>(m)].durable),
          "binding " + members[static_cast<size_t>(m)].durable));
    }
    lastRound_.assign(mine_.size(), -1);
    thread_ = std::thread([this] { run(); });
  }
  ~Fetcher() {
    stopping_.store(true);
    thread_.join();
    consumers_.clear();
    js_.reset();
    conn_.reset();
  }
  Fetcher(const Fetcher&) = delete;
  Fetcher& operator=(const Fetcher&) = delete;

  int errors() const { return errors_.load(); }

 private:
  void run() {
    for (int round = 0; round < totalRounds_; ++round) {
      for (size_t i = 0; i < mine_.size(); ++i) {
        if (!awaitCopy(i, round)) return;
      }
    }
  }

  // Fetches member i's copies until one of `round` or later is acked; false when stopping.
  bool awaitCopy(size_t i, int round) {
    while (lastRound_[i] < round) {
      if (stopping_.load()) return false;
      auto batch = consumers_[i].fetch(1, kFetchWait);
      if (!batch.isOk()) {
        ++errors_;
        std::this_thread::sleep_for(milliseconds(20));
        continue;
      }
      for (auto& msg : *batch) {
        int got = roundIn(msg.data());
        (void)msg.ack();
        int64_t at = nowUs();
        if (got < round || got >= totalRounds_) {
          acks_.stray();  // an older round's copy again (a redelivery) or not ours
          continue;
        }
        acks_.record(got, mine_[i], at);
        lastRound_[i] = got;  // a later round's copy: this round's was lost for this member
      }
    }
    return true;
  }

  const std::vector<int> mine_;  // member indices, in the plane's write order
  const int totalRounds_;
  Acks& acks_;
  std::unique_ptr<transport::Connection> conn_;
  std::optional<transport::JetStream> js_;
  std::vector<transport::PullConsumer> consumers_;  // parallel to mine_
  std::vector<int> lastRound_;                      // used on thread_ only
  std::atomic<bool> stopping_{false};
  std::atomic<int> errors_{0};
  std::thread thread_;
};

// Taps the plane's two writes with core subscriptions on the INBOX and DLV subjects (the server
// forwards each publish as it stores it): when the fan-out wrote each round's copies to
// `dinbox…` and when the reader handed each over on `dlv…`, as the tap's connection receives
// them (a member may ack the last frame before the tap has it). The baseline is skipped.
class StageTap {
 public:
  enum Stage { kInbox = 0, kDlv = 1 };

  StageTap(const std::string& url, std::string baseSubject, int rounds)
      : baseSubject_(std::move(baseSubject)),
        first_(2, std::vector<int64_t>(static_cast<size_t>(rounds), 0)),
        last_(2, std::vector<int64_t>(static_cast<size_t>(rounds), 0)),
        count_(2, std::vector<int>(static_cast<size_t>(rounds), 0)) {
    conn_ =
        orDie(transport::Connection::connect(asapOptions(url, "channel_bench tap")), "tap connect");
    for (Stage stage : {kInbox, kDlv}) {
      std::string filter = fmt::format("cotal.{}.{}.>", kSpace, stage == kInbox ? "dinbox" : "dlv");
      subs_.push_back(orDie(conn_->subscribe(filter,
                                             [this, stage](const transport::Message& m) {
                                               int64_t at = nowUs();
                                               if (m.subject == baseSubject_) return;
                                               record(stage, roundIn(m.data), at);
                                             }),
                            "tap subscribe"));
    }
    orDie(conn_->flush(milliseconds(5000)), "tap flush");
  }
  ~StageTap() {
    subs_.clear();
    conn_.reset();
  }
  StageTap(const StageTap&) = delete;
  StageTap& operator=(const StageTap&) = delete;

  struct Seen {
    int64_t first = 0;
    int64_t last = 0;
    int count = 0;
  };
  // True once both stages of `round` were seen `count` times, false at the deadline.
  bool waitForCount(int round, int count, int64_t deadlineUs) {
    std::unique_lock lock(mu_);
    auto r = static_cast<size_t>(round);
    while (count_[kInbox][r] < count || count_[kDlv][r] < count) {
      int64_t left = deadlineUs - nowUs();
      if (left <= 0) return false;
      cv_.wait_for(lock, std::chrono::microseconds(left));
    }
    return true;
  }
  Seen seen(Stage stage, int round) const {
    std::lock_guard lock(mu_);
    auto r = static_cast<size_t>(round);
    return Seen{first_[stage][r], last_[stage][r], count_[stage][r]};
  }

 private:
  void record(Stage stage, int round, int64_t at) {
    std::lock_guard lock(mu_);
    if (round < 0 || static_cast<size_t>(round) >= first_[stage].size()) return;
    auto r = static_cast<size_t>(round);
    if (first_[stage][r] == 0) first_[stage][r] = at;
    last_[stage][r] = std::max(last_[stage][r], at);
    ++count_[stage][r];
    cv_.notify_all();
  }

  const std::string baseSubject_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::vector<int64_t>> first_;  // guarded by mu_; [stage][round]
  std::vector<std::vector<int64_t>> last_;   // guarded by mu_
  std::vector<std::vector<int>> count_;      // guarded by mu_
  std::unique_ptr<transport::Connection> conn_;
  std::vector<transport::Subscription> subs_;
};

struct RoundSamples {
  std::vector<int64_t> baseline;     // 100 publishes, first call → last ack
  std::vector<int64_t> publish;      // one js.publish call
  std::vector<int64_t> readerFloor;  // 100 × (ACL KV get + js.publish), back to back
  std::vector<int64_t> all;          // post → every member acked
  std::vector<int64_t> first;        // post → the first member acked
  std::vector<int64_t> postCall;     // Endpoint::post alone
  std::vector<int64_t> copy;         // post → one member acked (every copy)
  std::vector<int64_t> spreadPer;    // (all − first) / (members − 1): marginal cost per copy
  std::vector<int64_t> inboxLast;    // post → the last copy written to INBOX (the fan-out)
  std::vector<int64_t> dlvLast;      // post → the last frame written to DLV (the reader)
  std::vector<int64_t> inboxPer;     // (last − first) / (members − 1) of the INBOX writes
  std::vector<int64_t> dlvPer;       // … of the DLV writes
  int64_t fanoutTotalUs = 0;
  int64_t baselineTotalUs = 0;
  // CPU seconds spent in each phase (summed over the timed rounds): [server, this process].
  double baselineCpu[2] = {0, 0};
  double fanoutCpu[2] = {0, 0};
  int lostRounds = 0;
  int lostCopies = 0;
};

// `text` padded with spaces to `width` columns (UTF-8: one column per code point).
std::string padded(std::string text, size_t width) {
  size_t columns = 0;
  for (unsigned char c : text) {
    columns += (c & 0xC0) != 0x80 ? 1 : 0;
  }
  if (columns < width) text.append(width - columns, ' ');
  return text;
}

void printRow(const std::string& name, const bench::LatencySummary& s) {
  std::printf("  %s %6zu %9.3f %9.3f %9.3f %9.3f\n", padded(name, 44).c_str(), s.n, s.p50Ms,
              s.p99Ms, s.maxMs, s.meanMs);
}

Config parse(int argc, char** argv) {
  Config c;
  const char* env = std::getenv("SHOAL_BENCH_QUICK");
  bool quick = env != nullptr && *env != '\0' && std::strcmp(env, "0") != 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--no-tap") == 0) c.tap = false;
  }
  if (quick) {
    c.quick = true;
    c.rounds = 20;
    c.warmup = 3;
  }
  for (int i = 1; i + 1 < argc; ++i) {
    std::string_view flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--rounds") c.rounds = std::max(1, std::atoi(value));
    if (flag == "--warmup") c.warmup = std::max(0, std::atoi(value));
    if (flag == "--members") c.members = std::clamp(std::atoi(value), 2, 1000);
    if (flag == "--fetchers") c.fetchers = std::max(1, std::atoi(value));
    if (flag == "--text-bytes") c.textBytes = std::max(32, std::atoi(value));
    if (flag == "--renew-ms") c.renewEvery = milliseconds(std::max(100, std::atoi(value)));
  }
  c.fetchers = std::min(c.fetchers, c.members);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  log::initLogging(log::Level::kWarn);  // the plane's info lines would interleave the tables
  const Config config = parse(argc, argv);
  const int totalRounds = config.warmup + config.rounds;
  auto mesh = bench::BenchMesh::start(std::string(kSpace));
  const std::string dlvStream = orDie(wire::streamName(wire::Stream::kDlv, kSpace), "stream name");
  const std::string inboxStream =
      orDie(wire::streamName(wire::Stream::kInbox, kSpace), "stream name");

  // The delivery plane, on its own connection as `shoal serve` runs it.
  std::unique_ptr<planes::DeliveryPlane> plane;
  std::atomic<bool> planeLost{false};
  transport::ConnectOptions planeConnOptions = asapOptions(mesh->url(), "channel_bench plane");
  planeConnOptions.onEvent = [&plane](const transport::ConnectionEvent& event) {
    if (plane) plane->onConnectionEvent(event);
  };
  auto planeConn =
      orDie(transport::Connection::connect(std::move(planeConnOptions)), "plane connect");
  auto planeJs = orDie(transport::JetStream::create(*planeConn), "plane JetStream");
  planes::DeliveryPlaneOptions planeOptions;
  planeOptions.space = std::string(kSpace);
  planeOptions.renewEvery = config.renewEvery;
  planeOptions.onLost = [&planeLost](const Status&) { planeLost.store(true); };
  plane = orDie(planes::DeliveryPlane::start(*planeConn, planeJs, std::move(planeOptions)),
                "delivery plane");

  // Members: provisioned like a lifecycle, then joined to #team over the plane's rail.
  auto setupConn = orDie(transport::Connection::connect(asapOptions(mesh->url(), "channel_bench")),
                         "setup connect");
  std::vector<Member> members;
  for (int i = 0; i < config.members; ++i) {
    Member m;
    m.principal = wire::Principal{"local", fmt::format("m{:03d}", i)};
    m.uid = orDie(newLifecycleUid(), "lifecycle uid");
    auto provisioned =
        orDie(planes::provisionPrincipal(mesh->js(), kSpace, m.principal, m.uid, {}), "provision");
    m.durable = provisioned.dlvDurable;
    m.key = orDie(wire::memberKey(kChannel, m.principal, m.uid), "member key");
    m.aclKey = orDie(wire::lifecycleKeyForm(m.principal, m.uid), "ACL key");
    auto joined = orDie(mesh::requestDurableJoin(*setupConn, kSpace, m.principal, m.uid, kChannel,
                                                 0, milliseconds(5000)),
                        "durable join");
    if (!joined.durable) orDie(failedPrecondition("not-durable", "#team is not durable"), "join");
    members.push_back(std::move(m));
  }
  std::sort(members.begin(), members.end(),
            [](const Member& a, const Member& b) { return a.key < b.key; });

  // Fetchers: member i (in write order) goes to thread i % fetchers.
  Acks acks(totalRounds, config.members);
  std::vector<std::unique_ptr<Fetcher>> fetchers;
  for (int f = 0; f < config.fetchers; ++f) {
    std::vector<int> mine;
    for (int i = f; i < config.members; i += config.fetchers) {
      mine.push_back(i);
    }
    fetchers.push_back(std::make_unique<Fetcher>(mesh->url(), dlvStream, f, members,
                                                 std::move(mine), totalRounds, acks));
  }

  // The poster: an endpoint that sends only.
  mesh::EndpointOptions posterOptions;
  posterOptions.servers = {mesh->url()};
  posterOptions.space = std::string(kSpace);
  posterOptions.principal = wire::Principal{"local", "poster"};
  posterOptions.receiveDirect = false;
  posterOptions.presence = false;
  posterOptions.onWarning = [](const Status&) {};
  auto poster = orDie(mesh::Endpoint::open(std::move(posterOptions)), "opening the poster");

  // The baseline: a member's copy (a DeliveryFrame of a real post of the same text) published
  // on the DLV subject of a lifecycle with no durable, on a connection like the plane's.
  auto baseConn =
      orDie(transport::Connection::connect(asapOptions(mesh->url(), "channel_bench baseline")),
            "baseline connect");
  auto baseJs = orDie(transport::JetStream::create(*baseConn), "baseline JetStream");
  const wire::Principal posterPrincipal{"local", "poster"};
  mesh::Outbound outbound;
  outbound.kind = wire::DeliveryKind::kChannel;
  outbound.target = std::string(kChannel);
  outbound.text = textFor(0, config.textBytes);
  auto sample =
      orDie(mesh::buildMessage(Clock::real(), kSpace,
                               mesh::Sender{posterPrincipal, "poster", std::nullopt}, outbound),
            "baseline envelope");
  const std::string frame =
      orDie(wire::encodeDeliveryFrame(wire::DeliveryFrame{std::string(kChannel), sample}),
            "baseline frame");
  const std::string envelope = orDie(wire::encodeMessage(sample), "baseline envelope bytes");
  const std::string baseUid = orDie(newLifecycleUid(), "lifecycle uid");
  const std::string baseSubject =
      orDie(wire::dlvSubject(kSpace, wire::Principal{"local", "baseline"}, baseUid), "subject");
  auto aclKv = orDie(transport::KeyValue::openBucket(
                         baseJs, orDie(wire::bucketName(wire::Bucket::kAcl, kSpace), "bucket")),
                     "ACL bucket");

  std::printf("channel_bench: %s run, nats-server pid %d, space '%.*s', %u CPUs\n",
              config.quick ? "quick" : "full", mesh->serverPid(), static_cast<int>(kSpace.size()),
              kSpace.data(), std::thread::hardware_concurrency());
  std::printf(
      "  #%.*s: durable, %d members (provisionPrincipal + requestDurableJoin); DeliveryPlane "
      "in-process\n"
      "  (own connection, sendAsap, lease renewed every %lld ms); %d fetcher threads, own "
      "connections\n"
      "  (sendAsap), fetch batch 1, long poll %lld ms, ack per copy\n"
      "  text %d bytes → envelope %zu bytes, copy (DeliveryFrame) %zu bytes\n"
      "  baseline = %d sequential js.publish (acked) of that frame on a DLV subject, "
      "Nats-Msg-Id set\n\n",
      static_cast<int>(kChannel.size()), kChannel.data(), config.members,
      static_cast<long long>(config.renewEvery.count()), config.fetchers,
      static_cast<long long>(kFetchWait.count()), config.textBytes, envelope.size(), frame.size(),
      config.members);

  std::unique_ptr<StageTap> tap;
  if (config.tap) tap = std::make_unique<StageTap>(mesh->url(), baseSubject, totalRounds);

  RoundSamples s;
  for (int round = 0; round < totalRounds; ++round) {
    const bool timed = round >= config.warmup;

    auto cpuNow = [&] {
      return std::pair{bench::processCpuSeconds(mesh->serverPid()),
                       bench::processCpuSeconds(::getpid())};
    };
    // Baseline: N publishes, each acked by the server.
    const auto cpuB0 = cpuNow();
    const int64_t b0 = nowUs();
    for (int i = 0; i < config.members; ++i) {
      transport::PublishOptions po;
      po.msgId = fmt::format("{}:{}:{}", baseUid, round, i);
      po.headers.emplace_back(std::string(wire::kDeliveryFrameHeader),
                              std::string(wire::kDeliveryFrameVersion));
      const int64_t p0 = nowUs();
      orDie(baseJs.publish(baseSubject, frame, po).status(), "baseline publish");
      if (timed) s.publish.push_back(nowUs() - p0);
    }
    const int64_t b1 = nowUs();
    const auto cpuB1 = cpuNow();

    // The reader's floor: per copy, its two round trips back to back (ACL get, then publish).
    const int64_t r0 = nowUs();
    for (int i = 0; i < config.members; ++i) {
      orDie(aclKv.get(members[static_cast<size_t>(i)].aclKey).status(), "ACL get");
      transport::PublishOptions po;
      po.msgId = fmt::format("{}:r{}:{}", baseUid, round, i);
      po.headers.emplace_back(std::string(wire::kDeliveryFrameHeader),
                              std::string(wire::kDeliveryFrameVersion));
      orDie(baseJs.publish(baseSubject, frame, po).status(), "floor publish");
    }
    const int64_t r1 = nowUs();

    // Fan-out: one post, N copies acked at the members.
    const auto cpuF0 = cpuNow();
    const int64_t f0 = nowUs();
    orDie(poster->post(kChannel, textFor(round, config.textBytes)).status(), "post");
    const int64_t f1 = nowUs();
    const bool complete = acks.waitForRound(round, f0 + kRoundDeadlineUs);
    const auto cpuF1 = cpuNow();
    if (!timed) continue;
    s.baseline.push_back(b1 - b0);
    s.readerFloor.push_back(r1 - r0);
    s.baselineCpu[0] += cpuB1.first - cpuB0.first;
    s.baselineCpu[1] += cpuB1.second - cpuB0.second;
    s.fanoutCpu[0] += cpuF1.first - cpuF0.first;
    s.fanoutCpu[1] += cpuF1.second - cpuF0.second;
    s.baselineTotalUs += b1 - b0;
    s.postCall.push_back(f1 - f0);
    std::vector<int64_t> at = acks.times(round);
    int64_t first = 0, last = 0;
    int got = 0;
    for (int64_t t : at) {
      if (t == 0) continue;
      ++got;
      s.copy.push_back(t - f0);
      first = first == 0 ? t : std::min(first, t);
      last = std::max(last, t);
    }
    s.lostCopies += config.members - got;
    if (!complete) {
      ++s.lostRounds;
      continue;
    }
    s.all.push_back(last - f0);
    s.first.push_back(first - f0);
    s.spreadPer.push_back((last - first) / (config.members - 1));
    s.fanoutTotalUs += last - f0;
    if (tap) {
      // The tap's copy of the last frame may land just after the member's ack.
      tap->waitForCount(round, config.members, nowUs() + 1'000'000);
      auto inbox = tap->seen(StageTap::kInbox, round);
      auto dlv = tap->seen(StageTap::kDlv, round);
      if (inbox.count == config.members && dlv.count == config.members) {
        s.inboxLast.push_back(inbox.last - f0);
        s.dlvLast.push_back(dlv.last - f0);
        s.inboxPer.push_back((inbox.last - inbox.first) / (config.members - 1));
        s.dlvPer.push_back((dlv.last - dlv.first) / (config.members - 1));
      }
    }
  }

  const auto base = bench::summarize(s.baseline);
  const auto all = bench::summarize(s.all);
  const auto first = bench::summarize(s.first);
  const auto pub = bench::summarize(s.publish);
  const auto spread = bench::summarize(s.spreadPer);
  std::printf("Per round (%d rounds after %d warm-up; one post / %d publishes in flight)\n",
              config.rounds, config.warmup, config.members);
  std::printf("  %-44s %6s %9s %9s %9s %9s\n", "", "n", "p50 ms", "p99 ms", "max ms", "mean ms");
  printRow(fmt::format("baseline: {} js.publish, acked", config.members), base);
  printRow(fmt::format("fan-out: post → {} copies acked", config.members), all);
  printRow("fan-out: post → first copy acked", first);
  printRow("Endpoint::post call alone", bench::summarize(s.postCall));
  const auto floor = bench::summarize(s.readerFloor);
  printRow(fmt::format("reader floor: {} × (ACL get + js.publish)", config.members), floor);
  if (tap) {
    printRow(fmt::format("stage: post → {} copies written to INBOX", config.members),
             bench::summarize(s.inboxLast));
    printRow(fmt::format("stage: post → {} frames written to DLV", config.members),
             bench::summarize(s.dlvLast));
  }
  std::printf("  per copy / per publish\n");
  printRow("one js.publish call (baseline)", pub);
  printRow(fmt::format("post → a copy acked (every copy)"), bench::summarize(s.copy));
  printRow(fmt::format("(last − first) / {}: marginal per copy", config.members - 1), spread);
  if (tap) {
    printRow("  of the INBOX writes (the fan-out)", bench::summarize(s.inboxPer));
    printRow("  of the DLV writes (the reader)", bench::summarize(s.dlvPer));
  }
  if (s.lostCopies > 0) {
    std::printf("  lost: %d copies not acked within %lld s (%d rounds incomplete)\n", s.lostCopies,
                static_cast<long long>(kRoundDeadlineUs / 1'000'000), s.lostRounds);
  }

  std::printf("\nRatios fan-out / baseline\n");
  std::printf("  p50 %s   p99 %s   mean %s\n", bench::ratio(all.p50Ms, base.p50Ms).c_str(),
              bench::ratio(all.p99Ms, base.p99Ms).c_str(),
              bench::ratio(all.meanMs, base.meanMs).c_str());
  std::printf("  marginal per copy / one publish (p50) %s\n",
              bench::ratio(spread.p50Ms, pub.p50Ms).c_str());
  std::printf("  fan-out / reader floor (p50) %s\n", bench::ratio(all.p50Ms, floor.p50Ms).c_str());
  auto perSecond = [&](double ms) { return ms > 0 ? config.members / (ms / 1000.0) : 0.0; };
  auto sustained = [&](int64_t totalUs, size_t n) {
    return totalUs > 0
               ? static_cast<double>(n) * config.members / (static_cast<double>(totalUs) / 1e6)
               : 0.0;
  };
  const auto n = static_cast<double>(std::max<size_t>(1, s.baseline.size()));
  std::printf("\nCPU per round, ms (/proc ticks of 10 ms, summed over the rounds)\n");
  std::printf("  %-44s %12s %12s\n", "", "nats-server", "this process");
  std::printf("  %-44s %12.1f %12.1f\n", "baseline", 1000 * s.baselineCpu[0] / n,
              1000 * s.baselineCpu[1] / n);
  std::printf("  %s %12.1f %12.1f\n", padded("fan-out (plane, poster, fetchers, tap)", 44).c_str(),
              1000 * s.fanoutCpu[0] / n, 1000 * s.fanoutCpu[1] / n);

  std::printf("\nThroughput (one post / one batch of %d publishes at a time)\n", config.members);
  std::printf("  %-44s %12s %12s\n", "", "at p50 /s", "mean /s");
  std::printf("  %-44s %12.0f %12.0f\n", "baseline publishes", perSecond(base.p50Ms),
              sustained(s.baselineTotalUs, s.baseline.size()));
  std::printf("  %-44s %12.0f %12.0f\n", "fan-out copies acked at members", perSecond(all.p50Ms),
              sustained(s.fanoutTotalUs, s.all.size()));
  std::printf("  copies/s ÷ publishes/s (p50)              %s\n",
              bench::ratio(perSecond(all.p50Ms), perSecond(base.p50Ms)).c_str());

  std::this_thread::sleep_for(milliseconds(500));  // let the last fire-and-forget acks land
  std::printf("\nAfter the run (nothing should be pending, unacked or redelivered)\n");
  uint64_t pending = 0, ackPending = 0, redelivered = 0;
  int infoFailures = 0;
  for (const auto& m : members) {
    auto info = mesh->js().consumerInfo(dlvStream, m.durable);
    if (!info.isOk()) {
      ++infoFailures;
      continue;
    }
    pending += info->numPending;
    ackPending += static_cast<uint64_t>(info->numAckPending);
    redelivered += info->numRedelivered;
  }
  std::printf("  %d member durables: pending %llu, ack-pending %llu, redelivered %llu%s\n",
              config.members, static_cast<unsigned long long>(pending),
              static_cast<unsigned long long>(ackPending),
              static_cast<unsigned long long>(redelivered),
              infoFailures ? fmt::format(" ({} unreadable)", infoFailures).c_str() : "");
  if (auto reader = mesh->js().consumerInfo(inboxStream, planes::kReaderDurable); reader.isOk()) {
    std::printf("  plane reader (INBOX): pending %llu, ack-pending %llu, redelivered %llu\n",
                static_cast<unsigned long long>(reader->numPending),
                static_cast<unsigned long long>(reader->numAckPending),
                static_cast<unsigned long long>(reader->numRedelivered));
  }
  int fetchErrors = 0;
  for (const auto& f : fetchers) {
    fetchErrors += f->errors();
  }
  auto counters = plane->counters();
  std::printf("  plane: posts %llu, copies %llu, joins %llu%s; strays %d, fetch errors %d\n",
              static_cast<unsigned long long>(counters.posts),
              static_cast<unsigned long long>(counters.copies),
              static_cast<unsigned long long>(counters.joins),
              planeLost.load() ? ", LEASE LOST" : "", acks.strays(), fetchErrors);

  tap.reset();
  fetchers.clear();
  (void)poster->close();
  poster.reset();
  (void)plane->stop();
  plane.reset();
  return 0;
}
