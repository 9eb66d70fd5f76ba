#include "cli/mail_view.h"

#include <cstdio>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "cli/message_text.h"
#include "cli/output.h"
#include "wire/peer_text.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

std::string kindName(wire::DeliveryKind kind) {
  switch (kind) {
    case wire::DeliveryKind::kDm:
      return "dm";
    case wire::DeliveryKind::kChannel:
      return "channel";
    case wire::DeliveryKind::kAnycast:
      return "anycast";
  }
  return "dm";
}

// Cut to `width` characters (UTF-8 aware), with `…`.
std::string cut(const std::string& text, size_t width) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (chars++ == width) return text.substr(0, i) + "…";
  }
  return text;
}

}  // namespace

std::string shortId(const std::string& id) {
  return id.size() > 8 ? id.substr(id.size() - 8) : id;
}

json::object mailJson(const MailView& mail, bool unread) {
  const wire::CotalMessage& m = mail.message;
  json::object o;
  o["id"] = m.id;
  o["seq"] = mail.seq;
  o["storedAt"] = mail.storedMs;
  o["kind"] = kindName(mail.kind);
  o["from"] = json::object{{"id", m.from.id}, {"name", m.from.name}};
  o["to"] = m.routing.target;
  if (m.replyTo) o["replyTo"] = *m.replyTo;
  o["text"] = messageText(m);
  o["unread"] = unread;
  return o;
}

std::string mailLine(const MailView& mail, bool unread, const wire::Principal& me, size_t width) {
  const wire::CotalMessage& m = mail.message;
  const bool mine = m.from.id == me.dotForm();
  std::string who = mine ? "→ " + m.routing.target : senderLabel(m);
  if (mail.kind == wire::DeliveryKind::kChannel) who = "#" + m.routing.target + " " + who;
  return fmt::format("{} {}  {:<34} …{}  {}", unread ? "●" : " ", formatClock(mail.storedMs), who,
                     shortId(m.id), cut(messageText(m), width));
}

void printWhole(const mesh::StoredEntry& entry) {
  const wire::CotalMessage& m = entry.delivery.message;
  std::printf("from:     %s\n", senderLabel(m).c_str());
  std::string to = entry.delivery.kind == wire::DeliveryKind::kChannel
                       ? "#" + m.routing.target
                       : wire::inlineField(m.routing.target, wire::FieldAlphabet::kToken, 200);
  std::printf("to:       %s\n", to.c_str());
  std::printf("stored:   %s (seq %llu)\n", formatDateTime(entry.storedMs).c_str(),
              static_cast<unsigned long long>(entry.seq));
  std::printf("id:       %s\n", m.id.c_str());
  if (m.replyTo) {
    std::printf("reply to: %s\n",
                wire::inlineField(*m.replyTo, wire::FieldAlphabet::kToken, 200).c_str());
  }
  std::printf("\n");
  wire::BodyLines body(SIZE_MAX / 2, 2);
  for (const auto& part : m.parts) {
    if (const auto* t = std::get_if<wire::TextPart>(&part)) {
      (void)body.appendPeerText(t->text);
    } else {
      wire::CotalMessage one;
      one.parts = {part};
      (void)body.appendDaemonLine(messageText(one));  // `[data]`, `[artifact …]`: named only
    }
  }
  for (const auto& line : body.lines())
    std::printf("  %s\n", line.c_str());
}

}  // namespace shoal::cli
