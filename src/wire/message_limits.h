// The bounds every message keeps, in one place: a message the wire parser accepts is one a
// receiving seat can always take into its ownership journal, so a valid message can never
// become a poison one (redelivered forever, holding a slot of the recipient's durable).
//
//   id      "" or 1..256 bytes of printable ASCII (0x20..0x7E) — what the journal stores as
//           the MessageID and what goes into a receipt's broker-side id. Cotal ids are UUIDv7;
//           "" is legal (Cotal §4: never a dedup key), and a seat owns such a message under its
//           stream position (daemon/stored_delivery.h), an id that always fits too.
//   size    the envelope's JSON at most kMaxMessageBytes (240 KiB): the journal keeps it as a
//           JSON string inside its record, which escapes it a second time (at worst twice the
//           bytes: a text of quotes and backslashes), and one live record may be at most
//           512 KiB (journal/limits.h); the broker itself would take 1 MiB. Larger content
//           goes in a file or an artifact part (Cotal §5).
// The parser (decodeMessage, readDelivery) refuses what breaks them — `bad-message-id`,
// `message-too-large` — and so does every encoder, so a sender is told before it publishes.
//
// Thread safety: constants and a pure function.
#pragma once

#include <cstddef>
#include <string_view>

namespace shoal::wire {

inline constexpr size_t kMaxMessageIdBytes = 256;
inline constexpr size_t kMaxMessageBytes = 240 * 1024;

// A non-empty id the journal can hold.
inline bool isValidMessageId(std::string_view id) {
  if (id.empty() || id.size() > kMaxMessageIdBytes) return false;
  for (char c : id) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

// What the parser and the encoders accept: isValidMessageId, or "".
inline bool isAdmissibleMessageId(std::string_view id) {
  return id.empty() || isValidMessageId(id);
}

}  // namespace shoal::wire
