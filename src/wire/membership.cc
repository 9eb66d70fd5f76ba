#include "wire/membership.h"

#include <cmath>

#include "wire/channel.h"
#include "wire/json_support.h"
#include "wire/names.h"

namespace shoal::wire {
namespace {

using namespace internal;

constexpr std::string_view kBadMembership = "bad-membership";
constexpr std::string_view kBadAcl = "bad-acl";

// An integer in [0, 2^53-1]. Boost.JSON holds every integer up to INT64_MAX as int64, so both
// integer kinds need the bound.
Result<uint64_t> counter(const json::object& o, std::string_view key, std::string_view reason) {
  const json::value* v = field(o, key);
  if (v != nullptr && v->is_uint64() && v->get_uint64() <= kMaxSafeInteger) return v->get_uint64();
  if (v != nullptr && v->is_int64() && v->get_int64() >= 0 &&
      static_cast<uint64_t>(v->get_int64()) <= kMaxSafeInteger) {
    return static_cast<uint64_t>(v->get_int64());
  }
  return invalidArgument(reason, std::string(key) + " must be an integer in [0, 2^53-1]");
}

Result<std::string> text(const json::object& o, std::string_view key, std::string_view reason) {
  const json::value* v = field(o, key);
  if (v == nullptr || !v->is_string()) {
    return invalidArgument(reason, std::string(key) + " must be a string");
  }
  return std::string(v->get_string());
}

// updatedAt is reporting only: an integer is kept exactly, a finite number within ±2^53 is
// truncated, anything else (absent, not a number, out of the int64 range) reads as 0. Never a
// float-to-int conversion out of range (undefined behaviour).
int64_t epochMs(const json::object& o) {
  const json::value* v = field(o, "updatedAt");
  if (v == nullptr) return 0;
  if (v->is_int64()) return v->get_int64();
  if (v->is_double()) {
    constexpr double kSafe = static_cast<double>(kMaxSafeInteger);
    const double d = v->get_double();
    if (std::isfinite(d) && d >= -kSafe && d <= kSafe) return static_cast<int64_t>(d);
  }
  return 0;
}

}  // namespace

bool MembershipRecord::covers(uint64_t seq) const {
  return seq > joinCursor && (!leaveCursor || seq <= *leaveCursor);
}

Result<std::string> encodeMembership(const MembershipRecord& r) {
  SHOAL_RETURN_IF_ERROR(validateConcreteChannel(r.channel));
  SHOAL_RETURN_IF_ERROR(validatePrincipal(r.member));
  // Never write a row decodeMembership would refuse.
  if (r.joinCursor > kMaxSafeInteger || r.generation > kMaxSafeInteger ||
      (r.leaveCursor && *r.leaveCursor > kMaxSafeInteger)) {
    return invalidArgument(kBadMembership,
                           "cursors and generation must be integers in [0, 2^53-1]");
  }
  if (r.leaveCursor && *r.leaveCursor < r.joinCursor) {
    return invalidArgument(kBadMembership, "leaveCursor is below joinCursor");
  }
  json::object o;
  o["channel"] = r.channel;
  o["owner"] = r.member.dotForm();
  o["lifecycleUid"] = r.lifecycleUid;
  o["state"] = r.active() ? "durable-active" : "live-confirmed";
  o["joinCursor"] = r.joinCursor;
  if (r.leaveCursor) o["leaveCursor"] = *r.leaveCursor;
  o["activated"] = r.activated;
  o["generation"] = r.generation;
  o["writerIdentity"] = r.writerIdentity;
  o["updatedAt"] = r.updatedAt;
  return toJson(o);
}

Result<MembershipRecord> decodeMembership(std::string_view json) {
  constexpr std::string_view kBad = kBadMembership;
  SHOAL_ASSIGN_OR_RETURN(json::value v, parseJsonObject(json));
  const json::object& o = v.get_object();
  MembershipRecord r;
  SHOAL_ASSIGN_OR_RETURN(r.channel, text(o, "channel", kBad));
  if (!isConcreteChannel(r.channel)) return invalidArgument(kBad, "channel is not concrete");
  SHOAL_ASSIGN_OR_RETURN(std::string owner, text(o, "owner", kBad));
  auto member = parsePrincipal(owner);
  if (!member.isOk()) return invalidArgument(kBad, "owner is not a principal");
  r.member = *member;
  SHOAL_ASSIGN_OR_RETURN(r.lifecycleUid, text(o, "lifecycleUid", kBad));
  SHOAL_ASSIGN_OR_RETURN(r.joinCursor, counter(o, "joinCursor", kBad));
  SHOAL_ASSIGN_OR_RETURN(r.generation, counter(o, "generation", kBad));
  if (field(o, "leaveCursor") != nullptr) {
    SHOAL_ASSIGN_OR_RETURN(uint64_t leave, counter(o, "leaveCursor", kBad));
    if (leave < r.joinCursor) return invalidArgument(kBad, "leaveCursor is below joinCursor");
    r.leaveCursor = leave;
  }
  if (const json::value* a = field(o, "activated"); a != nullptr && a->is_bool()) {
    r.activated = a->get_bool();
  }
  if (const json::value* w = field(o, "writerIdentity"); w != nullptr && w->is_string()) {
    r.writerIdentity = std::string(w->get_string());
  }
  r.updatedAt = epochMs(o);
  return r;
}

bool AclRecord::covers(std::string_view channel) const {
  for (const auto& pattern : allowSubscribe) {
    if (channelMatches(pattern, channel)) return true;
  }
  return false;
}

Result<std::string> encodeAcl(const AclRecord& r) {
  json::object o;
  json::array allow;
  for (const auto& p : r.allowSubscribe) {
    SHOAL_RETURN_IF_ERROR(validateChannelPattern(p));
    allow.emplace_back(p);
  }
  if (r.revision > kMaxSafeInteger) {
    return invalidArgument(kBadAcl, "revision must be an integer in [0, 2^53-1]");
  }
  o["allowSubscribe"] = std::move(allow);
  o["revision"] = r.revision;
  o["updatedAt"] = r.updatedAt;
  return toJson(o);
}

Result<AclRecord> decodeAcl(std::string_view json) {
  constexpr std::string_view kBad = kBadAcl;
  SHOAL_ASSIGN_OR_RETURN(json::value v, parseJsonObject(json));
  const json::object& o = v.get_object();
  AclRecord r;
  const json::value* allow = field(o, "allowSubscribe");
  if (allow == nullptr || !allow->is_array()) {
    return invalidArgument(kBad, "allowSubscribe must be an array");
  }
  for (const auto& p : allow->get_array()) {
    if (!p.is_string()) return invalidArgument(kBad, "allowSubscribe holds strings");
    std::string pattern(p.get_string());
    if (!validateChannelPattern(pattern).isOk()) {
      return invalidArgument(kBad, "allowSubscribe holds an invalid pattern: " + pattern);
    }
    r.allowSubscribe.push_back(std::move(pattern));
  }
  if (field(o, "revision") != nullptr) {
    SHOAL_ASSIGN_OR_RETURN(r.revision, counter(o, "revision", kBad));
  }
  r.updatedAt = epochMs(o);
  return r;
}

}  // namespace shoal::wire
