#include "runtime/claude/stream.h"

#include <boost/json.hpp>
#include <fmt/format.h>

namespace shoal::runtime {
namespace {

namespace json = boost::json;

std::string stringAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

int intAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return 0;
  if (v->is_int64()) return static_cast<int>(v->as_int64());
  if (v->is_uint64()) return static_cast<int>(v->as_uint64());
  return 0;
}

bool boolAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_bool() && v->as_bool();
}

// At most `n` bytes of `s`, cut at a UTF-8 boundary.
std::string clip(std::string s, size_t n) {
  if (s.size() <= n) return s;
  size_t cut = n;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
    --cut;
  s.resize(cut);
  return s + "…";
}

}  // namespace

wire::PresenceCondition claudeCondition(int status, std::string_view errorName,
                                        std::string message) {
  wire::PresenceCondition c;
  if (status == 429 || errorName == "rate_limit") {
    c.code = wire::ConditionCode::kRateLimit;
  } else if (status == 529 || errorName == "overloaded") {
    c.code = wire::ConditionCode::kOverloaded;
  } else if (status == 401 || status == 403 || errorName == "authentication_failed") {
    c.code = wire::ConditionCode::kAuth;
  } else if (status == 402 || errorName == "billing_error") {
    c.code = wire::ConditionCode::kBilling;
  } else if (status == 400 || status == 413 || status == 422) {
    c.code = wire::ConditionCode::kRequest;
  } else if (status >= 500) {
    c.code = wire::ConditionCode::kServer;
  } else {
    c.code = wire::ConditionCode::kFailed;
  }
  if (status != 0) {
    c.source = std::to_string(status);
  } else if (!errorName.empty()) {
    c.source = std::string(errorName);
  }
  if (!message.empty()) c.message = clip(std::move(message), 300);
  return c;
}

Result<ClaudeLine> parseClaudeLine(std::string_view line) {
  boost::system::error_code ec;
  json::value v = json::parse(line, ec);
  if (ec || !v.is_object()) {
    return invalidArgument("malformed-frame", "a Claude stream-json line is not a JSON object");
  }
  const json::object& o = v.as_object();
  const json::value* type = o.if_contains("type");
  if (type == nullptr || !type->is_string()) {
    return invalidArgument("malformed-frame", "a Claude stream-json line has no string `type`");
  }
  ClaudeLine out;
  out.sessionId = stringAt(o, "session_id");
  const std::string t(type->as_string());
  const std::string subtype = stringAt(o, "subtype");
  if (t == "system" && subtype == "init") {
    out.kind = ClaudeLine::Kind::kInit;
  } else if (t == "system" && subtype == "api_retry") {
    out.kind = ClaudeLine::Kind::kRetry;
    int status = intAt(o, "error_status");
    std::string error = stringAt(o, "error");
    out.detail =
        fmt::format("the model API failed ({}{}), retry {} of {}",
                    status != 0 ? std::to_string(status) : std::string("no status"),
                    error.empty() ? "" : " " + error, intAt(o, "attempt"), intAt(o, "max_retries"));
    out.condition = claudeCondition(status, error, out.detail);
    out.condition->code =
        status == 429 || status == 529 ? out.condition->code : wire::ConditionCode::kRetrying;
  } else if (t == "user" && boolAt(o, "isReplay")) {
    out.kind = ClaudeLine::Kind::kReplay;
    out.uuid = stringAt(o, "uuid");
  } else if (t == "command_lifecycle") {
    out.uuid = stringAt(o, "command_uuid");
    out.kind = stringAt(o, "state") == "started" ? ClaudeLine::Kind::kAckStarted
                                                 : ClaudeLine::Kind::kOther;
  } else if (t == "control_response") {
    out.kind = ClaudeLine::Kind::kControlResponse;
    if (const json::value* r = o.if_contains("response"); r != nullptr && r->is_object()) {
      out.uuid = stringAt(r->as_object(), "request_id");
      out.isError = stringAt(r->as_object(), "subtype") == "error";
    }
  } else if (t == "result") {
    out.kind = ClaudeLine::Kind::kResult;
    out.isError = boolAt(o, "is_error");
    if (out.isError) {
      std::string text = stringAt(o, "result");
      if (text.empty()) {
        if (const json::value* errors = o.if_contains("errors");
            errors != nullptr && errors->is_array() && !errors->as_array().empty() &&
            errors->as_array().front().is_string()) {
          text = std::string(errors->as_array().front().as_string());
        }
      }
      int status = intAt(o, "api_error_status");
      out.detail = clip(
          fmt::format("{}{}", subtype.empty() ? "error" : subtype, text.empty() ? "" : ": " + text),
          500);
      out.condition = claudeCondition(status, "", out.detail);
    }
  } else if (t == "assistant" || t == "user" || t == "stream_event") {
    out.kind = ClaudeLine::Kind::kWork;
  }
  return out;
}

std::string claudeInitializeRequest(std::string_view requestId) {
  json::object line{{"type", "control_request"},
                    {"request_id", requestId},
                    {"request", json::object{{"subtype", "initialize"}}}};
  return json::serialize(line) + "\n";
}

std::string claudeInterruptRequest(std::string_view requestId) {
  json::object line{{"type", "control_request"},
                    {"request_id", requestId},
                    {"request", json::object{{"subtype", "interrupt"}}}};
  return json::serialize(line) + "\n";
}

std::string claudeUserLine(std::string_view uuid, std::string_view text) {
  json::object message{{"role", "user"}, {"content", text}};
  json::object line{{"type", "user"},
                    {"message", std::move(message)},
                    {"uuid", uuid},
                    {"session_id", ""},
                    {"parent_tool_use_id", nullptr}};
  return json::serialize(line) + "\n";
}

}  // namespace shoal::runtime
