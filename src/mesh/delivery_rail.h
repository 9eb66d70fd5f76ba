// The delivery plane's rail, client side and wire codec: durable channel membership is asked
// of the plane, never self-asserted (seed 000 "Channel delivery"; Cotal SPEC §7, durable join).
//
// Subject (the Cotal §13.2 "class, untargeted" form, like the manager's provision rail):
//   cotal.<space>.ep.one.delivery.<op>.<owner>.<actor>.<uid>.<nonce>
//   token 0     1   2  3   4       5     6       7      8     9
// ops: join, leave, list, jobs. The caller is tokens 6–8; the plane serves
// `cotal.<space>.ep.one.delivery.*.*.*.*.*` in the queue group `delivery`.
//
// Bodies (simplified JSON, as the provision rail — docs/planes.md "Deliberate deviation"):
//   join   {"channel":"team.a","cursor":41}   cursor = the CHAT last_seq the caller read before
//          subscribing (its watermark); reply data {"durable":true,"generation":3,
//          "joinCursor":41,"existing":false,"caughtUp":2}
//   leave  {"channel":"team.a","generation":3}; reply {"leaveCursor":57} or {"alreadyLeft":true}
//   list   {}; reply {"memberships":[{"channel","generation","joinCursor","activated"}]}
//   jobs   {}; reply the plane's job table (planes/fanout_jobs.h), passed through as JSON
// Replies: {"ok":true,"data":{…}} or {"ok":false,"error":{"code","message"}}.
//
// Thread safety: codecs are pure; the request functions may be called from any thread.
// Lifetime: results own their bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "mesh/provision_client.h"
#include "transport/connection.h"
#include "wire/principal.h"

namespace shoal::mesh {

inline constexpr std::string_view kDeliveryEndpoint = "delivery";
inline constexpr std::string_view kDeliveryQueueGroup = "delivery";
inline constexpr std::chrono::milliseconds kDefaultDeliveryTimeout{5000};
inline constexpr size_t kMaxDeliveryBodyBytes = 16 * 1024;

enum class DeliveryOp { kJoin, kLeave, kList, kJobs };
std::string_view deliveryOpName(DeliveryOp op);

struct DeliveryRailRequest {
  DeliveryOp op = DeliveryOp::kList;
  RailCaller caller;
};

Result<std::string> deliverySubject(std::string_view space, DeliveryOp op,
                                    const wire::Principal& caller, std::string_view lifecycleUid,
                                    std::string_view nonce);
Result<std::string> deliveryServeFilter(std::string_view space);
// Reasons as parseProvisionSubject, plus `bad-delivery-op`.
Result<DeliveryRailRequest> parseDeliverySubject(std::string_view subject, std::string_view space);

// Replies. `data` is a JSON object text.
std::string encodeDeliveryOk(std::string_view data);
std::string encodeDeliveryError(const Status& error);
// The data object's text, or the plane's refusal as a Status (kInvalidArgument for `bad-…`,
// kFailedPrecondition for a refusal about state such as `stale-leave` / `acl-denies`, else
// kUnavailable), or `bad-delivery-reply`.
Result<std::string> decodeDeliveryReply(std::string_view json);

struct DurableJoinReply {
  bool durable = false;
  uint64_t generation = 0;
  uint64_t joinCursor = 0;
  bool existing = false;  // the lifecycle was already a member: cursor and generation kept
  uint64_t caughtUp = 0;  // copies made for posts the fan-out had already passed
};

struct DurableLeaveReply {
  bool alreadyLeft = false;
  uint64_t leaveCursor = 0;
};

struct MembershipSummary {
  std::string channel;
  uint64_t generation = 0;
  uint64_t joinCursor = 0;
  bool activated = false;
};

// No plane serving: kUnavailable `delivery-not-serving` naming `shoal serve` / `shoal up`.
Result<DurableJoinReply> requestDurableJoin(transport::Connection& conn, std::string_view space,
                                            const wire::Principal& caller,
                                            std::string_view lifecycleUid, std::string_view channel,
                                            uint64_t cursor, std::chrono::milliseconds timeout);
Result<DurableLeaveReply> requestDurableLeave(transport::Connection& conn, std::string_view space,
                                              const wire::Principal& caller,
                                              std::string_view lifecycleUid,
                                              std::string_view channel, uint64_t generation,
                                              std::chrono::milliseconds timeout);
Result<std::vector<MembershipSummary>> requestMemberships(transport::Connection& conn,
                                                          std::string_view space,
                                                          const wire::Principal& caller,
                                                          std::string_view lifecycleUid,
                                                          std::chrono::milliseconds timeout);
// The plane's job table as JSON text (shoal deliver pending).
Result<std::string> requestDeliveryJobs(transport::Connection& conn, std::string_view space,
                                        const wire::Principal& caller,
                                        std::string_view lifecycleUid,
                                        std::chrono::milliseconds timeout);

}  // namespace shoal::mesh
