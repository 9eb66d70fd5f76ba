// Routing tokens and text measures shared by every wire codec.
//
// A routing token is one NATS subject token Shoal builds from outside text: a space, a role,
// a channel segment, a nonce. Its alphabet is [A-Za-z0-9_-]+ (Cotal §3). `sanitizeToken` is
// the lossy map onto that alphabet and is never decoded back.
//
// Lengths that Cotal bounds "in characters" (card name, channel description, ...) are counted
// the way the reference implementation counts them: UTF-16 code units (JavaScript
// `String.length`), so a string one side accepts is never refused by the other.
// `sanitizeToken` follows the same rule: one `_` per UTF-16 code unit it replaces.
//
// Thread safety: pure functions.
// Lifetime: results own their bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace shoal::wire {

// [A-Za-z0-9_-]+ : a space, role, channel segment or nonce as it appears in a subject.
bool isRoutingToken(std::string_view s);

// Lossy map onto [A-Za-z0-9_-]+ (Cotal §3, reference `token()`): trim Unicode white space
// (the JavaScript `trim()` set), replace every other character outside the alphabet by `_`
// (two for a character outside the Basic Multilingual Plane, one per invalid UTF-8 byte), and
// map an empty result to `_`. Idempotent.
std::string sanitizeToken(std::string_view raw);

// OK iff the token is a routing token; else `bad-token`, naming the space / role.
Status validateSpace(std::string_view space);
Status validateRole(std::string_view role);
// OK iff `uid` matches [a-z0-9]{26,32} (Cotal §13.1); else `bad-lifecycle-uid`.
Status validateLifecycleUid(std::string_view uid);

// True iff `s` is well-formed UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool isValidUtf8(std::string_view s);

// Length in UTF-16 code units (JavaScript `String.length`). Invalid UTF-8 bytes count one each.
size_t utf16Length(std::string_view utf8);

}  // namespace shoal::wire
