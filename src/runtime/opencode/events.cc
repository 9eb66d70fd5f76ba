#include "runtime/opencode/events.h"

#include <chrono>
#include <mutex>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/ids.h"

namespace shoal::runtime {
namespace {

namespace json = boost::json;

Status malformed(std::string_view type, std::string_view why) {
  return invalidArgument("opencode-event-malformed",
                         fmt::format("an OpenCode `{}` event {}", type, why));
}

std::string stringAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

const json::object* objectAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_object() ? &v->as_object() : nullptr;
}

// {name, data:{message}} → name and message.
void readError(const json::object& error, OpenCodeEvent& e) {
  e.errorName = stringAt(error, "name");
  if (const json::object* data = objectAt(error, "data"))
    e.errorMessage = stringAt(*data, "message");
  if (e.errorName.empty()) e.errorName = "UnknownError";
}

}  // namespace

Result<OpenCodeEvent> parseOpenCodeEvent(std::string_view data) {
  boost::system::error_code ec;
  json::value root = json::parse(data, ec);
  if (ec || !root.is_object()) return malformed("?", "is not a JSON object");
  const json::object& o = root.as_object();
  OpenCodeEvent e;
  e.type = stringAt(o, "type");
  if (e.type.empty()) return malformed("?", "has no string `type`");
  static const json::object kEmpty;
  const json::object* props = objectAt(o, "properties");
  if (props == nullptr) props = &kEmpty;
  e.sessionId = stringAt(*props, "sessionID");
  using K = OpenCodeEvent::Kind;
  const std::string& t = e.type;
  if (t == "server.connected") {
    e.kind = K::kConnected;
  } else if (t == "server.heartbeat") {
    e.kind = K::kHeartbeat;
  } else if (t == "server.instance.disposed") {
    e.kind = K::kDisposed;
  } else if (t == "message.updated") {
    e.kind = K::kMessage;
    const json::object* info = objectAt(*props, "info");
    if (info == nullptr) return malformed(t, "has no `info` object");
    e.messageId = stringAt(*info, "id");
    e.sessionId = stringAt(*info, "sessionID");
    e.role = stringAt(*info, "role");
    if (e.messageId.empty() || e.sessionId.empty() || e.role.empty()) {
      return malformed(t, "lacks info.id, info.sessionID or info.role");
    }
    e.parentId = stringAt(*info, "parentID");
    e.finish = stringAt(*info, "finish");
    if (const json::object* time = objectAt(*info, "time")) {
      const json::value* done = time->if_contains("completed");
      e.completed = done != nullptr && !done->is_null();
    }
    if (const json::object* error = objectAt(*info, "error")) readError(*error, e);
    const json::value* summary = info->if_contains("summary");
    e.summary = summary != nullptr && summary->is_bool() && summary->as_bool();
    // The model: an assistant's providerID/modelID, a user message's model{providerID,modelID}.
    e.providerId = stringAt(*info, "providerID");
    e.modelId = stringAt(*info, "modelID");
    if (const json::object* model = objectAt(*info, "model"); model != nullptr) {
      if (e.providerId.empty()) e.providerId = stringAt(*model, "providerID");
      if (e.modelId.empty()) e.modelId = stringAt(*model, "modelID");
    }
  } else if (t == "message.part.updated") {
    e.kind = K::kPart;
    const json::object* part = objectAt(*props, "part");
    if (part == nullptr) return malformed(t, "has no `part` object");
    e.messageId = stringAt(*part, "messageID");
    e.sessionId = stringAt(*part, "sessionID");
    e.partType = stringAt(*part, "type");
    if (e.messageId.empty() || e.sessionId.empty()) {
      return malformed(t, "lacks part.messageID or part.sessionID");
    }
    const json::value* isAuto = part->if_contains("auto");
    e.compactionAuto = isAuto != nullptr && isAuto->is_bool() && isAuto->as_bool();
    if (const json::object* state = objectAt(*part, "state")) {
      if (const json::object* time = objectAt(*state, "time")) {
        const json::value* compacted = time->if_contains("compacted");
        e.pruned = compacted != nullptr && !compacted->is_null();
      }
    }
  } else if (t == "message.part.delta") {
    e.kind = K::kPart;
    e.partType = "delta";
    e.messageId = stringAt(*props, "messageID");
    if (e.messageId.empty() || e.sessionId.empty()) {
      return malformed(t, "lacks messageID or sessionID");
    }
  } else if (t == "session.status") {
    e.kind = K::kStatus;
    const json::object* status = objectAt(*props, "status");
    if (status == nullptr || e.sessionId.empty()) return malformed(t, "lacks sessionID or status");
    e.status = stringAt(*status, "type");
    if (e.status.empty()) return malformed(t, "has no status.type");
    if (e.status == "retry") {
      const json::value* attempt = status->if_contains("attempt");
      if (attempt != nullptr && attempt->is_int64()) e.retryAttempt = attempt->as_int64();
      e.errorMessage = stringAt(*status, "message");
    }
  } else if (t == "session.idle") {
    e.kind = K::kIdle;
    if (e.sessionId.empty()) return malformed(t, "lacks sessionID");
  } else if (t == "session.error") {
    e.kind = K::kError;
    if (const json::object* error = objectAt(*props, "error")) {
      readError(*error, e);
    } else {
      e.errorName = "UnknownError";
    }
  } else if (t == "session.compacted") {
    e.kind = K::kCompacted;
  }
  return e;
}

Result<std::string> mintOpenCodeMessageId() {
  static std::mutex mu;
  static uint64_t last = 0;  // ms × 4096 + counter of the last id
  uint64_t stamp = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    const auto ms = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                              std::chrono::system_clock::now().time_since_epoch())
                                              .count());
    stamp = ms * 4096;
    if (stamp <= last) stamp = last + 1;  // same millisecond, or the clock went back
    last = stamp;
  }
  uint8_t random[14];
  SHOAL_RETURN_IF_ERROR(fillRandom(random));
  static constexpr std::string_view kBase62 =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string id = fmt::format("msg_{:012x}", stamp & 0xffffffffffffULL);
  for (uint8_t b : random)
    id += kBase62[b % 62];
  return id;
}

std::string openCodePromptBody(std::string_view messageId, std::string_view text) {
  json::object part{{"type", "text"}, {"text", text}};
  json::object body{{"messageID", messageId}, {"parts", json::array{part}}};
  return json::serialize(body);
}

std::string openCodeSummarizeBody(std::string_view providerId, std::string_view modelId) {
  return json::serialize(
      json::object{{"providerID", providerId}, {"modelID", modelId}, {"auto", false}});
}

}  // namespace shoal::runtime
