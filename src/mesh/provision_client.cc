#include "mesh/provision_client.h"

#include <set>

#include <boost/json.hpp>

#include "base/ids.h"
#include "wire/names.h"
#include "wire/token.h"

namespace shoal::mesh {
namespace {

namespace json = boost::json;

constexpr std::string_view kRailRoot = "cotal";
constexpr std::string_view kRailKind = "ep";
constexpr std::string_view kRailClass = "one";

Status badRequest(std::string_view message) {
  return invalidArgument("bad-provision-request", message);
}

Status badReply(std::string_view message) {
  return failedPrecondition(
      "bad-provision-reply",
      std::string("the manager's reply does not parse: ") + std::string(message));
}

}  // namespace

std::vector<std::string_view> railTokens(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t dot = s.find('.', start);
    out.push_back(s.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) return out;
    start = dot + 1;
  }
}

Result<json::value> parseRailObject(std::string_view text) {
  json::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) return invalidArgument("malformed-json", "not JSON: " + ec.message());
  if (!v.is_object()) return invalidArgument("malformed-json", "not a JSON object");
  return v;
}

Status railRefusalOf(const json::object& o, std::string_view badReplyReason) {
  auto bad = [&](std::string_view m) {
    return failedPrecondition(std::string(badReplyReason),
                              "the manager's reply does not parse: " + std::string(m));
  };
  const json::value* err = o.if_contains("error");
  if (err == nullptr || !err->is_object()) return bad("a refusal without 'error'");
  const json::value* code = err->as_object().if_contains("code");
  const json::value* message = err->as_object().if_contains("message");
  if (code == nullptr || !code->is_string() || message == nullptr || !message->is_string()) {
    return bad("'error' needs string 'code' and 'message'");
  }
  std::string c(code->as_string());
  std::string m = "the manager refused: " + std::string(message->as_string());
  if (c.starts_with("bad-") || c == "malformed-json") return invalidArgument(c, m);
  return unavailable(c, m);
}

bool isRailNonce(std::string_view nonce) {
  return nonce.size() >= kMinRailNonceLength && nonce.size() <= kMaxRailNonceLength &&
         wire::isRoutingToken(nonce);
}

Result<std::string> provisionSubject(std::string_view space, const wire::Principal& caller,
                                     std::string_view lifecycleUid, std::string_view nonce) {
  SHOAL_RETURN_IF_ERROR(wire::validateSpace(space));
  SHOAL_RETURN_IF_ERROR(wire::validatePrincipal(caller));
  SHOAL_RETURN_IF_ERROR(wire::validateLifecycleUid(lifecycleUid));
  if (!isRailNonce(nonce)) {
    return invalidArgument("bad-nonce", "a rail nonce is 22 to 64 of [A-Za-z0-9_-]");
  }
  std::string s;
  s.append(kRailRoot).append(".").append(space).append(".").append(kRailKind).append(".");
  s.append(kRailClass).append(".").append(kManagerEndpoint).append(".");
  s.append(kProvisionCommand).append(".").append(caller.dotForm()).append(".");
  s.append(lifecycleUid).append(".").append(nonce);
  return s;
}

Result<std::string> provisionServeFilter(std::string_view space) {
  SHOAL_RETURN_IF_ERROR(wire::validateSpace(space));
  return std::string(kRailRoot) + "." + std::string(space) + "." + std::string(kRailKind) + "." +
         std::string(kRailClass) + "." + std::string(kManagerEndpoint) + "." +
         std::string(kProvisionCommand) + ".*.*.*.*";
}

Result<RailCaller> parseProvisionSubject(std::string_view subject, std::string_view space) {
  auto t = railTokens(subject);
  if (t.size() != kProvisionSubjectTokens) {
    return invalidArgument("bad-rail-subject", "a provision subject has " +
                                                   std::to_string(kProvisionSubjectTokens) +
                                                   " tokens, got " + std::to_string(t.size()));
  }
  if (t[0] != kRailRoot || t[1] != space || t[2] != kRailKind || t[3] != kRailClass ||
      t[4] != kManagerEndpoint || t[5] != kProvisionCommand) {
    return invalidArgument("bad-rail-subject", "not this space's manager provision rail");
  }
  RailCaller caller;
  caller.principal = wire::Principal{std::string(t[6]), std::string(t[7])};
  if (Status st = wire::validatePrincipal(caller.principal); !st.isOk()) {
    return invalidArgument("bad-caller",
                           "the subject's caller is not a principal: " + st.toString());
  }
  SHOAL_RETURN_IF_ERROR(wire::validateLifecycleUid(t[8]));
  if (!isRailNonce(t[9])) {
    return invalidArgument("bad-nonce", "a rail nonce is 22 to 64 of [A-Za-z0-9_-]");
  }
  caller.lifecycleUid = std::string(t[8]);
  caller.nonce = std::string(t[9]);
  return caller;
}

Result<std::string> encodeProvisionRequest(const ProvisionRequest& request) {
  if (request.roles.size() > kMaxProvisionRoles) {
    return badRequest("at most " + std::to_string(kMaxProvisionRoles) + " roles per request");
  }
  json::array roles;
  for (const auto& r : request.roles) {
    SHOAL_RETURN_IF_ERROR(wire::validateRole(r));
    roles.emplace_back(r);
  }
  json::object o;
  o["roles"] = std::move(roles);
  return json::serialize(o);
}

Result<ProvisionRequest> decodeProvisionRequest(std::string_view text) {
  if (text.size() > kMaxProvisionBodyBytes) {
    return badRequest("request body larger than " + std::to_string(kMaxProvisionBodyBytes) +
                      " bytes");
  }
  ProvisionRequest out;
  if (text.empty()) return out;  // no body: no roles
  SHOAL_ASSIGN_OR_RETURN(json::value v, parseRailObject(text));
  std::set<std::string> seen;
  for (const auto& [key, value] : v.as_object()) {
    if (key != "roles") return badRequest("unknown key '" + std::string(key) + "'");
    if (!value.is_array()) return badRequest("roles must be an array of strings");
    const auto& arr = value.as_array();
    if (arr.size() > kMaxProvisionRoles) {
      return badRequest("at most " + std::to_string(kMaxProvisionRoles) + " roles per request");
    }
    for (const auto& r : arr) {
      if (!r.is_string()) return badRequest("roles must be an array of strings");
      std::string role(r.as_string());
      SHOAL_RETURN_IF_ERROR(wire::validateRole(role));
      if (seen.insert(role).second) out.roles.push_back(std::move(role));
    }
  }
  return out;
}

std::string encodeProvisionReply(const ProvisionReply& reply) {
  json::object roles;
  for (const auto& [role, durable] : reply.roles)
    roles[role] = durable;
  json::object o;
  o["ok"] = true;
  o["durable"] = reply.durable;
  o["created"] = reply.created;
  o["frontier"] = reply.frontier;
  o["roles"] = std::move(roles);
  return json::serialize(o);
}

std::string encodeProvisionError(const Status& error) {
  json::object err;
  err["code"] = error.reason().empty() ? std::string(statusCodeName(error.code()))
                                       : std::string(error.reason());
  err["message"] = std::string(error.message());
  json::object o;
  o["ok"] = false;
  o["error"] = std::move(err);
  return json::serialize(o);
}

Result<ProvisionReply> decodeProvisionReply(std::string_view text) {
  auto parsed = parseRailObject(text);
  if (!parsed.isOk()) return badReply(parsed.status().message());
  const json::object& o = parsed->as_object();
  const json::value* ok = o.if_contains("ok");
  if (ok == nullptr || !ok->is_bool()) return badReply("no boolean 'ok'");
  if (!ok->as_bool()) return railRefusalOf(o, "bad-provision-reply");
  ProvisionReply reply;
  const json::value* durable = o.if_contains("durable");
  const json::value* created = o.if_contains("created");
  const json::value* frontier = o.if_contains("frontier");
  const json::value* roles = o.if_contains("roles");
  if (durable == nullptr || !durable->is_string()) return badReply("no string 'durable'");
  if (created == nullptr || !created->is_bool()) return badReply("no boolean 'created'");
  if (frontier == nullptr || !(frontier->is_uint64() || frontier->is_int64())) {
    return badReply("no integer 'frontier'");
  }
  if (frontier->is_int64() && frontier->as_int64() < 0) return badReply("negative 'frontier'");
  if (roles == nullptr || !roles->is_object()) return badReply("no object 'roles'");
  reply.durable = std::string(durable->as_string());
  reply.created = created->as_bool();
  reply.frontier =
      frontier->is_uint64() ? frontier->as_uint64() : static_cast<uint64_t>(frontier->as_int64());
  for (const auto& [role, d] : roles->as_object()) {
    if (!d.is_string()) return badReply("a role's durable is not a string");
    reply.roles[std::string(role)] = std::string(d.as_string());
  }
  return reply;
}

Result<ProvisionReply> requestProvision(transport::Connection& conn, std::string_view space,
                                        const wire::Principal& principal,
                                        std::string_view lifecycleUid,
                                        const std::vector<std::string>& roles,
                                        std::chrono::milliseconds timeout) {
  SHOAL_ASSIGN_OR_RETURN(std::string nonce, newHexToken(16));
  SHOAL_ASSIGN_OR_RETURN(std::string subject,
                         provisionSubject(space, principal, lifecycleUid, nonce));
  SHOAL_ASSIGN_OR_RETURN(std::string body, encodeProvisionRequest(ProvisionRequest{roles}));
  auto reply = conn.request(subject, body, timeout);
  if (!reply.isOk()) {
    if (reply.status().reason() == "no-responders") {
      return unavailable("manager-not-serving",
                         "no manager serves space '" + std::string(space) +
                             "'; start it with `shoal serve` (or `shoal up`)");
    }
    return reply.status().withContext("asking the manager to provision");
  }
  return decodeProvisionReply(reply->data);
}

}  // namespace shoal::mesh
