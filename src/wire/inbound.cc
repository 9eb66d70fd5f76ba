#include "wire/inbound.h"

#include <utility>

namespace shoal::wire {

Result<InboundDelivery> readDelivery(std::string_view subject, std::string_view payload) {
  SHOAL_ASSIGN_OR_RETURN(ParsedSubject parsed, parseSubject(subject));
  SHOAL_RETURN_IF_ERROR(checkSurfaceable(parsed));
  SHOAL_ASSIGN_OR_RETURN(CotalMessage message, decodeMessage(payload));
  SHOAL_ASSIGN_OR_RETURN(DeliveryKind kind, checkAgainstSubject(message, parsed));
  SHOAL_RETURN_IF_ERROR(normalizeForDelivery(message, parsed));
  return InboundDelivery{std::move(parsed), kind, std::move(message)};
}

}  // namespace shoal::wire
