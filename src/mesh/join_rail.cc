#include "mesh/join_rail.h"

#include <boost/json.hpp>

#include "base/ids.h"
#include "mesh/provision_client.h"
#include "transport/nkey.h"
#include "wire/token.h"

namespace shoal::mesh {
namespace {

namespace json = boost::json;

constexpr size_t kJoinSubjectTokens = 9;
constexpr size_t kMaxJoinBodyBytes = 4 * 1024;

Status badRequest(std::string_view message) {
  return invalidArgument("bad-join-request", message);
}

std::string railPrefix(std::string_view space) {
  return "cotal." + std::string(space) + ".ep.one." + std::string(kManagerEndpoint) + "." +
         std::string(kJoinCommand);
}

Status checkCaller(std::string_view owner, std::string_view machine, std::string_view inviteId,
                   bool anyMachine) {
  if (!wire::isRealOwner(owner) || owner == wire::kLocalOwner) {
    return invalidArgument(
        "bad-caller", "'" + std::string(owner) + "' is not an owner of auth mode (never `local`)");
  }
  if (!(anyMachine && machine.empty())) SHOAL_RETURN_IF_ERROR(validateMachineName(machine));
  if (!isRailNonce(inviteId)) {
    return invalidArgument("bad-invite", "an invite id is 22 to 64 of [A-Za-z0-9_-]");
  }
  return Status::ok();
}

Status validateRequest(const JoinRequest& r) {
  if (!transport::isNKeyPublic(r.userKey, transport::NKeyRole::kUser)) {
    return badRequest("userKey is not a user public key (U…)");
  }
  if (r.connId.size() < 8 || r.connId.size() > 120 || !wire::isRoutingToken(r.connId)) {
    return badRequest("a connection id is 8-120 of [A-Za-z0-9_-]");
  }
  return Status::ok();
}

}  // namespace

Result<std::string> newInviteId(bool openMachine) {
  SHOAL_ASSIGN_OR_RETURN(std::string hex, newHexToken(16));
  return openMachine ? std::string(kOpenMachineInvitePrefix) + hex : hex;
}

bool isOpenMachineInvite(std::string_view inviteId) {
  return inviteId.substr(0, kOpenMachineInvitePrefix.size()) == kOpenMachineInvitePrefix;
}

Result<std::string> joinSubject(std::string_view space, const JoinCaller& caller) {
  SHOAL_RETURN_IF_ERROR(wire::validateSpace(space));
  SHOAL_RETURN_IF_ERROR(checkCaller(caller.owner, caller.machine, caller.inviteId, false));
  return railPrefix(space) + "." + caller.owner + "." + caller.machine + "." + caller.inviteId;
}

Result<std::string> joinServeFilter(std::string_view space) {
  SHOAL_RETURN_IF_ERROR(wire::validateSpace(space));
  return railPrefix(space) + ".*.*.*";
}

Result<std::string> joinCallerGrant(std::string_view space, std::string_view owner,
                                    std::string_view machine, std::string_view inviteId) {
  SHOAL_RETURN_IF_ERROR(wire::validateSpace(space));
  SHOAL_RETURN_IF_ERROR(checkCaller(owner, machine, inviteId, true));
  return railPrefix(space) + "." + std::string(owner) + "." +
         (machine.empty() ? std::string("*") : std::string(machine)) + "." + std::string(inviteId);
}

Result<JoinCaller> parseJoinSubject(std::string_view subject, std::string_view space) {
  auto t = railTokens(subject);
  if (t.size() != kJoinSubjectTokens) {
    return invalidArgument("bad-rail-subject", "a join subject has " +
                                                   std::to_string(kJoinSubjectTokens) +
                                                   " tokens, got " + std::to_string(t.size()));
  }
  if (t[0] != "cotal" || t[1] != space || t[2] != "ep" || t[3] != "one" ||
      t[4] != kManagerEndpoint || t[5] != kJoinCommand) {
    return invalidArgument("bad-rail-subject", "not this space's manager join rail");
  }
  SHOAL_RETURN_IF_ERROR(checkCaller(t[6], t[7], t[8], false));
  return JoinCaller{std::string(t[6]), std::string(t[7]), std::string(t[8])};
}

Result<std::string> encodeJoinRequest(const JoinRequest& request) {
  SHOAL_RETURN_IF_ERROR(validateRequest(request));
  json::object o;
  o["userKey"] = request.userKey;
  o["connId"] = request.connId;
  return json::serialize(o);
}

Result<JoinRequest> decodeJoinRequest(std::string_view text) {
  if (text.size() > kMaxJoinBodyBytes) {
    return badRequest("request body larger than " + std::to_string(kMaxJoinBodyBytes) + " bytes");
  }
  SHOAL_ASSIGN_OR_RETURN(json::value v, parseRailObject(text));
  JoinRequest out;
  bool key = false, conn = false;
  for (const auto& [k, value] : v.as_object()) {
    if (!value.is_string()) return badRequest("'" + std::string(k) + "' must be a string");
    if (k == "userKey") {
      out.userKey = std::string(value.as_string());
      key = true;
    } else if (k == "connId") {
      out.connId = std::string(value.as_string());
      conn = true;
    } else {
      return badRequest("unknown key '" + std::string(k) + "'");
    }
  }
  if (!key || !conn) return badRequest("userKey and connId are required");
  SHOAL_RETURN_IF_ERROR(validateRequest(out));
  return out;
}

Result<IssueReply> decodeJoinReply(std::string_view text) {
  auto reply = decodeIssueReply(text);
  if (!reply.isOk() && reply.status().reason() == "invite-used") {
    return permissionDenied("invite-used", reply.status().message());
  }
  return reply;
}

Result<IssueReply> requestDaemonCredential(transport::Connection& conn, std::string_view space,
                                           const JoinCaller& caller, const JoinRequest& request,
                                           std::chrono::milliseconds timeout) {
  SHOAL_ASSIGN_OR_RETURN(std::string subject, joinSubject(space, caller));
  SHOAL_ASSIGN_OR_RETURN(std::string body, encodeJoinRequest(request));
  auto reply = conn.request(subject, body, timeout);
  if (!reply.isOk()) {
    if (reply.status().reason() == "no-responders") {
      return unavailable("manager-not-serving",
                         "no manager serves space '" + std::string(space) +
                             "' on that broker: is the inviting machine's mesh up?");
    }
    return reply.status().withContext("exchanging the invite for a daemon credential");
  }
  return decodeJoinReply(reply->data);
}

}  // namespace shoal::mesh
