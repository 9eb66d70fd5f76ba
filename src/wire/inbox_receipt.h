// The inbox receipt marker: the correlation key a seat writes at the front of each
// `shoal_inbox` page it hands out, and finds again in a runtime's history to learn which pages
// the runtime received (seed 004 §2.1 "Daemon-local inbox bodies", §3.2).
//
// A marker is `shoal-rcpt-` followed by exactly 32 lowercase hex digits (128 random bits). The
// daemon writes it (daemon/seat); a runtime driver reads it back out of whatever text the
// runtime's history holds (runtime/codex), so the format lives here, below both.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace shoal::wire {

inline constexpr std::string_view kInboxReceiptPrefix = "shoal-rcpt-";
inline constexpr size_t kInboxReceiptHexDigits = 32;

// Every inbox receipt marker in `text`, in order. A run of lowercase hex shorter or longer
// than 32 digits after the prefix is not a marker.
std::vector<std::string> inboxReceiptMarkers(std::string_view text);

}  // namespace shoal::wire
