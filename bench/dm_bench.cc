// dm_bench: a direct message through mesh::Endpoint — Alice sendDirect(Bob's id) → Bob's
// onDelivery handler (the receive time is taken there) → the endpoint acks after the handler
// returns — beside a raw nats.c baseline of the same delivery, measured in the same run against
// the same server: js_Publish (Nats-Msg-Id set) of an envelope of the same size on a DM subject
// of the same DM_<space> stream → natsSubscription_Fetch on a durable provisioned exactly like
// Bob's (provisionPrincipal: AckExplicit, ack wait 60 s) → natsMsg_Ack.
//
//   dm_bench [--quick] [--round-trips N] [--messages N] [--text-bytes N]
//            [--pass-seconds S] [--fetch-wait-ms MS] [--raw-batch N]
//
// Three sides, each a sender and a receiver on two connections (as Alice and Bob are):
//   raw       nats.c with default connection options — the endpoint's connection options too
//             (the baseline of the ratios);
//   raw+asap  the same with natsOptions_SetSendAsap on the receiver's connection, so its pull
//             requests and acks leave at once instead of waiting for nats.c's flusher thread;
//   shoal     mesh::Endpoint Alice → Bob (Bob's DurablePump: fetch batch 64, fetchWait).
// Two passes per side:
//   sequential  N round trips, one message in flight: latency = send start → receive (handler
//               / fetch return), plus the time the publish call itself took;
//   throughput  N messages sent back to back by one thread while the receiver drains them:
//               msgs/s = N / (last receive − first send start), and the per-message latency
//               under that load.
// Every pass also stops at its time budget (--pass-seconds) and reports how many it completed.
// After the passes, every durable is checked to have nothing pending and nothing unacked.
// --quick (or SHOAL_BENCH_QUICK=1) is the CI size: 300 round trips and 2,000 messages.
//
// Numbers are reported, never asserted (bench/README.md); read the shoal/raw ratios.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nats/nats.h>

#include "base/clock.h"
#include "base/ids.h"
#include "bench_mesh.h"
#include "mesh/endpoint.h"
#include "mesh/outbound.h"
#include "planes/space_provisioner.h"
#include "wire/message.h"
#include "wire/names.h"
#include "wire/subject.h"

namespace {

using namespace shoal;
using bench::nowUs;
using bench::orDie;
using std::chrono::milliseconds;

constexpr std::string_view kSpace = "bench";
constexpr std::string_view kMarker = "dm-bench ";
constexpr int kIndexDigits = 7;
constexpr int kWarmup = 50;

struct Config {
  int roundTrips = 2000;
  int messages = 10000;
  int textBytes = 128;
  double passSeconds = 30;
  std::optional<milliseconds> fetchWait;  // nullopt: the endpoint's default
  int rawBatch = 64;                      // the DurablePump batch
  bool quick = false;
};

// The message text: the marker, a fixed-width index, then padding to `bytes`.
std::string textFor(int index, int bytes) {
  std::string text = fmt::format("{}{:0{}d} ", kMarker, index, kIndexDigits);
  if (static_cast<int>(text.size()) < bytes)
    text.append(static_cast<size_t>(bytes) - text.size(), 'x');
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

// Receive times by message index, shared by the receiving thread and the driver.
class Arrivals {
 public:
  void reset(int count) {
    std::lock_guard lock(mu_);
    at_.assign(static_cast<size_t>(count), 0);
    received_ = 0;
    strays_ = 0;
  }
  void record(int index, int64_t us) {
    {
      std::lock_guard lock(mu_);
      if (index < 0 || static_cast<size_t>(index) >= at_.size() ||
          at_[static_cast<size_t>(index)]) {
        ++strays_;  // a warm-up leftover or a redelivery: not part of this pass
        return;
      }
      at_[static_cast<size_t>(index)] = us;
      ++received_;
    }
    cv_.notify_all();
  }
  // The receive time of `index`, or 0 if it did not arrive before `deadlineUs`.
  int64_t waitFor(int index, int64_t deadlineUs) {
    std::unique_lock lock(mu_);
    while (at_[static_cast<size_t>(index)] == 0) {
      int64_t left = deadlineUs - nowUs();
      if (left <= 0) return 0;
      cv_.wait_for(lock, std::chrono::microseconds(left));
    }
    return at_[static_cast<size_t>(index)];
  }
  // True once `count` messages arrived, false at the deadline.
  bool waitForCount(int count, int64_t deadlineUs) {
    std::unique_lock lock(mu_);
    while (received_ < count) {
      int64_t left = deadlineUs - nowUs();
      if (left <= 0) return false;
      cv_.wait_for(lock, std::chrono::microseconds(left));
    }
    return true;
  }
  std::vector<int64_t> times() const {
    std::lock_guard lock(mu_);
    return at_;
  }
  int strays() const {
    std::lock_guard lock(mu_);
    return strays_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int64_t> at_;  // 0: not received
  int received_ = 0;
  int strays_ = 0;
};

// One side of the comparison: how to send message `index` (blocking until the publish is
// acknowledged), with arrivals recorded by that side's receiver.
struct Side {
  std::string name;
  std::function<Status(int index)> send;
  Arrivals* arrivals = nullptr;
};

struct SequentialResult {
  bench::LatencySummary latency;
  bench::LatencySummary publish;
  int lost = 0;
};

struct ThroughputResult {
  int sent = 0;
  int received = 0;
  double seconds = 0;
  double perSecond = 0;
  bench::LatencySummary latency;
};

void warmUp(Side& side) {
  side.arrivals->reset(kWarmup);
  int64_t deadline = nowUs() + 10'000'000;
  for (int i = 0; i < kWarmup; ++i) {
    orDie(side.send(i), side.name + " warm-up send");
    if (side.arrivals->waitFor(i, deadline) == 0)
      orDie(deadlineExceeded("lost", "no receive"), side.name + " warm-up");
  }
}

SequentialResult runSequential(Side& side, int count, double budgetSeconds) {
  warmUp(side);
  side.arrivals->reset(count);
  std::vector<int64_t> latency, publish;
  SequentialResult result;
  const int64_t passEnd = nowUs() + static_cast<int64_t>(budgetSeconds * 1e6);
  for (int i = 0; i < count && nowUs() < passEnd; ++i) {
    int64_t t0 = nowUs();
    orDie(side.send(i), side.name + " send");
    int64_t t1 = nowUs();
    int64_t received = side.arrivals->waitFor(i, t1 + 10'000'000);
    if (received == 0) {
      ++result.lost;
      continue;
    }
    publish.push_back(t1 - t0);
    latency.push_back(received - t0);
  }
  result.latency = bench::summarize(latency);
  result.publish = bench::summarize(publish);
  return result;
}

ThroughputResult runThroughput(Side& side, int count, double budgetSeconds) {
  side.arrivals->reset(count);
  std::vector<int64_t> sentAt(static_cast<size_t>(count), 0);
  std::atomic<int> sent{0};
  const int64_t passEnd = nowUs() + static_cast<int64_t>(budgetSeconds * 1e6);
  const int64_t start = nowUs();
  std::thread sender([&] {
    for (int i = 0; i < count && nowUs() < passEnd; ++i) {
      sentAt[static_cast<size_t>(i)] = nowUs();
      orDie(side.send(i), side.name + " send");
      sent.store(i + 1);
    }
  });
  sender.join();
  // Whatever was sent gets a few seconds more to arrive.
  side.arrivals->waitForCount(sent.load(), std::max(passEnd, nowUs()) + 5'000'000);
  ThroughputResult result;
  result.sent = sent.load();
  std::vector<int64_t> times = side.arrivals->times();
  std::vector<int64_t> latency;
  int64_t last = start;
  for (int i = 0; i < result.sent; ++i) {
    int64_t at = times[static_cast<size_t>(i)];
    if (at == 0) continue;
    ++result.received;
    last = std::max(last, at);
    latency.push_back(at - sentAt[static_cast<size_t>(i)]);
  }
  result.seconds = static_cast<double>(last - start) / 1e6;
  result.perSecond = result.seconds > 0 ? result.received / result.seconds : 0;
  result.latency = bench::summarize(latency);
  return result;
}

// --- The raw nats.c side ---------------------------------------------------------------------

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
  milliseconds fetchWait{500};
  int batch = 64;
  // natsOptions_SetSendAsap on the consumer's connection (the pull requests and acks).
  bool consumerSendAsap = false;
};

// A plain nats.c sender and pull consumer, each on its own connection (as Alice and Bob are),
// on a durable the manager provisioned like Bob's. Both connections use nats.c's defaults, as
// the endpoint's connection does, unless consumerSendAsap.
class RawDm {
 public:
  explicit RawDm(RawOptions options) : o_(std::move(options)) {
    pubConn_ = connect(false);
    subConn_ = connect(o_.consumerSendAsap);
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

  Arrivals& arrivals() { return arrivals_; }

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
        arrivals_.record(indexIn(data), at);
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
  Arrivals arrivals_;
  std::atomic<bool> stopping_{false};
  std::thread receiver_;
};

// --- Reporting -------------------------------------------------------------------------------

void printLatencyRow(const std::string& name, const bench::LatencySummary& s) {
  std::printf("    %-28s %6zu %10.3f %10.3f %10.3f %10.3f\n", name.c_str(), s.n, s.p50Ms, s.p99Ms,
              s.maxMs, s.meanMs);
}

std::string pendingWords(transport::JetStream& js, const std::string& stream,
                         const std::string& durable) {
  auto info = js.consumerInfo(stream, durable);
  if (!info.isOk()) return "consumer info failed: " + info.status().toString();
  return fmt::format("pending {}, ack-pending {}, redelivered {}", info->numPending,
                     info->numAckPending, info->numRedelivered);
}

Config parse(int argc, char** argv) {
  Config c;
  const char* env = std::getenv("SHOAL_BENCH_QUICK");
  bool quick = env != nullptr && *env != '\0' && std::strcmp(env, "0") != 0;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
  if (quick) {
    c.quick = true;
    c.roundTrips = 300;
    c.messages = 2000;
    c.passSeconds = 4;
  }
  for (int i = 1; i + 1 < argc; ++i) {
    std::string_view flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--round-trips") c.roundTrips = std::max(1, std::atoi(value));
    if (flag == "--messages") c.messages = std::max(1, std::atoi(value));
    if (flag == "--text-bytes") c.textBytes = std::max(16, std::atoi(value));
    if (flag == "--pass-seconds") c.passSeconds = std::max(0.5, std::atof(value));
    if (flag == "--fetch-wait-ms") c.fetchWait = milliseconds(std::max(1, std::atoi(value)));
    if (flag == "--raw-batch") c.rawBatch = std::max(1, std::atoi(value));
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  Config config = parse(argc, argv);
  auto mesh = bench::BenchMesh::start(std::string(kSpace));
  const std::string dmStream = orDie(wire::streamName(wire::Stream::kDm, kSpace), "stream name");

  // Bob receives; Alice only sends (no DM durable of her own).
  Arrivals shoalArrivals;
  mesh::EndpointOptions bobOptions;
  bobOptions.servers = {mesh->url()};
  bobOptions.space = std::string(kSpace);
  bobOptions.principal = wire::Principal{"local", "bob"};
  if (config.fetchWait) bobOptions.fetchWait = *config.fetchWait;
  const milliseconds fetchWait = bobOptions.fetchWait;
  bobOptions.onDelivery = [&shoalArrivals](const mesh::Delivery& d) {
    int64_t at = nowUs();
    const auto* text =
        d.message.parts.empty() ? nullptr : std::get_if<wire::TextPart>(&d.message.parts.front());
    shoalArrivals.record(text ? indexIn(text->text) : -1, at);
    return mesh::HandlerVerdict::kAccepted;
  };
  auto bob = orDie(mesh::Endpoint::open(std::move(bobOptions)), "opening bob");
  mesh::EndpointOptions aliceOptions;
  aliceOptions.servers = {mesh->url()};
  aliceOptions.space = std::string(kSpace);
  aliceOptions.principal = wire::Principal{"local", "alice"};
  aliceOptions.receiveDirect = false;
  auto alice = orDie(mesh::Endpoint::open(std::move(aliceOptions)), "opening alice");
  const std::string bobId = bob->id();
  Side shoalSide{"shoal",
                 [&](int index) {
                   return alice->sendDirect(bobId, textFor(index, config.textBytes)).status();
                 },
                 &shoalArrivals};

  // The raw sides: the same stream, a durable provisioned like Bob's (provisionPrincipal), a DM
  // subject to a principal no endpoint uses, and a real envelope of the same size as Shoal's.
  const wire::Principal rawFrom{"local", "rawalice"};
  std::string payload;
  std::vector<std::pair<wire::Principal, std::string>> rawDurables;
  auto makeRaw = [&](std::string actor, bool consumerSendAsap) {
    const wire::Principal to{"local", std::move(actor)};
    auto uid = orDie(newLifecycleUid(), "lifecycle uid");
    auto provisioned =
        orDie(planes::provisionPrincipal(mesh->js(), kSpace, to, uid, {}), "raw durable");
    rawDurables.emplace_back(to, provisioned.dmDurable);
    mesh::Outbound outbound;
    outbound.kind = wire::DeliveryKind::kDm;
    outbound.target = to.dotForm();
    outbound.text = textFor(0, config.textBytes);
    auto envelope =
        orDie(mesh::buildMessage(Clock::real(), kSpace,
                                 mesh::Sender{rawFrom, rawFrom.actor, std::nullopt}, outbound),
              "raw envelope");
    payload = orDie(wire::encodeMessage(envelope), "raw payload");
    RawOptions o;
    o.url = mesh->url();
    o.subject = orDie(mesh::outboundSubject(kSpace, rawFrom, outbound), "raw subject");
    o.filter = orDie(wire::dmFilter(kSpace, to), "raw filter");
    o.stream = dmStream;
    o.durable = provisioned.dmDurable;
    o.payloadTemplate = payload;
    o.fetchWait = fetchWait;
    o.batch = config.rawBatch;
    o.consumerSendAsap = consumerSendAsap;
    return std::make_unique<RawDm>(std::move(o));
  };
  auto raw = makeRaw("rawbob", false);
  auto rawAsap = makeRaw("rawbob_asap", true);
  Side rawSide{"raw", [&](int index) { return raw->send(index); }, &raw->arrivals()};
  Side rawAsapSide{"raw+asap", [&](int index) { return rawAsap->send(index); },
                   &rawAsap->arrivals()};

  std::printf("dm_bench: %s run, nats-server pid %d, space '%.*s', %u CPUs\n",
              config.quick ? "quick" : "full", mesh->serverPid(), static_cast<int>(kSpace.size()),
              kSpace.data(), std::thread::hardware_concurrency());
  std::printf(
      "  text %d bytes → envelope %zu bytes; fetch batch %d (Bob's DurablePump: 64), fetch wait "
      "%lld ms\n"
      "  raw       = nats.c, sender and consumer on two default connections (as Alice and Bob)\n"
      "  raw+asap  = the same with natsOptions_SetSendAsap on the consumer's connection\n\n",
      config.textBytes, payload.size(), config.rawBatch, static_cast<long long>(fetchWait.count()));

  SequentialResult rawSeq = runSequential(rawSide, config.roundTrips, config.passSeconds);
  SequentialResult asapSeq = runSequential(rawAsapSide, config.roundTrips, config.passSeconds);
  SequentialResult shoalSeq = runSequential(shoalSide, config.roundTrips, config.passSeconds);
  ThroughputResult rawTput = runThroughput(rawSide, config.messages, config.passSeconds);
  ThroughputResult asapTput = runThroughput(rawAsapSide, config.messages, config.passSeconds);
  ThroughputResult shoalTput = runThroughput(shoalSide, config.messages, config.passSeconds);

  std::printf("Sequential round trips (one in flight; budget %.0f s per side)\n",
              config.passSeconds);
  std::printf("  %-30s %6s %10s %10s %10s %10s\n", "send start to receive", "n", "p50 ms", "p99 ms",
              "max ms", "mean ms");
  printLatencyRow("raw", rawSeq.latency);
  printLatencyRow("raw+asap", asapSeq.latency);
  printLatencyRow("shoal (sendDirect → handler)", shoalSeq.latency);
  std::printf("  publish call alone\n");
  printLatencyRow("raw js_Publish", rawSeq.publish);
  printLatencyRow("shoal sendDirect", shoalSeq.publish);
  int lost = rawSeq.lost + asapSeq.lost + shoalSeq.lost;
  if (lost > 0)
    std::printf("  lost (no receive within 10 s): raw %d, raw+asap %d, shoal %d\n", rawSeq.lost,
                asapSeq.lost, shoalSeq.lost);

  std::printf("\nThroughput (one sender thread, back to back; budget %.0f s per side)\n",
              config.passSeconds);
  std::printf("  %-30s %6s %6s %9s %10s %10s %10s\n", "", "sent", "recv", "msgs/s", "p50 ms",
              "p99 ms", "max ms");
  auto tputRow = [](const char* name, const ThroughputResult& r) {
    std::printf("  %-30s %6d %6d %9.0f %10.3f %10.3f %10.3f\n", name, r.sent, r.received,
                r.perSecond, r.latency.p50Ms, r.latency.p99Ms, r.latency.maxMs);
  };
  tputRow("raw", rawTput);
  tputRow("raw+asap", asapTput);
  tputRow("shoal", shoalTput);

  std::printf("\nRatios shoal / raw (shoal / raw+asap)\n");
  std::printf("  sequential p50   %s (%s)\n",
              bench::ratio(shoalSeq.latency.p50Ms, rawSeq.latency.p50Ms).c_str(),
              bench::ratio(shoalSeq.latency.p50Ms, asapSeq.latency.p50Ms).c_str());
  std::printf("  sequential p99   %s (%s)\n",
              bench::ratio(shoalSeq.latency.p99Ms, rawSeq.latency.p99Ms).c_str(),
              bench::ratio(shoalSeq.latency.p99Ms, asapSeq.latency.p99Ms).c_str());
  std::printf("  publish call p50 %s\n",
              bench::ratio(shoalSeq.publish.p50Ms, rawSeq.publish.p50Ms).c_str());
  std::printf("  throughput       %s (%s)\n",
              bench::ratio(shoalTput.perSecond, rawTput.perSecond).c_str(),
              bench::ratio(shoalTput.perSecond, asapTput.perSecond).c_str());

  std::this_thread::sleep_for(milliseconds(500));  // let the last fire-and-forget acks land
  std::printf("\nAfter the run (nothing should be pending or unacked)\n");
  std::printf("  bob          %s\n", pendingWords(mesh->js(), dmStream, bob->dmDurable()).c_str());
  for (const auto& [to, durable] : rawDurables)
    std::printf("  %-12s %s\n", to.actor.c_str(),
                pendingWords(mesh->js(), dmStream, durable).c_str());
  auto counters = bob->counters();
  std::printf("  bob surfaced %llu, duplicates %llu, anomalies %llu, retries %llu\n",
              static_cast<unsigned long long>(counters.surfaced),
              static_cast<unsigned long long>(counters.duplicates),
              static_cast<unsigned long long>(counters.anomalies),
              static_cast<unsigned long long>(counters.retries));
  rawAsap.reset();
  raw.reset();
  (void)alice->close();
  (void)bob->close();
  return 0;
}
