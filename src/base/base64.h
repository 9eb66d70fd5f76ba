// Base64 (RFC 4648 §4, the standard alphabet, with padding): the journal's record bodies and
// the JetStream API's message data.
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

}  // namespace shoal
