#include "wire/agent_card.h"

#include <string>
#include <utility>

#include "wire/json_support.h"
#include "wire/principal.h"
#include "wire/reasons.h"
#include "wire/text_internal.h"
#include "wire/token.h"

namespace shoal::wire {

namespace json = internal::json;

namespace {

using internal::quoted;

std::string sv(const json::string& s) {
  return std::string(s.data(), s.size());
}

Status badField(std::string_view path, std::string_view field, std::string_view want) {
  return invalidArgument(reason::kBadCardField, std::string(path) + "." + std::string(field) +
                                                    " must be " + std::string(want));
}

Status checkUtf8(std::string_view s, std::string_view path, std::string_view field) {
  if (isValidUtf8(s)) return Status::ok();
  return invalidArgument(reason::kInvalidUtf8,
                         std::string(path) + "." + std::string(field) + " is not valid UTF-8");
}

Result<EndpointKind> parseKind(std::string_view s) {
  if (s == "agent") return EndpointKind::kAgent;
  if (s == "endpoint") return EndpointKind::kEndpoint;
  return invalidArgument(reason::kBadCardKind,
                         "card.kind " + quoted(s) + " must be 'agent' or 'endpoint'");
}

Status optionalString(const json::object& o, std::string_view key, std::string_view path,
                      std::optional<std::string>& out) {
  const json::value* v = internal::field(o, key);
  if (v == nullptr) return Status::ok();
  if (!v->is_string()) return badField(path, key, "a string when present");
  out = sv(v->get_string());
  return Status::ok();
}

}  // namespace

std::string_view endpointKindName(EndpointKind kind) {
  return kind == EndpointKind::kEndpoint ? "endpoint" : "agent";
}

Status validateAgentCard(const AgentCard& card) {
  const Result<Principal> principal = parsePrincipal(card.id);
  if (!principal.isOk()) return principal.status().withContext("card.id");
  if (!isValidUtf8(card.name)) {
    return invalidArgument(reason::kInvalidUtf8, "card.name is not valid UTF-8");
  }
  const size_t nameLength = utf16Length(card.name);
  if (nameLength > kMaxCardNameLength) {
    return invalidArgument(reason::kNameTooLong, "card.name is " + std::to_string(nameLength) +
                                                     " characters; the limit is " +
                                                     std::to_string(kMaxCardNameLength) +
                                                     " (names are refused, never truncated)");
  }
  if ((card.owner && *card.owner != principal->owner) ||
      (card.actor && *card.actor != principal->actor)) {
    return invalidArgument(
        reason::kCardOwnerMismatch,
        "card.owner/card.actor must be the two halves of card.id " + quoted(card.id));
  }
  for (const auto* field : {&card.role, &card.description, &card.protocolVersion}) {
    if (*field) {
      SHOAL_RETURN_IF_ERROR(checkUtf8(**field, "card", "role/description/version"));
    }
  }
  for (const std::string& tag : card.tags) {
    SHOAL_RETURN_IF_ERROR(checkUtf8(tag, "card", "tags"));
  }
  for (const AgentSkill& skill : card.skills) {
    SHOAL_RETURN_IF_ERROR(checkUtf8(skill.id, "card", "skills.id"));
    SHOAL_RETURN_IF_ERROR(checkUtf8(skill.name, "card", "skills.name"));
    if (skill.description) {
      SHOAL_RETURN_IF_ERROR(checkUtf8(*skill.description, "card", "skills.description"));
    }
  }
  for (const auto& [key, value] : card.meta) {
    SHOAL_RETURN_IF_ERROR(checkUtf8(key, "card", "meta key"));
    SHOAL_RETURN_IF_ERROR(checkUtf8(value, "card", "meta value"));
  }
  return Status::ok();
}

namespace internal {

Result<AgentCard> cardFromJson(const json::value& v, std::string_view path) {
  if (!v.is_object()) {
    return invalidArgument(reason::kMissingCard, std::string(path) + " must be an object");
  }
  const json::object& o = v.get_object();
  AgentCard card;
  const json::value* id = field(o, "id");
  if (id == nullptr || !id->is_string()) {
    return invalidArgument(reason::kBadCardId,
                           std::string(path) + ".id is missing or not a string");
  }
  card.id = sv(id->get_string());
  const json::value* name = field(o, "name");
  if (name == nullptr || !name->is_string()) {
    return invalidArgument(reason::kMissingName,
                           std::string(path) + ".name is missing or not a string");
  }
  card.name = sv(name->get_string());
  const json::value* kind = field(o, "kind");
  if (kind == nullptr || !kind->is_string()) {
    return invalidArgument(reason::kBadCardKind,
                           std::string(path) + ".kind is missing or not a string");
  }
  SHOAL_ASSIGN_OR_RETURN(
      card.kind, parseKind(std::string_view(kind->get_string().data(), kind->get_string().size())));
  SHOAL_RETURN_IF_ERROR(optionalString(o, "owner", path, card.owner));
  SHOAL_RETURN_IF_ERROR(optionalString(o, "actor", path, card.actor));
  SHOAL_RETURN_IF_ERROR(optionalString(o, "role", path, card.role));
  SHOAL_RETURN_IF_ERROR(optionalString(o, "description", path, card.description));
  SHOAL_RETURN_IF_ERROR(optionalString(o, "protocolVersion", path, card.protocolVersion));
  if (const json::value* tags = field(o, "tags")) {
    if (!tags->is_array()) return badField(path, "tags", "an array of strings");
    for (const json::value& tag : tags->get_array()) {
      if (!tag.is_string()) return badField(path, "tags", "an array of strings");
      card.tags.push_back(sv(tag.get_string()));
    }
  }
  if (const json::value* skills = field(o, "skills")) {
    if (!skills->is_array()) return badField(path, "skills", "an array of {id, name}");
    for (const json::value& s : skills->get_array()) {
      const json::object* so = s.if_object();
      const json::value* sid = so ? field(*so, "id") : nullptr;
      const json::value* sname = so ? field(*so, "name") : nullptr;
      if (sid == nullptr || !sid->is_string() || sname == nullptr || !sname->is_string()) {
        return badField(path, "skills", "an array of {id: string, name: string}");
      }
      AgentSkill skill{sv(sid->get_string()), sv(sname->get_string()), std::nullopt};
      SHOAL_RETURN_IF_ERROR(
          optionalString(*so, "description", std::string(path) + ".skills", skill.description));
      card.skills.push_back(std::move(skill));
    }
  }
  if (const json::value* meta = field(o, "meta")) {
    if (!meta->is_object()) return badField(path, "meta", "an object");
    for (const auto& kv : meta->get_object()) {
      if (!kv.value().is_string()) continue;  // advisory: only flat string values are kept
      card.meta.emplace(std::string(kv.key().data(), kv.key().size()), sv(kv.value().get_string()));
    }
  }
  SHOAL_RETURN_IF_ERROR(validateAgentCard(card));
  return card;
}

Status cardToJson(const AgentCard& card, json::object& out) {
  SHOAL_RETURN_IF_ERROR(validateAgentCard(card));
  out.emplace("id", card.id);
  out.emplace("name", card.name);
  out.emplace("kind", endpointKindName(card.kind));
  if (card.owner) out.emplace("owner", *card.owner);
  if (card.actor) out.emplace("actor", *card.actor);
  if (card.role) out.emplace("role", *card.role);
  if (card.description) out.emplace("description", *card.description);
  if (!card.tags.empty()) {
    json::array tags(out.storage());
    for (const std::string& tag : card.tags) {
      tags.emplace_back(tag);
    }
    out.emplace("tags", std::move(tags));
  }
  if (!card.skills.empty()) {
    json::array skills(out.storage());
    for (const AgentSkill& skill : card.skills) {
      json::object s(out.storage());
      s.emplace("id", skill.id);
      s.emplace("name", skill.name);
      if (skill.description) s.emplace("description", *skill.description);
      skills.emplace_back(std::move(s));
    }
    out.emplace("skills", std::move(skills));
  }
  if (!card.meta.empty()) {
    json::object meta(out.storage());
    for (const auto& [key, value] : card.meta) {
      meta.emplace(key, value);
    }
    out.emplace("meta", std::move(meta));
  }
  if (card.protocolVersion) out.emplace("protocolVersion", *card.protocolVersion);
  return Status::ok();
}

}  // namespace internal

Result<AgentCard> decodeAgentCard(std::string_view text) {
  unsigned char buffer[2048];
  json::monotonic_resource arena(buffer, sizeof buffer);
  SHOAL_ASSIGN_OR_RETURN(json::value doc, internal::parseJsonObject(text, &arena));
  return internal::cardFromJson(doc, "card");
}

Result<std::string> encodeAgentCard(const AgentCard& card) {
  unsigned char buffer[2048];
  json::monotonic_resource arena(buffer, sizeof buffer);
  json::object o(&arena);
  SHOAL_RETURN_IF_ERROR(internal::cardToJson(card, o));
  return internal::toJson(o);
}

}  // namespace shoal::wire
