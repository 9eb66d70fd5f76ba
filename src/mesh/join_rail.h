// The manager's join rail (issue 19, `shoal invite` / `shoal daemon join`): a machine that holds
// a one-time invite exchanges it for its seat daemon's credential. The joiner makes the daemon's
// key pair; only the public key travels, and the answer is a user JWT for it (the daemon
// profile, planes/grants.h), so no seed is ever on the wire.
//
// Subject (the issue rail's form, credential_rail.h), 9 tokens:
//   cotal.<space>.ep.one.manager.join.<owner>.<machine>.<inviteId>
//   token 0     1   2  3   4       5    6       7         8
// The invite's bootstrap credential may publish only on its own `join.<owner>.<machine>.
// <inviteId>` (or `join.<owner>.*.<inviteId>` when the invite leaves the machine name to the
// joiner), so the broker, not the body, says whose daemon this becomes. The manager serves
// `cotal.<space>.ep.one.manager.join.*.*.*` in the queue group `manager` and keeps each used
// invite id in `shoal_invites_<space>`: a second use by another key is refused
// (`invite-used`); the same key asking again (its reply was lost) gets a fresh JWT.
//
// Body: request {"userKey":"U…","connId":"…"}; reply as the issue rail's.
//
// Thread safety: pure codecs; requestDaemonCredential may be called from any thread.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/result.h"
#include "mesh/credential_rail.h"
#include "transport/connection.h"

namespace shoal::mesh {

inline constexpr std::string_view kJoinCommand = "join";

struct JoinCaller {
  std::string owner;
  std::string machine;
  std::string inviteId;

  bool operator==(const JoinCaller&) const = default;
};

struct JoinRequest {
  std::string userKey;  // "U…": the daemon's public key
  std::string connId;   // its reply inbox is `_INBOX_<connId>`

  bool operator==(const JoinRequest&) const = default;
};

// A fresh invite id: 32 hex characters, after `any` when the invite leaves the machine name to
// the joiner (the id is in the broker-policed subject, so the manager can tell: it then admits
// only a machine name that is not in use).
inline constexpr std::string_view kOpenMachineInvitePrefix = "any";
Result<std::string> newInviteId(bool openMachine = false);
bool isOpenMachineInvite(std::string_view inviteId);

Result<std::string> joinSubject(std::string_view space, const JoinCaller& caller);
// `cotal.<space>.ep.one.manager.join.*.*.*`.
Result<std::string> joinServeFilter(std::string_view space);
// What an invite's bootstrap credential may publish: its own subject, with `*` for the machine
// when `machine` is empty.
Result<std::string> joinCallerGrant(std::string_view space, std::string_view owner,
                                    std::string_view machine, std::string_view inviteId);
// `bad-rail-subject`, `bad-caller`, `bad-invite`.
Result<JoinCaller> parseJoinSubject(std::string_view subject, std::string_view space);

Result<std::string> encodeJoinRequest(const JoinRequest& request);
// Reasons: malformed-json, bad-join-request.
Result<JoinRequest> decodeJoinRequest(std::string_view json);
// A success (IssueReply), or the manager's refusal: `invite-used` kPermissionDenied,
// `no-authority` kFailedPrecondition; `bad-issue-reply` (the two rails share the reply form).
Result<IssueReply> decodeJoinReply(std::string_view json);

Result<IssueReply> requestDaemonCredential(transport::Connection& conn, std::string_view space,
                                           const JoinCaller& caller, const JoinRequest& request,
                                           std::chrono::milliseconds timeout);

}  // namespace shoal::mesh
