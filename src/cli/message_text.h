// How the CLI shows one Cotal message on a line: `name (id): text`, non-text parts named in
// brackets, control characters escaped so a peer's text cannot rewrite the terminal.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "wire/message.h"

namespace shoal::cli {

// The message's parts as one line of text.
std::string messageText(const wire::CotalMessage& message);
// One line of peer text made safe for a terminal: a newline shows as "\n", every character the
// seat's presentation escapes (controls, bidi, zero-width, tags) as its visible escape.
std::string printablePeerText(const std::string& text);
// `name (id)`.
std::string senderLabel(const wire::CotalMessage& message);
// One traffic line: `dm alice (id) → local.bob: text`, `#team.backend alice (id): text @bob`,
// `ask reviewer alice (id): text`; `(history) ` in front of a replayed copy.
std::string trafficLine(wire::DeliveryKind kind, const wire::CotalMessage& message,
                        bool historical);

}  // namespace shoal::cli
