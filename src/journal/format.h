// The `.daemon-state.json` codec: canonical bytes out, validated values in.
//
// docs/journal-format.md is the normative description; this header is its implementation.
// Encoding is deterministic (the golden-bytes test pins it): the same state always produces
// the same bytes, and a record's canonical bytes are what the capacity caps measure. Decoding
// never trusts the file: a truncated or corrupt file is kDataLoss (reason `journal-corrupt`),
// an unknown or missing schemaVersion is kFailedPrecondition (`journal-version-unknown`), and
// a known version carrying an unknown state or field is kFailedPrecondition
// (`unknown-ownership-semantics`). The decoder never writes anything.
//
// Thread safety: all functions are pure and may be called from any thread.
// Lifetime: results own their data.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "journal/record.h"

namespace shoal::journal {

// The version this build writes. Bump it (and keep a reader for the old one) on ANY change to
// the bytes this codec produces; the golden-bytes test fails otherwise.
//   1  the checksum is the CRC-32C of every byte before the trailer;
//   2  the same layout; the checksum covers each record's (and the sections object's) CRC-32C
//      in place of its bytes, so a commit checksums ~10 bytes per record, not the whole file.
inline constexpr uint32_t kSchemaVersion = 2;
// Versions this build can still read (and migrates in memory: the next commit writes 2).
inline constexpr uint32_t kOldestReadableVersion = 1;
inline constexpr std::string_view kFormatName = "shoal.daemon-state";

struct FileHeader {
  uint64_t storeEpoch = 0;
  uint64_t nextGeneration = 1;
  uint64_t nextSeq = 1;
  friend bool operator==(const FileHeader&, const FileHeader&) = default;
};

// Canonical JSON of one record (no trailing newline). Its size() is the record's size for caps.
std::string encodeRecord(const OwnershipRecord& record);
// The same bytes from the record's body member already encoded (`bodyMember` as
// encodeBodyMember(record.body) returns it; unused for a tombstone), so a state transition,
// which keeps the body, does not escape it again.
std::string encodeRecord(const OwnershipRecord& record, std::string_view bodyMember);
// `"body":"<escaped>"`, or `"bodyBase64":"<base64>"` for a body that is not UTF-8.
std::string encodeBodyMember(std::string_view body);
std::string encodeResumeSafety(const ResumeSafety& safety);
// Canonical JSON of the whole "sections" object.
std::string encodeSections(const SectionMap& sections);

using RecordBytes = std::shared_ptr<const std::string>;

// One encoded part of the file — a record, or the sections object — with its CRC-32C, which is
// what the version-2 checksum covers. Immutable once made; shared between states.
struct Piece {
  RecordBytes bytes;
  uint32_t crc = 0;
};
Piece makePiece(std::string bytes);

// A whole file as the ranges it is made of, in order: its own head and trailer texts, and in
// between fixed separators and the pieces' bytes — not copied: the pieces passed to
// encodeImage() must outlive it. A commit hands parts() to one vectored write.
struct FileImage {
  std::string head;  // up to and including `"sections":`
  std::vector<std::string_view> middle;
  std::string trailer;  // `,\n"crc32c":"…"}\n`

  std::vector<std::string_view> parts() const;
  size_t size() const;
  std::string flatten() const;
};

// The whole file from already-encoded pieces (so the journal can assemble it outside its lock).
// `live` oldest admission first; `tombstones` oldest terminal first.
FileImage encodeImage(const FileHeader& header, std::string_view resumeSafetyJson,
                      const Piece& sections, const std::vector<Piece>& live,
                      const std::vector<Piece>& tombstones);
// encodeImage(…).flatten().
std::string encodeFile(const FileHeader& header, std::string_view resumeSafetyJson,
                       const Piece& sections, const std::vector<Piece>& live,
                       const std::vector<Piece>& tombstones);

// Canonicalizes one JSON value (parse + serialize). kInvalidArgument if it is not JSON or nests
// deeper than `maxDepth`.
Result<std::string> canonicalJson(std::string_view json, size_t maxDepth);

struct DecodedFile {
  uint32_t sourceVersion = 0;  // the version read (migrated to kSchemaVersion in memory)
  FileHeader header;
  ResumeSafety resumeSafety;
  SectionMap sections;
  std::vector<OwnershipRecord> live;        // as stored
  std::vector<OwnershipRecord> tombstones;  // as stored
};

// Parses and checks one file's bytes: framing, checksum, version, field types and values.
// Cross-record invariants (unique ids, caps, counters) are checked by JournalState.
Result<DecodedFile> decodeFile(std::string_view bytes);

// The checksum a file of schemaVersion `version` (1 or 2) carries in its trailer when its
// bytes before the trailer are `body`: version 1 checksums them, version 2 the text with every
// piece replaced by its CRC (kDataLoss when `body` is not laid out as version 2 writes it).
// Tests and fuzzers use it to re-frame a file they edited.
Result<uint32_t> checksumFor(std::string_view body, uint32_t version);

// CRC-32C (Castagnoli), as used by the file trailer.
uint32_t crc32c(std::string_view data);
bool isValidUtf8(std::string_view s);

}  // namespace shoal::journal
