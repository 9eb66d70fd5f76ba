#include "planes/liveness_responder.h"

#include <boost/json.hpp>

#include "base/ids.h"
#include "base/log.h"
#include "wire/subject.h"

namespace shoal::planes {
namespace {

constexpr size_t kInstanceTokenBytes = 16;
constexpr std::chrono::milliseconds kBindFlushTimeout{5000};

}  // namespace

wire::Responder responderFromLease(const std::optional<std::string>& leaseValue,
                                   std::string_view ownHolder, std::string_view ownIncarnation) {
  if (!leaseValue) return wire::Responder::kUnbound;
  boost::json::error_code ec;
  boost::json::value v = boost::json::parse(*leaseValue, ec);
  if (ec || !v.is_object()) return wire::Responder::kUnknown;
  const auto& o = v.as_object();
  const auto* holder = o.if_contains("holder");
  const auto* ready = o.if_contains("ready");
  const auto* incarnation = o.if_contains("incarnation");
  if (holder == nullptr || !holder->is_string()) return wire::Responder::kUnknown;
  if (ready != nullptr && !ready->is_bool()) return wire::Responder::kUnknown;
  if (incarnation != nullptr && !incarnation->is_string()) return wire::Responder::kUnknown;
  if (ready == nullptr || !ready->as_bool()) return wire::Responder::kUnbound;
  bool own = holder->as_string() == ownHolder && incarnation != nullptr &&
             incarnation->as_string() == ownIncarnation;
  return own ? wire::Responder::kBound : wire::Responder::kStale;
}

LivenessResponder::LivenessResponder(transport::Connection& conn, wire::Plane plane, Grader grader)
    : conn_(conn), plane_(plane), grader_(std::move(grader)) {}

LivenessResponder::~LivenessResponder() {
  sub_.reset();
}

Result<std::unique_ptr<LivenessResponder>> LivenessResponder::bind(transport::Connection& conn,
                                                                   std::string_view space,
                                                                   wire::Plane plane,
                                                                   Grader grader) {
  SHOAL_ASSIGN_OR_RETURN(std::string filter, wire::livenessServeFilter(space, plane));
  std::unique_ptr<LivenessResponder> r(new LivenessResponder(conn, plane, std::move(grader)));
  SHOAL_RETURN_IF_ERROR(r->onReconnected());  // the first token
  LivenessResponder* self = r.get();
  SHOAL_ASSIGN_OR_RETURN(auto sub,
                         conn.queueSubscribe(filter, wire::livenessQueueGroup(plane),
                                             [self](transport::Message m) { self->handle(m); }));
  r->sub_.emplace(std::move(sub));
  SHOAL_RETURN_IF_ERROR(conn.flush(kBindFlushTimeout));
  return r;
}

Status LivenessResponder::onReconnected() {
  SHOAL_ASSIGN_OR_RETURN(std::string token, newHexToken(kInstanceTokenBytes));
  std::lock_guard lock(mu_);
  instance_ = std::move(token);
  return Status::ok();
}

std::string LivenessResponder::instance() const {
  std::lock_guard lock(mu_);
  return instance_;
}

void LivenessResponder::handle(const transport::Message& request) {
  if (Status st = wire::checkLivenessReplyTarget(request.subject, request.reply); !st.isOk()) {
    dropped_.fetch_add(1);
    log::warn(
        "liveness {}: dropped a probe on {} whose reply target '{}' is not under its own "
        ".reply. subtree",
        wire::planeName(plane_), request.subject, request.reply);
    return;
  }
  wire::LivenessAnswer answer;
  answer.plane = plane_;
  answer.responder = grader_();
  answer.instance = instance();
  auto body = wire::encodeLivenessAnswer(answer);
  if (!body.isOk()) {
    log::error("liveness {}: cannot encode an answer: {}", wire::planeName(plane_),
               body.status().toString());
    return;
  }
  if (Status st = conn_.publish(request.reply, *body); !st.isOk()) {
    log::warn("liveness {}: answer to {} not sent: {}", wire::planeName(plane_), request.reply,
              st.toString());
    return;
  }
  answered_.fetch_add(1);
}

}  // namespace shoal::planes
