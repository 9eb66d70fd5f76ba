#include "wire/join_link.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "wire/principal.h"
#include "wire/token.h"

namespace shoal::wire {
namespace {

constexpr std::string_view kScheme = "cotals://";
constexpr std::string_view kPlainScheme = "cotal://";
constexpr size_t kMaxLinkBytes = 8 * 1024;

Status bad(std::string_view what) {
  return invalidArgument("bad-join-link", "the join link's " + std::string(what) +
                                              " is not valid (copy the whole link `shoal invite` "
                                              "printed)");
}

bool allOf(std::string_view s, bool (*ok)(char)) {
  return !s.empty() && std::all_of(s.begin(), s.end(), ok);
}
bool hostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == ':';
}
bool hexChar(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}
bool jwtChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
}
bool seedChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '2' && c <= '7');
}

Status validate(const JoinLink& l) {
  if (!allOf(l.host, hostChar) || l.host.size() > 253) return bad("host");
  if (l.port <= 0 || l.port > 65535) return bad("port");
  if (!validateSpace(l.space).isOk()) return bad("space");
  if (!isRealOwner(l.owner) || l.owner == kLocalOwner) return bad("owner");
  if (!l.machine.empty() && (!isRoutingToken(l.machine) || l.machine.size() > 64))
    return bad("machine");
  if (!isRoutingToken(l.inviteId) || l.inviteId.size() < 22 || l.inviteId.size() > 64)
    return bad("invite id");
  if (l.caFingerprint.size() != 64 || !allOf(l.caFingerprint, hexChar)) return bad("ca");
  if (!allOf(l.jwt, jwtChar) || std::count(l.jwt.begin(), l.jwt.end(), '.') != 2) return bad("jwt");
  if (!allOf(l.seed, seedChar) || l.seed.rfind("SU", 0) != 0) return bad("seed");
  return Status::ok();
}

}  // namespace

Result<std::string> encodeJoinLink(const JoinLink& l) {
  SHOAL_RETURN_IF_ERROR(validate(l));
  const bool v6 = l.host.find(':') != std::string::npos;
  std::string out = std::string(kScheme) + (v6 ? "[" + l.host + "]" : l.host) + ":" +
                    std::to_string(l.port) + "/" + l.space + "?owner=" + l.owner;
  if (!l.machine.empty()) out += "&machine=" + l.machine;
  out += "&invite=" + l.inviteId + "&ca=" + l.caFingerprint + "&jwt=" + l.jwt + "&seed=" + l.seed;
  return out;
}

Result<JoinLink> parseJoinLink(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0)
    text.remove_suffix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0)
    text.remove_prefix(1);
  if (text.size() > kMaxLinkBytes) return bad("length");
  if (text.rfind(kPlainScheme, 0) == 0) {
    return invalidArgument("plaintext-link",
                           "a cotal:// link is plaintext; an invite travels only as cotals:// "
                           "(the broker must require TLS: `shoal up --auth --host ADDR`)");
  }
  if (text.rfind(kScheme, 0) != 0) return bad("scheme (cotals://)");
  text.remove_prefix(kScheme.size());
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return bad("space");
  std::string_view authority = text.substr(0, slash);
  std::string_view rest = text.substr(slash + 1);
  JoinLink l;
  std::string_view portText;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("host");
    l.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return bad("host");
      portText = authority.substr(close + 2);
    }
  } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    l.host = std::string(authority.substr(0, colon));
    portText = authority.substr(colon + 1);
  } else {
    l.host = std::string(authority);
  }
  if (!portText.empty()) {
    if (portText.size() > 5 ||
        !std::all_of(portText.begin(), portText.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return bad("port");
    l.port = std::stoi(std::string(portText));
  }
  const size_t query = rest.find('?');
  if (query == std::string_view::npos) return bad("invite (no query)");
  l.space = std::string(rest.substr(0, query));
  std::string_view params = rest.substr(query + 1);
  while (!params.empty()) {
    const size_t amp = params.find('&');
    std::string_view pair = params.substr(0, amp);
    params = amp == std::string_view::npos ? std::string_view() : params.substr(amp + 1);
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos) return bad("query");
    std::string_view key = pair.substr(0, eq);
    std::string value(pair.substr(eq + 1));
    std::string* field = key == "owner"     ? &l.owner
                         : key == "machine" ? &l.machine
                         : key == "invite"  ? &l.inviteId
                         : key == "ca"      ? &l.caFingerprint
                         : key == "jwt"     ? &l.jwt
                         : key == "seed"    ? &l.seed
                                            : nullptr;
    if (field == nullptr) continue;  // additive: unknown parameters are ignored
    if (!field->empty()) return bad(std::string(key) + " (given twice)");
    *field = std::move(value);
  }
  SHOAL_RETURN_IF_ERROR(validate(l));
  return l;
}

}  // namespace shoal::wire
