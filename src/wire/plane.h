// Plane: the closed set of space planes a peer can probe for liveness (Cotal docs §6.1):
// `manager` and `delivery`. Any other name is refused locally, before anything is sent.
//
// Thread safety: pure functions.
// Lifetime: names are static strings.
#pragma once

#include <optional>
#include <string_view>

namespace shoal::wire {

enum class Plane { kManager, kDelivery };

std::string_view planeName(Plane plane);
// nullopt for anything but exactly "manager" or "delivery".
std::optional<Plane> parsePlane(std::string_view name);

}  // namespace shoal::wire
