#include "base/base32.h"

#include <cstdint>

namespace shoal {
namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

}  // namespace

std::string base32Encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() * 8 + 4) / 5);
  uint32_t buffer = 0;
  int bits = 0;
  for (unsigned char byte : in) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out.push_back(kAlphabet[(buffer >> (bits - 5)) & 31]);
      bits -= 5;
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(buffer << (5 - bits)) & 31]);
  return out;
}

std::optional<std::string> base32Decode(std::string_view in) {
  std::string out;
  out.reserve(in.size() * 5 / 8);
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : in) {
    const size_t v = kAlphabet.find(c);
    if (v == std::string_view::npos) return std::nullopt;
    buffer = (buffer << 5) | static_cast<uint32_t>(v);
    bits += 5;
    if (bits >= 8) {
      out.push_back(static_cast<char>((buffer >> (bits - 8)) & 0xff));
      bits -= 8;
    }
  }
  return out;
}

}  // namespace shoal
