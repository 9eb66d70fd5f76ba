// The control socket's messages (daemon/control_socket.h), as pure functions of bytes: the
// request the CLI writes and the daemon reads, and the reply the daemon writes and the CLI
// reads. One JSON object per line:
//   request   {"op":"seat.list","args":{…}}     `op` a non-empty string, `args` an optional
//                                                object, no other member
//   reply     {"ok":true,"result":…}  |  {"ok":false,"error":{"code","reason","message"}}
// No I/O, no size limit (the socket code bounds the line before it gets here).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"
#include "base/status.h"

namespace shoal::daemon {

struct ControlRequest {
  std::string op;
  std::string argsJson = "{}";  // the compact JSON of `args` (an object)
};

// The daemon's reading of one request line (without its newline). kInvalidArgument
// `malformed-json` (not one JSON object) or `bad-control-request` (another member, a non-string
// `op`, a non-object `args`, no `op` or an empty one).
Result<ControlRequest> parseControlRequest(std::string_view line);

// The request line the CLI writes, with its newline. kInvalidArgument `bad-control-request`
// when argsJson is not a JSON object.
Result<std::string> encodeControlRequest(const ControlRequest& request);

// The reply lines the daemon writes, with their newline: `resultJson` (the handler's compact
// JSON text) verbatim as the result, or `error`'s code name, reason and message.
std::string controlResultReply(std::string_view resultJson);
std::string controlErrorReply(const Status& error);

// The CLI's reading of one reply line: the result's compact JSON text ("null" when an ok reply
// carries none), or the error it carries as a Status (an unknown code name is kInternal).
// kInternal `bad-control-reply` when the line is not a reply.
Result<std::string> parseControlReply(std::string_view line);

}  // namespace shoal::daemon
