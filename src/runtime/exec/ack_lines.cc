#include "runtime/exec/ack_lines.h"

namespace shoal::runtime {

std::optional<std::string> parseAckLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  constexpr std::string_view kVerb = "ack ";
  if (line.substr(0, kVerb.size()) != kVerb) return std::nullopt;
  const std::string_view id = line.substr(kVerb.size());
  if (id.empty() || id.size() > kMaxAckLineBytes) return std::nullopt;
  for (char c : id) {
    if (c == ' ' || c == '\t' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return std::nullopt;
  }
  return std::string(id);
}

AckLines::Parsed AckLines::feed(std::string_view bytes) {
  Parsed out;
  while (!bytes.empty()) {
    const size_t nl = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, nl);
    if (!overlong_) {
      if (pending_.size() + piece.size() > kMaxAckLineBytes) {
        overlong_ = true;
        pending_.clear();
      } else {
        pending_.append(piece);
      }
    }
    if (nl == std::string_view::npos) break;
    bytes.remove_prefix(nl + 1);
    line(out);
  }
  return out;
}

AckLines::Parsed AckLines::finish() {
  Parsed out;
  if (!pending_.empty() || overlong_) line(out);
  return out;
}

void AckLines::line(Parsed& out) {
  if (overlong_) {
    ++out.ignored;
  } else if (auto id = parseAckLine(pending_)) {
    out.ids.push_back(std::move(*id));
  } else if (!pending_.empty()) {
    ++out.ignored;
  }
  pending_.clear();
  overlong_ = false;
}

}  // namespace shoal::runtime
