// Base32 (RFC 4648 §6, the standard upper-case alphabet, no padding): the text of NATS nkeys
// and of a NATS JWT's `jti`.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace shoal {

std::string base32Encode(std::string_view in);
// nullopt on a character outside the alphabet (padding included). Trailing bits that do not
// make a whole byte are dropped.
std::optional<std::string> base32Decode(std::string_view in);

}  // namespace shoal
