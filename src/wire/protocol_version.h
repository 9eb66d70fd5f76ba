// The wire contract Shoal speaks: the Cotal protocol's NATS + JetStream binding, at the
// version its peers advertise today (Cotal SPEC §11). `shoal --version` names it.
//
// Thread safety: constants.
#pragma once

#include <string_view>

namespace shoal::wire {

inline constexpr std::string_view kProtocolName = "cotal";
inline constexpr std::string_view kProtocolVersion = "0.2";
inline constexpr std::string_view kProtocolBinding = "nats-jetstream";

}  // namespace shoal::wire
