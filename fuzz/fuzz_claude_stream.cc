// fuzz_claude_stream: arbitrary bytes as one line of Claude Code's stream-json stdout
// (runtime/claude/stream.h, parseClaudeLine), and as the uuid and text the stdin-line builders
// embed.
//
// Properties (besides "no crash, no sanitizer report"):
// - a refusal is `malformed-frame` with a message, exactly when the line is not a JSON object
//   with a string `type`;
// - only a result or an api_retry line carries a condition; an error result's detail and every
//   condition message are clipped (500 / 300 bytes and an ellipsis) on a UTF-8 boundary;
// - every line the driver writes (user line, initialize, interrupt) is one line — a single '\n'
//   at its end — that parses back: the user line as work with the text verbatim.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json.hpp>

#include "fuzz_check.h"
#include "fuzz_input.h"
#include "runtime/claude/stream.h"
#include "wire/token.h"

namespace shoal::runtime {
namespace {

namespace json = boost::json;

constexpr size_t kEllipsis = std::string_view("…").size();

bool isObjectWithStringType(std::string_view line) {
  boost::system::error_code ec;
  json::value v = json::parse(line, ec);
  if (ec || !v.is_object()) return false;
  const json::value* type = v.as_object().if_contains("type");
  return type != nullptr && type->is_string();
}

// One line the driver writes: newline-terminated, no other newline, a JSON object.
json::object writtenLine(const std::string& line) {
  FUZZ_REQUIRE(!line.empty() && line.back() == '\n');
  FUZZ_REQUIRE(line.find('\n') == line.size() - 1);
  boost::system::error_code ec;
  json::value v = json::parse(line, ec);
  FUZZ_REQUIRE(!ec && v.is_object());
  return v.as_object();
}

void checkParse(std::string_view in) {
  const Result<ClaudeLine> line = parseClaudeLine(in);
  FUZZ_REQUIRE(line.isOk() == isObjectWithStringType(in));
  if (!line.isOk()) {
    FUZZ_REQUIRE(line.status().reason() == "malformed-frame");
    FUZZ_REQUIRE(!line.status().message().empty());
    return;
  }
  using K = ClaudeLine::Kind;
  const bool conditioned = line->kind == K::kRetry || (line->kind == K::kResult && line->isError);
  FUZZ_REQUIRE(line->condition.has_value() == conditioned);
  if (line->kind == K::kResult && line->isError) {
    FUZZ_REQUIRE(!line->detail.empty());
    FUZZ_REQUIRE(line->detail.size() <= 500 + kEllipsis);
    FUZZ_REQUIRE(wire::isValidUtf8(line->detail));
  }
  if (line->condition && line->condition->message) {
    FUZZ_REQUIRE(line->condition->message->size() <= 300 + kEllipsis);
    FUZZ_REQUIRE(wire::isValidUtf8(*line->condition->message));
  }
}

void checkBuilders(std::string_view in) {
  if (!wire::isValidUtf8(in)) return;  // the seat only ever hands Claude valid UTF-8
  const std::string_view uuid = fuzz::utf8Prefix(in, 36);
  const std::string user = claudeUserLine(uuid, in);
  const json::object o = writtenLine(user);
  FUZZ_REQUIRE(o.at("uuid").as_string() == uuid);
  FUZZ_REQUIRE(o.at("message").as_object().at("content").as_string() == in);
  const Result<ClaudeLine> parsed = parseClaudeLine(user);
  FUZZ_REQUIRE(parsed.isOk() && parsed->kind == ClaudeLine::Kind::kWork);
  for (const std::string& control : {claudeInitializeRequest(uuid), claudeInterruptRequest(uuid)}) {
    const json::object c = writtenLine(control);
    FUZZ_REQUIRE(c.at("request_id").as_string() == uuid);
    const Result<ClaudeLine> back = parseClaudeLine(control);
    FUZZ_REQUIRE(back.isOk() && back->kind == ClaudeLine::Kind::kOther);
  }
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
