#include "wire/inbox_receipt.h"

namespace shoal::wire {

std::vector<std::string> inboxReceiptMarkers(std::string_view text) {
  constexpr std::string_view kPrefix = kInboxReceiptPrefix;
  constexpr size_t kHex = kInboxReceiptHexDigits;
  auto lowerHex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  std::vector<std::string> out;
  for (size_t at = text.find(kPrefix); at != std::string_view::npos;
       at = text.find(kPrefix, at + 1)) {
    const size_t begin = at + kPrefix.size();
    size_t n = 0;
    while (begin + n < text.size() && n <= kHex && lowerHex(text[begin + n]))
      ++n;
    if (n == kHex) out.emplace_back(text.substr(at, kPrefix.size() + kHex));
  }
  return out;
}

}  // namespace shoal::wire
