// Private to wire/: UTF-8 decoding and character classes behind token.h and principal.h.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace shoal::wire::internal {

inline constexpr uint32_t kInvalidChar = 0xFFFFFFFF;

struct DecodedChar {
  uint32_t codePoint;  // kInvalidChar for a byte that does not start a well-formed sequence
  size_t length;       // bytes consumed, ≥ 1
};

// Preconditions: pos < s.size().
DecodedChar decodeUtf8(std::string_view s, size_t pos);

// The white space JavaScript's String.prototype.trim removes.
bool isJsWhiteSpace(uint32_t cp);
std::string_view trimJs(std::string_view s);

inline bool isWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// trimJs, then map every character outside [A-Za-z0-9_] (plus `-` when allowDash) to `_`
// per UTF-16 code unit, stop at maxLength bytes, and turn an empty result into `_`.
std::string mapToAlphabet(std::string_view raw, bool allowDash, size_t maxLength);

// `s` in double quotes for an error message: cut after 80 bytes (with the full size noted) and
// with control bytes, `"` and `\` escaped, so a message is always one printable line.
std::string quoted(std::string_view s);

}  // namespace shoal::wire::internal
