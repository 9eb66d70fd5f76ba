// Base64 (RFC 4648 §4, the standard alphabet, with padding): the journal's record bodies and
// the JetStream API's message data. Base64url (§5, `-` and `_`, no padding): the parts of a
// JWT.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace shoal {

std::string base64Encode(std::string_view in);
// Strict: canonical padding, no whitespace, and the unused low bits must be zero; nullopt
// otherwise.
std::optional<std::string> base64Decode(std::string_view in);

std::string base64UrlEncode(std::string_view in);
// Strict like base64Decode, over the URL alphabet without padding; nullopt otherwise.
std::optional<std::string> base64UrlDecode(std::string_view in);

}  // namespace shoal
