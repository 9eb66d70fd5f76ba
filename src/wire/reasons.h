// Wire reason tokens: the stable `Status::reason()` of every refusal made by wire/.
//
// Every wire error is `invalidArgument(reason, message)`: the input is wrong and retrying it
// as is cannot help (a JetStream consumer terms it, a live subscriber drops it). The reason
// names the rule that failed; the message says what was wrong and where ("parts[2]: artifact
// digest must match ^sha256:[0-9a-f]{64}$"). Tokens marked (Cotal) are the SPEC's own §5
// names; the rest are Shoal's, one per rule, and are part of the `--json` contract: rename
// one only with a note in the changelog.
//
// Thread safety: constants only.
// Lifetime: static storage.
#pragma once

#include <string_view>

namespace shoal::wire::reason {

// --- Subjects and principals -------------------------------------------------------------
inline constexpr std::string_view kMalformedSubject = "malformed-subject";  // (Cotal) no sender
inline constexpr std::string_view kSubjectTooLong = "subject-too-long";     // builder output
inline constexpr std::string_view kNotADeliverySubject = "not-a-delivery-subject";
inline constexpr std::string_view kNkeyOwner = "nkey-owner";  // owner looks like a NATS nkey
inline constexpr std::string_view kNotAPrincipalOwner = "not-a-principal-owner";
inline constexpr std::string_view kBadActorToken = "bad-actor-token";
inline constexpr std::string_view kBadPrincipal = "bad-principal";  // not `<owner>.<actor>`
inline constexpr std::string_view kBadToken = "bad-token";          // space / role / nonce token
inline constexpr std::string_view kBadLifecycleUid = "bad-lifecycle-uid";
inline constexpr std::string_view kBadPlane = "bad-plane";
inline constexpr std::string_view kBadReplySubject = "bad-reply-subject";

// --- Channels -------------------------------------------------------------------------------
inline constexpr std::string_view kChannelTooLong = "channel-too-long";
inline constexpr std::string_view kChannelWildcardInPublish = "channel-wildcard-in-publish";
inline constexpr std::string_view kChannelWildcardNotLast = "channel-wildcard-not-last";
inline constexpr std::string_view kChannelEmptySegment = "channel-empty-segment";
inline constexpr std::string_view kChannelBadChar = "channel-bad-char";

// --- CotalMessage ---------------------------------------------------------------------------
inline constexpr std::string_view kMalformedJson = "malformed-json";    // (Cotal)
inline constexpr std::string_view kSenderMismatch = "sender-mismatch";  // (Cotal)
inline constexpr std::string_view kMissingId = "missing-id";
inline constexpr std::string_view kBadMessageId = "message-id-invalid";    // message_limits.h
inline constexpr std::string_view kMessageTooLarge = "message-too-large";  // message_limits.h
inline constexpr std::string_view kBadTs = "bad-ts";
inline constexpr std::string_view kMissingSpace = "missing-space";
inline constexpr std::string_view kMissingFrom = "missing-from";
inline constexpr std::string_view kBadFrom = "bad-from";
inline constexpr std::string_view kMultipleRoutingFields = "multiple-routing-fields";
inline constexpr std::string_view kNoRoutingField = "no-routing-field";
inline constexpr std::string_view kBadRoutingField = "bad-routing-field";
inline constexpr std::string_view kBadMentions = "bad-mentions";
inline constexpr std::string_view kBadParts = "bad-parts";
inline constexpr std::string_view kBadPart = "bad-part";
inline constexpr std::string_view kUnknownPartKind = "unknown-part-kind";
inline constexpr std::string_view kBadReplyTo = "bad-reply-to";
inline constexpr std::string_view kBadContextId = "bad-context-id";
inline constexpr std::string_view kNonFiniteNumber = "non-finite-number";
inline constexpr std::string_view kInvalidUtf8 = "invalid-utf8";
inline constexpr std::string_view kBadUnknownField = "bad-unknown-field";  // hand-built only

// --- AgentCard and Presence -----------------------------------------------------------------
inline constexpr std::string_view kMissingCard = "missing-card";
inline constexpr std::string_view kBadCardId = "bad-card-id";
inline constexpr std::string_view kMissingName = "missing-name";
inline constexpr std::string_view kNameTooLong = "name-too-long";
inline constexpr std::string_view kBadCardKind = "bad-card-kind";
inline constexpr std::string_view kBadCardField = "bad-card-field";
inline constexpr std::string_view kCardOwnerMismatch = "card-owner-mismatch";
inline constexpr std::string_view kCardIdMismatch = "card-id-mismatch";  // card.id != KV key
inline constexpr std::string_view kReservedPresenceKey = "reserved-presence-key";
inline constexpr std::string_view kBadStatus = "bad-status";
inline constexpr std::string_view kBadCondition = "bad-condition";
inline constexpr std::string_view kBadAttention = "bad-attention";
inline constexpr std::string_view kBadChannelModes = "bad-channel-modes";
inline constexpr std::string_view kBadPresenceField = "bad-presence-field";
inline constexpr std::string_view kPresenceFieldTooLong = "presence-field-too-long";

// --- Plane liveness -------------------------------------------------------------------------
inline constexpr std::string_view kMalformedLivenessAnswer = "malformed-liveness-answer";

// --- Channel registry -----------------------------------------------------------------------
inline constexpr std::string_view kBadChannelConfig = "bad-channel-config";
inline constexpr std::string_view kBadReplayWindow = "bad-replay-window";
inline constexpr std::string_view kBadDeliveryClass = "bad-delivery-class";
inline constexpr std::string_view kDescriptionTooLong = "description-too-long";
inline constexpr std::string_view kInstructionsTooLong = "instructions-too-long";

// --- Seat receipts and wake records (seat_receipt.h, wake_record.h) -------------------------
inline constexpr std::string_view kBadReceipt = "bad-receipt";
inline constexpr std::string_view kBadWakeRecord = "bad-wake-record";

}  // namespace shoal::wire::reason
