// Presence: one participant's heartbeat record in the `cotal_presence_<space>` KV bucket, keyed
// by its principal dot-form (Cotal §6, schema, docs §6.1 for the three extra timestamps).
//
// Wire form: {"card", "status", "ts", "lifecycleUid"?, "condition"?, "environment"?,
// "activity"?, "attention"?, "channelModes"?, "activeAt"?, "statusSince"?, "activitySince"?}
// All timestamps are epoch milliseconds held as doubles (see message.h) and must be finite.
//
// Reader rules applied by decodePresence (given the KV key): the reserved canary key is refused
// (`reserved-presence-key`, callers skip it); `card.id` must equal the key
// (`card-id-mismatch`); the card must validate; `status` must be one of the four values
// (`bad-status`); `ts` must be a finite number (`bad-ts`); optional fields must have their
// schema types (`bad-condition`, `bad-attention`, `bad-channel-modes`, `bad-lifecycle-uid`,
// `bad-presence-field`). Unknown fields are ignored. An offline record is read without
// `attention`, `channelModes` and `statusSince`, as the writer rules below would have written it.
//
// Writer rules applied by encodePresence: an offline record never carries `attention`,
// `channelModes` or `statusSince` (they are scrubbed). That live clients never heartbeat as
// offline is the publisher's rule (mesh/), not the codec's.
//
// Thread safety: value types; pure functions.
// Lifetime: owns its strings.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/status.h"
#include "wire/agent_card.h"

namespace shoal::wire {

enum class PresenceStatus { kIdle, kWaiting, kWorking, kOffline };
enum class Attention { kOpen, kDnd, kFocus };
enum class ChannelMode { kQuiet, kMuted };
enum class ConditionCode {
  kRateLimit,
  kOverloaded,
  kAuth,
  kBilling,
  kBudget,
  kContext,
  kModel,
  kRequest,
  kServer,
  kRetrying,
  kApproval,
  kInput,
  kFailed,
};

std::string_view presenceStatusName(PresenceStatus status);
std::optional<PresenceStatus> parsePresenceStatus(std::string_view name);
std::string_view attentionName(Attention attention);
std::optional<Attention> parseAttention(std::string_view name);
std::string_view channelModeName(ChannelMode mode);
std::optional<ChannelMode> parseChannelMode(std::string_view name);
std::string_view conditionCodeName(ConditionCode code);  // "rate_limit", ...
std::optional<ConditionCode> parseConditionCode(std::string_view name);

// Harness-reported trouble; absent = nothing reported (never inferred).
struct PresenceCondition {
  ConditionCode code = ConditionCode::kFailed;
  std::optional<std::string> source;  // harness-native value, verbatim
  std::optional<std::string> message;
  std::optional<double> since;  // epoch ms

  bool operator==(const PresenceCondition&) const = default;
};

struct Presence {
  AgentCard card;
  PresenceStatus status = PresenceStatus::kIdle;
  double ts = 0;                            // epoch ms of this heartbeat
  std::optional<std::string> lifecycleUid;  // [a-z0-9]{26,32}; advisory, never authority
  std::optional<PresenceCondition> condition;
  std::optional<std::string> environment;  // opaque; never parsed
  std::optional<std::string> activity;
  std::optional<Attention> attention;               // absent ⇒ open
  std::map<std::string, ChannelMode> channelModes;  // concrete channel → mode; empty = absent
  std::optional<double> activeAt;                   // last work event
  std::optional<double> statusSince;    // current status+activity began; never when offline
  std::optional<double> activitySince;  // current activity was set

  bool operator==(const Presence&) const = default;
};

// Bounds on the free-text fields Shoal's own writer sets (mesh::PresencePublisher), so its
// record always fits a heartbeat (the broker's max_payload) with room to spare: `activity` and
// `environment` at most 256 bytes, each condition text (`source`, `message`) at most 1 KiB.
// The codec itself stays symmetric — what it decodes from a peer it can encode again — so the
// bounds are the publisher's: checkActivity refuses a long activity (`presence-field-too-long`)
// before anything is set, and longer condition texts are clipped.
inline constexpr size_t kMaxActivityBytes = 256;
inline constexpr size_t kMaxEnvironmentBytes = 256;
inline constexpr size_t kMaxConditionTextBytes = 1024;

// OK when `activity` is valid UTF-8 of at most kMaxActivityBytes; else `presence-field-too-long`
// or `bad-utf8` with a sentence that names the limit.
Status checkActivity(std::string_view activity);

// Decodes the value stored under `key` (see the reader rules above).
Result<Presence> decodePresence(std::string_view key, std::string_view json);

// Validates and encodes (see the writer rules above). The record's KV key is card.id.
Result<std::string> encodePresence(const Presence& presence);

}  // namespace shoal::wire
