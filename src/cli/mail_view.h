// How the CLI shows a stored message addressed to (or sent by) the person at the CLI: one
// line in a listing, the whole message for `shoal read`, and the JSON object of both. Peer
// text is neutralised (message_text.h, wire/peer_text.h): a sender cannot rewrite the
// terminal or pass for another line.
//
// Thread safety: pure functions (printWhole writes to stdout).
#pragma once

#include <string>

#include <boost/json/object.hpp>

#include "mesh/stream_read.h"
#include "wire/principal.h"

namespace shoal::cli {

// One message as a listing shows it: from the stream (a stored entry) or as it arrives.
struct MailView {
  const wire::CotalMessage& message;
  wire::DeliveryKind kind;
  uint64_t seq;
  int64_t storedMs;

  static MailView of(const mesh::StoredEntry& e) {
    return MailView{e.delivery.message, e.delivery.kind, e.seq, e.storedMs};
  }
};

// {"id","seq","storedAt","kind","from":{"id","name"},"to","replyTo"?,"text","unread"} — `to`
// is the recipient id (dm), the channel (post) or the role (anycast).
boost::json::object mailJson(const MailView& mail, bool unread);

// `● 22:18:53.838  Demo Ada (local.demo_ada)  …c3be403d  Hi! You said "hello"` (`●` when
// unread, `→ recipient` for what `me` sent), the text cut to `width` characters.
std::string mailLine(const MailView& mail, bool unread, const wire::Principal& me,
                     size_t width = 100);

// The short id a listing shows and `read` / `reply` accept: the id's last 8 characters.
std::string shortId(const std::string& id);

// The whole message: a header (from, to, when, id, replyTo) and every body line indented.
void printWhole(const mesh::StoredEntry& entry);

}  // namespace shoal::cli
