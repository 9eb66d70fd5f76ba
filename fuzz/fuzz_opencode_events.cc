// fuzz_opencode_events: arbitrary bytes as the data of one SSE event of OpenCode's `GET /event`
// (runtime/opencode/events.h, parseOpenCodeEvent), and as the strings the request bodies embed.
//
// Properties (besides "no crash, no sanitizer report"):
// - a refusal is `opencode-event-malformed` with a message; anything that is not a JSON object
//   with a non-empty string `type` is refused;
// - an accepted event keeps its raw type, and each known kind carries its identifying fields
//   (message: id, session and role; part: message id and session; status: session and a
//   status; idle: session; error: an error name);
// - the prompt_async and summarize bodies are JSON objects that carry their inputs verbatim.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json.hpp>

#include "fuzz_check.h"
#include "fuzz_input.h"
#include "runtime/opencode/events.h"
#include "wire/token.h"

namespace shoal::runtime {
namespace {

namespace json = boost::json;

bool hasNonEmptyStringType(std::string_view data) {
  boost::system::error_code ec;
  json::value v = json::parse(data, ec);
  if (ec || !v.is_object()) return false;
  const json::value* type = v.as_object().if_contains("type");
  return type != nullptr && type->is_string() && !type->as_string().empty();
}

void checkParse(std::string_view in) {
  const Result<OpenCodeEvent> e = parseOpenCodeEvent(in);
  if (!e.isOk()) {
    FUZZ_REQUIRE(e.status().reason() == "opencode-event-malformed");
    FUZZ_REQUIRE(!e.status().message().empty());
    return;
  }
  FUZZ_REQUIRE(hasNonEmptyStringType(in));
  FUZZ_REQUIRE(!e->type.empty());
  using K = OpenCodeEvent::Kind;
  switch (e->kind) {
    case K::kMessage:
      FUZZ_REQUIRE(!e->messageId.empty() && !e->sessionId.empty() && !e->role.empty());
      if (!e->errorMessage.empty()) FUZZ_REQUIRE(!e->errorName.empty());
      break;
    case K::kPart:
      FUZZ_REQUIRE(!e->messageId.empty() && !e->sessionId.empty());
      break;
    case K::kStatus:
      FUZZ_REQUIRE(!e->sessionId.empty() && !e->status.empty());
      FUZZ_REQUIRE(e->status == "retry" || (e->retryAttempt == 0 && e->errorMessage.empty()));
      break;
    case K::kIdle:
      FUZZ_REQUIRE(!e->sessionId.empty());
      break;
    case K::kError:
      FUZZ_REQUIRE(!e->errorName.empty());
      break;
    default:
      break;
  }
}

json::object body(const std::string& text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  FUZZ_REQUIRE(!ec && v.is_object());
  return v.as_object();
}

void checkBodies(std::string_view in) {
  if (!wire::isValidUtf8(in)) return;  // the seat only ever hands OpenCode valid UTF-8
  const std::string_view id = fuzz::utf8Prefix(in, 30);
  const json::object prompt = body(openCodePromptBody(id, in));
  FUZZ_REQUIRE(prompt.at("messageID").as_string() == id);
  const json::array& parts = prompt.at("parts").as_array();
  FUZZ_REQUIRE(parts.size() == 1 && parts[0].as_object().at("text").as_string() == in);
  const json::object summarize = body(openCodeSummarizeBody(id, in));
  FUZZ_REQUIRE(summarize.at("providerID").as_string() == id);
  FUZZ_REQUIRE(summarize.at("modelID").as_string() == in);
}

}  // namespace
}  // namespace shoal::runtime

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data,  // NOLINT(readability-identifier-naming)
                                      size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  shoal::runtime::checkParse(in);
  shoal::runtime::checkBodies(in);
  return 0;
}
