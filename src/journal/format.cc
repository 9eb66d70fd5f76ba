#include "journal/format.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>

#include <boost/json.hpp>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

#include "base/base64.h"
#include "journal/limits.h"
#include "journal/reasons.h"

namespace shoal::journal {
namespace json = boost::json;
namespace {

// ---- CRC-32C --------------------------------------------------------------------------------

constexpr std::array<uint32_t, 256> makeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrcTable = makeCrcTable();

uint32_t crc32cPortable(uint32_t crc, const unsigned char* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    crc = kCrcTable[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crc32cHardware(uint32_t crc, const unsigned char* p,
                                                          size_t n) {
  uint64_t c = crc;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = _mm_crc32_u64(c, word);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n > 0) {
    c32 = _mm_crc32_u8(c32, *p++);
    --n;
  }
  return c32;
}
#endif

// ---- Strings --------------------------------------------------------------------------------

void appendEscaped(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  size_t run = 0;  // start of the pending unescaped run
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

void appendUint(std::string& out, uint64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}
void appendInt(std::string& out, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

void appendHex8(std::string& out, uint32_t v) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 8; ++i)
    out += kHex[(v >> (28 - 4 * i)) & 0xf];
}

void field(std::string& out, std::string_view key) {
  if (out.back() != '{') out += ',';
  out += '"';
  out += key;  // keys are fixed ASCII identifiers
  out += "\":";
}

// ---- Decoding helpers ----------------------------------------------------------------------

Status corrupt(std::string_view what) {
  return dataLoss(reason::kCorrupt,
                  std::string(".daemon-state.json is corrupt: ") + std::string(what) +
                      " (the file was left untouched; restore it from a backup or move it aside "
                      "after reconciling its owners by hand)");
}
Status unknownSemantics(std::string_view what) {
  return failedPrecondition(
      reason::kUnknownSemantics,
      std::string(".daemon-state.json carries ownership semantics this build does not know: ") +
          std::string(what) +
          " (it was probably written by a newer Shoal; upgrade, or move the file aside; it was "
          "not modified)");
}
Status unknownVersion(std::string_view what) {
  return failedPrecondition(reason::kUnknownVersion,
                            std::string(".daemon-state.json has ") + std::string(what) +
                                "; this build reads schemaVersion " +
                                std::to_string(kOldestReadableVersion) + ".." +
                                std::to_string(kSchemaVersion) +
                                " (upgrade Shoal, or move the file aside; it was not modified)");
}

bool getU64(const json::value& v, uint64_t& out) {
  if (v.is_uint64()) {
    out = v.get_uint64();
    return true;
  }
  if (v.is_int64() && v.get_int64() >= 0) {
    out = static_cast<uint64_t>(v.get_int64());
    return true;
  }
  return false;
}
bool getI64(const json::value& v, int64_t& out) {
  if (v.is_int64()) {
    out = v.get_int64();
    return true;
  }
  if (v.is_uint64() && v.get_uint64() <= uint64_t(std::numeric_limits<int64_t>::max())) {
    out = static_cast<int64_t>(v.get_uint64());
    return true;
  }
  return false;
}
bool getString(const json::value& v, std::string& out) {
  const json::string* s = v.if_string();
  if (s == nullptr) return false;
  out.assign(s->data(), s->size());
  return true;
}

Status decodeRuntime(const json::value& v, RuntimeIdentity& out) {
  const json::object* o = v.if_object();
  if (o == nullptr) return corrupt("runtime is not an object");
  for (const auto& kv : *o) {
    std::string* dst = nullptr;
    if (kv.key() == "threadId") dst = &out.threadId;
    if (kv.key() == "sessionId") dst = &out.sessionId;
    if (kv.key() == "receipt") dst = &out.receipt;
    if (dst == nullptr) return unknownSemantics("runtime field \"" + std::string(kv.key()) + '"');
    if (!getString(kv.value(), *dst)) return corrupt("runtime." + std::string(kv.key()));
  }
  return Status::ok();
}

Status decodeRecord(const json::value& v, bool inLive, OwnershipRecord& r) {
  const json::object* o = v.if_object();
  if (o == nullptr) return corrupt("a record is not an object");
  std::string state, phase, outcome;
  bool hasId = false, hasSeq = false, hasState = false, hasEpoch = false, hasGen = false,
       hasAdmitted = false, hasSince = false, hasTermSeq = false, hasBody = false;
  for (const auto& kv : *o) {
    std::string_view k = kv.key();
    const json::value& x = kv.value();
    bool ok = true;
    if (k == "id")
      ok = hasId = getString(x, r.id);
    else if (k == "seq")
      ok = hasSeq = getU64(x, r.seq);
    else if (k == "state")
      ok = hasState = getString(x, state);
    else if (k == "phase")
      ok = getString(x, phase) && !phase.empty();
    else if (k == "outcome")
      ok = getString(x, outcome) && !outcome.empty();
    else if (k == "epoch")
      ok = hasEpoch = getU64(x, r.token.epoch);
    else if (k == "generation")
      ok = hasGen = getU64(x, r.token.generation);
    else if (k == "admittedAtMs")
      ok = hasAdmitted = getI64(x, r.admittedAtMs);
    else if (k == "stateSinceMs")
      ok = hasSince = getI64(x, r.stateSinceMs);
    else if (k == "terminalSeq")
      ok = hasTermSeq = getU64(x, r.terminalSeq);
    else if (k == "reason")
      ok = getString(x, r.reason);
    else if (k == "target")
      ok = getString(x, r.target);
    else if (k == "wake")
      ok = getString(x, r.wake);
    else if (k == "runtime") {
      SHOAL_RETURN_IF_ERROR(decodeRuntime(x, r.runtime));
    } else if (k == "body") {
      if (hasBody) return corrupt("record has both body and bodyBase64");
      ok = hasBody = getString(x, r.body);
    } else if (k == "bodyBase64") {
      std::string b64;
      if (hasBody || !getString(x, b64)) return corrupt("record bodyBase64");
      auto raw = base64Decode(b64);
      if (!raw) return corrupt("record bodyBase64 is not canonical base64");
      r.body = std::move(*raw);
      hasBody = true;
    } else {
      return unknownSemantics("record field \"" + std::string(k) + '"');
    }
    if (!ok) return corrupt("record field \"" + std::string(k) + "\" has the wrong type");
  }
  if (!hasId || !hasSeq || !hasState || !hasEpoch || !hasGen || !hasAdmitted || !hasSince) {
    return corrupt("record \"" + r.id + "\" misses a required field");
  }
  if (state == "queued") {
    if (!phase.empty() || !outcome.empty()) return unknownSemantics("queued with a phase");
    r.state = OwnerState::kQueued;
  } else if (state == "inflight") {
    if (!outcome.empty()) return unknownSemantics("inflight with an outcome");
    if (phase == "dispatching")
      r.state = OwnerState::kDispatching;
    else if (phase == "outcome_unknown")
      r.state = OwnerState::kOutcomeUnknown;
    else
      return unknownSemantics("inflight phase \"" + phase + '"');
  } else if (state == "terminal") {
    if (!phase.empty()) return unknownSemantics("terminal with a phase");
    if (outcome == "surfaced")
      r.state = OwnerState::kSurfaced;
    else if (outcome == "failed")
      r.state = OwnerState::kFailed;
    else
      return unknownSemantics("terminal outcome \"" + outcome + '"');
  } else {
    return unknownSemantics("state \"" + state + '"');
  }
  if (isLive(r.state)) {
    if (!inLive) return corrupt("live record \"" + r.id + "\" stored among tombstones");
    if (!hasBody) return corrupt("live record \"" + r.id + "\" has no body");
    if (hasTermSeq) return corrupt("live record \"" + r.id + "\" has a terminalSeq");
  } else {
    if (inLive) return corrupt("terminal record \"" + r.id + "\" stored among live owners");
    if (hasBody || !r.wake.empty()) return corrupt("tombstone \"" + r.id + "\" holds a body");
    if (!hasTermSeq) return corrupt("tombstone \"" + r.id + "\" has no terminalSeq");
    if (r.reason.empty()) return corrupt("tombstone \"" + r.id + "\" has no reason");
  }
  return Status::ok();
}

bool allNumbersFinite(const json::value& v) {
  switch (v.kind()) {
    case json::kind::double_:
      return std::isfinite(v.get_double());
    case json::kind::array:
      for (const auto& e : v.get_array()) {
        if (!allNumbersFinite(e)) return false;
      }
      return true;
    case json::kind::object:
      for (const auto& kv : v.get_object()) {
        if (!allNumbersFinite(kv.value())) return false;
      }
      return true;
    default:
      return true;
  }
}

// The canonical text of a section value, or why it cannot be stored: every number must be
// finite (1e999 parses to infinity, which JSON cannot carry) and the text must read back to
// itself, so a journal never writes a section it could not load again byte for byte.
Result<std::string> storableSectionText(const json::value& v) {
  if (!allNumbersFinite(v)) return invalidArgument(reason::kBadField, "a number is not finite");
  std::string once = json::serialize(v);
  json::error_code ec;
  json::value back = json::parse(once, ec);
  if (ec || json::serialize(back) != once) {
    return invalidArgument(reason::kBadField, "a number does not survive a JSON round trip");
  }
  return once;
}

Status decodeSections(const json::value& v, SectionMap& out) {
  const json::object* o = v.if_object();
  if (o == nullptr) return corrupt("sections is not an object");
  for (const auto& kv : *o) {
    const json::object* s = kv.value().if_object();
    if (s == nullptr || s->size() != 2) return corrupt("section is not {revision, value}");
    Section section;
    const json::value* rev = s->if_contains("revision");
    const json::value* value = s->if_contains("value");
    if (rev == nullptr || value == nullptr || !getU64(*rev, section.revision)) {
      return corrupt("section \"" + std::string(kv.key()) + "\" is malformed");
    }
    auto text = storableSectionText(*value);
    if (!text.isOk()) {
      return corrupt("section \"" + std::string(kv.key()) +
                     "\" value: " + std::string(text.status().message()));
    }
    section.valueJson = std::move(text).value();
    if (!out.emplace(std::string(kv.key()), std::move(section)).second) {
      return corrupt("section \"" + std::string(kv.key()) + "\" appears twice");
    }
  }
  return Status::ok();
}

Status decodeResume(const json::value& v, ResumeSafety& out) {
  const json::object* o = v.if_object();
  if (o == nullptr) return corrupt("resumeSafety is not an object");
  bool hasSafe = false, hasEpoch = false, hasVersion = false;
  for (const auto& kv : *o) {
    if (kv.key() == "safe" && kv.value().is_bool()) {
      out.safe = kv.value().get_bool();
      hasSafe = true;
    } else if (kv.key() == "launchEpoch" && getU64(kv.value(), out.launchEpoch)) {
      hasEpoch = true;
    } else if (kv.key() == "version" && getU64(kv.value(), out.version)) {
      hasVersion = true;
    } else if (kv.key() != "safe" && kv.key() != "launchEpoch" && kv.key() != "version") {
      return unknownSemantics("resumeSafety field \"" + std::string(kv.key()) + '"');
    } else {
      return corrupt("resumeSafety." + std::string(kv.key()) + " has the wrong type");
    }
  }
  if (!hasSafe || !hasEpoch || !hasVersion) return corrupt("resumeSafety misses a field");
  return Status::ok();
}

constexpr std::string_view kVersionPrefix = "{\"schemaVersion\":";
constexpr std::string_view kCrcOpen = ",\n\"crc32c\":\"";
constexpr std::string_view kCrcClose = "\"}\n";
constexpr size_t kTrailerSize = kCrcOpen.size() + 8 + kCrcClose.size();

// The schemaVersion of `bytes`, read without trusting the rest of the file.
Result<uint32_t> sniffVersion(std::string_view bytes) {
  if (bytes.substr(0, kVersionPrefix.size()) == kVersionPrefix) {
    std::string_view rest = bytes.substr(kVersionPrefix.size());
    uint64_t v = 0;
    auto [end, ec] =
        std::from_chars(rest.data(), rest.data() + std::min<size_t>(rest.size(), 20), v);
    if (ec == std::errc::result_out_of_range) return unknownVersion("a huge schemaVersion");
    if (ec != std::errc() || end == rest.data()) return corrupt("schemaVersion is not a number");
    if (v > std::numeric_limits<uint32_t>::max()) {
      return unknownVersion("schemaVersion " + std::to_string(v));
    }
    return static_cast<uint32_t>(v);
  }
  // Not our framing: maybe another writer's JSON. Read it only to name what it is.
  json::error_code ec;
  json::parse_options opts;
  opts.max_depth = 64;
  json::value doc = json::parse(bytes, ec, {}, opts);
  if (ec) return corrupt(bytes.empty() ? "the file is empty" : "not a JSON document");
  const json::object* o = doc.if_object();
  if (o == nullptr) return corrupt("the document is not a JSON object");
  const json::value* ver = o->if_contains("schemaVersion");
  if (ver == nullptr) return unknownVersion("no schemaVersion (an unversioned format)");
  uint64_t v = 0;
  if (!getU64(*ver, v)) return unknownVersion("a schemaVersion that is not a number");
  if (v > std::numeric_limits<uint32_t>::max()) {
    return unknownVersion("schemaVersion " + std::to_string(v));
  }
  return static_cast<uint32_t>(v);
}

// The checksum the trailer holds, or why the trailer is not there.
Result<uint32_t> storedChecksum(std::string_view bytes) {
  if (bytes.size() < kTrailerSize || bytes.substr(bytes.size() - kCrcClose.size()) != kCrcClose ||
      bytes.substr(bytes.size() - kTrailerSize, kCrcOpen.size()) != kCrcOpen) {
    return corrupt("the checksum trailer is missing (truncated file?)");
  }
  std::string_view hex = bytes.substr(bytes.size() - kTrailerSize + kCrcOpen.size(), 8);
  uint32_t stored = 0;
  auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), stored, 16);
  if (ec != std::errc() || end != hex.data() + hex.size()) return corrupt("checksum is not hex");
  for (char c : hex) {
    if (c >= 'A' && c <= 'F') return corrupt("checksum is not lower-case hex");
  }
  return stored;
}

// Version 2's checksum input, read back from the bytes before the trailer: the sections object
// and each record (one per line) replaced by the hex of its CRC-32C. Anything not laid out the
// way encodeFile() lays it out is corrupt.
Result<std::string> digestOf(std::string_view body) {
  auto notLaidOut = [](std::string_view what) {
    return corrupt("not laid out as schemaVersion 2 (" + std::string(what) + ")");
  };
  std::string digest;
  digest.reserve(512);
  size_t at = 0;
  auto nextLine = [&]() -> std::optional<std::string_view> {
    if (at > body.size()) return std::nullopt;
    size_t nl = body.find('\n', at);
    std::string_view line = body.substr(at, nl == std::string_view::npos ? body.npos : nl - at);
    at = nl == std::string_view::npos ? body.size() + 1 : nl + 1;
    return line;
  };
  auto emit = [&](std::string_view text, bool last) {
    digest += text;
    if (!last) digest += '\n';
  };
  // Replaces the piece between `line`'s first `prefix` bytes and its last `suffix` bytes.
  auto emitPiece = [&](std::string_view line, size_t prefix, size_t suffix, bool last) {
    digest += line.substr(0, prefix);
    appendHex8(digest, crc32c(line.substr(prefix, line.size() - prefix - suffix)));
    emit(line.substr(line.size() - suffix), last);
  };
  auto head = nextLine();
  auto resume = nextLine();
  auto sections = nextLine();
  constexpr std::string_view kSections = "\"sections\":";
  if (!head || !resume || !sections) return notLaidOut("header lines");
  if (sections->substr(0, kSections.size()) != kSections ||
      sections->size() < kSections.size() + 3 || sections->back() != ',') {
    return notLaidOut("sections line");
  }
  emit(*head, false);
  emit(*resume, false);
  emitPiece(*sections, kSections.size(), 1, false);
  for (std::string_view key :
       {std::string_view("\"live\":["), std::string_view("\"tombstones\":[")}) {
    const bool tombs = key[1] == 't';
    const std::string_view close = tombs ? "]" : "],";
    auto open = nextLine();
    if (!open || open->substr(0, key.size()) != key) return notLaidOut("list opening");
    std::string_view rest = open->substr(key.size());
    if (rest == close) {  // an empty list
      emit(*open, tombs);
      continue;
    }
    if (!rest.empty()) return notLaidOut("list opening");
    emit(*open, false);
    for (;;) {
      auto line = nextLine();
      if (!line || line->size() < 3 || line->front() != '{') return notLaidOut("record line");
      if (line->size() > close.size() + 1 &&
          line->substr(line->size() - close.size() - 1) == "}" + std::string(close)) {
        emitPiece(*line, 0, close.size(), tombs);
        break;
      }
      if (line->substr(line->size() - 2) != "},") return notLaidOut("record line");
      emitPiece(*line, 0, 1, false);
    }
  }
  if (at <= body.size()) return notLaidOut("text after the tombstones");
  return digest;
}

Result<DecodedFile> decodeDocument(std::string_view bytes, uint32_t version);

Result<DecodedFile> decodeV1(std::string_view bytes) {
  SHOAL_ASSIGN_OR_RETURN(uint32_t stored, storedChecksum(bytes));
  if (stored != crc32c(bytes.substr(0, bytes.size() - kTrailerSize))) {
    return corrupt("checksum mismatch");
  }
  return decodeDocument(bytes, 1);
}

Result<DecodedFile> decodeV2(std::string_view bytes) {
  SHOAL_ASSIGN_OR_RETURN(uint32_t stored, storedChecksum(bytes));
  SHOAL_ASSIGN_OR_RETURN(std::string digest,
                         digestOf(bytes.substr(0, bytes.size() - kTrailerSize)));
  if (stored != crc32c(digest)) return corrupt("checksum mismatch");
  return decodeDocument(bytes, 2);
}

// The fields of a file whose checksum held (versions 1 and 2 share them).
Result<DecodedFile> decodeDocument(std::string_view bytes, uint32_t version) {
  json::error_code jec;
  json::parse_options opts;
  opts.max_depth = 64;
  json::value doc = json::parse(bytes, jec, {}, opts);
  if (jec) return corrupt("not valid JSON: " + jec.message());
  const json::object* root = doc.if_object();
  if (root == nullptr) return corrupt("the document is not an object");

  DecodedFile out;
  out.sourceVersion = version;
  bool hasFormat = false, hasEpoch = false, hasGen = false, hasSeq = false, hasResume = false,
       hasSections = false, hasLive = false, hasTombs = false;
  for (const auto& kv : *root) {
    std::string_view k = kv.key();
    const json::value& x = kv.value();
    if (k == "schemaVersion" || k == "crc32c") continue;
    if (k == "format") {
      const json::string* s = x.if_string();
      if (s == nullptr || *s != kFormatName)
        return unknownSemantics("format is not " + std::string(kFormatName));
      hasFormat = true;
    } else if (k == "storeEpoch") {
      if (!(hasEpoch = getU64(x, out.header.storeEpoch))) return corrupt("storeEpoch");
    } else if (k == "nextGeneration") {
      if (!(hasGen = getU64(x, out.header.nextGeneration))) return corrupt("nextGeneration");
    } else if (k == "nextSeq") {
      if (!(hasSeq = getU64(x, out.header.nextSeq))) return corrupt("nextSeq");
    } else if (k == "resumeSafety") {
      SHOAL_RETURN_IF_ERROR(decodeResume(x, out.resumeSafety));
      hasResume = true;
    } else if (k == "sections") {
      SHOAL_RETURN_IF_ERROR(decodeSections(x, out.sections));
      hasSections = true;
    } else if (k == "live" || k == "tombstones") {
      const json::array* a = x.if_array();
      if (a == nullptr) return corrupt(std::string(k) + " is not an array");
      bool live = k == "live";
      auto& dst = live ? out.live : out.tombstones;
      dst.reserve(a->size());
      for (const json::value& rv : *a) {
        OwnershipRecord r;
        SHOAL_RETURN_IF_ERROR(decodeRecord(rv, live, r));
        dst.push_back(std::move(r));
      }
      (live ? hasLive : hasTombs) = true;
    } else {
      return unknownSemantics("top-level field \"" + std::string(k) + '"');
    }
  }
  if (!hasFormat || !hasEpoch || !hasGen || !hasSeq || !hasResume || !hasSections || !hasLive ||
      !hasTombs) {
    return corrupt("a top-level field is missing");
  }
  return out;
}

}  // namespace

uint32_t crc32c(std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
#if defined(__x86_64__)
  static const bool kHardware = __builtin_cpu_supports("sse4.2");
  if (kHardware) return ~crc32cHardware(~0u, p, data.size());
#endif
  return ~crc32cPortable(~0u, p, data.size());
}

bool isValidUtf8(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

std::string encodeRecord(const OwnershipRecord& r, std::string_view bodyMember) {
  std::string out;
  out.reserve(194 + bodyMember.size() + r.target.size() + r.wake.size());
  out += '{';
  field(out, "id");
  appendEscaped(out, r.id);
  field(out, "seq");
  appendUint(out, r.seq);
  field(out, "state");
  switch (r.state) {
    case OwnerState::kQueued:
      out += "\"queued\"";
      break;
    case OwnerState::kDispatching:
      out += "\"inflight\",\"phase\":\"dispatching\"";
      break;
    case OwnerState::kOutcomeUnknown:
      out += "\"inflight\",\"phase\":\"outcome_unknown\"";
      break;
    case OwnerState::kSurfaced:
      out += "\"terminal\",\"outcome\":\"surfaced\"";
      break;
    case OwnerState::kFailed:
      out += "\"terminal\",\"outcome\":\"failed\"";
      break;
  }
  field(out, "epoch");
  appendUint(out, r.token.epoch);
  field(out, "generation");
  appendUint(out, r.token.generation);
  field(out, "admittedAtMs");
  appendInt(out, r.admittedAtMs);
  field(out, "stateSinceMs");
  appendInt(out, r.stateSinceMs);
  if (isTerminal(r.state)) {
    field(out, "terminalSeq");
    appendUint(out, r.terminalSeq);
  }
  auto optional = [&out](std::string_view key, const std::string& v) {
    if (v.empty()) return;
    field(out, key);
    appendEscaped(out, v);
  };
  optional("reason", r.reason);
  optional("target", r.target);
  if (isLive(r.state)) optional("wake", r.wake);
  if (!r.runtime.empty()) {
    field(out, "runtime");
    out += '{';
    optional("threadId", r.runtime.threadId);
    optional("sessionId", r.runtime.sessionId);
    optional("receipt", r.runtime.receipt);
    out += '}';
  }
  if (isLive(r.state)) {
    out += ',';
    out += bodyMember;
  }
  out += '}';
  return out;
}

std::string encodeRecord(const OwnershipRecord& r) {
  return encodeRecord(r, isLive(r.state) ? encodeBodyMember(r.body) : std::string());
}

std::string encodeBodyMember(std::string_view body) {
  std::string out;
  if (isValidUtf8(body)) {
    out.reserve(body.size() + body.size() / 8 + 10);
    out += "\"body\":";
    appendEscaped(out, body);
  } else {
    out.reserve(body.size() / 3 * 4 + 20);
    out += "\"bodyBase64\":\"";
    out += base64Encode(body);
    out += '"';
  }
  return out;
}

std::string encodeResumeSafety(const ResumeSafety& s) {
  std::string out = "{\"safe\":";
  out += s.safe ? "true" : "false";
  out += ",\"launchEpoch\":";
  appendUint(out, s.launchEpoch);
  out += ",\"version\":";
  appendUint(out, s.version);
  out += '}';
  return out;
}

std::string encodeSections(const SectionMap& sections) {
  std::string out = "{";
  for (const auto& [name, section] : sections) {
    if (out.size() > 1) out += ',';
    appendEscaped(out, name);
    out += ":{\"revision\":";
    appendUint(out, section.revision);
    out += ",\"value\":";
    out += section.valueJson;
    out += '}';
  }
  out += '}';
  return out;
}

Piece makePiece(std::string bytes) {
  uint32_t crc = crc32c(bytes);
  return Piece{std::make_shared<const std::string>(std::move(bytes)), crc};
}

std::vector<std::string_view> FileImage::parts() const {
  std::vector<std::string_view> out;
  out.reserve(middle.size() + 2);
  out.push_back(head);
  out.insert(out.end(), middle.begin(), middle.end());
  out.push_back(trailer);
  return out;
}

size_t FileImage::size() const {
  size_t n = head.size() + trailer.size();
  for (auto p : middle)
    n += p.size();
  return n;
}

std::string FileImage::flatten() const {
  std::string out;
  out.reserve(size());
  for (auto p : parts())
    out += p;
  return out;
}

FileImage encodeImage(const FileHeader& h, std::string_view resumeSafetyJson, const Piece& sections,
                      const std::vector<Piece>& live, const std::vector<Piece>& tombstones) {
  // The file, and beside it the text its checksum covers: the same with each piece's bytes
  // replaced by the hex of its CRC-32C (docs/journal-format.md §3).
  FileImage image;
  image.middle.reserve(2 * (live.size() + tombstones.size()) + 8);
  std::string digest;
  digest.reserve(256 + resumeSafetyJson.size() + 10 * (live.size() + tombstones.size() + 1));
  std::string& head = image.head;
  head = kVersionPrefix;
  appendUint(head, kSchemaVersion);
  head += ",\"format\":";
  appendEscaped(head, kFormatName);
  head += ",\"storeEpoch\":";
  appendUint(head, h.storeEpoch);
  head += ",\"nextGeneration\":";
  appendUint(head, h.nextGeneration);
  head += ",\"nextSeq\":";
  appendUint(head, h.nextSeq);
  head += ",\n\"resumeSafety\":";
  head += resumeSafetyJson;
  head += ",\n\"sections\":";
  digest += head;
  auto text = [&](std::string_view fixed) {  // string literals only: the image points at them
    image.middle.push_back(fixed);
    digest += fixed;
  };
  auto piece = [&](const Piece& p) {
    image.middle.push_back(*p.bytes);
    appendHex8(digest, p.crc);
  };
  piece(sections);
  auto list = [&](std::string_view open, const std::vector<Piece>& records) {
    text(open);
    for (size_t i = 0; i < records.size(); ++i) {
      text(i == 0 ? "\n" : ",\n");
      piece(records[i]);
    }
    text("]");
  };
  list(",\n\"live\":[", live);
  list(",\n\"tombstones\":[", tombstones);
  image.trailer = kCrcOpen;
  appendHex8(image.trailer, crc32c(digest));
  image.trailer += kCrcClose;
  return image;
}

std::string encodeFile(const FileHeader& h, std::string_view resumeSafetyJson,
                       const Piece& sections, const std::vector<Piece>& live,
                       const std::vector<Piece>& tombstones) {
  return encodeImage(h, resumeSafetyJson, sections, live, tombstones).flatten();
}

Result<uint32_t> checksumFor(std::string_view body, uint32_t version) {
  if (version == 1) return crc32c(body);
  SHOAL_ASSIGN_OR_RETURN(std::string digest, digestOf(body));
  return crc32c(digest);
}

Result<std::string> canonicalJson(std::string_view text, size_t maxDepth) {
  try {
    json::error_code ec;
    json::parse_options opts;
    opts.max_depth = maxDepth;
    json::value v = json::parse(text, ec, {}, opts);
    if (ec) {
      return invalidArgument(reason::kBadField, "section value is not JSON: " + ec.message());
    }
    auto storable = storableSectionText(v);
    if (!storable.isOk()) return storable.status().withContext("section value");
    return storable;
  } catch (const std::exception& e) {
    return invalidArgument(reason::kBadField, std::string("section value: ") + e.what());
  }
}

Result<DecodedFile> decodeFile(std::string_view bytes) {
  try {
    SHOAL_ASSIGN_OR_RETURN(uint32_t version, sniffVersion(bytes));
    if (version == 1) return decodeV1(bytes);  // retired: read, migrated at the next commit
    if (version == 2) return decodeV2(bytes);
    return unknownVersion("schemaVersion " + std::to_string(version));
  } catch (const std::exception& e) {
    return corrupt(std::string("decoder failure: ") + e.what());
  }
}

}  // namespace shoal::journal
