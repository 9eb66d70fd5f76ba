// Peer text neutralisation: how bytes written by another peer are made safe to place inside
// the delivery block a seat hands to its runtime (daemon/presentation.h) and into what the CLI
// prints.
//
// Everything a peer controls (message text, display names, message ids, mentions, artifact
// names, …) reaches the runtime only through these functions. The rules:
//   - Invalid UTF-8 never passes: each maximal ill-formed subsequence becomes one U+FFFD.
//   - Characters that are invisible or that move text around are shown as visible escapes:
//     C0 controls (other than the line feed and tab that block text keeps), DEL, C1 controls,
//     the bidi embeddings/overrides/isolates/marks (U+061C, U+200E, U+200F, U+202A–U+202E,
//     U+2066–U+2069), zero-width and invisible format characters (U+00AD, U+034F, U+115F,
//     U+1160, U+17B4, U+17B5, U+180B–U+180F, U+200B–U+200D, U+2028, U+2029, U+2060–U+2065,
//     U+206A–U+206F, U+3164, U+FEFF, U+FFA0, U+FFF9–U+FFFB, U+1D173–U+1D17A), tag characters
//     U+E0000–U+E007F (hidden ASCII), variation selectors U+E0100–U+E01EF, and the
//     non-characters U+FFFE/U+FFFF. ASCII controls print as `\xHH` (upper-case hex), the rest
//     as `\u{HHHH}`.
//   - Block text (message bodies) keeps line feeds (CR LF counts as one line feed, a lone CR
//     is escaped) and tabs; the caller indents every line, so peer text never reaches column
//     0. A line whose first non-blank character is `[` or `]` gets a `\` before it, and every
//     case-insensitive occurrence of a block sentinel (`=== shoal delivery`, `=== end of
//     shoal delivery`) gets a `\` before its first `=`: a peer cannot imitate an item tag,
//     the header or the tail.
//   - Inline fields (one line, e.g. a display name) escape line feed as `\n` and tab as `\t`
//     as well, are cut to a byte cap (adding `…`), and are written in double quotes (with `"`
//     and `\` escaped, and the sentinel `\` added as in block text) unless every character is
//     in the field's plain alphabet.
//   - Deliberate cost: U+200C/U+200D are escaped too, so emoji ZWJ sequences and Persian ZWNJ
//     show their joiners as `\u{200D}` / `\u{200C}`; the text stays readable and nothing hides.
//
// Thread safety: pure functions.
// Lifetime: results own their bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shoal::wire {

inline constexpr uint32_t kReplacementChar = 0xFFFD;

// The two sentinels that open the delivery block's header and its tail (daemon/presentation.h).
inline constexpr std::string_view kHeaderSentinel = "=== shoal delivery";
inline constexpr std::string_view kTailSentinel = "=== end of shoal delivery";

struct Utf8Char {
  uint32_t codePoint = 0;  // kReplacementChar when !valid
  size_t length = 1;       // bytes consumed, ≥ 1 (a maximal ill-formed subsequence if !valid)
  bool valid = true;
};

// Decodes one character of `s` at `pos` (Unicode Table 3-7 well-formedness: no overlongs, no
// surrogates, nothing above U+10FFFF). Precondition: pos < s.size().
Utf8Char decodeUtf8At(std::string_view s, size_t pos);

// True for a code point shown as a visible escape everywhere (the list above; includes every
// C0 control, so line feed and tab are true here and block text special-cases them).
bool isEscapedCodePoint(uint32_t cp);

// The visible escape of `cp`: `\xHH` below U+0080, `\u{HHHH}` (4–6 hex digits) above.
std::string visibleEscape(uint32_t cp);

// UTF-8 encoding of a valid scalar value.
void appendUtf8(std::string& out, uint32_t cp);

// --- Inline fields ------------------------------------------------------------------------

enum class FieldAlphabet {
  kName,       // display names, mentions, artifact names: ASCII letters and digits, space (not at
               // either end), `_ - . @ '`, and any non-ASCII character that is not escaped
  kToken,      // ids, channels, roles, part kinds: ASCII letters and digits and `_ - .`
  kMediaType,  // kToken plus `/ +`
};

// One line of display text for a peer-controlled field: plain when it is non-empty, at most
// `maxBytes` long and entirely in `alphabet`; otherwise double-quoted, escaped, and cut at
// `maxBytes` source bytes (on a character boundary) with `…` before the closing quote.
std::string inlineField(std::string_view raw, FieldAlphabet alphabet, size_t maxBytes);

// --- Block text ---------------------------------------------------------------------------

// The lines of a message body, rendered under a byte budget. Every line is charged its
// rendered bytes plus `lineOverhead` (the indentation and line feed the caller adds), so the
// caller's total for the body is at most `budget`.
class BodyLines {
 public:
  BodyLines(size_t budget, size_t lineOverhead);

  // Appends peer text as one or more lines (trailing line feeds dropped). Returns false when
  // the budget ran out inside it; `shownBytes()` then says how many source bytes were shown.
  bool appendPeerText(std::string_view text);
  // Appends one daemon-authored line (not neutralised; must hold no line feed). Returns false,
  // appending nothing, when the whole line does not fit.
  bool appendDaemonLine(std::string_view line);

  // Source bytes of the last appendPeerText that made it into the lines.
  size_t shownBytes() const { return shownBytes_; }
  const std::vector<std::string>& lines() const { return lines_; }
  size_t used() const { return used_; }

 private:
  bool charge(size_t bytes);

  size_t budget_;
  size_t lineOverhead_;
  size_t used_ = 0;
  size_t shownBytes_ = 0;
  std::vector<std::string> lines_;
};

// One peer line rendered as block text with no budget: escapes, line-start bracket escape and
// sentinel escapes applied. `line` must hold no line feed (one is escaped like a control).
std::string neutralizeLine(std::string_view line);

}  // namespace shoal::wire
