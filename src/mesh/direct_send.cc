#include "mesh/direct_send.h"

#include "base/ids.h"
#include "wire/message.h"
#include "wire/subject.h"

namespace shoal::mesh {

Result<DirectReceipt> sendDirect(transport::JetStream& js, const Clock& clock,
                                 std::string_view space, const Sender& from,
                                 const wire::Principal& to, std::string_view text) {
  SHOAL_ASSIGN_OR_RETURN(std::string subject, wire::instSubject(space, to, from.principal));
  wire::CotalMessage message;
  SHOAL_ASSIGN_OR_RETURN(message.id, newUuidV7(clock));
  message.ts = static_cast<double>(clock.wallMs());
  message.space = std::string(space);
  message.from.id = from.principal.dotForm();
  message.from.name = from.displayName;
  message.routing = wire::Routing{wire::RoutingField::kTo, to.dotForm()};
  message.parts.push_back(wire::TextPart{std::string(text), {}});
  SHOAL_ASSIGN_OR_RETURN(std::string body, wire::encodeMessage(message));

  transport::PublishOptions options;
  options.msgId = message.id;
  auto ack = js.publish(subject, body, options);
  if (!ack.isOk()) return ack.status().withContext("publishing the DM on " + subject);
  return DirectReceipt{message.id, ack->stream, ack->seq, ack->duplicate};
}

}  // namespace shoal::mesh
