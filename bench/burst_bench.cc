// burst_bench: a burst of DMs into one exec seat (issue 20) — how fast a seat drains a backlog
// into its runtime, beside the raw fetch+ack rate of the same messages on the same broker in
// the same run.
//
//   burst_bench [--quick] [--messages N] [--window W] [--text-bytes N] [--rounds R]
//
// Each round publishes N real DM envelopes with nats.c asynchronous publishing (at most W
// unacknowledged publishes in flight), twice, one side after the other:
//   raw   to a durable provisioned like a seat's, consumed by one thread: natsSubscription_Fetch
//         (batch 64, the DurablePump's) → natsMsg_Ack per message. The baseline.
//   seat  to a daemon::Seat (runtime `exec`, program `cat > /dev/null`), which admits each DM
//         into its ownership journal, acks it, hands blocks of them to the runtime's stdin and
//         settles them surfaced once the program has read them.
// The drain time of a side runs from the first publish to the last message consumed (raw: its
// ack sent; seat: counted surfaced or failed in the seat's snapshot, polled every 2 ms), so the
// publisher's own pace is in both. CPU is the whole process's (utime + stime) over the side:
// the raw side's is the publisher plus a trivial consumer, so seat − raw is what the seat's
// daemon work costs per DM.
//
// --quick (or SHOAL_BENCH_QUICK=1) is the CI size: 2,000 messages, one round (full: 10,000,
// three rounds). The last line of the output is one JSON object with the numbers.
//
// Numbers are reported, never asserted (bench/README.md); read the ratios.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nats/nats.h>
#include <time.h>

#include "base/clock.h"
#include "base/ids.h"
#include "base/log.h"
#include "bench_mesh.h"
#include "daemon/seat.h"
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
constexpr int kFetchBatch = 64;                 // the DurablePump's
constexpr int64_t kDrainLimitUs = 600'000'000;  // a side that takes longer is reported as stuck

struct Config {
  int messages = 10'000;
  int window = 256;
  int textBytes = 128;
  int rounds = 3;
  bool quick = false;
};

Status natsFailure(natsStatus s, std::string_view what) {
  return unavailable("nats",
                     fmt::format("{}: {} ({})", what, natsStatus_GetText(s),
                                 nats_GetLastError(nullptr) ? nats_GetLastError(nullptr) : ""));
}

natsConnection* connect(const std::string& url, bool sendAsap) {
  natsOptions* opts = nullptr;
  natsStatus s = natsOptions_Create(&opts);
  if (s == NATS_OK) s = natsOptions_SetURL(opts, url.c_str());
  if (s == NATS_OK && sendAsap) s = natsOptions_SetSendAsap(opts, true);
  natsConnection* nc = nullptr;
  if (s == NATS_OK) s = natsConnection_Connect(&nc, opts);
  natsOptions_Destroy(opts);
  if (s != NATS_OK) orDie(natsFailure(s, "connect"), "raw");
  return nc;
}

// N envelopes from `from` to `to`, encoded before any clock starts.
std::vector<std::string> envelopes(const wire::Principal& from, const wire::Principal& to,
                                   const Config& config, int round, std::string& subject) {
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(config.messages));
  for (int i = 0; i < config.messages; ++i) {
    mesh::Outbound outbound;
    outbound.kind = wire::DeliveryKind::kDm;
    outbound.target = to.dotForm();
    outbound.text = fmt::format("burst {} {:07d} ", round, i);
    if (static_cast<int>(outbound.text.size()) < config.textBytes)
      outbound.text.append(static_cast<size_t>(config.textBytes) - outbound.text.size(), 'x');
    auto message = orDie(mesh::buildMessage(Clock::real(), kSpace,
                                            mesh::Sender{from, from.actor, std::nullopt}, outbound),
                         "envelope");
    if (subject.empty()) subject = orDie(mesh::outboundSubject(kSpace, from, outbound), "subject");
    out.push_back(orDie(wire::encodeMessage(message), "encoding"));
  }
  return out;
}

// The windowed publisher both sides share: js_PublishAsync with MaxPending = window.
class Publisher {
 public:
  Publisher(const std::string& url, int window) {
    nc_ = connect(url, false);
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.PublishAsync.MaxPending = window;
    jo.PublishAsync.ErrHandler = &Publisher::onError;
    jo.PublishAsync.ErrHandlerClosure = this;
    natsStatus s = natsConnection_JetStream(&js_, nc_, &jo);
    if (s != NATS_OK) orDie(natsFailure(s, "publisher JetStream"), "publisher");
  }
  ~Publisher() {
    jsCtx_Destroy(js_);
    natsConnection_Destroy(nc_);
  }
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  // Publishes every payload (blocking while the window is full) and waits for the last ack.
  void publishAll(const std::string& subject, const std::vector<std::string>& payloads) {
    for (const auto& p : payloads) {
      natsStatus s =
          js_PublishAsync(js_, subject.c_str(), p.data(), static_cast<int>(p.size()), nullptr);
      if (s != NATS_OK) orDie(natsFailure(s, "js_PublishAsync"), "publisher");
    }
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = 60'000;
    natsStatus s = js_PublishAsyncComplete(js_, &po);
    if (s != NATS_OK) orDie(natsFailure(s, "js_PublishAsyncComplete"), "publisher");
  }
  int failures() const { return failures_.load(); }

 private:
  static void onError(jsCtx*, jsPubAckErr*, void* closure) {
    static_cast<Publisher*>(closure)->failures_.fetch_add(1);
  }

  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  std::atomic<int> failures_{0};
};

// The raw consumer: fetch a batch, ack each, count.
class RawConsumer {
 public:
  RawConsumer(const std::string& url, const std::string& stream, const std::string& filter,
              const std::string& durable) {
    nc_ = connect(url, true);
    natsStatus s = natsConnection_JetStream(&js_, nc_, nullptr);
    if (s != NATS_OK) orDie(natsFailure(s, "raw JetStream"), "raw");
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = stream.c_str();
    so.Consumer = durable.c_str();
    jsErrCode err = static_cast<jsErrCode>(0);
    s = js_PullSubscribe(&sub_, js_, filter.c_str(), durable.c_str(), nullptr, &so, &err);
    if (s != NATS_OK) orDie(natsFailure(s, "raw pull subscribe"), "raw");
    thread_ = std::thread([this] { run(); });
  }
  ~RawConsumer() {
    stopping_.store(true);
    thread_.join();
    natsSubscription_Destroy(sub_);  // never Unsubscribe: that could delete the durable
    jsCtx_Destroy(js_);
    natsConnection_Destroy(nc_);
  }
  RawConsumer(const RawConsumer&) = delete;
  RawConsumer& operator=(const RawConsumer&) = delete;

  uint64_t consumed() const { return consumed_.load(); }

 private:
  void run() {
    while (!stopping_.load()) {
      natsMsgList list{nullptr, 0};
      jsErrCode err = static_cast<jsErrCode>(0);
      natsStatus s = natsSubscription_Fetch(&list, sub_, kFetchBatch, 200, &err);
      if (s != NATS_OK) continue;
      for (int i = 0; i < list.Count; ++i) {
        natsMsg_Ack(list.Msgs[i], nullptr);
        consumed_.fetch_add(1);
      }
      natsMsgList_Destroy(&list);
    }
  }

  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  natsSubscription* sub_ = nullptr;
  std::atomic<uint64_t> consumed_{0};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// This process's CPU time (every thread), in seconds, at nanosecond resolution.
double processCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

struct SideResult {
  double publishMs = 0;  // first publish → last publish ack
  double drainMs = 0;    // first publish → last message consumed
  double cpuMs = 0;      // the process's CPU over the side
  bool stuck = false;
};

// Publishes `payloads` on a second thread and polls `done()` (the consumed count) until it
// reaches the payload count.
template <typename Consumed>
SideResult runSide(Publisher& publisher, const std::string& subject,
                   const std::vector<std::string>& payloads, uint64_t base, Consumed consumed) {
  SideResult r;
  const double cpu0 = processCpuSeconds();
  const int64_t t0 = nowUs();
  int64_t published = 0;
  std::thread pub([&] {
    publisher.publishAll(subject, payloads);
    published = nowUs();
  });
  const uint64_t want = base + payloads.size();
  int64_t end = 0;
  while (true) {
    const int64_t now = nowUs();
    if (consumed() >= want) {
      end = now;
      break;
    }
    if (now - t0 > kDrainLimitUs) {
      r.stuck = true;
      end = now;
      break;
    }
    std::this_thread::sleep_for(milliseconds(2));
  }
  pub.join();
  r.cpuMs = (processCpuSeconds() - cpu0) * 1000.0;
  r.publishMs = static_cast<double>(published - t0) / 1000.0;
  r.drainMs = static_cast<double>(end - t0) / 1000.0;
  return r;
}

Config parse(int argc, char** argv) {
  Config c;
  const char* quickEnv = std::getenv("SHOAL_BENCH_QUICK");
  c.quick = quickEnv != nullptr && std::string_view(quickEnv) == "1";
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto next = [&]() -> int {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "burst_bench: %s needs a value\n", argv[i]);
        std::exit(2);
      }
      return std::atoi(argv[++i]);
    };
    if (a == "--quick") {
      c.quick = true;
    } else if (a == "--messages") {
      c.messages = next();
    } else if (a == "--window") {
      c.window = next();
    } else if (a == "--text-bytes") {
      c.textBytes = next();
    } else if (a == "--rounds") {
      c.rounds = next();
    } else {
      std::fprintf(stderr,
                   "usage: burst_bench [--quick] [--messages N] [--window W] [--text-bytes N] "
                   "[--rounds R]\n");
      std::exit(2);
    }
  }
  if (c.quick) {
    c.messages = std::min(c.messages, 2000);
    c.rounds = 1;
  }
  c.messages = std::max(c.messages, 1);
  c.rounds = std::max(c.rounds, 1);
  return c;
}

double rate(int messages, double ms) {
  return ms > 0 ? messages / (ms / 1000.0) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Config config = parse(argc, argv);
  log::initLogging(log::Level::kWarn);  // the seat's info lines would interleave the table
  auto mesh = bench::BenchMesh::start(std::string(kSpace));
  auto dir = orDie(testing::TempDir::create("burst-bench"), "temp dir");
  const std::string dmStream = orDie(wire::streamName(wire::Stream::kDm, kSpace), "stream name");
  const wire::Principal alice{"local", "alice"};

  // The raw side: a durable provisioned like a seat's.
  const wire::Principal rawTo{"local", "rawbob"};
  auto provisioned = orDie(
      planes::provisionPrincipal(mesh->js(), kSpace, rawTo, orDie(newLifecycleUid(), "uid"), {}),
      "raw durable");
  RawConsumer raw(mesh->url(), dmStream, orDie(wire::dmFilter(kSpace, rawTo), "raw filter"),
                  provisioned.dmDurable);

  // The seat: runtime `exec`, a program that reads stdin and throws it away.
  daemon::SeatProfile profile;
  profile.name = "Burst";
  profile.principal = wire::Principal{"local", "burst"};
  profile.runtime = daemon::RuntimeKind::kExec;
  profile.command = {"/bin/sh", "-c", "exec cat > /dev/null"};
  profile.cwd = dir.join("burst-seat");
  profile.lifecycleUid = orDie(newLifecycleUid(), "lifecycle uid");
  daemon::SeatOptions seatOptions;
  seatOptions.url = mesh->url();
  seatOptions.space = std::string(kSpace);
  auto seat = orDie(daemon::Seat::open(profile, seatOptions), "opening the burst seat");
  if (!seat->snapshot().processRunning) {
    orDie(unavailable("seat", seat->snapshot().note), "the burst seat's runtime");
  }
  auto seatSettled = [&seat] {
    const daemon::SeatCounters c = seat->snapshot().counters;
    return c.surfaced + c.failed;
  };

  Publisher publisher(mesh->url(), config.window);
  std::printf("burst_bench: %s run, %u CPUs, nats-server pid %d, space '%.*s'\n",
              config.quick ? "quick" : "full", std::thread::hardware_concurrency(),
              mesh->serverPid(), static_cast<int>(kSpace.size()), kSpace.data());
  std::printf("  %d rounds of %d DMs (text %d bytes), publish window %d, fetch batch %d\n\n",
              config.rounds, config.messages, config.textBytes, config.window, kFetchBatch);
  std::printf("%-6s %-5s %12s %12s %12s %14s\n", "round", "side", "publish ms", "drain ms", "DM/s",
              "CPU µs per DM");

  std::vector<double> rawRates, seatRates, rawCpu, seatCpu;
  bool stuck = false;
  for (int round = 0; round < config.rounds; ++round) {
    std::string rawSubject, seatSubject;
    auto rawPayloads = envelopes(alice, rawTo, config, round, rawSubject);
    auto seatPayloads = envelopes(alice, profile.principal, config, round, seatSubject);
    SideResult r = runSide(publisher, rawSubject, rawPayloads, raw.consumed(),
                           [&raw] { return raw.consumed(); });
    SideResult s = runSide(publisher, seatSubject, seatPayloads, seatSettled(), seatSettled);
    stuck = stuck || r.stuck || s.stuck;
    for (const auto& [name, side] : {std::pair{"raw", r}, std::pair{"seat", s}}) {
      std::printf("%-6d %-5s %12.1f %12.1f %12.0f %14.1f%s\n", round + 1, name, side.publishMs,
                  side.drainMs, rate(config.messages, side.drainMs),
                  side.cpuMs * 1000.0 / config.messages, side.stuck ? "  STUCK" : "");
    }
    rawRates.push_back(rate(config.messages, r.drainMs));
    seatRates.push_back(rate(config.messages, s.drainMs));
    rawCpu.push_back(r.cpuMs * 1000.0 / config.messages);
    seatCpu.push_back(s.cpuMs * 1000.0 / config.messages);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double rawRate = median(rawRates), seatRate = median(seatRates);
  const double rawCpuUs = median(rawCpu), seatCpuUs = median(seatCpu);
  const daemon::SeatCounters counters = seat->snapshot().counters;
  std::printf(
      "\nmedian: raw %.0f DM/s, seat %.0f DM/s → seat/raw %.3f×; CPU per DM: raw %.1f µs, seat "
      "%.1f µs (the seat's work ≈ %.1f µs)\n",
      rawRate, seatRate, rawRate > 0 ? seatRate / rawRate : 0, rawCpuUs, seatCpuUs,
      seatCpuUs - rawCpuUs);
  std::printf("seat counters: admitted %llu, surfaced %llu, failed %llu, inbox refused %llu\n",
              static_cast<unsigned long long>(counters.admitted),
              static_cast<unsigned long long>(counters.surfaced),
              static_cast<unsigned long long>(counters.failed),
              static_cast<unsigned long long>(counters.inboxRefused));
  std::printf(
      "{\"bench\":\"burst\",\"messages\":%d,\"rounds\":%d,\"window\":%d,\"rawPerSecond\":%.0f,"
      "\"seatPerSecond\":%.0f,\"ratio\":%.4f,\"rawCpuUsPerDm\":%.1f,\"seatCpuUsPerDm\":%.1f,"
      "\"seatFailed\":%llu,\"publishFailures\":%d,\"stuck\":%s}\n",
      config.messages, config.rounds, config.window, rawRate, seatRate,
      rawRate > 0 ? seatRate / rawRate : 0, rawCpuUs, seatCpuUs,
      static_cast<unsigned long long>(counters.failed), publisher.failures(),
      stuck ? "true" : "false");
  seat.reset();
  return stuck ? 1 : 0;
}
