// Boost.JSON 1.81 quirks the harnesses that re-encode parsed JSON must allow for:
// - it reads `1e999` as infinity and `0e400` as NaN, and writes them back as `Infinity` /
//   `NaN`, which it cannot read again: allFinite(v) says whether `v` holds none (a round trip
//   is checked only then; where Shoal echoes such a value to a peer it must refuse it instead,
//   as json_rpc.h does for ids);
// - it does not round a decimal to the nearest double (`6e100` reads as 6.0000000000000005e100,
//   which writes back as `6.0000000000000005E100` and reads as 6.0000000000000013e100), so a
//   double drifts by an ulp or two per round trip: sameJson(a, b) is equality with doubles
//   compared to 1e-12 relative.
#pragma once

#include <algorithm>
#include <cmath>

#include <boost/json/value.hpp>

namespace shoal::fuzz {

inline bool allFinite(const boost::json::value& v) {
  if (v.is_double()) return std::isfinite(v.as_double());
  if (v.is_array()) {
    for (const boost::json::value& e : v.as_array()) {
      if (!allFinite(e)) return false;
    }
  }
  if (v.is_object()) {
    for (const auto& member : v.as_object()) {
      if (!allFinite(member.value())) return false;
    }
  }
  return true;
}

inline bool sameJson(const boost::json::value& a, const boost::json::value& b) {
  if (a.is_double() && b.is_double()) {
    const double x = a.as_double(), y = b.as_double();
    return x == y || std::fabs(x - y) <= 1e-12 * std::max(std::fabs(x), std::fabs(y));
  }
  if (a.is_array() && b.is_array()) {
    const boost::json::array &p = a.as_array(), &q = b.as_array();
    if (p.size() != q.size()) return false;
    for (size_t i = 0; i < p.size(); ++i) {
      if (!sameJson(p[i], q[i])) return false;
    }
    return true;
  }
  if (a.is_object() && b.is_object()) {
    const boost::json::object &p = a.as_object(), &q = b.as_object();
    if (p.size() != q.size()) return false;
    for (const auto& member : p) {
      const boost::json::value* other = q.if_contains(member.key());
      if (other == nullptr || !sameJson(member.value(), *other)) return false;
    }
    return true;
  }
  return a == b;
}

}  // namespace shoal::fuzz
