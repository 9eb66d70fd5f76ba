#include "wire/principal.h"

#include <string>

#include "wire/reasons.h"
#include "wire/text_internal.h"

namespace shoal::wire {

namespace {

using internal::quoted;

bool isBase32Lower(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '2' && c <= '7');
}
bool isBase32Upper(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '2' && c <= '7');
}

constexpr size_t kDerivedOwnerLength = 28;  // "u_" + 26
constexpr size_t kNkeyLength = 56;

}  // namespace

bool isOwnerToken(std::string_view s) {
  if (s == kLocalOwner) return true;
  if (s.size() != kDerivedOwnerLength || s[0] != 'u' || s[1] != '_') return false;
  for (size_t i = 2; i < s.size(); ++i) {
    if (!isBase32Lower(s[i])) return false;
  }
  return true;
}

bool isActorToken(std::string_view s) {
  if (s.empty() || s.size() > kMaxActorLength) return false;
  for (char c : s) {
    if (!internal::isWordChar(c)) return false;
  }
  return true;
}

bool isNkeyShaped(std::string_view s) {
  if (s.size() != kNkeyLength || s[0] != 'U') return false;
  for (char c : s) {
    if (!isBase32Upper(c)) return false;
  }
  return true;
}

bool isRealOwner(std::string_view s) {
  return isOwnerToken(s);
}

Status checkRealOwner(std::string_view owner) {
  if (isOwnerToken(owner)) return Status::ok();
  if (isNkeyShaped(owner)) {
    return invalidArgument(reason::kNkeyOwner,
                           "owner " + quoted(owner) +
                               " is a NATS nkey (a connection credential), not a principal "
                               "owner token; it must never be surfaced");
  }
  return invalidArgument(reason::kNotAPrincipalOwner,
                         "owner " + quoted(owner) +
                             " is not a principal owner token (u_ + 26 base32-lower, or "
                             "'local' in open mode)");
}

Status validatePrincipal(const Principal& p) {
  SHOAL_RETURN_IF_ERROR(checkRealOwner(p.owner));
  if (!isActorToken(p.actor)) {
    return invalidArgument(
        reason::kBadActorToken,
        "actor " + quoted(p.actor) + " must be 1-64 characters of [A-Za-z0-9_] ('-' is reserved)");
  }
  return Status::ok();
}

Result<Principal> parsePrincipal(std::string_view dotForm) {
  const size_t dot = dotForm.find('.');
  if (dot == std::string_view::npos || dotForm.find('.', dot + 1) != std::string_view::npos) {
    return invalidArgument(
        reason::kBadPrincipal,
        "principal " + quoted(dotForm) + " must be exactly '<owner>.<actor>' (one dot)");
  }
  Principal p{std::string(dotForm.substr(0, dot)), std::string(dotForm.substr(dot + 1))};
  SHOAL_RETURN_IF_ERROR(validatePrincipal(p));
  return p;
}

std::string actorFromName(std::string_view name) {
  return internal::mapToAlphabet(name, /*allowDash=*/false, kMaxActorLength);
}

}  // namespace shoal::wire
