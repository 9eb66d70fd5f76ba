// CotalMessage: the delivery envelope of every chat post, DM and anycast (Cotal §4, §5, schema).
//
// Wire form: one compact UTF-8 JSON object
//   {"id", "ts", "space", "from": {"id", "name", "role"?}, exactly one of "channel" | "to" |
//    "toService", "mentions"?, "parts": [...], "replyTo"?, "contextId"?, ...unknown fields}
//
// Decisions (documented once, here):
// - `ts` is epoch milliseconds held as a double: the wire type is a JSON number and a peer may
//   send a fraction; a double keeps the exact value for a faithful re-encode. It must be
//   finite (`1e999` is refused, `bad-ts`). Integral values within ±2^53 are written as JSON
//   integers, as every peer writes them.
// - `id` must be a string; the empty string is legal on the wire but MUST NEVER be used as a
//   dedup key (two `id:""` messages are never coalesced) nor as a JetStream Nats-Msg-Id.
// - Payload routing fields are advisory: the delivery kind comes from the subject
//   (`deliveryKindFor`), and `normalizeForDelivery` rewrites routing from it. Decode still
//   requires exactly one routing field and checks its grammar (concrete channel, principal,
//   role token).
// - `mentions` are normalised on decode and on encode: trimmed, ASCII-lower-cased, empties
//   dropped, duplicates removed (first one kept); an empty list is omitted.
// - Unknown fields (top level, `from`, text/data/artifact parts) are kept as compact JSON text
//   and written back on encode, so the delivery plane's republish forwards them faithfully;
//   receivers otherwise ignore them.
// - Raw JSON held here (`DataPart::json`, `ExtensionPart::json`, unknown field values) is the
//   compact serialization Boost.JSON produces; equality is textual. Encode re-parses it, so a
//   hand-built message can never inject members into the envelope.
//
// Invariant: decode(encode(m)) == m for every m that decodeMessage returned (the fuzz target
// fuzz_message checks it).
//
// Thread safety: value types; pure functions.
// Lifetime: owns all its strings.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "wire/subject.h"

namespace shoal::wire {

// Unknown members of a JSON object: name → compact JSON text of the value.
using UnknownFields = std::map<std::string, std::string>;

struct EndpointRef {
  std::string id;    // principal dot-form; must equal the subject sender on receive
  std::string name;  // display name
  std::optional<std::string> role;
  UnknownFields unknown;

  bool operator==(const EndpointRef&) const = default;
};

struct TextPart {
  std::string text;
  UnknownFields unknown;

  bool operator==(const TextPart&) const = default;
};

struct DataPart {
  std::string json;  // compact JSON text of the `data` member (any JSON value, numbers finite)
  UnknownFields unknown;

  bool operator==(const DataPart&) const = default;
};

// A claim about out-of-band bytes: verify fetched bytes against `digest`; never preallocate
// from `size`.
struct ArtifactPart {
  std::string name;
  std::string mediaType;
  std::string digest;  // ^sha256:[0-9a-f]{64}$
  uint64_t size = 0;   // integer in [0, 2^53-1]
  UnknownFields unknown;

  bool operator==(const ArtifactPart&) const = default;
};

// A part whose kind is reverse-DNS (`^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$`). Receivers ignore
// kinds they do not support.
struct ExtensionPart {
  std::string kind;
  std::string json;  // compact JSON text of the whole part object, `kind` included

  bool operator==(const ExtensionPart&) const = default;
};

using Part = std::variant<TextPart, DataPart, ArtifactPart, ExtensionPart>;

enum class RoutingField { kChannel, kTo, kToService };

// "channel", "to" or "toService".
std::string_view routingFieldName(RoutingField field);

struct Routing {
  RoutingField field = RoutingField::kChannel;
  std::string target;  // concrete channel | recipient dot-form | role

  bool operator==(const Routing&) const = default;
};

struct CotalMessage {
  std::string id;
  double ts = 0;
  std::string space;
  EndpointRef from;
  Routing routing;
  std::vector<std::string> mentions;  // normalised; empty = omitted
  std::vector<Part> parts;
  std::optional<std::string> replyTo;
  std::optional<std::string> contextId;
  UnknownFields unknown;

  bool operator==(const CotalMessage&) const = default;
};

// Parses and validates one envelope. Reasons: malformed-json, missing-id, bad-ts,
// missing-space, missing-from, bad-from, multiple-routing-fields, no-routing-field,
// bad-routing-field (and the channel-* / principal reasons for the routing target),
// bad-mentions, bad-parts, bad-part, unknown-part-kind, bad-reply-to, bad-context-id,
// non-finite-number.
Result<CotalMessage> decodeMessage(std::string_view json);

// The publisher's check: the same rules as decodeMessage, plus valid UTF-8 in every string
// (`invalid-utf8`), parseable raw JSON with finite numbers, and no unknown field that is not
// JSON or is named like a known one (`bad-unknown-field`).
Status validateMessage(const CotalMessage& message);

// validateMessage, then compact UTF-8 JSON (mentions normalised).
Result<std::string> encodeMessage(const CotalMessage& message);

// Trim (JavaScript white space), ASCII lower-case, drop empties, dedupe keeping the first.
std::vector<std::string> normalizeMentions(const std::vector<std::string>& mentions);

// --- Against the subject it arrived on ------------------------------------------------------

enum class DeliveryKind { kChannel, kDm, kAnycast };

std::string_view deliveryKindName(DeliveryKind kind);  // "channel" | "dm" | "anycast"

// chat → channel, inst → dm, svc → anycast; nullopt for every other subject kind.
std::optional<DeliveryKind> deliveryKindFor(SubjectKind kind);

// The receive-side authenticity check (Cotal §5, §12 items 5-6): the subject is a delivery
// subject (`not-a-delivery-subject`) and `from.id` equals its sender (`sender-mismatch`).
// Returns the delivery kind derived from the subject. Does not repeat checkSurfaceable.
Result<DeliveryKind> checkAgainstSubject(const CotalMessage& message, const ParsedSubject& subject);

// Rewrites routing from the subject (reference `authenticatedMessage`): chat → channel =
// subject channel; inst → to = recipient; svc → toService = role. Refuses a non-delivery
// subject (`not-a-delivery-subject`).
Status normalizeForDelivery(CotalMessage& message, const ParsedSubject& subject);

}  // namespace shoal::wire
