// The manager's credential rail, client side and wire codec (issue 19, auth mode): a machine's
// seat daemon asks the space's credential authority for the agent credential of one of its
// seats. The daemon makes the seat's key pair; only the public key travels, and the answer is
// a user JWT for it, so no seed is ever on the wire.
//
// Subject (the provision rail's form, docs/planes.md), 9 tokens:
//   cotal.<space>.ep.one.manager.issue.<owner>.<machine>.<nonce>
//   token 0     1   2  3   4       5     6       7         8
// A daemon's credential may publish only under its own `<owner>.<machine>` (planes/grants.h,
// the daemon profile), so the broker, not the body, says who asks; the manager mints only for
// principals of that owner. The manager serves `cotal.<space>.ep.one.manager.issue.*.*.*` in
// the queue group `manager`.
//
// Body (a simplified JSON object like the provision rail's; unknown keys are refused):
//   request {"principal":"<o>.<a>","lifecycleUid":"…","connId":"…","userKey":"U…",
//            "role"?:"reviewer","channels":["team.backend"]}
//   reply   {"ok":true,"jwt":"…","expiresAt":<unix seconds>}
//   error   {"ok":false,"error":{"code":"<reason token>","message":"…"}}
//
// Invariant: every decoder validates what it reads and refuses with a Status.
//
// Thread safety: pure codecs; requestSeatCredential may be called from any thread.
// Lifetime: results own their bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "transport/connection.h"
#include "wire/principal.h"

namespace shoal::mesh {

inline constexpr std::string_view kIssueCommand = "issue";
inline constexpr size_t kIssueSubjectTokens = 9;
inline constexpr size_t kMaxIssueChannels = 64;
inline constexpr size_t kMaxIssueBodyBytes = 16 * 1024;

// Who asks (tokens 6–8): the daemon of `machine`, for seats of `owner`.
struct IssueCaller {
  std::string owner;
  std::string machine;
  std::string nonce;

  bool operator==(const IssueCaller&) const = default;
};

struct IssueRequest {
  wire::Principal principal;  // the seat; its owner must be the caller's
  std::string lifecycleUid;
  std::string connId;   // the seat's reply inbox is `_INBOX_<connId>`
  std::string userKey;  // "U…": the seat's public key
  std::optional<std::string> role;
  std::vector<std::string> channels;  // concrete channels it reads and posts to
  // The person at the CLI of the asking daemon's machine (`"person": true`), not a seat: a
  // short-lived credential for one of their commands, for a principal no machine keeps as a seat.
  bool person = false;
  // With `person`: the person's mail reader (planes/grants.h mailboxGrants: their own DMs through
  // the history reader their lifecycle names) instead of the agent profile; no channels, no role.
  bool mailbox = false;

  bool operator==(const IssueRequest&) const = default;
};

struct IssueReply {
  std::string jwt;
  int64_t expiresAt = 0;

  bool operator==(const IssueReply&) const = default;
};

// A machine name: 1–64 of [A-Za-z0-9_-].
Status validateMachineName(std::string_view machine);

Result<std::string> issueSubject(std::string_view space, std::string_view owner,
                                 std::string_view machine, std::string_view nonce);
// `cotal.<space>.ep.one.manager.issue.*.*.*`.
Result<std::string> issueServeFilter(std::string_view space);
// A daemon's own request subjects: `cotal.<space>.ep.one.manager.issue.<owner>.<machine>.*`.
Result<std::string> issueCallerGrant(std::string_view space, std::string_view owner,
                                     std::string_view machine);
// `bad-rail-subject` (root, space, rail, arity), `bad-caller` (owner or machine),
// `bad-nonce`.
Result<IssueCaller> parseIssueSubject(std::string_view subject, std::string_view space);

Result<std::string> encodeIssueRequest(const IssueRequest& request);
// Reasons: malformed-json, bad-issue-request (shape, unknown key, a bad field, too large).
Result<IssueRequest> decodeIssueRequest(std::string_view json);

std::string encodeIssueReply(const IssueReply& reply);
// A success reply, the manager's refusal (as decodeProvisionReply, except that `not-this-owner`
// and `not-this-machine` are kPermissionDenied and `unknown-seat` and `no-authority`
// kFailedPrecondition: asking again changes nothing), or `bad-issue-reply`.
Result<IssueReply> decodeIssueReply(std::string_view json);

// A joined machine's daemon renewing its own credential (space_join.h): the same key, a new JWT.
// Body {"daemonKey":"U…","connId":"…"} on the daemon's own issue subject; the manager renews
// only the key it issued to that owner and machine at the join, unless revoked since.
struct DaemonRenewal {
  std::string daemonKey;
  std::string connId;

  bool operator==(const DaemonRenewal&) const = default;
};
Result<std::string> encodeDaemonRenewal(const DaemonRenewal& renewal);
// nullopt when `json` is a seat's request (it names no daemonKey); `bad-issue-request`.
Result<std::optional<DaemonRenewal>> decodeDaemonRenewal(std::string_view json);
Result<IssueReply> requestDaemonRenewal(transport::Connection& conn, std::string_view space,
                                        std::string_view owner, std::string_view machine,
                                        const DaemonRenewal& renewal,
                                        std::chrono::milliseconds timeout);

// Asks the space's manager for `request`'s credential. No manager serving: kUnavailable
// `manager-not-serving`; one that holds no authority: its refusal `no-authority`.
Result<IssueReply> requestSeatCredential(transport::Connection& conn, std::string_view space,
                                         std::string_view owner, std::string_view machine,
                                         const IssueRequest& request,
                                         std::chrono::milliseconds timeout);

}  // namespace shoal::mesh
