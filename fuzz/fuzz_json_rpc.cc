// fuzz_json_rpc: arbitrary bytes as an MCP POST body through the JSON-RPC 2.0 framing
// (mcp/json_rpc.h, parseBody), then through the response builders.
//
// Properties (besides "no crash, no sanitizer report"):
// - a refused body has no messages, a Parse error (-32700) or Invalid Request (-32600) code
//   with a message, and an error id that is null (always, for a batch) or a string or finite
//   number;
// - an accepted body has at least one message (one unless it is a batch); requests carry a
//   method and a string or finite number id, notifications a method and no id, responses an id and
//   no method;
// - every accepted message, written back as JSON-RPC, parses back to the same kind, id, method
//   and params (params only when all their numbers are finite; doubles to an ulp or two:
//   fuzz_json.h); the error and result responses the server builds for an id parse as responses
//   with that id.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json.hpp>

#include "fuzz_check.h"
#include "fuzz_json.h"
#include "mcp/json_rpc.h"

namespace shoal::mcp::jsonrpc {
namespace {

namespace json = boost::json;

bool isValidId(const json::value& id) {
  return id.is_string() || (id.is_number() && fuzz::allFinite(id));
}

json::object encode(const Message& m) {
  json::object o{{"jsonrpc", "2.0"}};
  if (m.kind != Message::Kind::kNotification) o["id"] = m.id;
  if (m.kind == Message::Kind::kResponse) {
    o["result"] = nullptr;
  } else {
    o["method"] = m.method;
    o["params"] = m.params;
  }
  return o;
}

// The one message `text` must parse to.
Message single(const std::string& text) {
  const ParsedBody back = parseBody(text);
  FUZZ_REQUIRE(!back.error.has_value());
  FUZZ_REQUIRE(!back.isBatch && back.messages.size() == 1);
  return back.messages.front();
}

void checkMessage(const Message& m) {
  switch (m.kind) {
    case Message::Kind::kRequest:
      FUZZ_REQUIRE(isValidId(m.id));
      break;
    case Message::Kind::kNotification:
      FUZZ_REQUIRE(m.id.is_null());
      break;
    case Message::Kind::kResponse:
      FUZZ_REQUIRE(isValidId(m.id));
      FUZZ_REQUIRE(m.method.empty() && m.params.empty());
      break;
  }
  if (!fuzz::allFinite(m.params)) return;  // not JSON once written back (fuzz_json.h)
  const Message again = single(json::serialize(encode(m)));
  FUZZ_REQUIRE(again.kind == m.kind);
  FUZZ_REQUIRE(fuzz::sameJson(again.id, m.id));
  FUZZ_REQUIRE(again.method == m.method);
  FUZZ_REQUIRE(fuzz::sameJson(again.params, m.params));
}

// The server's answers to `id` read back as responses to that same id.
void checkResponses(const json::value& id) {
  if (!isValidId(id)) return;
  const Message error =
      single(json::serialize(errorResponse(id, {kInvalidParams, "Invalid params", id})));
  FUZZ_REQUIRE(error.kind == Message::Kind::kResponse && fuzz::sameJson(error.id, id));
  const Message result = single(json::serialize(resultResponse(id, json::object{{"ok", true}})));
  FUZZ_REQUIRE(result.kind == Message::Kind::kResponse && fuzz::sameJson(result.id, id));
}

}  // namespace
}  // namespace shoal::mcp::jsonrpc

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data,  // NOLINT(readability-identifier-naming)
                                      size_t size) {
  using namespace shoal::mcp::jsonrpc;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const ParsedBody body = parseBody(in);
  if (body.error) {
    FUZZ_REQUIRE(body.messages.empty());
    FUZZ_REQUIRE(body.error->code == kParseError || body.error->code == kInvalidRequest);
    FUZZ_REQUIRE(!body.error->message.empty());
    FUZZ_REQUIRE(body.errorId.is_null() || isValidId(body.errorId));
    if (body.isBatch) FUZZ_REQUIRE(body.errorId.is_null());
    checkResponses(body.errorId);
    return 0;
  }
  FUZZ_REQUIRE(!body.messages.empty());
  FUZZ_REQUIRE(body.isBatch || body.messages.size() == 1);
  if (body.isBatch) FUZZ_REQUIRE(body.errorId.is_null());
  for (const Message& m : body.messages) {
    checkMessage(m);
    checkResponses(m.id);
  }
  return 0;
}
