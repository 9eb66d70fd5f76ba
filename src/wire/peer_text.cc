#include "wire/peer_text.h"

#include <array>
#include <cstdio>

namespace shoal::wire {
namespace {

constexpr std::string_view kEllipsis = "\u2026";

// Inclusive ranges of code points shown as escapes (beyond C0, DEL and C1).
struct Range {
  uint32_t first;
  uint32_t last;
};
constexpr std::array<Range, 24> kEscapedRanges{{
    {0x00AD, 0x00AD},    // soft hyphen
    {0x034F, 0x034F},    // combining grapheme joiner
    {0x061C, 0x061C},    // Arabic letter mark (bidi)
    {0x115F, 0x1160},    // Hangul fillers (invisible names)
    {0x17B4, 0x17B5},    // Khmer inherent vowels (invisible)
    {0x180B, 0x180F},    // Mongolian variation selectors and vowel separator
    {0x200B, 0x200F},    // zero width space/non-joiner/joiner, LRM, RLM
    {0x2028, 0x2029},    // line and paragraph separators
    {0x202A, 0x202E},    // bidi embeddings and overrides
    {0x2060, 0x2065},    // word joiner, invisible operators
    {0x2066, 0x2069},    // bidi isolates
    {0x206A, 0x206F},    // deprecated format characters
    {0x3164, 0x3164},    // Hangul filler
    {0xFEFF, 0xFEFF},    // zero width no-break space (BOM)
    {0xFFA0, 0xFFA0},    // half-width Hangul filler
    {0xFFF9, 0xFFFB},    // interlinear annotation controls
    {0xFFFE, 0xFFFF},    // non-characters
    {0x1D173, 0x1D17A},  // musical symbol format controls
    {0xE0000, 0xE007F},  // tag characters (hidden ASCII)
    {0xE0100, 0xE01EF},  // variation selectors supplement
    {0x0000, 0x001F},    // C0 (line feed and tab are special-cased by block text)
    {0x007F, 0x009F},    // DEL and C1
    {0x1FFFE, 0x1FFFF},  // non-characters of plane 1
    {0x10FFFE, 0x10FFFF},
}};

bool isAsciiAlnum(uint32_t cp) {
  return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9');
}

// Space separators other than U+0020: legal, but a name holding one is quoted.
bool isUnicodeSpace(uint32_t cp) {
  return cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

bool inAlphabet(uint32_t cp, FieldAlphabet alphabet) {
  if (isAsciiAlnum(cp) || cp == '_' || cp == '-' || cp == '.') return true;
  switch (alphabet) {
    case FieldAlphabet::kName:
      return cp == ' ' || cp == '@' || cp == '\'' ||
             (cp > 0xA0 && !isEscapedCodePoint(cp) && !isUnicodeSpace(cp) &&
              cp != kReplacementChar);
    case FieldAlphabet::kToken:
      return false;
    case FieldAlphabet::kMediaType:
      return cp == '/' || cp == '+';
  }
  return false;
}

char asciiLower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool matchesAt(std::string_view s, size_t pos, std::string_view lowerNeedle) {
  if (s.size() - pos < lowerNeedle.size()) return false;
  for (size_t i = 0; i < lowerNeedle.size(); ++i) {
    if (asciiLower(s[pos + i]) != asciiLower(lowerNeedle[i])) return false;
  }
  return true;
}

// True when a sentinel starts at `pos` of `s` (case-insensitive).
bool sentinelAt(std::string_view s, size_t pos) {
  return s[pos] == '=' && (matchesAt(s, pos, kHeaderSentinel) || matchesAt(s, pos, kTailSentinel));
}

// Renders one source character of block text (never a line feed) into `out`.
void appendBlockChar(std::string& out, const Utf8Char& c, std::string_view src, size_t pos) {
  if (!c.valid) {
    appendUtf8(out, kReplacementChar);
  } else if (c.codePoint == '\t') {
    out.push_back('\t');
  } else if (isEscapedCodePoint(c.codePoint)) {
    out += visibleEscape(c.codePoint);
  } else {
    out.append(src.substr(pos, c.length));
  }
}

// The position of the first character that is not a blank, or npos.
size_t firstNonBlank(std::string_view line) {
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != ' ' && line[i] != '\t') return i;
  }
  return std::string_view::npos;
}

// True when a `\` must precede the character at `pos` of the peer line `line`.
bool needsGuard(std::string_view line, size_t pos, size_t lineStart) {
  if (pos == lineStart && (line[pos] == '[' || line[pos] == ']')) return true;
  return sentinelAt(line, pos);
}

// Splits off one line of `text` starting at `pos`: returns its end (exclusive, before the line
// break) and sets `next` past the break (CR LF or LF).
size_t lineEnd(std::string_view text, size_t pos, size_t& next) {
  const size_t lf = text.find('\n', pos);
  if (lf == std::string_view::npos) {
    next = text.size();
    return text.size();
  }
  next = lf + 1;
  return (lf > pos && text[lf - 1] == '\r') ? lf - 1 : lf;
}

}  // namespace

Utf8Char decodeUtf8At(std::string_view s, size_t pos) {
  const auto b0 = static_cast<uint8_t>(s[pos]);
  if (b0 < 0x80) return {b0, 1, true};
  size_t need = 0;
  uint32_t cp = 0;
  uint8_t lo = 0x80;
  uint8_t hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1;
    cp = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2;
    cp = b0 & 0x0Fu;
    if (b0 == 0xE0) lo = 0xA0;  // no overlongs
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3;
    cp = b0 & 0x07u;
    if (b0 == 0xF0) lo = 0x90;  // no overlongs
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return {kReplacementChar, 1, false};
  }
  for (size_t i = 1; i <= need; ++i) {
    if (pos + i >= s.size()) return {kReplacementChar, i, false};
    const auto b = static_cast<uint8_t>(s[pos + i]);
    if (b < lo || b > hi) return {kReplacementChar, i, false};
    lo = 0x80;
    hi = 0xBF;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  return {cp, need + 1, true};
}

bool isEscapedCodePoint(uint32_t cp) {
  if (cp >= 0x20 && cp < 0x7F) return false;
  for (const Range& r : kEscapedRanges) {
    if (cp >= r.first && cp <= r.last) return true;
  }
  return false;
}

std::string visibleEscape(uint32_t cp) {
  char buf[16];
  if (cp < 0x80) {
    std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(cp));
  } else {
    std::snprintf(buf, sizeof buf, "\\u{%04X}", static_cast<unsigned>(cp));
  }
  return buf;
}

void appendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string inlineField(std::string_view raw, FieldAlphabet alphabet, size_t maxBytes) {
  bool plain = !raw.empty() && raw.size() <= maxBytes && raw.front() != ' ' && raw.back() != ' ';
  for (size_t pos = 0; plain && pos < raw.size();) {
    const Utf8Char c = decodeUtf8At(raw, pos);
    plain = c.valid && inAlphabet(c.codePoint, alphabet);
    pos += c.length;
  }
  if (plain) return std::string(raw);

  std::string out = "\"";
  size_t pos = 0;
  while (pos < raw.size()) {
    const Utf8Char c = decodeUtf8At(raw, pos);
    if (pos + c.length > maxBytes) break;
    if (sentinelAt(raw, pos)) out.push_back('\\');
    if (!c.valid) {
      appendUtf8(out, kReplacementChar);
    } else if (c.codePoint == '"' || c.codePoint == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c.codePoint));
    } else if (c.codePoint == '\n') {
      out += "\\n";
    } else if (c.codePoint == '\t') {
      out += "\\t";
    } else if (isEscapedCodePoint(c.codePoint)) {
      out += visibleEscape(c.codePoint);
    } else {
      out.append(raw.substr(pos, c.length));
    }
    pos += c.length;
  }
  if (pos < raw.size()) out += kEllipsis;
  out.push_back('"');
  return out;
}

std::string neutralizeLine(std::string_view line) {
  std::string out;
  const size_t start = firstNonBlank(line);
  for (size_t pos = 0; pos < line.size();) {
    const Utf8Char c = decodeUtf8At(line, pos);
    if (needsGuard(line, pos, start)) out.push_back('\\');
    appendBlockChar(out, c, line, pos);
    pos += c.length;
  }
  return out;
}

BodyLines::BodyLines(size_t budget, size_t lineOverhead)
    : budget_(budget), lineOverhead_(lineOverhead) {}

bool BodyLines::charge(size_t bytes) {
  if (bytes > budget_ - used_) return false;
  used_ += bytes;
  return true;
}

bool BodyLines::appendDaemonLine(std::string_view line) {
  if (!charge(line.size() + lineOverhead_)) return false;
  lines_.emplace_back(line);
  return true;
}

bool BodyLines::appendPeerText(std::string_view text) {
  shownBytes_ = 0;
  // Trailing line breaks (LF or CR LF) carry nothing; a lone trailing CR stays (escaped).
  size_t end = text.size();
  while (end > 0 && text[end - 1] == '\n') {
    --end;
    if (end > 0 && text[end - 1] == '\r') --end;
  }
  const std::string_view body = text.substr(0, end);

  size_t pos = 0;
  do {
    size_t next = 0;
    const size_t stop = lineEnd(body, pos, next);
    const std::string_view line = body.substr(pos, stop - pos);
    if (!charge(lineOverhead_)) return false;
    std::string& out = lines_.emplace_back();
    const size_t start = firstNonBlank(line);
    for (size_t i = 0; i < line.size();) {
      const Utf8Char c = decodeUtf8At(line, i);
      std::string piece;
      if (needsGuard(line, i, start)) piece.push_back('\\');
      appendBlockChar(piece, c, line, i);
      if (!charge(piece.size())) {
        shownBytes_ = pos + i;
        return false;
      }
      out += piece;
      i += c.length;
    }
    pos = next;
    shownBytes_ = pos;
  } while (pos < body.size());
  shownBytes_ = text.size();
  return true;
}

}  // namespace shoal::wire
