#include "mesh/outbound.h"

#include "base/ids.h"
#include "wire/subject.h"

namespace shoal::mesh {

Result<std::string> outboundSubject(std::string_view space, const wire::Principal& sender,
                                    const Outbound& outbound) {
  switch (outbound.kind) {
    case wire::DeliveryKind::kDm: {
      SHOAL_ASSIGN_OR_RETURN(wire::Principal to, wire::parsePrincipal(outbound.target));
      return wire::instSubject(space, to, sender);
    }
    case wire::DeliveryKind::kChannel:
      return wire::chatSubject(space, sender, outbound.target);
    case wire::DeliveryKind::kAnycast:
      return wire::svcSubject(space, outbound.target, sender);
  }
  return invalidArgument("bad-delivery-kind", "unknown delivery kind");
}

Result<wire::CotalMessage> buildMessage(const Clock& clock, std::string_view space,
                                        const Sender& from, const Outbound& outbound) {
  if (outbound.text.find_first_not_of(" \t\r\n\v\f") == std::string::npos) {
    return invalidArgument("empty-text",
                           "the message has no text (empty or only whitespace): "
                           "nothing was sent");
  }
  wire::CotalMessage message;
  if (outbound.id.empty()) {
    SHOAL_ASSIGN_OR_RETURN(message.id, newUuidV7(clock));
  } else {
    message.id = outbound.id;
  }
  message.ts = static_cast<double>(clock.wallMs());
  message.space = std::string(space);
  message.from.id = from.principal.dotForm();
  message.from.name = from.displayName;
  message.from.role = from.role;
  switch (outbound.kind) {
    case wire::DeliveryKind::kDm:
      message.routing = wire::Routing{wire::RoutingField::kTo, outbound.target};
      break;
    case wire::DeliveryKind::kChannel:
      message.routing = wire::Routing{wire::RoutingField::kChannel, outbound.target};
      break;
    case wire::DeliveryKind::kAnycast:
      message.routing = wire::Routing{wire::RoutingField::kToService, outbound.target};
      break;
  }
  if (!outbound.mentions.empty() && outbound.kind != wire::DeliveryKind::kChannel) {
    return invalidArgument("mentions-need-a-channel", "only channel posts carry mentions");
  }
  message.mentions = wire::normalizeMentions(outbound.mentions);
  message.parts.push_back(wire::TextPart{outbound.text, {}});
  message.replyTo = outbound.replyTo;
  message.contextId = outbound.contextId;
  SHOAL_RETURN_IF_ERROR(wire::validateMessage(message));
  return message;
}

Result<StoredReceipt> publishMessage(transport::JetStream& js, const Clock& clock,
                                     std::string_view space, const Sender& from,
                                     const Outbound& outbound) {
  SHOAL_ASSIGN_OR_RETURN(std::string subject, outboundSubject(space, from.principal, outbound));
  SHOAL_ASSIGN_OR_RETURN(wire::CotalMessage message, buildMessage(clock, space, from, outbound));
  SHOAL_ASSIGN_OR_RETURN(std::string body, wire::encodeMessage(message));

  transport::PublishOptions options;
  options.msgId = message.id;
  auto ack = js.publish(subject, body, options);
  if (!ack.isOk()) return ack.status().withContext("publishing on " + subject);
  return StoredReceipt{message.id, subject, ack->stream, ack->seq, ack->duplicate};
}

}  // namespace shoal::mesh
