#include "daemon/control_protocol.h"

#include <boost/json.hpp>

namespace shoal::daemon {
namespace {

namespace json = boost::json;

StatusCode codeFromName(std::string_view name) {
  for (int c = 1; c <= static_cast<int>(StatusCode::kCancelled); ++c) {
    if (statusCodeName(static_cast<StatusCode>(c)) == name) return static_cast<StatusCode>(c);
  }
  return StatusCode::kInternal;
}

}  // namespace

Result<ControlRequest> parseControlRequest(std::string_view line) {
  boost::system::error_code ec;
  json::value v = json::parse(line, ec);
  if (ec || !v.is_object()) {
    return invalidArgument("malformed-json", "a control request is one JSON object");
  }
  ControlRequest r;
  for (const auto& [key, value] : v.as_object()) {
    if (key == "op" && value.is_string()) {
      r.op = std::string(value.as_string());
    } else if (key == "args" && value.is_object()) {
      r.argsJson = json::serialize(value);
    } else {
      return invalidArgument("bad-control-request",
                             "a control request has a string `op` and an object `args`, "
                             "nothing else (`" +
                                 std::string(key) + "`)");
    }
  }
  if (r.op.empty()) return invalidArgument("bad-control-request", "the request names no op");
  return r;
}

Result<std::string> encodeControlRequest(const ControlRequest& request) {
  boost::system::error_code ec;
  json::value args = json::parse(request.argsJson, ec);
  if (ec || !args.is_object()) {
    return invalidArgument("bad-control-request", "args must be a JSON object");
  }
  return json::serialize(json::object{{"op", request.op}, {"args", std::move(args)}}) + "\n";
}

std::string controlResultReply(std::string_view resultJson) {
  return R"({"ok":true,"result":)" + std::string(resultJson) + "}\n";
}

std::string controlErrorReply(const Status& s) {
  json::object error{{"code", std::string(statusCodeName(s.code()))},
                     {"reason", std::string(s.reason())},
                     {"message", std::string(s.message())}};
  return json::serialize(json::object{{"ok", false}, {"error", std::move(error)}}) + "\n";
}

Result<std::string> parseControlReply(std::string_view line) {
  boost::system::error_code ec;
  json::value v = json::parse(line, ec);
  if (ec || !v.is_object() || !v.as_object().contains("ok")) {
    return internalError("bad-control-reply", "the daemon's reply is not a control reply");
  }
  const json::object& o = v.as_object();
  if (o.at("ok").is_bool() && o.at("ok").as_bool()) {
    const json::value* result = o.if_contains("result");
    return result != nullptr ? json::serialize(*result) : std::string("null");
  }
  const json::value* error = o.if_contains("error");
  if (error == nullptr || !error->is_object()) {
    return internalError("bad-control-reply", "the daemon's error reply names no error");
  }
  auto text = [&](std::string_view key) -> std::string {
    const json::value* f = error->as_object().if_contains(key);
    return f != nullptr && f->is_string() ? std::string(f->as_string()) : std::string();
  };
  return Status(codeFromName(text("code")), text("reason"), text("message"));
}

}  // namespace shoal::daemon
