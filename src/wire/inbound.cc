#include "wire/inbound.h"

#include <utility>

#include <boost/json.hpp>

#include "wire/message_limits.h"

namespace shoal::wire {

Result<InboundDelivery> readDelivery(std::string_view subject, std::string_view payload) {
  SHOAL_ASSIGN_OR_RETURN(ParsedSubject parsed, parseSubject(subject));
  SHOAL_RETURN_IF_ERROR(checkSurfaceable(parsed));
  SHOAL_ASSIGN_OR_RETURN(CotalMessage message, decodeMessage(payload));
  SHOAL_ASSIGN_OR_RETURN(DeliveryKind kind, checkAgainstSubject(message, parsed));
  SHOAL_RETURN_IF_ERROR(normalizeForDelivery(message, parsed));
  return InboundDelivery{std::move(parsed), kind, std::move(message)};
}

std::optional<std::string> peekMessageId(std::string_view payload) {
  // A bounded look: the id is the envelope's first field in every encoder we know, but any
  // order is read; an envelope over twice the size bound is not parsed at all.
  if (payload.size() > 2 * kMaxMessageBytes) return std::nullopt;
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(payload, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const boost::json::value* id = v.as_object().if_contains("id");
  if (id == nullptr || !id->is_string() || !isValidMessageId(id->as_string())) return std::nullopt;
  return std::string(id->as_string());
}

}  // namespace shoal::wire
