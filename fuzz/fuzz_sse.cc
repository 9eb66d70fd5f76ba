// fuzz_sse: arbitrary bytes through the framings under OpenCode's event stream: the SSE
// grammar (http/sse_decoder.h, SseDecoder) and the response parser (http/stream_parser.h,
// StreamParser: Beast's HTTP/1.1 parser under the SSE grammar), each fed whole and in pieces
// whose sizes come from the input; then the input as a payload, encoded (data lines, then
// chunks) and parsed back the way EventStream reads it.
//
// Properties (besides "no crash, no sanitizer report"):
// - SSE: the events do not depend on how the bytes were split; no event is empty or holds a
//   CR; together they are never longer than the input; nothing is pending after finish();
// - response: the input as the body of a chunked event-stream response: a split feed fails
//   exactly when the whole one does, with the same refusal, and otherwise gives the same events
//   and the same end; a refusal is `event-stream-malformed` (the head is valid);
// - round trip: the input, written as `data:` lines (one per input line) inside chunks of
//   input-chosen sizes after a chunked head, parses back to one event equal to its lines
//   joined with "\n", however the bytes are split, and the body ends.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "fuzz_input.h"
#include "http/sse_decoder.h"
#include "http/stream_parser.h"

namespace shoal::http {
namespace {

std::vector<std::string> sseWhole(std::string_view in) {
  SseDecoder d;
  std::vector<std::string> events;
  d.feed(in, events);
  d.finish(events);
  FUZZ_REQUIRE(d.pendingBytes() == 0);
  return events;
}

std::vector<std::string> sseSplit(std::string_view in, uint32_t seed) {
  SseDecoder d;
  std::vector<std::string> events;
  fuzz::PieceSizes sizes(seed);
  for (size_t at = 0; at < in.size();) {
    const size_t n = std::min(sizes.next(16), in.size() - at);
    d.feed(in.substr(at, n), events);
    at += n;
  }
  d.finish(events);
  FUZZ_REQUIRE(d.pendingBytes() == 0);
  return events;
}

void checkSse(std::string_view in, uint32_t seed) {
  const std::vector<std::string> events = sseWhole(in);
  FUZZ_REQUIRE(sseSplit(in, seed) == events);
  size_t total = 0;
  for (const std::string& e : events) {
    FUZZ_REQUIRE(!e.empty());
    FUZZ_REQUIRE(e.find('\r') == std::string::npos);
    total += e.size();
  }
  FUZZ_REQUIRE(total <= in.size());
}

constexpr std::string_view kChunkedHead =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";

struct Parsed {
  Status status;
  std::vector<std::string> events;
  bool ended = false;
};

Parsed parseWhole(std::string_view body) {
  StreamParser p;
  Parsed out;
  std::string bytes = std::string(kChunkedHead) + std::string(body);
  out.status = p.feed(bytes, out.events);
  out.ended = p.ended();
  return out;
}

Parsed parseSplit(std::string_view body, uint32_t seed) {
  StreamParser p;
  Parsed out;
  const std::string response = std::string(kChunkedHead) + std::string(body);
  std::string pending;
  fuzz::PieceSizes sizes(seed);
  for (size_t at = 0; at < response.size() && out.status.isOk();) {
    const size_t n = std::min(sizes.next(64), response.size() - at);
    pending.append(response, at, n);
    at += n;
    out.status = p.feed(pending, out.events);
  }
  out.ended = p.ended();
  return out;
}

void checkResponse(std::string_view in, uint32_t seed) {
  const Parsed whole = parseWhole(in);
  const Parsed split = parseSplit(in, seed);
  FUZZ_REQUIRE(whole.status.isOk() == split.status.isOk());
  FUZZ_REQUIRE(whole.status.reason() == split.status.reason());
  if (!whole.status.isOk()) FUZZ_REQUIRE(whole.status.reason() == "event-stream-malformed");
  if (whole.status.isOk()) {
    FUZZ_REQUIRE(split.events == whole.events);
    FUZZ_REQUIRE(split.ended == whole.ended);
  }
  size_t total = 0;
  for (const std::string& e : whole.events)
    total += e.size();
  FUZZ_REQUIRE(total <= in.size());
}

// The input as one SSE event — a `data:` line per input line, CRs dropped, then the blank
// line — and, in `expected`, the data it must decode to: those lines joined with "\n".
std::string sseEncode(std::string_view in, std::string& expected) {
  std::string body;
  for (size_t start = 0;;) {
    const size_t nl = in.find('\n', start);
    std::string line;
    for (char c : in.substr(start, nl == std::string_view::npos ? nl : nl - start)) {
      if (c != '\r') line += c;
    }
    if (start != 0) expected += '\n';
    expected += line;
    body += "data: " + line + "\n";
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return body + "\n";
}

std::string chunkEncode(std::string_view payload, uint32_t seed) {
  static constexpr char kHex[] = "0123456789abcdef";
  fuzz::PieceSizes sizes(seed ^ 0x5a5a5a5aU);
  std::string out;
  for (size_t at = 0; at < payload.size();) {
    const size_t n = std::min(sizes.next(300), payload.size() - at);
    std::string size;
    for (size_t v = n; v > 0; v /= 16)
      size.insert(size.begin(), kHex[v % 16]);
    out += size + "\r\n";
    out.append(payload.substr(at, n));
    out += "\r\n";
    at += n;
  }
  return out + "0\r\n\r\n";
}

void checkRoundTrip(std::string_view in, uint32_t seed) {
  std::string expected;
  const std::string sse = sseEncode(in, expected);
  const std::string wire = std::string(kChunkedHead) + chunkEncode(sse, seed);
  StreamParser parser;
  std::vector<std::string> out;
  std::string pending;
  fuzz::PieceSizes sizes(seed + 1);
  for (size_t at = 0; at < wire.size();) {
    const size_t n = std::min(sizes.next(32), wire.size() - at);
    pending.append(wire, at, n);
    at += n;
    FUZZ_REQUIRE(parser.feed(pending, out).isOk());
  }
  FUZZ_REQUIRE(parser.ended());
  FUZZ_REQUIRE(pending.empty());
  FUZZ_REQUIRE(parser.pendingBytes() == 0);
  if (expected.empty()) {
    FUZZ_REQUIRE(out.empty());
  } else {
    FUZZ_REQUIRE(out.size() == 1 && out[0] == expected);
  }
}

}  // namespace
}  // namespace shoal::http

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data,  // NOLINT(readability-identifier-naming)
                                      size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const uint32_t seed = size > 0 ? data[0] : 0;
  shoal::http::checkSse(in, seed);
  shoal::http::checkResponse(in, seed);
  shoal::http::checkRoundTrip(in, seed);
  return 0;
}
