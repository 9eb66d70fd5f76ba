// AgentCard: who a participant is, as carried in its presence record (Cotal §6, schema).
//
// Wire form: {"id", "name", "kind", "owner"?, "actor"?, "role"?, "description"?, "tags"?,
// "skills"?, "meta"?, "protocolVersion"?}
//
// Rules: `id` is the principal dot-form (real owner, valid actor); `owner`/`actor`, when
// present, are the two halves of `id`; `name` is at most 128 characters counted as UTF-16 code
// units (JavaScript length) and is refused, never truncated (`name-too-long`); `kind` is
// `agent` or `endpoint`. `meta` is advisory: only string values are kept, others are dropped
// on decode. An empty `tags`/`skills`/`meta` is omitted on encode. Unknown fields are ignored.
//
// Thread safety: value types; pure functions.
// Lifetime: owns its strings.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/status.h"

namespace shoal::wire {

inline constexpr size_t kMaxCardNameLength = 128;

enum class EndpointKind { kAgent, kEndpoint };

std::string_view endpointKindName(EndpointKind kind);  // "agent" | "endpoint"

struct AgentSkill {
  std::string id;
  std::string name;
  std::optional<std::string> description;

  bool operator==(const AgentSkill&) const = default;
};

struct AgentCard {
  std::string id;    // `<owner>.<actor>`
  std::string name;  // display name, ≤ 128 UTF-16 code units
  EndpointKind kind = EndpointKind::kAgent;
  std::optional<std::string> owner;
  std::optional<std::string> actor;
  std::optional<std::string> role;
  std::optional<std::string> description;
  std::vector<std::string> tags;
  std::vector<AgentSkill> skills;
  std::map<std::string, std::string> meta;  // reserved keys: connector, model, provider, host,
                                            // cwd, repo, branch, head, sessionKind, sessionId
  std::optional<std::string> protocolVersion;

  bool operator==(const AgentCard&) const = default;
};

// Reasons: bad-card-id (and the principal reasons), missing-name, name-too-long,
// bad-card-kind, card-owner-mismatch, bad-card-field, invalid-utf8.
Status validateAgentCard(const AgentCard& card);

// Reasons: malformed-json, plus those of validateAgentCard.
Result<AgentCard> decodeAgentCard(std::string_view json);
Result<std::string> encodeAgentCard(const AgentCard& card);

}  // namespace shoal::wire
