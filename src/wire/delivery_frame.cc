#include "wire/delivery_frame.h"

#include <fmt/format.h>

#include "wire/channel.h"
#include "wire/json_support.h"

namespace shoal::wire {
namespace {

using namespace internal;

Status bad(std::string_view reason, std::string message) {
  return invalidArgument(reason, std::move(message));
}

// The message's encoding; it must be a post to `channel` (refused as `reason` otherwise).
Result<std::string> messageJson(const CotalMessage& msg, std::string_view channel,
                                std::string_view reason) {
  if (msg.routing.field != RoutingField::kChannel || msg.routing.target != channel) {
    return bad(reason, "the message must be a post to the channel it is delivered on");
  }
  return encodeMessage(msg);
}

// The `msg` member decoded; its channel must be `channel`.
Result<CotalMessage> nestedMessage(const json::object& o, std::string_view channel,
                                   std::string_view reason) {
  const json::value* m = field(o, "msg");
  if (m == nullptr || !m->is_object()) return bad(reason, "msg must be an object");
  SHOAL_ASSIGN_OR_RETURN(CotalMessage msg, decodeMessage(toJson(m->get_object())));
  if (msg.routing.field != RoutingField::kChannel || msg.routing.target != channel) {
    return bad(reason, "msg.channel must equal the channel");
  }
  return msg;
}

Result<std::string> concreteChannel(const json::object& o, std::string_view reason) {
  const json::value* c = field(o, "channel");
  if (c == nullptr || !c->is_string()) return bad(reason, "channel must be a string");
  std::string channel(c->get_string());
  if (Status st = validateConcreteChannel(channel); !st.isOk()) {
    return bad(reason, "channel is not concrete: " + std::string(st.message()));
  }
  return channel;
}

Result<uint64_t> count(const json::object& o, std::string_view key) {
  const json::value* v = field(o, key);
  if (v == nullptr) return bad("bad-fanout-entry", fmt::format("{} is missing", key));
  // Boost.JSON holds every integer up to INT64_MAX as int64, so both kinds need the bound.
  if (v->is_uint64() && v->get_uint64() <= kMaxSafeInteger) return v->get_uint64();
  if (v->is_int64() && v->get_int64() >= 0 &&
      static_cast<uint64_t>(v->get_int64()) <= kMaxSafeInteger) {
    return static_cast<uint64_t>(v->get_int64());
  }
  return bad("bad-fanout-entry", fmt::format("{} must be an integer in [0, 2^53-1]", key));
}

}  // namespace

std::string_view fanoutReasonName(FanoutReason reason) {
  return reason == FanoutReason::kLiveMention ? "live-mention" : "durable-channel";
}

Result<std::string> encodeFanoutEntry(const FanoutEntry& entry) {
  SHOAL_RETURN_IF_ERROR(validateConcreteChannel(entry.channel));
  if (entry.seq > kMaxSafeInteger || entry.generation > kMaxSafeInteger) {
    return bad("bad-fanout-entry", "seq and generation must be integers in [0, 2^53-1]");
  }
  SHOAL_ASSIGN_OR_RETURN(std::string msg,
                         messageJson(entry.msg, entry.channel, "bad-fanout-entry"));
  json::object o;
  o["channel"] = entry.channel;
  o["seq"] = entry.seq;
  o["reason"] = fanoutReasonName(entry.reason);
  o["generation"] = entry.generation;
  std::string head = toJson(o);
  head.pop_back();  // the message goes in as it was encoded, not re-serialised
  return head + ",\"msg\":" + msg + "}";
}

Result<FanoutEntry> decodeFanoutEntry(std::string_view text) {
  SHOAL_ASSIGN_OR_RETURN(json::value v, parseJsonObject(text));
  const json::object& o = v.get_object();
  FanoutEntry e;
  SHOAL_ASSIGN_OR_RETURN(e.channel, concreteChannel(o, "bad-fanout-entry"));
  SHOAL_ASSIGN_OR_RETURN(e.seq, count(o, "seq"));
  SHOAL_ASSIGN_OR_RETURN(e.generation, count(o, "generation"));
  const json::value* r = field(o, "reason");
  if (r == nullptr || !r->is_string()) return bad("bad-fanout-entry", "reason must be a string");
  if (r->get_string() == "durable-channel") {
    e.reason = FanoutReason::kDurableChannel;
  } else if (r->get_string() == "live-mention") {
    e.reason = FanoutReason::kLiveMention;
  } else {
    return bad("bad-fanout-entry", "unknown reason");
  }
  SHOAL_ASSIGN_OR_RETURN(e.msg, nestedMessage(o, e.channel, "bad-fanout-entry"));
  return e;
}

Result<std::string> encodeDeliveryFrame(const DeliveryFrame& frame) {
  SHOAL_RETURN_IF_ERROR(validateConcreteChannel(frame.channel));
  SHOAL_ASSIGN_OR_RETURN(std::string msg,
                         messageJson(frame.msg, frame.channel, "bad-delivery-frame"));
  json::object o;
  o["version"] = 1;
  o["channel"] = frame.channel;
  std::string head = toJson(o);
  head.pop_back();
  return head + ",\"msg\":" + msg + "}";
}

Result<DeliveryFrame> decodeDeliveryFrame(std::string_view text) {
  SHOAL_ASSIGN_OR_RETURN(json::value v, parseJsonObject(text));
  const json::object& o = v.get_object();
  for (const auto& kv : o) {
    if (kv.key() != "version" && kv.key() != "channel" && kv.key() != "msg") {
      return bad("bad-delivery-frame", fmt::format("unknown key '{}'", std::string(kv.key())));
    }
  }
  const json::value* version = field(o, "version");
  if (version == nullptr || !version->is_number() || asNumber(*version) != 1.0) {
    return bad("bad-delivery-frame", "version must be 1");
  }
  DeliveryFrame f;
  SHOAL_ASSIGN_OR_RETURN(f.channel, concreteChannel(o, "bad-delivery-frame"));
  SHOAL_ASSIGN_OR_RETURN(f.msg, nestedMessage(o, f.channel, "bad-delivery-frame"));
  return f;
}

std::string copyMsgId(std::string_view msgId, const Principal& member,
                      std::string_view lifecycleUid, uint64_t generation) {
  return fmt::format("{}:{}:{}:{}", msgId, member.dotForm(), lifecycleUid, generation);
}

}  // namespace shoal::wire
