// fuzz_control_request: arbitrary bytes as one line on the daemon's control socket
// (daemon/control_protocol.h): as a request the daemon reads (parseControlRequest) and as a
// reply the CLI reads (parseControlReply); and the input's bytes as the code, reason and
// message of an error reply.
//
// Properties (besides "no crash, no sanitizer report"):
// - a refused request is `malformed-json` or `bad-control-request` with a message; an accepted
//   one has an op and object args, and (when all its numbers are finite; doubles to an ulp or
//   two: fuzz_json.h) the line the CLI would write for it is one line that the daemon reads
//   back as the same request;
// - a reply reads as a result that is JSON text, or as a non-OK Status; a non-reply is
//   `bad-control-reply`;
// - every error reply the daemon writes reads back as the same Status, code included.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json.hpp>

#include "daemon/control_protocol.h"
#include "fuzz_check.h"
#include "fuzz_input.h"
#include "fuzz_json.h"
#include "wire/token.h"

namespace shoal::daemon {
namespace {

namespace json = boost::json;

bool isJson(std::string_view text, bool objectOnly) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  return !ec && (!objectOnly || v.is_object());
}

void checkRequest(std::string_view in) {
  const Result<ControlRequest> r = parseControlRequest(in);
  if (!r.isOk()) {
    FUZZ_REQUIRE(r.status().reason() == "malformed-json" ||
                 r.status().reason() == "bad-control-request");
    FUZZ_REQUIRE(r.status().code() == StatusCode::kInvalidArgument);
    FUZZ_REQUIRE(!r.status().message().empty());
    return;
  }
  FUZZ_REQUIRE(!r->op.empty());
  // Args holding a number Boost.JSON writes as Infinity / NaN are not JSON again (fuzz_json.h):
  // the daemon refuses them when it reads them (`bad-control-request`).
  boost::system::error_code ec;
  if (!fuzz::allFinite(json::parse(in, ec))) return;
  FUZZ_REQUIRE(isJson(r->argsJson, true));
  const Result<std::string> line = encodeControlRequest(*r);
  FUZZ_REQUIRE(line.isOk());
  FUZZ_REQUIRE(!line->empty() && line->back() == '\n' && line->find('\n') == line->size() - 1);
  const Result<ControlRequest> back =
      parseControlRequest(std::string_view(*line).substr(0, line->size() - 1));
  FUZZ_REQUIRE(back.isOk());
  FUZZ_REQUIRE(back->op == r->op);
  FUZZ_REQUIRE(fuzz::sameJson(json::parse(back->argsJson), json::parse(r->argsJson)));
}

void checkReply(std::string_view in) {
  const Result<std::string> reply = parseControlReply(in);
  if (reply.isOk()) {
    FUZZ_REQUIRE(isJson(*reply, false));
    return;
  }
  if (!isJson(in, true)) FUZZ_REQUIRE(reply.status().reason() == "bad-control-reply");
}

void checkErrorReply(std::string_view in) {
  if (in.empty()) return;
  const auto code = static_cast<StatusCode>(1 + static_cast<unsigned char>(in[0]) % 12);
  const std::string_view rest = in.substr(1);
  if (!wire::isValidUtf8(rest)) return;  // Status texts are ours: valid UTF-8
  const std::string_view reason = fuzz::utf8Prefix(rest, 40);
  const Status sent(code, reason, rest.substr(reason.size()));
  const std::string line = controlErrorReply(sent);
  FUZZ_REQUIRE(line.back() == '\n' && line.find('\n') == line.size() - 1);
  const Result<std::string> back = parseControlReply(line);
  FUZZ_REQUIRE(!back.isOk());
  FUZZ_REQUIRE(back.status() == sent);
}

}  // namespace
}  // namespace shoal::daemon

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data,  // NOLINT(readability-identifier-naming)
                                      size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  shoal::daemon::checkRequest(in);
  shoal::daemon::checkReply(in);
  shoal::daemon::checkErrorReply(in);
  return 0;
}
