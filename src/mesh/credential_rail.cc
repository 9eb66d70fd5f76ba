#include "mesh/credential_rail.h"

#include <set>

#include <boost/json.hpp>

#include "base/ids.h"
#include "mesh/provision_client.h"
#include "transport/nkey.h"
#include "wire/channel.h"
#include "wire/token.h"

namespace shoal::mesh {
namespace {

namespace json = boost::json;

constexpr size_t kMaxMachineName = 64;

Status badRequest(std::string_view message) {
  return invalidArgument("bad-issue-request", message);
}

Status badReply(std::string_view message) {
  return failedPrecondition("bad-issue-reply",
                            "the manager's reply does not parse: " + std::string(message));
}

std::string railPrefix(std::string_view space) {
  return "cotal." + std::string(space) + ".ep.one." + std::string(kManagerEndpoint) + "." +
         std::string(kIssueCommand);
}

// The rail exists only in auth mode, where `local` is no one's owner.
bool isIssueOwner(std::string_view owner) {
  return wire::isRealOwner(owner) && owner != wire::kLocalOwner;
}

Status validateRequest(const IssueRequest& r) {
  SHOAL_RETURN_IF_ERROR(wire::validatePrincipal(r.principal));
  SHOAL_RETURN_IF_ERROR(wire::validateLifecycleUid(r.lifecycleUid));
  if (r.connId.size() < 8 || r.connId.size() > 120 || !wire::isRoutingToken(r.connId)) {
    return badRequest("a connection id is 8-120 of [A-Za-z0-9_-]");
  }
  if (!transport::isNKeyPublic(r.userKey, transport::NKeyRole::kUser)) {
    return badRequest("userKey is not a user public key (U…)");
  }
  if (r.role) SHOAL_RETURN_IF_ERROR(wire::validateRole(*r.role));
  if (r.channels.size() > kMaxIssueChannels) {
    return badRequest("at most " + std::to_string(kMaxIssueChannels) + " channels per request");
  }
  for (const auto& c : r.channels)
    SHOAL_RETURN_IF_ERROR(wire::validateConcreteChannel(c));
  if (r.mailbox && (!r.person || r.role || !r.channels.empty())) {
    return badRequest("a mail reader is the person's (person: true), with no role or channels");
  }
  return Status::ok();
}

}  // namespace

Status validateMachineName(std::string_view machine) {
  if (machine.empty() || machine.size() > kMaxMachineName || !wire::isRoutingToken(machine)) {
    return invalidArgument("bad-machine-name", "a machine name is 1-64 of [A-Za-z0-9_-], got '" +
                                                   std::string(machine.substr(0, 80)) + "'");
  }
  return Status::ok();
}

Result<std::string> issueSubject(std::string_view space, std::string_view owner,
                                 std::string_view machine, std::string_view nonce) {
  SHOAL_ASSIGN_OR_RETURN(std::string grant, issueCallerGrant(space, owner, machine));
  if (!isRailNonce(nonce)) {
    return invalidArgument("bad-nonce", "a rail nonce is 22 to 64 of [A-Za-z0-9_-]");
  }
  grant.pop_back();  // the trailing `*`
  return grant + std::string(nonce);
}

Result<std::string> issueServeFilter(std::string_view space) {
  SHOAL_RETURN_IF_ERROR(wire::validateSpace(space));
  return railPrefix(space) + ".*.*.*";
}

Result<std::string> issueCallerGrant(std::string_view space, std::string_view owner,
                                     std::string_view machine) {
  SHOAL_RETURN_IF_ERROR(wire::validateSpace(space));
  if (!isIssueOwner(owner)) {
    return invalidArgument(
        "bad-caller", "'" + std::string(owner) + "' is not an owner of auth mode (never `local`)");
  }
  SHOAL_RETURN_IF_ERROR(validateMachineName(machine));
  return railPrefix(space) + "." + std::string(owner) + "." + std::string(machine) + ".*";
}

Result<IssueCaller> parseIssueSubject(std::string_view subject, std::string_view space) {
  auto t = railTokens(subject);
  if (t.size() != kIssueSubjectTokens) {
    return invalidArgument("bad-rail-subject", "an issue subject has " +
                                                   std::to_string(kIssueSubjectTokens) +
                                                   " tokens, got " + std::to_string(t.size()));
  }
  if (t[0] != "cotal" || t[1] != space || t[2] != "ep" || t[3] != "one" ||
      t[4] != kManagerEndpoint || t[5] != kIssueCommand) {
    return invalidArgument("bad-rail-subject", "not this space's manager issue rail");
  }
  if (!isIssueOwner(t[6]) || !validateMachineName(t[7]).isOk()) {
    return invalidArgument("bad-caller", "the subject's caller is not an owner and a machine");
  }
  if (!isRailNonce(t[8])) {
    return invalidArgument("bad-nonce", "a rail nonce is 22 to 64 of [A-Za-z0-9_-]");
  }
  return IssueCaller{std::string(t[6]), std::string(t[7]), std::string(t[8])};
}

Result<std::string> encodeIssueRequest(const IssueRequest& request) {
  SHOAL_RETURN_IF_ERROR(validateRequest(request));
  json::object o;
  o["principal"] = request.principal.dotForm();
  o["lifecycleUid"] = request.lifecycleUid;
  o["connId"] = request.connId;
  o["userKey"] = request.userKey;
  if (request.role) o["role"] = *request.role;
  json::array channels;
  for (const auto& c : request.channels)
    channels.emplace_back(c);
  o["channels"] = std::move(channels);
  if (request.person) o["person"] = true;
  if (request.mailbox) o["mailbox"] = true;
  return json::serialize(o);
}

Result<IssueRequest> decodeIssueRequest(std::string_view text) {
  if (text.size() > kMaxIssueBodyBytes) {
    return badRequest("request body larger than " + std::to_string(kMaxIssueBodyBytes) + " bytes");
  }
  SHOAL_ASSIGN_OR_RETURN(json::value v, parseRailObject(text));
  IssueRequest out;
  bool principal = false, uid = false, conn = false, key = false;
  for (const auto& [k, value] : v.as_object()) {
    if (k == "channels") {
      if (!value.is_array()) return badRequest("channels must be an array of strings");
      std::set<std::string> seen;
      for (const auto& c : value.as_array()) {
        if (!c.is_string()) return badRequest("channels must be an array of strings");
        if (seen.insert(std::string(c.as_string())).second) {
          out.channels.emplace_back(c.as_string());
        }
        if (out.channels.size() > kMaxIssueChannels) return badRequest("too many channels");
      }
      continue;
    }
    if (k == "person" || k == "mailbox") {
      if (!value.is_bool()) return badRequest(std::string(k) + " must be a boolean");
      (k == "person" ? out.person : out.mailbox) = value.as_bool();
      continue;
    }
    if (!value.is_string()) return badRequest("'" + std::string(k) + "' must be a string");
    std::string s(value.as_string());
    if (k == "principal") {
      auto p = wire::parsePrincipal(s);
      if (!p.isOk()) return badRequest("principal: " + p.status().toString());
      out.principal = *p;
      principal = true;
    } else if (k == "lifecycleUid") {
      out.lifecycleUid = std::move(s);
      uid = true;
    } else if (k == "connId") {
      out.connId = std::move(s);
      conn = true;
    } else if (k == "userKey") {
      out.userKey = std::move(s);
      key = true;
    } else if (k == "role") {
      out.role = std::move(s);
    } else {
      return badRequest("unknown key '" + std::string(k) + "'");
    }
  }
  if (!principal || !uid || !conn || !key) {
    return badRequest("principal, lifecycleUid, connId and userKey are required");
  }
  if (Status st = validateRequest(out); !st.isOk()) {
    return st.reason() == "bad-issue-request" ? st : badRequest(st.toString());
  }
  return out;
}

std::string encodeIssueReply(const IssueReply& reply) {
  json::object o;
  o["ok"] = true;
  o["jwt"] = reply.jwt;
  o["expiresAt"] = reply.expiresAt;
  return json::serialize(o);
}

Result<IssueReply> decodeIssueReply(std::string_view text) {
  auto parsed = parseRailObject(text);
  if (!parsed.isOk()) return badReply(parsed.status().message());
  const json::object& o = parsed->as_object();
  const json::value* ok = o.if_contains("ok");
  if (ok == nullptr || !ok->is_bool()) return badReply("no boolean 'ok'");
  if (!ok->as_bool()) {
    Status refused = railRefusalOf(o, "bad-issue-reply");
    // The manager's own verdicts on who may have the credential do not change by asking again.
    const std::string reason(refused.reason());
    if (reason == "not-this-owner" || reason == "not-this-machine") {
      return permissionDenied(reason, refused.message());
    }
    if (reason == "unknown-seat" || reason == "no-authority") {
      return failedPrecondition(reason, refused.message());
    }
    return refused;
  }
  const json::value* jwt = o.if_contains("jwt");
  const json::value* expires = o.if_contains("expiresAt");
  if (jwt == nullptr || !jwt->is_string() || jwt->as_string().empty()) {
    return badReply("no string 'jwt'");
  }
  if (expires == nullptr || !expires->is_int64() || expires->as_int64() <= 0) {
    return badReply("no positive integer 'expiresAt'");
  }
  return IssueReply{std::string(jwt->as_string()), expires->as_int64()};
}

Result<std::string> encodeDaemonRenewal(const DaemonRenewal& renewal) {
  if (!transport::isNKeyPublic(renewal.daemonKey, transport::NKeyRole::kUser)) {
    return badRequest("daemonKey is not a user public key (U…)");
  }
  if (renewal.connId.size() < 8 || renewal.connId.size() > 120 ||
      !wire::isRoutingToken(renewal.connId)) {
    return badRequest("a connection id is 8-120 of [A-Za-z0-9_-]");
  }
  return json::serialize(
      json::object{{"daemonKey", renewal.daemonKey}, {"connId", renewal.connId}});
}

Result<std::optional<DaemonRenewal>> decodeDaemonRenewal(std::string_view text) {
  if (text.size() > kMaxIssueBodyBytes) return badRequest("request body too large");
  SHOAL_ASSIGN_OR_RETURN(json::value v, parseRailObject(text));
  const json::object& o = v.as_object();
  if (!o.contains("daemonKey")) return std::optional<DaemonRenewal>();
  DaemonRenewal out;
  for (const auto& [k, value] : o) {
    if (!value.is_string()) return badRequest("'" + std::string(k) + "' must be a string");
    if (k == "daemonKey") {
      out.daemonKey = std::string(value.as_string());
    } else if (k == "connId") {
      out.connId = std::string(value.as_string());
    } else {
      return badRequest("unknown key '" + std::string(k) + "'");
    }
  }
  SHOAL_RETURN_IF_ERROR(encodeDaemonRenewal(out).status());
  return std::optional<DaemonRenewal>(std::move(out));
}

Result<IssueReply> requestDaemonRenewal(transport::Connection& conn, std::string_view space,
                                        std::string_view owner, std::string_view machine,
                                        const DaemonRenewal& renewal,
                                        std::chrono::milliseconds timeout) {
  SHOAL_ASSIGN_OR_RETURN(std::string nonce, newHexToken(16));
  SHOAL_ASSIGN_OR_RETURN(std::string subject, issueSubject(space, owner, machine, nonce));
  SHOAL_ASSIGN_OR_RETURN(std::string body, encodeDaemonRenewal(renewal));
  auto reply = conn.request(subject, body, timeout);
  if (!reply.isOk()) return reply.status().withContext("renewing the daemon's credential");
  return decodeIssueReply(reply->data);
}

Result<IssueReply> requestSeatCredential(transport::Connection& conn, std::string_view space,
                                         std::string_view owner, std::string_view machine,
                                         const IssueRequest& request,
                                         std::chrono::milliseconds timeout) {
  SHOAL_ASSIGN_OR_RETURN(std::string nonce, newHexToken(16));
  SHOAL_ASSIGN_OR_RETURN(std::string subject, issueSubject(space, owner, machine, nonce));
  SHOAL_ASSIGN_OR_RETURN(std::string body, encodeIssueRequest(request));
  auto reply = conn.request(subject, body, timeout);
  if (!reply.isOk()) {
    if (reply.status().reason() == "no-responders") {
      return unavailable("manager-not-serving",
                         "no manager serves space '" + std::string(space) +
                             "'; start it with `shoal serve` (or `shoal up`)");
    }
    return reply.status().withContext("asking the manager for " + request.principal.dotForm() +
                                      "'s credential");
  }
  return decodeIssueReply(reply->data);
}

}  // namespace shoal::mesh
