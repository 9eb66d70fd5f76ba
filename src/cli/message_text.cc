#include "cli/message_text.h"

#include <fmt/format.h>

#include "wire/peer_text.h"

namespace shoal::cli {

// Invalid UTF-8 shows as U+FFFD; the escapes are wire/peer_text.h.
std::string printablePeerText(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    wire::Utf8Char c = wire::decodeUtf8At(text, i);
    if (!c.valid) {
      wire::appendUtf8(out, wire::kReplacementChar);
    } else if (c.codePoint == '\n') {
      out += "\\n";
    } else if (wire::isEscapedCodePoint(c.codePoint)) {
      out += wire::visibleEscape(c.codePoint);
    } else {
      out.append(text, i, c.length);
    }
    i += c.length;
  }
  return out;
}

std::string messageText(const wire::CotalMessage& message) {
  std::string out;
  for (const auto& part : message.parts) {
    if (!out.empty()) out += " ";
    if (const auto* t = std::get_if<wire::TextPart>(&part)) {
      out += printablePeerText(t->text);
    } else if (std::holds_alternative<wire::DataPart>(part)) {
      out += "[data]";
    } else if (const auto* a = std::get_if<wire::ArtifactPart>(&part)) {
      out += fmt::format("[artifact {} {} bytes]", printablePeerText(a->name), a->size);
    } else if (const auto* e = std::get_if<wire::ExtensionPart>(&part)) {
      out += "[" + printablePeerText(e->kind) + "]";
    }
  }
  return out;
}

std::string senderLabel(const wire::CotalMessage& message) {
  return fmt::format("{} ({})", printablePeerText(message.from.name), message.from.id);
}

std::string trafficLine(wire::DeliveryKind kind, const wire::CotalMessage& message,
                        bool historical) {
  std::string line = historical ? "(history) " : "";
  switch (kind) {
    case wire::DeliveryKind::kDm:
      line += fmt::format("dm {} → {}: ", senderLabel(message), message.routing.target);
      break;
    case wire::DeliveryKind::kChannel:
      line += fmt::format("#{} {}: ", message.routing.target, senderLabel(message));
      break;
    case wire::DeliveryKind::kAnycast:
      line += fmt::format("ask {} {}: ", message.routing.target, senderLabel(message));
      break;
  }
  line += messageText(message);
  for (const auto& m : message.mentions)
    line += " @" + m;
  return line;
}

}  // namespace shoal::cli
