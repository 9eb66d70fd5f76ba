#include "wire/wake_record.h"

#include "wire/json_support.h"
#include "wire/reasons.h"

namespace shoal::wire {
namespace {

namespace json = internal::json;

std::string text(const json::object& o, std::string_view key) {
  const auto* f = internal::field(o, key);
  return f != nullptr && f->is_string() ? std::string(f->as_string()) : std::string();
}

template <typename T>
T whole(const json::object& o, std::string_view key) {
  const auto* f = internal::field(o, key);
  auto n = f != nullptr ? internal::asNumber(*f) : std::nullopt;
  return n && *n >= 0 ? static_cast<T>(*n) : T{};
}

}  // namespace

std::string encodeWakeRecord(const WakeRecord& r) {
  json::object o{{"kind", r.kind},
                 {"seat", json::object{{"id", r.seatId}, {"name", r.seatName}}},
                 {"generation", r.generation},
                 {"at", r.atMs}};
  if (r.kind == kWakeResultKind) {
    o["message"] = r.message;
    o["target"] = r.target;
    o["result"] = r.result;
    if (!r.replyId.empty()) o["replyId"] = r.replyId;
    if (!r.reason.empty()) o["reason"] = r.reason;
  }
  if (!r.detail.empty()) o["detail"] = r.detail;
  if (!r.messages.empty()) {
    json::array ids;
    for (const auto& id : r.messages)
      ids.emplace_back(id);
    o["messages"] = std::move(ids);
  }
  if (!r.exit.empty()) o["exit"] = r.exit;
  return internal::toJson(o);
}

Result<WakeRecord> decodeWakeRecord(std::string_view body) {
  SHOAL_ASSIGN_OR_RETURN(auto value, internal::parseJsonObject(body));
  const json::object& o = value.as_object();
  WakeRecord r;
  r.kind = text(o, "kind");
  if (r.kind.empty())
    return invalidArgument(reason::kBadWakeRecord, "a wake record without a kind");
  if (const auto* seat = internal::field(o, "seat"); seat != nullptr && seat->is_object()) {
    r.seatId = text(seat->as_object(), "id");
    r.seatName = text(seat->as_object(), "name");
  }
  r.generation = whole<uint64_t>(o, "generation");
  r.atMs = whole<int64_t>(o, "at");
  r.detail = text(o, "detail");
  r.exit = text(o, "exit");
  if (const auto* ids = internal::field(o, "messages"); ids != nullptr && ids->is_array()) {
    for (const auto& id : ids->as_array())
      if (id.is_string()) r.messages.emplace_back(id.as_string());
  }
  if (r.kind == kWakeResultKind) {
    r.message = text(o, "message");
    r.target = text(o, "target");
    r.result = text(o, "result");
    r.replyId = text(o, "replyId");
    r.reason = text(o, "reason");
    if (r.message.empty())
      return invalidArgument(reason::kBadWakeRecord, "a wake result without its message");
  }
  return r;
}

}  // namespace shoal::wire
