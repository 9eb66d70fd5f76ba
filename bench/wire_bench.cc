// wire_bench: the wire codecs on the hot receive/send paths.
//
// Numbers are compared as ratios against the Baseline_* benchmarks of the same run (a bare
// boost::json::parse / serialize of the same bytes), never as absolute times, so a result
// means the same on a slow CI box and a fast laptop. Nothing here asserts a number.
#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "wire/inbound.h"
#include "wire/message.h"
#include "wire/presence.h"
#include "wire/spec_vectors.h"
#include "wire/subject.h"

#include <benchmark/benchmark.h>

namespace shoal::wire {
namespace {

// A larger envelope: 20 parts cycling through text, data, artifact and extension.
std::string makeLargeMessage() {
  CotalMessage m = *decodeMessage(spec::kMulticast);
  m.parts.clear();
  for (int i = 0; i < 20; ++i) {
    switch (i % 4) {
      case 0:
        m.parts.push_back(TextPart{"Paragraph " + std::to_string(i) +
                                       ": the reviewer asked for a smaller diff and a test that "
                                       "pins the behaviour, so here it is.",
                                   {}});
        break;
      case 1:
        m.parts.push_back(DataPart{R"({"file":"src/wire/message.cc","line":)" +
                                       std::to_string(100 + i) +
                                       R"(,"score":0.875,"tags":["perf","wire"],"ok":true})",
                                   {}});
        break;
      case 2:
        m.parts.push_back(ArtifactPart{"build-" + std::to_string(i) + ".log",
                                       "text/plain",
                                       "sha256:" + std::string(64, 'a'),
                                       123456,
                                       {}});
        break;
      default:
        m.parts.push_back(ExtensionPart{
            "ai.cotal.tool-call",
            R"({"kind":"ai.cotal.tool-call","tool":"grep","args":{"pattern":"TODO","n":)" +
                std::to_string(i) + "}}"});
    }
  }
  return *encodeMessage(m);
}

// Built once, on first use (not during static initialization).
const std::string& largeMessage() {
  static const std::string message = makeLargeMessage();
  return message;
}

constexpr std::string_view kPresence =
    R"({"card":{"id":"u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice","name":"alice","kind":"agent",)"
    R"("owner":"u_aaaaaaaaaaaaaaaaaaaaaaaaaa","actor":"alice","role":"reviewer",)"
    R"("tags":["cpp","review"],"meta":{"connector":"claude","model":"m","host":"h"},)"
    R"("protocolVersion":"0.4"},"status":"working","ts":1710000000000,)"
    R"("lifecycleUid":"abcdefghijklmnopqrstuvwxyz","activity":"reviewing PR 42",)"
    R"("attention":"open","channelModes":{"random":"muted"},"activeAt":1709999999500,)"
    R"("statusSince":1709999990000,"activitySince":1709999991000})";

void setBytes(benchmark::State& state, size_t bytes) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

void baselineParseMulticast(benchmark::State& state) {
  for (auto _ : state) {
    (void)_;
    benchmark::DoNotOptimize(boost::json::parse(spec::kMulticast));
  }
  setBytes(state, spec::kMulticast.size());
}
BENCHMARK(baselineParseMulticast)->Name("Baseline/BoostParse/Multicast");

void baselineParseLarge(benchmark::State& state) {
  const std::string& large = largeMessage();
  for (auto _ : state) {
    (void)_;
    benchmark::DoNotOptimize(boost::json::parse(large));
  }
  setBytes(state, largeMessage().size());
}
BENCHMARK(baselineParseLarge)->Name("Baseline/BoostParse/Large20Parts");

void baselineSerializeMulticast(benchmark::State& state) {
  const boost::json::value v = boost::json::parse(spec::kMulticast);
  for (auto _ : state) {
    (void)_;
    benchmark::DoNotOptimize(boost::json::serialize(v));
  }
  setBytes(state, spec::kMulticast.size());
}
BENCHMARK(baselineSerializeMulticast)->Name("Baseline/BoostSerialize/Multicast");

void decodeMulticast(benchmark::State& state) {
  for (auto _ : state) {
    (void)_;
    benchmark::DoNotOptimize(decodeMessage(spec::kMulticast));
  }
  setBytes(state, spec::kMulticast.size());
}
BENCHMARK(decodeMulticast)->Name("DecodeMessage/Multicast");

void encodeMulticast(benchmark::State& state) {
  const CotalMessage m = *decodeMessage(spec::kMulticast);
  for (auto _ : state) {
    (void)_;
    benchmark::DoNotOptimize(encodeMessage(m));
  }
  setBytes(state, spec::kMulticast.size());
}
BENCHMARK(encodeMulticast)->Name("EncodeMessage/Multicast");

void decodeLarge(benchmark::State& state) {
  const std::string& large = largeMessage();
  for (auto _ : state) {
    (void)_;
    benchmark::DoNotOptimize(decodeMessage(large));
  }
  setBytes(state, largeMessage().size());
}
BENCHMARK(decodeLarge)->Name("DecodeMessage/Large20Parts");

void encodeLarge(benchmark::State& state) {
  const CotalMessage m = *decodeMessage(largeMessage());
  for (auto _ : state) {
    (void)_;
    benchmark::DoNotOptimize(encodeMessage(m));
  }
  setBytes(state, largeMessage().size());
}
BENCHMARK(encodeLarge)->Name("EncodeMessage/Large20Parts");

void parseSubjectOf(benchmark::State& state, std::string_view subject) {
  for (auto _ : state) {
    (void)_;
    benchmark::DoNotOptimize(parseSubject(subject));
  }
}
BENCHMARK_CAPTURE(parseSubjectOf, chat, spec::kChatSubject)->Name("ParseSubject/chat");
BENCHMARK_CAPTURE(parseSubjectOf, inst, spec::kInstSubject)->Name("ParseSubject/inst");
BENCHMARK_CAPTURE(parseSubjectOf, svc, spec::kSvcSubject)->Name("ParseSubject/svc");

// The whole receive-side check of one delivery: parse, surfacing check, decode, sender check.
void readDeliveryMulticast(benchmark::State& state) {
  for (auto _ : state) {
    (void)_;
    benchmark::DoNotOptimize(readDelivery(spec::kChatSubject, spec::kMulticast));
  }
  setBytes(state, spec::kMulticast.size());
}
BENCHMARK(readDeliveryMulticast)->Name("ReadDelivery/Multicast");

void decodePresenceRecord(benchmark::State& state) {
  for (auto _ : state) {
    (void)_;
    benchmark::DoNotOptimize(decodePresence("u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice", kPresence));
  }
  setBytes(state, kPresence.size());
}
BENCHMARK(decodePresenceRecord)->Name("DecodePresence");

void encodePresenceRecord(benchmark::State& state) {
  const Presence p = *decodePresence("u_aaaaaaaaaaaaaaaaaaaaaaaaaa.alice", kPresence);
  for (auto _ : state) {
    (void)_;
    benchmark::DoNotOptimize(encodePresence(p));
  }
  setBytes(state, kPresence.size());
}
BENCHMARK(encodePresenceRecord)->Name("EncodePresence");

}  // namespace
}  // namespace shoal::wire

BENCHMARK_MAIN();
