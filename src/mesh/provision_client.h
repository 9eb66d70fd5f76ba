// The manager's provisioning rail, client side and wire codec: a principal asks the manager
// plane to create its durables (agents never create streams or durables: docs/architecture.md,
// Processes).
//
// Subject (Cotal §13.2 "class, untargeted" form, 10 tokens):
//   cotal.<space>.ep.one.manager.provision.<owner>.<actor>.<uid>.<nonce>
//   token 0     1   2  3   4       5         6       7      8     9
// The caller's identity is tokens 6–8 (a real owner, an actor token, a lifecycle uid
// [a-z0-9]{26,32}); the nonce is [A-Za-z0-9_-]{22,64}. The manager serves
// `cotal.<space>.ep.one.manager.provision.*.*.*.*` in the queue group `manager`.
//
// Body: a simplified JSON object, NOT the full §13.3 envelope (a deliberate deviation,
// docs/planes.md):
//   request  {"roles":["reviewer"]}               roles optional; unknown keys are refused
//   reply    {"ok":true,"durable":"dm_…","created":true,"frontier":N,
//             "roles":{"reviewer":"svc_reviewer"}}
//   error    {"ok":false,"error":{"code":"<reason token>","message":"…"}}
//
// Invariant: every decoder validates what it reads (arity, tokens, types, bounds) and refuses
// with a Status; nothing from the wire is trusted or asserted on.
//
// Thread safety: the codecs are pure functions; requestProvision may be called from any thread.
// Lifetime: results own their bytes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "base/result.h"
#include "base/status.h"
#include "transport/connection.h"
#include "wire/principal.h"

namespace shoal::mesh {

inline constexpr std::string_view kManagerEndpoint = "manager";
inline constexpr std::string_view kProvisionCommand = "provision";
// The queue group every manager instance serves the rail in (one request, one answer).
inline constexpr std::string_view kManagerQueueGroup = "manager";
inline constexpr size_t kProvisionSubjectTokens = 10;
inline constexpr size_t kMinRailNonceLength = 22;
inline constexpr size_t kMaxRailNonceLength = 64;
// Bound on the roles one request may ask for (keeps a reply small and a request cheap).
inline constexpr size_t kMaxProvisionRoles = 32;
// Bound on a request body; anything larger is refused before parsing.
inline constexpr size_t kMaxProvisionBodyBytes = 16 * 1024;
inline constexpr std::chrono::milliseconds kDefaultProvisionTimeout{5000};

// The identity a rail subject carries (tokens 6–9).
struct RailCaller {
  wire::Principal principal;
  std::string lifecycleUid;
  std::string nonce;

  bool operator==(const RailCaller&) const = default;
};

struct ProvisionRequest {
  std::vector<std::string> roles;  // each a routing token; duplicates are collapsed

  bool operator==(const ProvisionRequest&) const = default;
};

struct ProvisionReply {
  std::string durable;    // dm_<o>-<a>-<uid>
  bool created = false;   // false: it already existed and was left exactly as it was
  uint64_t frontier = 0;  // the DM stream sequence the durable starts after
  std::map<std::string, std::string> roles;  // role -> svc_<role>

  bool operator==(const ProvisionReply&) const = default;
};

// [A-Za-z0-9_-]{22,64}.
bool isRailNonce(std::string_view nonce);

// Shared by the manager's rails (this one and credential_rail.h): a subject's dot-separated
// tokens; a body parsed as a JSON object (`malformed-json` otherwise); the Status a refusal
// reply `{"ok":false,"error":{…}}` stands for (kInvalidArgument for a `bad-…` or
// `malformed-json` code, else kUnavailable), or `reply` as the reason for a refusal that is
// itself malformed.
std::vector<std::string_view> railTokens(std::string_view subject);
Result<boost::json::value> parseRailObject(std::string_view text);
Status railRefusalOf(const boost::json::object& reply, std::string_view badReplyReason);

// The request subject; validates space, principal, uid and nonce.
Result<std::string> provisionSubject(std::string_view space, const wire::Principal& caller,
                                     std::string_view lifecycleUid, std::string_view nonce);
// `cotal.<space>.ep.one.manager.provision.*.*.*.*`.
Result<std::string> provisionServeFilter(std::string_view space);
// Splits and validates a request subject of `space` (`bad-rail-subject` for the wrong root,
// space, rail, arity or an empty token; `bad-caller` for a principal that is not real;
// `bad-lifecycle-uid`, `bad-nonce`). Every reason starts with `bad-`.
Result<RailCaller> parseProvisionSubject(std::string_view subject, std::string_view space);

Result<std::string> encodeProvisionRequest(const ProvisionRequest& request);
// Reasons: malformed-json, bad-provision-request (not an object, unknown key, wrong type,
// too many roles), bad-token (a role is not a routing token).
Result<ProvisionRequest> decodeProvisionRequest(std::string_view json);

std::string encodeProvisionReply(const ProvisionReply& reply);
// `{"ok":false,"error":{"code":<status reason>,"message":<status message>}}`.
std::string encodeProvisionError(const Status& error);
// A success reply, or the manager's refusal as a Status (kInvalidArgument for a `bad-…` /
// `malformed-json` code, else kUnavailable with the manager's code as the reason), or
// `bad-provision-reply` when the reply itself does not parse.
Result<ProvisionReply> decodeProvisionReply(std::string_view json);

// Asks the space's manager to provision `principal`'s DM durable for `lifecycleUid` and the
// svc durables of `roles`. No manager serving: kUnavailable naming `shoal serve` / `shoal up`;
// no answer in time: kDeadlineExceeded.
Result<ProvisionReply> requestProvision(transport::Connection& conn, std::string_view space,
                                        const wire::Principal& principal,
                                        std::string_view lifecycleUid,
                                        const std::vector<std::string>& roles,
                                        std::chrono::milliseconds timeout);

}  // namespace shoal::mesh
