#include "daemon/wake_events.h"

#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/log.h"
#include "wire/subject.h"

namespace shoal::daemon {
namespace {

namespace json = boost::json;

}  // namespace

Status WakeEvents::publish(const WakeEvent& event, int64_t atMs) {
  SHOAL_ASSIGN_OR_RETURN(std::string subject, wire::wakeSubject(space_, seat_.principal));
  json::object o{{"kind", event.kind},
                 {"seat", json::object{{"id", seat_.principal.dotForm()}, {"name", seat_.name}}},
                 {"generation", event.generation},
                 {"at", atMs}};
  if (!event.detail.empty()) o["detail"] = event.detail;
  if (!event.messages.empty()) {
    json::array ids;
    for (const auto& id : event.messages)
      ids.emplace_back(id);
    o["messages"] = std::move(ids);
  }
  if (!event.exit.empty()) o["exit"] = event.exit;
  return js_.publish(subject, json::serialize(o)).status();
}

Status WakeEvents::result(const WakeResult& r, uint64_t generation, int64_t atMs) {
  SHOAL_ASSIGN_OR_RETURN(std::string subject, wire::wakeSubject(space_, seat_.principal));
  json::object o{{"kind", "wake-result"},
                 {"seat", json::object{{"id", seat_.principal.dotForm()}, {"name", seat_.name}}},
                 {"generation", generation},
                 {"at", atMs},
                 {"message", r.messageId},
                 {"target", r.targetKey},
                 {"result", r.result}};
  if (!r.replyId.empty()) o["replyId"] = r.replyId;
  if (!r.reason.empty()) o["reason"] = r.reason;
  return js_.publish(subject, json::serialize(o)).status();
}

std::string evidenceKind(std::string_view reason) {
  static constexpr std::string_view kKinds[] = {"runtime-ack", "stdin-read", "stdin-write",
                                                "inbox-page", "reconciled"};
  const std::string_view head = reason.substr(0, reason.find(':'));
  for (std::string_view k : kKinds) {
    if (head == k) return std::string(k);
  }
  return "";
}

Status WakeEvents::surfaced(const std::string& messageId, const std::string& sender, int64_t atMs,
                            std::string_view evidence) {
  json::object body{
      {"id", messageId}, {"recipient", seat_.principal.dotForm()}, {"surfacedAt", atMs}};
  if (!evidence.empty()) body["evidence"] = evidence;
  return receipt("surfaced", messageId, sender, json::serialize(body));
}

Status WakeEvents::failed(const std::string& messageId, const std::string& sender,
                          const std::string& reason, int64_t atMs) {
  json::object body{{"id", messageId},
                    {"recipient", seat_.principal.dotForm()},
                    {"failedAt", atMs},
                    {"reason", reason}};
  return receipt("failed", messageId, sender, json::serialize(body));
}

Status WakeEvents::receipt(std::string_view outcome, const std::string& messageId,
                           const std::string& sender, std::string body) {
  SHOAL_ASSIGN_OR_RETURN(wire::Principal from, wire::parsePrincipal(sender));
  SHOAL_ASSIGN_OR_RETURN(std::string subject, wire::rcptSubject(space_, from, seat_.principal));
  transport::PublishOptions po;
  // One id per outcome: a repeat of the same receipt is dropped by the duplicate window, a
  // different outcome (a failed upgraded to surfaced, seed 004 §3.3) never is.
  po.msgId = fmt::format("rcpt-{}-{}-{}", outcome, seat_.principal.dotForm(), messageId);
  Status sent = js_.publish(subject, body, po).status();
  if (!sent.isOk()) {
    if (auto held = unsent_.admit(sent.reason())) {
      log::warn("seat {}: the {} receipt of {} to {} was not stored: {}{}",
                seat_.principal.dotForm(), outcome, messageId, sender, sent.toString(),
                log::heldBackSuffix(*held));
    }
  }
  return sent;
}

}  // namespace shoal::daemon
