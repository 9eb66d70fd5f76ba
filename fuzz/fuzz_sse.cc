// fuzz_sse: arbitrary bytes through the two framings under OpenCode's event stream
// (http/sse_decoder.h): the SSE grammar (SseDecoder) and chunked transfer coding
// (ChunkedDecoder), each fed whole and in pieces whose sizes come from the input; then the
// input as a payload, encoded (data lines, then chunks) and decoded back the way EventStream
// stacks the two.
//
// Properties (besides "no crash, no sanitizer report"):
// - SSE: the events do not depend on how the bytes were split; no event is empty or holds a
//   CR; together they are never longer than the input; nothing is pending after finish();
// - chunked: a split feed fails whenever the whole one does (it may fail sooner: a size line
//   over 1 KiB waiting for its CRLF), and when neither fails both give the same payload, end
//   and leftover; the payload is never longer than the input; a refusal is
//   `event-stream-malformed`;
// - round trip: the input, written as `data:` lines (one per input line) inside chunks of
//   input-chosen sizes, decodes back to one event equal to its lines joined with "\n", however
//   the encoded bytes are split.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "fuzz_input.h"
#include "http/sse_decoder.h"

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

struct Chunked {
  Status status;
  std::string payload;
  std::string leftover;
  bool ended = false;
};

Chunked chunkedWhole(std::string_view in) {
  ChunkedDecoder d;
  Chunked out;
  out.leftover = std::string(in);
  out.status = d.decode(out.leftover, out.payload);
  out.ended = d.ended();
  return out;
}

Chunked chunkedSplit(std::string_view in, uint32_t seed) {
  ChunkedDecoder d;
  Chunked out;
  fuzz::PieceSizes sizes(seed);
  for (size_t at = 0; at < in.size() && out.status.isOk();) {
    const size_t n = std::min(sizes.next(64), in.size() - at);
    out.leftover.append(in.substr(at, n));
    at += n;
    out.status = d.decode(out.leftover, out.payload);
  }
  out.ended = d.ended();
  return out;
}

void checkChunked(std::string_view in, uint32_t seed) {
  const Chunked whole = chunkedWhole(in);
  const Chunked split = chunkedSplit(in, seed);
  for (const Chunked* c : {&whole, &split}) {
    FUZZ_REQUIRE(c->payload.size() <= in.size());
    if (!c->status.isOk()) FUZZ_REQUIRE(c->status.reason() == "event-stream-malformed");
  }
  if (!whole.status.isOk()) FUZZ_REQUIRE(!split.status.isOk());
  if (whole.status.isOk() && split.status.isOk()) {
    FUZZ_REQUIRE(split.payload == whole.payload);
    FUZZ_REQUIRE(split.ended == whole.ended);
    FUZZ_REQUIRE(split.leftover == whole.leftover);
  }
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
  const std::string wire = chunkEncode(sse, seed);
  ChunkedDecoder chunks;
  SseDecoder events;
  std::vector<std::string> out;
  std::string pending, payload;
  fuzz::PieceSizes sizes(seed + 1);
  for (size_t at = 0; at < wire.size();) {
    const size_t n = std::min(sizes.next(32), wire.size() - at);
    pending.append(wire, at, n);
    at += n;
    payload.clear();
    FUZZ_REQUIRE(chunks.decode(pending, payload).isOk());
    events.feed(payload, out);
  }
  FUZZ_REQUIRE(chunks.ended());
  FUZZ_REQUIRE(pending.empty());
  FUZZ_REQUIRE(events.pendingBytes() == 0);
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
  shoal::http::checkChunked(in, seed);
  shoal::http::checkRoundTrip(in, seed);
  return 0;
}
