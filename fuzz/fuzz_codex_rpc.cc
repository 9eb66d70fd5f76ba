// fuzz_codex_rpc: arbitrary bytes as one line of `codex app-server` output (runtime/codex/rpc.h,
// parseCodexLine), then through what the driver does with a parsed line (codexReadSnapshot,
// codexThreadLost, codexDecline), and as the strings the request builders embed.
//
// Properties (besides "no crash, no sanitizer report"):
// - a refusal is `malformed-frame` with a message, exactly when the line is not a JSON object;
// - a response carries no method; a server request carries its method and its id as JSON text
//   (JSON unless it holds a number Boost.JSON writes as Infinity / NaN: fuzz_json.h), and the
//   decline the driver answers it with is one line that reads back as a response;
// - every tool marker is an inbox receipt (`shoal-rcpt-` + 32 lowercase hex digits);
// - a read snapshot is never both complete and pending, and says nothing about another
//   thread; only an error response to -32600 or
//   -32000 can mean "thread lost"; a failed turn and an `error` notification carry a condition;
// - every request line the driver writes is one line that parses back with its method.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json.hpp>

#include "fuzz_check.h"
#include "fuzz_input.h"
#include "fuzz_json.h"
#include "runtime/codex/rpc.h"
#include "wire/inbox_receipt.h"
#include "wire/token.h"

namespace shoal::runtime {
namespace {

namespace json = boost::json;

bool isJsonObject(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  return !ec && v.is_object();
}

// One line the driver writes: newline-terminated, no other newline, and what it parses as.
CodexLine writtenLine(const std::string& line) {
  FUZZ_REQUIRE(!line.empty() && line.back() == '\n');
  FUZZ_REQUIRE(line.find('\n') == line.size() - 1);
  const Result<CodexLine> parsed = parseCodexLine(line);
  FUZZ_REQUIRE(parsed.isOk());
  return *parsed;
}

bool isReceipt(std::string_view marker) {
  if (marker.size() != wire::kInboxReceiptPrefix.size() + wire::kInboxReceiptHexDigits)
    return false;
  if (marker.substr(0, wire::kInboxReceiptPrefix.size()) != wire::kInboxReceiptPrefix) return false;
  for (char c : marker.substr(wire::kInboxReceiptPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

void checkParse(std::string_view in) {
  const Result<CodexLine> line = parseCodexLine(in);
  FUZZ_REQUIRE(line.isOk() == isJsonObject(in));
  if (!line.isOk()) {
    FUZZ_REQUIRE(line.status().reason() == "malformed-frame");
    FUZZ_REQUIRE(!line.status().message().empty());
    return;
  }
  using K = CodexLine::Kind;
  if (line->kind == K::kResponse || line->kind == K::kErrorResponse) {
    FUZZ_REQUIRE(line->method.empty());
  }
  if (line->kind == K::kServerRequest) {
    FUZZ_REQUIRE(!line->method.empty());
    boost::system::error_code ec;
    (void)json::parse(line->requestId, ec);
    FUZZ_REQUIRE(!ec || !fuzz::allFinite(json::parse(in)));  // Infinity / NaN: fuzz_json.h
    const CodexLine answer = writtenLine(codexDecline(line->requestId, line->method));
    FUZZ_REQUIRE(answer.kind == K::kResponse || answer.kind == K::kErrorResponse);
  }
  for (const std::string& marker : line->toolMarkers)
    FUZZ_REQUIRE(isReceipt(marker));
  const CodexReadSnapshot snapshot = codexReadSnapshot(*line, line->threadId);
  FUZZ_REQUIRE(!(snapshot.complete && snapshot.pending));
  const CodexReadSnapshot other = codexReadSnapshot(*line, line->threadId + "x");
  FUZZ_REQUIRE(other.clientIds.empty() && other.markers.empty());
  FUZZ_REQUIRE(!other.complete && !other.pending);
  if (codexThreadLost(*line)) {
    FUZZ_REQUIRE(line->kind == K::kErrorResponse);
    FUZZ_REQUIRE(line->errorCode == -32600 || line->errorCode == -32000);
  }
  if (line->kind == K::kError ||
      (line->kind == K::kTurnCompleted && line->turnStatus == "failed")) {
    FUZZ_REQUIRE(line->condition.has_value() && line->condition->message.has_value());
    FUZZ_REQUIRE(!line->detail.empty());
  }
}

void checkBuilders(std::string_view in) {
  if (!wire::isValidUtf8(in)) return;  // the seat only ever hands Codex valid UTF-8
  const std::string_view a = fuzz::utf8Prefix(in, 24);
  const std::string_view b = fuzz::utf8Prefix(in.substr(a.size()), 24);
  const int64_t id = static_cast<int64_t>(in.size()) - 3;
  const auto method = [](const std::string& l) { return writtenLine(l).method; };
  FUZZ_REQUIRE(method(codexInitialize(id)) == "initialize");
  FUZZ_REQUIRE(method(codexInitialized()) == "initialized");
  FUZZ_REQUIRE(method(codexThreadStart(id, in)) == "thread/start");
  FUZZ_REQUIRE(method(codexThreadResume(id, a, in)) == "thread/resume");
  FUZZ_REQUIRE(method(codexThreadRead(id, a)) == "thread/read");
  FUZZ_REQUIRE(method(codexTurnInterrupt(id, a, b)) == "turn/interrupt");
  FUZZ_REQUIRE(method(codexThreadCompactStart(id, a)) == "thread/compact/start");
  FUZZ_REQUIRE(method(codexTurnStart(id, a, b, in)) == "turn/start");
  FUZZ_REQUIRE(method(codexTurnSteer(id, a, b, a, in)) == "turn/steer");
}

}  // namespace
}  // namespace shoal::runtime

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data,  // NOLINT(readability-identifier-naming)
                                      size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  shoal::runtime::checkParse(in);
  shoal::runtime::checkBuilders(in);
  return 0;
}
