// Helpers the harnesses share to carve one fuzz input into what a parser is fed: a prefix cut
// on a UTF-8 boundary, and a deterministic generator of piece sizes (how a stream arrives in
// reads), so a crash always replays from its input alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace shoal::fuzz {

// At most `n` bytes of `s`, cut before a UTF-8 continuation byte (valid UTF-8 stays valid).
inline std::string_view utf8Prefix(std::string_view s, size_t n) {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80)
    --n;
  return s.substr(0, n);
}

// Piece sizes in [1, max], from a seed (xorshift32; never 0).
class PieceSizes {
 public:
  explicit PieceSizes(uint32_t seed) : state_(seed * 2654435761U + 1) {
    if (state_ == 0) state_ = 1;
  }
  size_t next(size_t max) {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 17;
    state_ ^= state_ << 5;
    return max <= 1 ? 1 : 1 + state_ % max;
  }

 private:
  uint32_t state_;
};

}  // namespace shoal::fuzz
