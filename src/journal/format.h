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
inline constexpr uint32_t kSchemaVersion = 1;
// Versions this build can still read and migrate in memory (none yet).
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

// The whole file from already-encoded pieces (so the journal can assemble it outside its lock).
// `live` oldest admission first; `tombstones` oldest terminal first.
std::string encodeFile(const FileHeader& header, std::string_view resumeSafetyJson,
                       std::string_view sectionsJson, const std::vector<RecordBytes>& live,
                       const std::vector<RecordBytes>& tombstones);

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

// CRC-32C (Castagnoli), as used by the file trailer.
uint32_t crc32c(std::string_view data);
bool isValidUtf8(std::string_view s);

}  // namespace shoal::journal
