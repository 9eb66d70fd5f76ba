#include "wire/message.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <string>
#include <utility>

#include "wire/channel.h"
#include "wire/json_support.h"
#include "wire/message_limits.h"
#include "wire/principal.h"
#include "wire/reasons.h"
#include "wire/text_internal.h"
#include "wire/token.h"

namespace shoal::wire {

namespace {

namespace json = internal::json;
using internal::quoted;

using Keys = std::span<const std::string_view>;

constexpr std::array<std::string_view, 11> kTopKeys = {
    "id",        "ts",       "space", "from",    "channel",  "to",
    "toService", "mentions", "parts", "replyTo", "contextId"};
constexpr std::array<std::string_view, 3> kFromKeys = {"id", "name", "role"};
constexpr std::array<std::string_view, 2> kTextKeys = {"kind", "text"};
constexpr std::array<std::string_view, 2> kDataKeys = {"kind", "data"};
constexpr std::array<std::string_view, 5> kArtifactKeys = {"kind", "name", "mediaType", "digest",
                                                           "size"};

bool isKnown(Keys keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

std::string sv(const json::string& s) {
  return std::string(s.data(), s.size());
}
std::string_view view(const json::string& s) {
  return std::string_view(s.data(), s.size());
}

std::string partPath(size_t index) {
  return "parts[" + std::to_string(index) + "]";
}

Status badPart(size_t index, std::string_view why) {
  return invalidArgument(reason::kBadPart, partPath(index) + ": " + std::string(why));
}

bool isSha256Digest(std::string_view s) {
  constexpr std::string_view kPrefix = "sha256:";
  if (s.size() != kPrefix.size() + 64 || s.substr(0, kPrefix.size()) != kPrefix) return false;
  return std::all_of(s.begin() + kPrefix.size(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// ^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$
bool isExtensionKind(std::string_view s) {
  size_t labels = 0;
  size_t labelLength = 0;
  for (char c : s) {
    if (c == '.') {
      if (labelLength == 0) return false;
      ++labels, labelLength = 0;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-') {
      ++labelLength;
    } else {
      return false;
    }
  }
  return labelLength > 0 && labels >= 1;
}

bool isCoreKind(std::string_view kind) {
  return kind == "text" || kind == "data" || kind == "artifact";
}

// An integer in [0, 2^53-1] written as an integer or as an integral double (`5.0`).
std::optional<uint64_t> asSize(const json::value& v) {
  switch (v.kind()) {
    case json::kind::int64:
      if (v.get_int64() < 0) return std::nullopt;
      return static_cast<uint64_t>(v.get_int64()) <= internal::kMaxSafeInteger
                 ? std::optional<uint64_t>(static_cast<uint64_t>(v.get_int64()))
                 : std::nullopt;
    case json::kind::uint64:
      if (v.get_uint64() > internal::kMaxSafeInteger) return std::nullopt;
      return v.get_uint64();
    case json::kind::double_: {
      const double d = v.get_double();
      if (!std::isfinite(d) || d < 0 || d > static_cast<double>(internal::kMaxSafeInteger) ||
          std::trunc(d) != d) {
        return std::nullopt;
      }
      return static_cast<uint64_t>(d);
    }
    default:
      return std::nullopt;
  }
}

// Members of `o` not named in `known`, as compact JSON, after the finite-number check.
Status collectUnknown(const json::object& o, Keys known, std::string_view path,
                      UnknownFields& out) {
  for (const auto& kv : o) {
    const std::string_view key(kv.key().data(), kv.key().size());
    if (isKnown(known, key)) continue;
    const std::string where = std::string(path) + (path.empty() ? "" : ".") + std::string(key);
    SHOAL_RETURN_IF_ERROR(internal::checkFinite(kv.value(), where, reason::kNonFiniteNumber));
    out.emplace(std::string(key), internal::toJson(kv.value()));
  }
  return Status::ok();
}

// The grammar of the routing target (Cotal §3, §5): concrete channel, principal, role.
Status checkRoutingTarget(const Routing& routing) {
  switch (routing.field) {
    case RoutingField::kChannel:
      return validateConcreteChannel(routing.target).withContext("channel");
    case RoutingField::kTo: {
      const Result<Principal> p = parsePrincipal(routing.target);
      return p.isOk() ? Status::ok() : p.status().withContext("to");
    }
    case RoutingField::kToService:
      if (isRoutingToken(routing.target)) return Status::ok();
      return invalidArgument(reason::kBadRoutingField, "toService " + quoted(routing.target) +
                                                           " must be a role token [A-Za-z0-9_-]+");
  }
  return Status::ok();
}

Result<Routing> decodeRouting(const json::object& o) {
  std::optional<Routing> found;
  for (RoutingField f : {RoutingField::kChannel, RoutingField::kTo, RoutingField::kToService}) {
    const json::value* v = internal::field(o, routingFieldName(f));
    if (v == nullptr) continue;
    if (found) {
      return invalidArgument(reason::kMultipleRoutingFields,
                             "message has both '" + std::string(routingFieldName(found->field)) +
                                 "' and '" + std::string(routingFieldName(f)) +
                                 "'; exactly one of channel/to/toService is allowed");
    }
    if (!v->is_string()) {
      return invalidArgument(reason::kBadRoutingField,
                             "'" + std::string(routingFieldName(f)) + "' must be a string");
    }
    found = Routing{f, sv(v->get_string())};
  }
  if (!found) {
    return invalidArgument(reason::kNoRoutingField,
                           "message has none of channel/to/toService; exactly one is required");
  }
  SHOAL_RETURN_IF_ERROR(checkRoutingTarget(*found));
  return *std::move(found);
}

Result<EndpointRef> decodeFrom(const json::value* v) {
  if (v == nullptr || !v->is_object()) {
    return invalidArgument(reason::kMissingFrom, "'from' must be an object {id, name, role?}");
  }
  const json::object& o = v->get_object();
  const json::value* id = internal::field(o, "id");
  const json::value* name = internal::field(o, "name");
  if (id == nullptr || !id->is_string()) {
    return invalidArgument(reason::kMissingFrom, "'from.id' is missing or not a string");
  }
  if (name == nullptr || !name->is_string()) {
    return invalidArgument(reason::kMissingFrom, "'from.name' is missing or not a string");
  }
  EndpointRef from;
  from.id = sv(id->get_string());
  from.name = sv(name->get_string());
  if (const json::value* role = internal::field(o, "role")) {
    if (!role->is_string()) {
      return invalidArgument(reason::kBadFrom, "'from.role' must be a string when present");
    }
    from.role = sv(role->get_string());
  }
  SHOAL_RETURN_IF_ERROR(collectUnknown(o, kFromKeys, "from", from.unknown));
  return from;
}

Result<Part> decodePart(const json::value& v, size_t index) {
  if (!v.is_object()) return badPart(index, "a part must be an object");
  const json::object& o = v.get_object();
  const json::value* kindValue = internal::field(o, "kind");
  if (kindValue == nullptr || !kindValue->is_string()) {
    return badPart(index, "'kind' is missing or not a string");
  }
  const std::string_view kind = view(kindValue->get_string());
  const std::string path = partPath(index);
  if (kind == "text") {
    const json::value* text = internal::field(o, "text");
    if (text == nullptr || !text->is_string()) {
      return badPart(index, "a text part needs 'text' (a string)");
    }
    TextPart part{sv(text->get_string()), {}};
    SHOAL_RETURN_IF_ERROR(collectUnknown(o, kTextKeys, path, part.unknown));
    return Part(std::move(part));
  }
  if (kind == "data") {
    const json::value* data = internal::field(o, "data");
    if (data == nullptr) return badPart(index, "a data part needs a 'data' member");
    SHOAL_RETURN_IF_ERROR(internal::checkFinite(*data, path + ".data", reason::kBadPart));
    DataPart part{internal::toJson(*data), {}};
    SHOAL_RETURN_IF_ERROR(collectUnknown(o, kDataKeys, path, part.unknown));
    return Part(std::move(part));
  }
  if (kind == "artifact") {
    ArtifactPart part;
    for (auto [key, target] : {std::pair<std::string_view, std::string*>{"name", &part.name},
                               {"mediaType", &part.mediaType},
                               {"digest", &part.digest}}) {
      const json::value* f = internal::field(o, key);
      if (f == nullptr || !f->is_string()) {
        return badPart(index, "an artifact part needs '" + std::string(key) + "' (a string)");
      }
      *target = sv(f->get_string());
    }
    if (!isSha256Digest(part.digest)) {
      return badPart(
          index, "artifact digest " + quoted(part.digest) + " must match ^sha256:[0-9a-f]{64}$");
    }
    const json::value* size = internal::field(o, "size");
    const std::optional<uint64_t> n = size ? asSize(*size) : std::nullopt;
    if (!n) return badPart(index, "artifact 'size' must be an integer in [0, 2^53-1]");
    part.size = *n;
    SHOAL_RETURN_IF_ERROR(collectUnknown(o, kArtifactKeys, path, part.unknown));
    return Part(std::move(part));
  }
  if (!isExtensionKind(kind)) {
    return invalidArgument(reason::kUnknownPartKind,
                           path + ": kind " + quoted(kind) +
                               " is neither a core kind (text, data, artifact) nor a "
                               "reverse-DNS extension kind");
  }
  SHOAL_RETURN_IF_ERROR(internal::checkFinite(v, path, reason::kBadPart));
  return Part(ExtensionPart{std::string(kind), internal::toJson(v)});
}

// --- Encoding ---------------------------------------------------------------------------------

Status checkUtf8(std::string_view s, std::string_view where) {
  if (isValidUtf8(s)) return Status::ok();
  return invalidArgument(reason::kInvalidUtf8, std::string(where) + " is not valid UTF-8");
}

// Parses a raw JSON field held by the message (never trusted to be well-formed).
Result<json::value> rawValue(std::string_view text, std::string_view where,
                             std::string_view failReason, json::storage_ptr sp) {
  Result<json::value> v = internal::parseJson(text, std::move(sp));
  if (!v.isOk()) {
    return invalidArgument(failReason, std::string(where) + " does not hold one JSON value: " +
                                           std::string(v.status().message()));
  }
  SHOAL_RETURN_IF_ERROR(internal::checkFinite(*v, where, failReason));
  return v;
}

Status putUnknown(const UnknownFields& unknown, Keys known, std::string_view path,
                  json::object& out) {
  for (const auto& [key, text] : unknown) {
    const std::string where = std::string(path) + (path.empty() ? "" : ".") + key;
    SHOAL_RETURN_IF_ERROR(checkUtf8(key, where + " (field name)"));
    if (isKnown(known, key)) {
      return invalidArgument(reason::kBadUnknownField,
                             where + " is a known field and cannot be carried as unknown");
    }
    SHOAL_ASSIGN_OR_RETURN(json::value v,
                           rawValue(text, where, reason::kBadUnknownField, out.storage()));
    out.emplace(key, std::move(v));
  }
  return Status::ok();
}

Status putPart(const Part& part, size_t index, json::array& out) {
  const std::string path = partPath(index);
  json::object o(out.storage());
  if (const auto* text = std::get_if<TextPart>(&part)) {
    SHOAL_RETURN_IF_ERROR(checkUtf8(text->text, path + ".text"));
    o.emplace("kind", "text");
    o.emplace("text", text->text);
    SHOAL_RETURN_IF_ERROR(putUnknown(text->unknown, kTextKeys, path, o));
  } else if (const auto* data = std::get_if<DataPart>(&part)) {
    SHOAL_ASSIGN_OR_RETURN(json::value v,
                           rawValue(data->json, path + ".data", reason::kBadPart, o.storage()));
    o.emplace("kind", "data");
    o.emplace("data", std::move(v));
    SHOAL_RETURN_IF_ERROR(putUnknown(data->unknown, kDataKeys, path, o));
  } else if (const auto* artifact = std::get_if<ArtifactPart>(&part)) {
    SHOAL_RETURN_IF_ERROR(checkUtf8(artifact->name, path + ".name"));
    SHOAL_RETURN_IF_ERROR(checkUtf8(artifact->mediaType, path + ".mediaType"));
    if (!isSha256Digest(artifact->digest)) {
      return badPart(index, "artifact digest " + quoted(artifact->digest) +
                                " must match ^sha256:[0-9a-f]{64}$");
    }
    if (artifact->size > internal::kMaxSafeInteger) {
      return badPart(index, "artifact 'size' must be an integer in [0, 2^53-1]");
    }
    o.emplace("kind", "artifact");
    o.emplace("name", artifact->name);
    o.emplace("mediaType", artifact->mediaType);
    o.emplace("digest", artifact->digest);
    o.emplace("size", artifact->size);
    SHOAL_RETURN_IF_ERROR(putUnknown(artifact->unknown, kArtifactKeys, path, o));
  } else {
    const auto& ext = std::get<ExtensionPart>(part);
    if (isCoreKind(ext.kind) || !isExtensionKind(ext.kind)) {
      return invalidArgument(reason::kUnknownPartKind,
                             path + ": extension kind " + quoted(ext.kind) +
                                 " must be reverse-DNS (^[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+$)");
    }
    SHOAL_ASSIGN_OR_RETURN(json::value v, rawValue(ext.json, path, reason::kBadPart, o.storage()));
    const json::object* obj = v.if_object();
    const json::value* kind = obj ? obj->if_contains("kind") : nullptr;
    if (kind == nullptr || !kind->is_string() || view(kind->get_string()) != ext.kind) {
      return badPart(index, "extension JSON must be an object whose 'kind' is " + quoted(ext.kind));
    }
    out.emplace_back(std::move(v));
    return Status::ok();
  }
  out.emplace_back(std::move(o));
  return Status::ok();
}

Status tooLarge(size_t bytes) {
  return invalidArgument(
      reason::kMessageTooLarge,
      "the message is " + std::to_string(bytes) +
          " bytes; a message may be at "
          "most " +
          std::to_string(kMaxMessageBytes / 1024) +
          " KiB, so that a receiving seat can always keep it in its journal: send a "
          "shorter text, or put the content in a file and send its path");
}

// Validates `m` and builds its JSON object into `out` (one pass for validate and encode).
Status buildMessage(const CotalMessage& m, json::object& out) {
  SHOAL_RETURN_IF_ERROR(checkUtf8(m.id, "id"));
  if (!isAdmissibleMessageId(m.id)) {
    return invalidArgument(reason::kBadMessageId, "'id' must be empty or 1.." +
                                                      std::to_string(kMaxMessageIdBytes) +
                                                      " bytes of printable ASCII");
  }
  if (!std::isfinite(m.ts)) {
    return invalidArgument(reason::kBadTs, "ts must be a finite number of epoch milliseconds");
  }
  SHOAL_RETURN_IF_ERROR(checkUtf8(m.space, "space"));
  SHOAL_RETURN_IF_ERROR(checkUtf8(m.from.id, "from.id"));
  SHOAL_RETURN_IF_ERROR(checkUtf8(m.from.name, "from.name"));
  if (m.from.role) {
    SHOAL_RETURN_IF_ERROR(checkUtf8(*m.from.role, "from.role"));
  }
  SHOAL_RETURN_IF_ERROR(checkRoutingTarget(m.routing));
  if (m.replyTo) {
    SHOAL_RETURN_IF_ERROR(checkUtf8(*m.replyTo, "replyTo"));
  }
  if (m.contextId) {
    SHOAL_RETURN_IF_ERROR(checkUtf8(*m.contextId, "contextId"));
  }

  out.reserve(kTopKeys.size() + m.unknown.size());
  out.emplace("id", m.id);
  out.emplace("ts", internal::numberValue(m.ts));
  out.emplace("space", m.space);
  json::object from(out.storage());
  from.emplace("id", m.from.id);
  from.emplace("name", m.from.name);
  if (m.from.role) from.emplace("role", *m.from.role);
  SHOAL_RETURN_IF_ERROR(putUnknown(m.from.unknown, kFromKeys, "from", from));
  out.emplace("from", std::move(from));
  out.emplace(routingFieldName(m.routing.field), m.routing.target);
  const std::vector<std::string> mentions = normalizeMentions(m.mentions);
  if (!mentions.empty()) {
    json::array a(out.storage());
    for (const std::string& name : mentions) {
      SHOAL_RETURN_IF_ERROR(checkUtf8(name, "mentions"));
      a.emplace_back(name);
    }
    out.emplace("mentions", std::move(a));
  }
  json::array parts(out.storage());
  parts.reserve(m.parts.size());
  for (size_t i = 0; i < m.parts.size(); ++i) {
    SHOAL_RETURN_IF_ERROR(putPart(m.parts[i], i, parts));
  }
  out.emplace("parts", std::move(parts));
  if (m.replyTo) out.emplace("replyTo", *m.replyTo);
  if (m.contextId) out.emplace("contextId", *m.contextId);
  return putUnknown(m.unknown, kTopKeys, "", out);
}

}  // namespace

std::string_view routingFieldName(RoutingField field) {
  switch (field) {
    case RoutingField::kChannel:
      return "channel";
    case RoutingField::kTo:
      return "to";
    case RoutingField::kToService:
      return "toService";
  }
  return "unknown";
}

std::vector<std::string> normalizeMentions(const std::vector<std::string>& mentions) {
  std::vector<std::string> out;
  out.reserve(mentions.size());
  for (const std::string& raw : mentions) {
    std::string name(internal::trimJs(raw));
    if (name.empty()) continue;
    for (char& c : name) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  }
  return out;
}

Result<CotalMessage> decodeMessage(std::string_view text) {
  if (text.size() > kMaxMessageBytes) return tooLarge(text.size());
  unsigned char buffer[4096];
  json::monotonic_resource arena(buffer, sizeof buffer);
  SHOAL_ASSIGN_OR_RETURN(json::value doc, internal::parseJsonObject(text, &arena));
  const json::object& o = doc.get_object();

  CotalMessage m;
  const json::value* id = internal::field(o, "id");
  if (id == nullptr || !id->is_string()) {
    return invalidArgument(reason::kMissingId, "'id' is missing or not a string");
  }
  m.id = sv(id->get_string());
  if (!isAdmissibleMessageId(m.id)) {
    return invalidArgument(reason::kBadMessageId, "'id' must be empty or 1.." +
                                                      std::to_string(kMaxMessageIdBytes) +
                                                      " bytes of printable ASCII");
  }

  const json::value* ts = internal::field(o, "ts");
  const std::optional<double> tsValue = ts ? internal::asNumber(*ts) : std::nullopt;
  if (!tsValue || !std::isfinite(*tsValue)) {
    return invalidArgument(
        reason::kBadTs,
        ts == nullptr ? "'ts' is missing" : "'ts' must be a finite number of epoch milliseconds");
  }
  m.ts = *tsValue;

  const json::value* space = internal::field(o, "space");
  if (space == nullptr || !space->is_string()) {
    return invalidArgument(reason::kMissingSpace, "'space' is missing or not a string");
  }
  m.space = sv(space->get_string());

  SHOAL_ASSIGN_OR_RETURN(m.from, decodeFrom(internal::field(o, "from")));
  SHOAL_ASSIGN_OR_RETURN(m.routing, decodeRouting(o));

  if (const json::value* mentions = internal::field(o, "mentions")) {
    if (!mentions->is_array()) {
      return invalidArgument(reason::kBadMentions, "'mentions' must be an array of strings");
    }
    std::vector<std::string> raw;
    raw.reserve(mentions->get_array().size());
    for (const json::value& name : mentions->get_array()) {
      if (!name.is_string()) {
        return invalidArgument(reason::kBadMentions, "'mentions' must be an array of strings");
      }
      raw.push_back(sv(name.get_string()));
    }
    m.mentions = normalizeMentions(raw);
  }

  const json::value* parts = internal::field(o, "parts");
  if (parts == nullptr || !parts->is_array()) {
    return invalidArgument(reason::kBadParts,
                           parts == nullptr ? "'parts' is missing" : "'parts' must be an array");
  }
  m.parts.reserve(parts->get_array().size());
  size_t index = 0;
  for (const json::value& part : parts->get_array()) {
    SHOAL_ASSIGN_OR_RETURN(Part p, decodePart(part, index++));
    m.parts.push_back(std::move(p));
  }

  const auto optionalString = [&](std::string_view key, std::string_view why,
                                  std::optional<std::string>& target) -> Status {
    const json::value* v = internal::field(o, key);
    if (v == nullptr) return Status::ok();
    if (!v->is_string()) {
      return invalidArgument(why, "'" + std::string(key) + "' must be a string when present");
    }
    target = sv(v->get_string());
    return Status::ok();
  };
  SHOAL_RETURN_IF_ERROR(optionalString("replyTo", reason::kBadReplyTo, m.replyTo));
  SHOAL_RETURN_IF_ERROR(optionalString("contextId", reason::kBadContextId, m.contextId));

  SHOAL_RETURN_IF_ERROR(collectUnknown(o, kTopKeys, "", m.unknown));
  return m;
}

Status validateMessage(const CotalMessage& message) {
  unsigned char buffer[4096];
  json::monotonic_resource arena(buffer, sizeof buffer);
  json::object scratch(&arena);
  return buildMessage(message, scratch);
}

Result<std::string> encodeMessage(const CotalMessage& message) {
  unsigned char buffer[4096];
  json::monotonic_resource arena(buffer, sizeof buffer);
  json::object o(&arena);
  SHOAL_RETURN_IF_ERROR(buildMessage(message, o));
  std::string text = internal::toJson(o);
  if (text.size() > kMaxMessageBytes) return tooLarge(text.size());
  return text;
}

std::string_view deliveryKindName(DeliveryKind kind) {
  switch (kind) {
    case DeliveryKind::kChannel:
      return "channel";
    case DeliveryKind::kDm:
      return "dm";
    case DeliveryKind::kAnycast:
      return "anycast";
  }
  return "unknown";
}

std::optional<DeliveryKind> deliveryKindFor(SubjectKind kind) {
  switch (kind) {
    case SubjectKind::kChat:
      return DeliveryKind::kChannel;
    case SubjectKind::kInst:
      return DeliveryKind::kDm;
    case SubjectKind::kSvc:
      return DeliveryKind::kAnycast;
    default:
      return std::nullopt;
  }
}

Result<DeliveryKind> checkAgainstSubject(const CotalMessage& message,
                                         const ParsedSubject& subject) {
  const std::optional<DeliveryKind> kind = deliveryKindFor(subject.kind);
  if (!kind) {
    return invalidArgument(reason::kNotADeliverySubject,
                           "a '" + std::string(subjectKindName(subject.kind)) +
                               "' subject does not carry chat, DM or anycast deliveries");
  }
  const std::string sender = subject.principal.dotForm();
  if (message.from.id != sender) {
    return invalidArgument(reason::kSenderMismatch,
                           "from.id " + quoted(message.from.id) + " is not the subject sender " +
                               quoted(sender) + "; the message is spoofed or misrouted");
  }
  return *kind;
}

Status normalizeForDelivery(CotalMessage& message, const ParsedSubject& subject) {
  switch (subject.kind) {
    case SubjectKind::kChat:
      message.routing = {RoutingField::kChannel, subject.rest};
      return Status::ok();
    case SubjectKind::kInst:
      message.routing = {RoutingField::kTo, subject.rest};
      return Status::ok();
    case SubjectKind::kSvc:
      message.routing = {RoutingField::kToService, subject.rest};
      return Status::ok();
    default:
      return invalidArgument(reason::kNotADeliverySubject,
                             "a '" + std::string(subjectKindName(subject.kind)) +
                                 "' subject does not carry chat, DM or anycast deliveries");
  }
}

}  // namespace shoal::wire
