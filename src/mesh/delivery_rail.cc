#include "mesh/delivery_rail.h"

#include <boost/json.hpp>

#include "base/ids.h"
#include "wire/names.h"
#include "wire/token.h"

namespace shoal::mesh {
namespace {

namespace json = boost::json;

constexpr std::string_view kRailPrefix = "ep.one.delivery";

std::vector<std::string_view> splitTokens(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t dot = s.find('.', start);
    out.push_back(s.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) return out;
    start = dot + 1;
  }
}

Status badReply(std::string_view message) {
  return failedPrecondition("bad-delivery-reply",
                            "the delivery plane's reply does not parse: " + std::string(message));
}

std::optional<DeliveryOp> opNamed(std::string_view name) {
  for (DeliveryOp op :
       {DeliveryOp::kJoin, DeliveryOp::kLeave, DeliveryOp::kList, DeliveryOp::kJobs}) {
    if (deliveryOpName(op) == name) return op;
  }
  return std::nullopt;
}

uint64_t u64(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return 0;
  if (v->is_uint64()) return v->get_uint64();
  if (v->is_int64() && v->get_int64() >= 0) return static_cast<uint64_t>(v->get_int64());
  return 0;
}

bool flag(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_bool() && v->get_bool();
}

Result<json::object> dataObject(const std::string& text) {
  json::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return badReply("data is not an object");
  return v.get_object();
}

Result<std::string> call(transport::Connection& conn, std::string_view space, DeliveryOp op,
                         const wire::Principal& caller, std::string_view uid,
                         const json::object& body, std::chrono::milliseconds timeout) {
  SHOAL_ASSIGN_OR_RETURN(std::string nonce, newHexToken(16));
  SHOAL_ASSIGN_OR_RETURN(std::string subject, deliverySubject(space, op, caller, uid, nonce));
  auto reply = conn.request(subject, json::serialize(body), timeout);
  if (!reply.isOk()) {
    if (reply.status().reason() == "no-responders") {
      return unavailable("delivery-not-serving",
                         "no delivery plane serves space '" + std::string(space) +
                             "'; start it with `shoal serve` (or `shoal up`)");
    }
    return reply.status().withContext("asking the delivery plane");
  }
  return decodeDeliveryReply(reply->data);
}

}  // namespace

std::string_view deliveryOpName(DeliveryOp op) {
  switch (op) {
    case DeliveryOp::kJoin:
      return "join";
    case DeliveryOp::kLeave:
      return "leave";
    case DeliveryOp::kList:
      return "list";
    case DeliveryOp::kJobs:
      return "jobs";
  }
  return "?";
}

Result<std::string> deliverySubject(std::string_view space, DeliveryOp op,
                                    const wire::Principal& caller, std::string_view lifecycleUid,
                                    std::string_view nonce) {
  SHOAL_RETURN_IF_ERROR(wire::validateSpace(space));
  SHOAL_RETURN_IF_ERROR(wire::validatePrincipal(caller));
  SHOAL_RETURN_IF_ERROR(wire::validateLifecycleUid(lifecycleUid));
  if (!isRailNonce(nonce)) {
    return invalidArgument("bad-nonce", "a rail nonce is 22 to 64 of [A-Za-z0-9_-]");
  }
  return "cotal." + std::string(space) + "." + std::string(kRailPrefix) + "." +
         std::string(deliveryOpName(op)) + "." + caller.dotForm() + "." +
         std::string(lifecycleUid) + "." + std::string(nonce);
}

Result<std::string> deliveryServeFilter(std::string_view space) {
  SHOAL_RETURN_IF_ERROR(wire::validateSpace(space));
  return "cotal." + std::string(space) + "." + std::string(kRailPrefix) + ".*.*.*.*.*";
}

Result<DeliveryRailRequest> parseDeliverySubject(std::string_view subject, std::string_view space) {
  auto t = splitTokens(subject);
  if (t.size() != 10) {
    return invalidArgument("bad-rail-subject", "a delivery rail subject has 10 tokens, got " +
                                                   std::to_string(t.size()));
  }
  if (t[0] != "cotal" || t[1] != space || t[2] != "ep" || t[3] != "one" ||
      t[4] != kDeliveryEndpoint) {
    return invalidArgument("bad-rail-subject", "not this space's delivery rail");
  }
  auto op = opNamed(t[5]);
  if (!op) {
    return invalidArgument("bad-delivery-op", "unknown delivery op '" + std::string(t[5]) +
                                                  "' (join, leave, list, jobs)");
  }
  DeliveryRailRequest out;
  out.op = *op;
  out.caller.principal = wire::Principal{std::string(t[6]), std::string(t[7])};
  if (Status st = wire::validatePrincipal(out.caller.principal); !st.isOk()) {
    return invalidArgument("bad-caller",
                           "the subject's caller is not a principal: " + st.toString());
  }
  SHOAL_RETURN_IF_ERROR(wire::validateLifecycleUid(t[8]));
  if (!isRailNonce(t[9])) {
    return invalidArgument("bad-nonce", "a rail nonce is 22 to 64 of [A-Za-z0-9_-]");
  }
  out.caller.lifecycleUid = std::string(t[8]);
  out.caller.nonce = std::string(t[9]);
  return out;
}

std::string encodeDeliveryOk(std::string_view data) {
  return "{\"ok\":true,\"data\":" + std::string(data) + "}";
}

std::string encodeDeliveryError(const Status& error) {
  json::object e;
  e["code"] = error.reason().empty() ? "delivery-failed" : error.reason();
  e["message"] = error.message();
  json::object o;
  o["ok"] = false;
  o["error"] = std::move(e);
  return json::serialize(o);
}

Result<std::string> decodeDeliveryReply(std::string_view text) {
  json::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return badReply("not a JSON object");
  const json::object& o = v.get_object();
  const json::value* ok = o.if_contains("ok");
  if (ok == nullptr || !ok->is_bool()) return badReply("ok must be a boolean");
  if (ok->get_bool()) {
    const json::value* data = o.if_contains("data");
    if (data == nullptr || !data->is_object()) return badReply("data must be an object");
    return json::serialize(*data);
  }
  const json::value* err = o.if_contains("error");
  if (err == nullptr || !err->is_object()) return badReply("error must be an object");
  const json::value* code = err->get_object().if_contains("code");
  const json::value* message = err->get_object().if_contains("message");
  std::string c = code != nullptr && code->is_string() ? std::string(code->get_string()) : "";
  std::string m =
      message != nullptr && message->is_string() ? std::string(message->get_string()) : "";
  if (c.empty()) return badReply("error.code must be a string");
  if (c.rfind("bad-", 0) == 0 || c == "malformed-json") return invalidArgument(c, m);
  if (c == "stale-leave" || c == "acl-denies" || c == "acl-unknown" || c == "not-concrete") {
    return failedPrecondition(c, m);
  }
  return unavailable(c, m);
}

Result<DurableJoinReply> requestDurableJoin(transport::Connection& conn, std::string_view space,
                                            const wire::Principal& caller,
                                            std::string_view lifecycleUid, std::string_view channel,
                                            uint64_t cursor, std::chrono::milliseconds timeout) {
  json::object body;
  body["channel"] = channel;
  body["cursor"] = cursor;
  SHOAL_ASSIGN_OR_RETURN(std::string data,
                         call(conn, space, DeliveryOp::kJoin, caller, lifecycleUid, body, timeout));
  SHOAL_ASSIGN_OR_RETURN(json::object o, dataObject(data));
  DurableJoinReply r;
  r.durable = flag(o, "durable");
  r.generation = u64(o, "generation");
  r.joinCursor = u64(o, "joinCursor");
  r.existing = flag(o, "existing");
  r.caughtUp = u64(o, "caughtUp");
  return r;
}

Result<DurableLeaveReply> requestDurableLeave(transport::Connection& conn, std::string_view space,
                                              const wire::Principal& caller,
                                              std::string_view lifecycleUid,
                                              std::string_view channel, uint64_t generation,
                                              std::chrono::milliseconds timeout) {
  json::object body;
  body["channel"] = channel;
  body["generation"] = generation;
  SHOAL_ASSIGN_OR_RETURN(
      std::string data, call(conn, space, DeliveryOp::kLeave, caller, lifecycleUid, body, timeout));
  SHOAL_ASSIGN_OR_RETURN(json::object o, dataObject(data));
  return DurableLeaveReply{flag(o, "alreadyLeft"), u64(o, "leaveCursor")};
}

Result<std::vector<MembershipSummary>> requestMemberships(transport::Connection& conn,
                                                          std::string_view space,
                                                          const wire::Principal& caller,
                                                          std::string_view lifecycleUid,
                                                          std::chrono::milliseconds timeout) {
  SHOAL_ASSIGN_OR_RETURN(std::string data, call(conn, space, DeliveryOp::kList, caller,
                                                lifecycleUid, json::object{}, timeout));
  SHOAL_ASSIGN_OR_RETURN(json::object o, dataObject(data));
  std::vector<MembershipSummary> out;
  const json::value* rows = o.if_contains("memberships");
  if (rows == nullptr || !rows->is_array()) return badReply("memberships must be an array");
  for (const auto& row : rows->get_array()) {
    if (!row.is_object()) return badReply("a membership must be an object");
    const json::object& m = row.get_object();
    const json::value* channel = m.if_contains("channel");
    if (channel == nullptr || !channel->is_string()) return badReply("channel must be a string");
    out.push_back(MembershipSummary{std::string(channel->get_string()), u64(m, "generation"),
                                    u64(m, "joinCursor"), flag(m, "activated")});
  }
  return out;
}

Result<std::string> requestDeliveryJobs(transport::Connection& conn, std::string_view space,
                                        const wire::Principal& caller,
                                        std::string_view lifecycleUid,
                                        std::chrono::milliseconds timeout) {
  return call(conn, space, DeliveryOp::kJobs, caller, lifecycleUid, json::object{}, timeout);
}

}  // namespace shoal::mesh
