// Channel names: the dotted, hierarchical multicast targets of Cotal §3.
//
// A channel is one or more `.`-separated segments, each [A-Za-z0-9_-]+, at most 4096 bytes in
// total (every grant rides the CONNECT line). A *concrete* channel has no wildcard and is the
// only thing that may be published to. A *pattern* (subscriptions, read ACLs) may also use `*`
// (exactly one segment) and `>` (one or more trailing segments) as whole segments, `>` last.
// Validators refuse, never rewrite (reference `assertValidChannel`); `sanitizeChannel` is the
// separate, lossy rewrite for text typed by a person.
//
// Reasons: channel-too-long, channel-empty-segment, channel-wildcard-in-publish,
// channel-wildcard-not-last, channel-bad-char (see reasons.h).
//
// Thread safety: pure functions.
// Lifetime: results own their bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace shoal::wire {

inline constexpr size_t kMaxChannelLength = 4096;

// OK iff `channel` is a valid concrete channel (publish target, registry key, DM-free).
Status validateConcreteChannel(std::string_view channel);
bool isConcreteChannel(std::string_view channel);

// OK iff `pattern` is a valid channel or wildcard pattern.
Status validateChannelPattern(std::string_view pattern);

// Per-segment sanitizeToken (token.h), keeping `*` as a whole segment and `>` as a whole last
// segment; every other wildcard use becomes `_`. Never fails and never shortens: the result
// may still be too long, so validate it afterwards.
std::string sanitizeChannel(std::string_view raw);

// NATS subject matching of a channel against a pattern: `*` matches one segment, `>` one or
// more trailing segments, so `team.>` matches `team.backend` but NOT bare `team`. Inputs are
// expected to be valid; anything else simply does not match.
bool channelMatches(std::string_view pattern, std::string_view channel);

}  // namespace shoal::wire
