#include "daemon/stored_delivery.h"

#include <fmt/format.h>

#include "wire/inbound.h"
#include "wire/message_limits.h"

namespace shoal::daemon {

namespace {

// FNV-1a, 64 bits: a stable digest of a subject (the same in every build and daemon life).
uint64_t fnv1a(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::string ownershipId(const mesh::Delivery& d) {
  if (!d.message.id.empty()) return d.message.id;
  std::string id = fmt::format("seq:{}:{}", d.subject, d.streamSeq);
  // A subject may be 1 KiB; the journal's MessageID at most 256 bytes (wire/message_limits.h).
  if (id.size() > wire::kMaxMessageIdBytes)
    id = fmt::format("seq:#{:016x}:{}", fnv1a(d.subject), d.streamSeq);
  return id;
}

std::string encodeStoredDelivery(const mesh::Delivery& d) {
  std::string flags;
  flags += d.historical ? 'h' : '-';
  flags += d.numDelivered > 1 ? 'r' : '-';
  if (!d.payload.empty()) {
    flags += 'p';
    return fmt::format("{}\n{}\n{}\n{}", wire::deliveryKindName(d.kind), d.subject, flags,
                       d.payload);
  }
  auto encoded = wire::encodeMessage(d.message);
  return fmt::format("{}\n{}\n{}\n{}", wire::deliveryKindName(d.kind), d.subject, flags,
                     encoded.isOk() ? *encoded : std::string("{}"));
}

Result<StoredDelivery> decodeStoredDelivery(const std::string& body) {
  size_t a = body.find('\n');
  size_t b = a == std::string::npos ? a : body.find('\n', a + 1);
  size_t c = b == std::string::npos ? b : body.find('\n', b + 1);
  if (c == std::string::npos) return dataLoss("bad-journal-body", "a stored delivery is damaged");
  StoredDelivery out;
  std::string kind = body.substr(0, a);
  if (kind == "dm") {
    out.kind = wire::DeliveryKind::kDm;
  } else if (kind == "channel") {
    out.kind = wire::DeliveryKind::kChannel;
  } else if (kind == "anycast") {
    out.kind = wire::DeliveryKind::kAnycast;
  } else {
    return dataLoss("bad-journal-body", "a stored delivery names an unknown kind `" + kind + "`");
  }
  out.subject = body.substr(a + 1, b - a - 1);
  std::string flags = body.substr(b + 1, c - b - 1);
  out.historical = flags.size() > 0 && flags[0] == 'h';
  out.redelivered = flags.size() > 1 && flags[1] == 'r';
  const std::string_view rest = std::string_view(body).substr(c + 1);
  if (flags.size() > 2 && flags[2] == 'p') {
    SHOAL_ASSIGN_OR_RETURN(wire::InboundDelivery read, wire::readDelivery(out.subject, rest));
    if (read.kind != out.kind)
      return dataLoss("bad-journal-body", "a stored delivery's payload is not a " + kind);
    out.message = std::move(read.message);
    return out;
  }
  SHOAL_ASSIGN_OR_RETURN(out.message, wire::decodeMessage(rest));
  return out;
}

}  // namespace shoal::daemon
