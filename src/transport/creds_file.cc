#include "transport/creds_file.h"

#include <boost/json.hpp>

#include "base/owner_only.h"
#include "transport/jwt.h"

namespace shoal::transport {
namespace {

namespace json = boost::json;

constexpr std::string_view kJwtBegin = "-----BEGIN NATS USER JWT-----";
constexpr std::string_view kJwtEnd = "------END NATS USER JWT------";
constexpr std::string_view kInbox = "_INBOX_";

std::string_view trimmed(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\n' || s.front() == '\r' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// "_INBOX_<connId>" from an allow row "_INBOX_<connId>.>" of nats.sub.allow, or empty.
std::string inboxPrefixOf(const json::object& claims) {
  const json::value* nats = claims.if_contains("nats");
  if (nats == nullptr || !nats->is_object()) return {};
  const json::value* sub = nats->as_object().if_contains("sub");
  if (sub == nullptr || !sub->is_object()) return {};
  const json::value* allow = sub->as_object().if_contains("allow");
  if (allow == nullptr || !allow->is_array()) return {};
  for (const json::value& row : allow->as_array()) {
    if (!row.is_string()) continue;
    std::string_view s = row.as_string();
    if (s.size() > kInbox.size() + 2 && s.substr(0, kInbox.size()) == kInbox &&
        s.substr(s.size() - 2) == ".>") {
      std::string_view prefix = s.substr(0, s.size() - 2);
      if (prefix.find_first_of(".*>") == std::string_view::npos) return std::string(prefix);
    }
  }
  return {};
}

}  // namespace

Result<CredsInfo> parseCreds(std::string_view text) {
  const size_t begin = text.find(kJwtBegin);
  const size_t end = begin == std::string_view::npos ? begin : text.find(kJwtEnd, begin);
  if (end == std::string_view::npos) {
    return invalidArgument("bad-creds", "it holds no NATS USER JWT block");
  }
  const std::string_view token =
      trimmed(text.substr(begin + kJwtBegin.size(), end - begin - kJwtBegin.size()));
  auto decoded = decodeJwt(token);
  if (!decoded.isOk()) return invalidArgument("bad-creds", decoded.status().message());
  if (decoded->type != "user") {
    return invalidArgument("bad-creds", "its JWT is a " + decoded->type + " JWT, not a user's");
  }
  CredsInfo info;
  info.userKey = decoded->subject;
  info.name = decoded->name;
  info.issuer = decoded->issuer;
  info.expiresAt = decoded->expiresAt;
  info.issuedAt = decoded->issuedAt;
  info.inboxPrefix = inboxPrefixOf(decoded->claims);
  return info;
}

Result<std::string> credsSeed(std::string_view text) {
  constexpr std::string_view kSeedBegin = "-----BEGIN USER NKEY SEED-----";
  constexpr std::string_view kSeedEnd = "------END USER NKEY SEED------";
  const size_t begin = text.find(kSeedBegin);
  const size_t end = begin == std::string_view::npos ? begin : text.find(kSeedEnd, begin);
  if (end == std::string_view::npos) {
    return invalidArgument("bad-creds", "it holds no USER NKEY SEED block");
  }
  return std::string(
      trimmed(text.substr(begin + kSeedBegin.size(), end - begin - kSeedBegin.size())));
}

Result<CredsInfo> readCredsFile(FileSystem& fs, const std::string& path) {
  SHOAL_RETURN_IF_ERROR(checkOwnerOnlyFile(path));
  SHOAL_ASSIGN_OR_RETURN(std::string text, fs.readFile(path));
  auto info = parseCreds(text);
  if (!info.isOk()) return info.status().withContext("reading the credential " + path);
  info->path = path;
  return info;
}

}  // namespace shoal::transport
