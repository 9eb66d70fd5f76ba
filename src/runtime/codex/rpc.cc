#include "runtime/codex/rpc.h"

#include <boost/json.hpp>

#include "wire/inbox_receipt.h"

namespace shoal::runtime {
namespace {

namespace json = boost::json;

std::string str(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

const json::object* obj(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_object() ? &v->get_object() : nullptr;
}

std::string line(const json::object& o) {
  return json::serialize(o) + "\n";
}

json::array textInput(std::string_view text) {
  return json::array{
      json::object{{"type", "text"}, {"text", text}, {"text_elements", json::array{}}}};
}

// A readable summary of a Codex error object {message, codexErrorInfo?, additionalDetails?}.
std::string errorText(const json::object* e) {
  if (e == nullptr) return "the turn failed";
  std::string out = str(*e, "message");
  if (const json::value* info = e->if_contains("codexErrorInfo"); info != nullptr) {
    out +=
        " (" + (info->is_string() ? std::string(info->get_string()) : json::serialize(*info)) + ")";
  }
  return out.empty() ? "the turn failed" : out;
}

wire::PresenceCondition conditionOf(const json::object* e) {
  wire::PresenceCondition c;
  c.code = wire::ConditionCode::kFailed;
  std::string info;
  if (e != nullptr) {
    if (const json::value* i = e->if_contains("codexErrorInfo"); i != nullptr) {
      info = i->is_string() ? std::string(i->get_string()) : json::serialize(*i);
    }
  }
  if (info.find("sageLimit") != std::string::npos) c.code = wire::ConditionCode::kRateLimit;
  if (info.find("nauthorized") != std::string::npos) c.code = wire::ConditionCode::kAuth;
  if (info.find("nternalServerError") != std::string::npos ||
      info.find("esponseStream") != std::string::npos ||
      info.find("ttpConnectionFailed") != std::string::npos) {
    c.code = wire::ConditionCode::kServer;
  }
  if (!info.empty()) c.source = info;
  c.message = errorText(e);
  return c;
}

}  // namespace

Result<CodexLine> parseCodexLine(std::string_view text) {
  json::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) {
    return invalidArgument("malformed-frame",
                           "codex app-server wrote a line that is not a JSON "
                           "object");
  }
  const json::object& o = v.get_object();
  CodexLine out;
  out.method = str(o, "method");
  const json::value* id = o.if_contains("id");
  if (out.method.empty() && id != nullptr) {
    out.id = id->is_int64()    ? id->get_int64()
             : id->is_uint64() ? static_cast<int64_t>(id->get_uint64())
                               : -1;
    if (const json::object* err = obj(o, "error")) {
      out.kind = CodexLine::Kind::kErrorResponse;
      if (const json::value* code = err->if_contains("code"); code != nullptr && code->is_int64()) {
        out.errorCode = code->get_int64();
      }
      out.detail = str(*err, "message");
      if (const json::object* data = obj(*err, "data")) {
        out.errorDataCode = str(*data, "code");
        out.errorDataKind = str(*data, "kind");
        out.errorDataType = str(*data, "type");
      }
      return out;
    }
    out.kind = CodexLine::Kind::kResponse;
    if (const json::object* result = obj(o, "result")) {
      if (const json::object* thread = obj(*result, "thread")) {
        out.threadId = str(*thread, "id");
        if (const json::object* status = obj(*thread, "status")) {
          out.threadStatus = str(*status, "type");
        }
        if (const json::value* turns = thread->if_contains("turns");
            turns != nullptr && turns->is_array()) {
          out.hasTurns = true;
          for (const auto& turn : turns->get_array()) {
            const json::value* items =
                turn.is_object() ? turn.get_object().if_contains("items") : nullptr;
            if (items == nullptr || !items->is_array()) continue;
            for (const auto& item : items->get_array()) {
              if (!item.is_object()) continue;
              const std::string type = str(item.get_object(), "type");
              if (type == "mcpToolCall" || type == "dynamicToolCall") {
                // The page's text (result content, structured content) as Codex kept it.
                for (auto& m : wire::inboxReceiptMarkers(json::serialize(item))) {
                  out.toolMarkers.push_back(std::move(m));
                }
                continue;
              }
              if (type != "userMessage") continue;
              std::string clientId = str(item.get_object(), "clientId");
              if (!clientId.empty()) out.clientIds.push_back(std::move(clientId));
            }
          }
        }
      }
      if (const json::object* turn = obj(*result, "turn")) out.turnId = str(*turn, "id");
      if (out.turnId.empty()) out.turnId = str(*result, "turnId");
    }
    return out;
  }
  if (id != nullptr) {  // a request from the server
    out.kind = CodexLine::Kind::kServerRequest;
    out.requestId = json::serialize(*id);
    return out;
  }
  const json::object* params = obj(o, "params");
  static const json::object kEmpty;
  const json::object& p = params != nullptr ? *params : kEmpty;
  out.threadId = str(p, "threadId");
  out.turnId = str(p, "turnId");
  if (out.method == "turn/started" || out.method == "turn/completed") {
    const json::object* turn = obj(p, "turn");
    if (turn != nullptr) out.turnId = str(*turn, "id");
    if (out.method == "turn/started") {
      out.kind = CodexLine::Kind::kTurnStarted;
    } else {
      out.kind = CodexLine::Kind::kTurnCompleted;
      out.turnStatus = turn != nullptr ? str(*turn, "status") : "";
      if (out.turnStatus == "failed") {
        const json::object* err = turn != nullptr ? obj(*turn, "error") : nullptr;
        out.detail = errorText(err);
        out.condition = conditionOf(err);
      }
    }
    return out;
  }
  if (out.method == "item/started" || out.method == "item/completed") {
    const json::object* item = obj(p, "item");
    if (item != nullptr && str(*item, "type") == "userMessage") {
      out.kind = CodexLine::Kind::kUserMessage;
      out.clientId = str(*item, "clientId");
      return out;
    }
    out.kind = CodexLine::Kind::kWork;
    return out;
  }
  if (out.method == "error") {
    out.kind = CodexLine::Kind::kError;
    const json::value* retry = p.if_contains("willRetry");
    out.willRetry = retry != nullptr && retry->is_bool() && retry->get_bool();
    const json::object* err = obj(p, "error");
    out.detail = errorText(err);
    out.condition = conditionOf(err);
    return out;
  }
  if (out.method == "thread/status/changed") {
    out.kind = CodexLine::Kind::kThreadStatus;
    if (const json::object* status = obj(p, "status")) out.threadStatus = str(*status, "type");
    return out;
  }
  if (out.method.rfind("item/", 0) == 0) out.kind = CodexLine::Kind::kWork;
  return out;
}

CodexReadSnapshot codexReadSnapshot(const CodexLine& read, std::string_view requestedThread) {
  CodexReadSnapshot out;
  if (read.threadId != requestedThread) return out;
  out.clientIds = read.clientIds;
  out.markers = read.toolMarkers;
  if (!read.hasTurns) return out;
  const std::string& status = read.threadStatus;
  out.complete = status == "idle" || status == "notLoaded" || status == "systemError";
  out.pending = status == "active";
  return out;
}

std::string codexInitialize(int64_t id) {
  return line(json::object{
      {"id", id},
      {"method", "initialize"},
      {"params",
       json::object{
           {"clientInfo",
            json::object{{"name", "shoal"}, {"title", "Shoal seat daemon"}, {"version", "0.1.0"}}},
           {"capabilities",
            json::object{{"experimentalApi", false},
                         {"optOutNotificationMethods",
                          json::array{"item/agentMessage/delta", "item/reasoning/textDelta"}}}}}}});
}

std::string codexInitialized() {
  return line(json::object{{"method", "initialized"}});
}

std::string codexThreadStart(int64_t id, std::string_view cwd) {
  return line(
      json::object{{"id", id}, {"method", "thread/start"}, {"params", json::object{{"cwd", cwd}}}});
}

std::string codexThreadResume(int64_t id, std::string_view threadId, std::string_view cwd) {
  return line(json::object{
      {"id", id},
      {"method", "thread/resume"},
      // Metadata only: the whole history on one line could outgrow the
      // line limit, and 0.171 deprecates hydrating it here.
      {"params", json::object{{"threadId", threadId}, {"cwd", cwd}, {"excludeTurns", true}}}});
}

std::string codexThreadRead(int64_t id, std::string_view threadId) {
  return line(
      json::object{{"id", id},
                   {"method", "thread/read"},
                   {"params", json::object{{"threadId", threadId}, {"includeTurns", true}}}});
}

std::string codexTurnInterrupt(int64_t id, std::string_view threadId, std::string_view turnId) {
  return line(json::object{{"id", id},
                           {"method", "turn/interrupt"},
                           {"params", json::object{{"threadId", threadId}, {"turnId", turnId}}}});
}

std::string codexThreadCompactStart(int64_t id, std::string_view threadId) {
  return line(json::object{{"id", id},
                           {"method", "thread/compact/start"},
                           {"params", json::object{{"threadId", threadId}}}});
}

std::string codexTurnStart(int64_t id, std::string_view threadId, std::string_view clientId,
                           std::string_view text) {
  return line(json::object{{"id", id},
                           {"method", "turn/start"},
                           {"params", json::object{{"threadId", threadId},
                                                   {"clientUserMessageId", clientId},
                                                   {"input", textInput(text)}}}});
}

std::string codexTurnSteer(int64_t id, std::string_view threadId, std::string_view turnId,
                           std::string_view clientId, std::string_view text) {
  return line(json::object{{"id", id},
                           {"method", "turn/steer"},
                           {"params", json::object{{"threadId", threadId},
                                                   {"expectedTurnId", turnId},
                                                   {"clientUserMessageId", clientId},
                                                   {"input", textInput(text)}}}});
}

std::string codexDecline(std::string_view requestIdJson, std::string_view method) {
  json::error_code ec;
  json::value id = json::parse(requestIdJson, ec);
  if (ec) id = nullptr;
  if (method.find("requestApproval") != std::string_view::npos || method == "execCommandApproval" ||
      method == "applyPatchApproval") {
    return line(json::object{{"id", id}, {"result", json::object{{"decision", "decline"}}}});
  }
  return line(json::object{
      {"id", id},
      {"error",
       json::object{{"code", -32601},
                    {"message", "the Shoal seat daemon does not serve " + std::string(method)}}}});
}

bool codexThreadLost(const CodexLine& error) {
  if (error.kind != CodexLine::Kind::kErrorResponse) return false;
  const bool messageForm = error.detail.rfind("no rollout found for thread id ", 0) == 0 ||
                           error.detail.rfind("thread not found: ", 0) == 0;
  if (error.errorCode == -32600) return messageForm;
  if (error.errorCode != -32000) return false;
  for (const std::string* token :
       {&error.errorDataCode, &error.errorDataKind, &error.errorDataType}) {
    if (*token == "thread_not_found" || *token == "invalid_thread_id") return true;
  }
  return messageForm;
}

}  // namespace shoal::runtime
