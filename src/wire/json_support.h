// Private to wire/: the one header that includes Boost.JSON. Included only by wire/*.cc,
// never by a public wire header or another module, so consumers compile without Boost.JSON.
//
// What it adds over plain boost::json::parse:
// - exact numbers: Boost 1.81 parses about one double in seven one ULP off, which would break
//   decode(encode(m)) == m for any non-integral number; `parseJson` re-reads every
//   floating-point literal with std::from_chars (correctly rounded) and keeps integers exact;
// - a depth limit (kMaxJsonDepth) and strict RFC 8259 (no comments, no trailing commas, UTF-8
//   validated);
// - helpers shared by the codecs: field lookup, number conversion, the finite-number walk,
//   compact serialization.
//
// Thread safety: pure functions.
// Lifetime: a parsed value lives in the memory resource passed in (default: the heap).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/value.hpp>

#include "base/result.h"
#include "base/status.h"
#include "wire/agent_card.h"

namespace shoal::wire::internal {

namespace json = boost::json;

inline constexpr size_t kMaxJsonDepth = 64;
// 2^53 - 1: the largest integer every peer (JavaScript included) holds exactly.
inline constexpr uint64_t kMaxSafeInteger = (uint64_t{1} << 53) - 1;

// Parses one JSON document; refuses invalid JSON, invalid UTF-8, nesting deeper than
// kMaxJsonDepth and trailing data with `malformed-json` (message says where).
Result<json::value> parseJson(std::string_view text, json::storage_ptr sp = {});

// As parseJson, and the document must be an object (`malformed-json` otherwise).
Result<json::value> parseJsonObject(std::string_view text, json::storage_ptr sp = {});

// Compact UTF-8 serialization. (The object overload avoids a deep copy into a json::value.)
std::string toJson(const json::value& v);
std::string toJson(const json::object& o);

// The member `key` of `o`, or nullptr.
inline const json::value* field(const json::object& o, std::string_view key) {
  return o.if_contains(key);
}

// A JSON number as a double (int64, uint64 or double), or nullopt for a non-number.
std::optional<double> asNumber(const json::value& v);

// A wire timestamp / epoch-ms number: integral values within ±2^53 as JSON integers (the
// form every peer writes), anything else as a double.
json::value numberValue(double d);

// OK iff every number inside `v` is finite; else `reason` with the path of the first bad
// number, e.g. "parts[0].data.x[3]: number is not finite".
Status checkFinite(const json::value& v, std::string_view path, std::string_view reason);

// Card codec shared by agent_card.cc and presence.cc (`path` prefixes error messages).
Result<AgentCard> cardFromJson(const json::value& v, std::string_view path);
Status cardToJson(const AgentCard& card, json::object& out);

}  // namespace shoal::wire::internal
