#include "wire/token.h"

#include <cstdint>
#include <vector>

#include "base/ids.h"
#include "wire/reasons.h"
#include "wire/text_internal.h"

namespace shoal::wire {

namespace internal {

DecodedChar decodeUtf8(std::string_view s, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t b0 = byte(pos);
  if (b0 < 0x80) return {b0, 1};
  size_t len = 0;
  uint32_t cp = 0;
  uint32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return {kInvalidChar, 1};
  }
  if (pos + len > s.size()) return {kInvalidChar, 1};
  for (size_t i = 1; i < len; ++i) {
    const uint8_t b = byte(pos + i);
    if ((b & 0xC0) != 0x80) return {kInvalidChar, 1};
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {kInvalidChar, 1};
  return {cp, len};
}

bool isJsWhiteSpace(uint32_t cp) {
  switch (cp) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
    case 0xFEFF:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

std::string_view trimJs(std::string_view s) {
  // Leading.
  size_t begin = 0;
  while (begin < s.size()) {
    const DecodedChar c = decodeUtf8(s, begin);
    if (c.codePoint == kInvalidChar || !isJsWhiteSpace(c.codePoint)) break;
    begin += c.length;
  }
  // Trailing: walk forward remembering where the last non-space character ended.
  size_t end = begin;
  for (size_t i = begin; i < s.size();) {
    const DecodedChar c = decodeUtf8(s, i);
    i += c.length;
    if (c.codePoint == kInvalidChar || !isJsWhiteSpace(c.codePoint)) end = i;
  }
  return s.substr(begin, end - begin);
}

std::string mapToAlphabet(std::string_view raw, bool allowDash, size_t maxLength) {
  const std::string_view s = trimJs(raw);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size() && out.size() < maxLength;) {
    const char ch = s[i];
    if (isWordChar(ch) || (allowDash && ch == '-')) {
      out.push_back(ch);
      ++i;
      continue;
    }
    const DecodedChar c = decodeUtf8(s, i);
    i += c.length;
    out.push_back('_');
    if (c.codePoint != kInvalidChar && c.codePoint >= 0x10000 && out.size() < maxLength) {
      out.push_back('_');  // a surrogate pair is two UTF-16 code units
    }
  }
  if (out.empty()) out = "_";
  return out;
}

std::string quoted(std::string_view s) {
  constexpr size_t kMax = 80;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    const auto b = static_cast<uint8_t>(s[i]);
    if (b < 0x20 || b == 0x7F) {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
    } else if (b == '"' || b == '\\') {
      out += '\\';
      out += static_cast<char>(b);
    } else {
      out += static_cast<char>(b);
    }
  }
  out += '"';
  if (s.size() > kMax) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

}  // namespace internal

bool isRoutingToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!internal::isWordChar(c) && c != '-') return false;
  }
  return true;
}

Status validateSpace(std::string_view space) {
  if (isRoutingToken(space)) return Status::ok();
  return invalidArgument(reason::kBadToken, "space " + internal::quoted(space) +
                                                " must be a sanitized token [A-Za-z0-9_-]+");
}

Status validateRole(std::string_view role) {
  if (isRoutingToken(role)) return Status::ok();
  return invalidArgument(reason::kBadToken, "role " + internal::quoted(role) +
                                                " must be a sanitized token [A-Za-z0-9_-]+");
}

Status validateLifecycleUid(std::string_view uid) {
  if (isLifecycleUid(uid)) return Status::ok();
  return invalidArgument(reason::kBadLifecycleUid,
                         "lifecycle uid " + internal::quoted(uid) + " must match [a-z0-9]{26,32}");
}

std::string sanitizeToken(std::string_view raw) {
  return internal::mapToAlphabet(raw, /*allowDash=*/true, std::string::npos);
}

bool isValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<uint8_t>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const internal::DecodedChar c = internal::decodeUtf8(s, i);
    if (c.codePoint == internal::kInvalidChar) return false;
    i += c.length;
  }
  return true;
}

size_t utf16Length(std::string_view utf8) {
  size_t units = 0;
  for (size_t i = 0; i < utf8.size();) {
    if (static_cast<uint8_t>(utf8[i]) < 0x80) {
      ++units, ++i;
      continue;
    }
    const internal::DecodedChar c = internal::decodeUtf8(utf8, i);
    i += c.length;
    units += (c.codePoint != internal::kInvalidChar && c.codePoint >= 0x10000) ? 2 : 1;
  }
  return units;
}

}  // namespace shoal::wire
