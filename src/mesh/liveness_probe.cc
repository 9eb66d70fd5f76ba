#include "mesh/liveness_probe.h"

#include <condition_variable>
#include <memory>
#include <mutex>

#include "base/ids.h"
#include "wire/subject.h"

namespace shoal::mesh {
namespace {

// nats-server's "no responders" answer: an empty message whose status line is 503; nats.c
// surfaces the status as the header `Status`.
constexpr std::string_view kStatusHeader = "Status";
constexpr std::string_view kNoRespondersStatus = "503";
constexpr size_t kNonceBytes = 16;

struct ReplySlot {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<transport::Message> reply;
};

LivenessVerdict verdict(wire::Plane plane, wire::Responder responder, LivenessEvidence evidence,
                        std::string detail) {
  LivenessVerdict v;
  v.plane = plane;
  v.responder = responder;
  v.evidence = evidence;
  v.detail = std::move(detail);
  return v;
}

LivenessVerdict unknownFrom(wire::Plane plane, const Status& st) {
  auto evidence = st.code() == StatusCode::kDeadlineExceeded ? LivenessEvidence::kTimeout
                                                             : LivenessEvidence::kRefused;
  return verdict(plane, wire::Responder::kUnknown, evidence, st.toString());
}

}  // namespace

std::string_view livenessEvidenceName(LivenessEvidence evidence) {
  switch (evidence) {
    case LivenessEvidence::kReply:
      return "reply";
    case LivenessEvidence::kNoResponders:
      return "no-responders";
    case LivenessEvidence::kTimeout:
      return "timeout";
    case LivenessEvidence::kRefused:
      return "refused";
    case LivenessEvidence::kMalformedReply:
      return "malformed-reply";
  }
  return "unknown";
}

Result<LivenessVerdict> probeLiveness(transport::Connection& conn, std::string_view space,
                                      const wire::Principal& caller, std::string_view planeName,
                                      std::chrono::milliseconds timeout) {
  std::optional<wire::Plane> plane = wire::parsePlane(planeName);
  if (!plane) {
    return invalidArgument("bad-plane", "plane '" + std::string(planeName) +
                                            "' is not probeable; use manager or delivery");
  }
  SHOAL_ASSIGN_OR_RETURN(std::string request, wire::liveSubject(space, *plane, caller));
  SHOAL_ASSIGN_OR_RETURN(std::string nonce, newHexToken(kNonceBytes));
  SHOAL_ASSIGN_OR_RETURN(std::string reply, wire::livenessReplySubject(request, nonce));

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto slot = std::make_shared<ReplySlot>();
  const uint64_t deniedBefore = conn.stats().permissionViolations;
  auto sub = conn.subscribe(reply, [slot](transport::Message m) {
    std::lock_guard lock(slot->mu);
    if (!slot->reply) slot->reply = std::move(m);
    slot->cv.notify_all();
  });
  if (!sub.isOk()) return unknownFrom(*plane, sub.status());
  if (Status st = conn.flush(timeout); !st.isOk()) return unknownFrom(*plane, st);
  if (Status st = conn.publishRequest(request, reply, ""); !st.isOk()) {
    return unknownFrom(*plane, st);
  }

  std::unique_lock lock(slot->mu);
  bool got = slot->cv.wait_until(lock, deadline, [&] {
    return slot->reply.has_value() || conn.stats().permissionViolations != deniedBefore;
  });
  if (conn.stats().permissionViolations != deniedBefore && !slot->reply) {
    return unknownFrom(*plane, conn.lastAsyncError());
  }
  if (!got) {
    return verdict(*plane, wire::Responder::kUnknown, LivenessEvidence::kTimeout,
                   "no answer within " + std::to_string(timeout.count()) + " ms");
  }
  transport::Message m = std::move(*slot->reply);
  lock.unlock();

  if (m.data.empty() && m.header(kStatusHeader) == std::string(kNoRespondersStatus)) {
    return verdict(*plane, wire::Responder::kUnbound, LivenessEvidence::kNoResponders,
                   "no responders");
  }
  auto answer = wire::decodeLivenessAnswer(m.data, *plane);
  if (!answer.isOk()) {
    return verdict(*plane, wire::Responder::kUnknown, LivenessEvidence::kMalformedReply,
                   answer.status().toString());
  }
  LivenessVerdict v = verdict(*plane, answer->responder, LivenessEvidence::kReply, "reply");
  v.instance = answer->instance;
  return v;
}

}  // namespace shoal::mesh
