// Journal reason tokens: the stable `Status::reason()` of every refusal the journal makes,
// and the terminal-record reasons it writes itself. Part of the `--json` contract.
//
// Thread safety: constants only.
// Lifetime: static storage.
#pragma once

#include <string_view>

namespace shoal::journal::reason {

// --- Status reasons (kebab-case) ---------------------------------------------------------
// kFailedPrecondition: a failed write/fsync/rename poisoned this journal; reopen or recover().
inline constexpr std::string_view kPoisoned = "journal-poisoned";
// kFailedPrecondition: another process (or object) holds the workdir's journal lock.
inline constexpr std::string_view kLocked = "journal-locked";
// kFailedPrecondition: schemaVersion is missing or not one this build reads. File untouched.
inline constexpr std::string_view kUnknownVersion = "journal-version-unknown";
// kFailedPrecondition: a known version carries a state/field this build does not understand.
inline constexpr std::string_view kUnknownSemantics = "unknown-ownership-semantics";
// kDataLoss: the file is truncated, fails its checksum, or violates the format's invariants.
inline constexpr std::string_view kCorrupt = "journal-corrupt";
// kResourceExhausted: one record is larger than a live record may ever be (512 KiB).
inline constexpr std::string_view kOversized = "ownership-record-oversized";
// kResourceExhausted: an existing-owner transition would exceed a cap (it never reclaims).
inline constexpr std::string_view kCapacity = "journal-capacity";
// kResourceExhausted: a section value or the sections together exceed their bound.
inline constexpr std::string_view kSectionTooLarge = "section-too-large";
// kAborted: the caller's token (epoch, generation) is not the record's current one.
inline constexpr std::string_view kStaleGeneration = "stale-generation";
// kAborted: a section write named an older revision.
inline constexpr std::string_view kStaleSection = "stale-section-revision";
// kAborted: a resume-safety write carried an older (launchEpoch, version).
inline constexpr std::string_view kStaleResumeSafety = "stale-resume-safety";
// kFailedPrecondition: terminal ownership never returns to live (and surfaced never to failed).
inline constexpr std::string_view kTerminalIsFinal = "terminal-is-final";
// kFailedPrecondition: the transition does not start from the record's current state.
inline constexpr std::string_view kWrongState = "wrong-ownership-state";
// kFailedPrecondition: resume safety cannot become safe while a live owner exists.
inline constexpr std::string_view kLiveOwnerPresent = "live-owner-present";
// kAlreadyExists: a runtime receipt already correlates another MessageID (fail closed: the
// body stays queued and the caller mints a new receipt).
inline constexpr std::string_view kReceiptCollision = "receipt-collision";
// kNotFound: no record for this MessageID (never admitted, or a pruned tombstone).
inline constexpr std::string_view kUnknownOwner = "unknown-owner";
// kInvalidArgument: a field is malformed or over its bound.
inline constexpr std::string_view kBadField = "bad-journal-field";

// --- Terminal record reasons written by the journal itself (seed tokens, snake_case) ------
// The oldest live owner was turned into a failed tombstone to admit a new MessageID.
inline constexpr std::string_view kBacklogReclaimed = "ownership_backlog_reclaimed";

}  // namespace shoal::journal::reason
