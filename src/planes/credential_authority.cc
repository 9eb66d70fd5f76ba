#include "planes/credential_authority.h"

#include <boost/json.hpp>

#include "base/owner_only.h"
#include "transport/jwt.h"
#include "transport/nkey.h"

namespace shoal::planes {
namespace {

namespace json = boost::json;
using transport::NKeyRole;

constexpr int kMaxControlLine = 32 * 1024;

// The seed in `dir/name`, generated (and written 0600) when the file is absent.
Result<std::string> seedFile(FileSystem& fs, const std::string& dir, const std::string& name,
                             NKeyRole role) {
  const std::string path = dir + "/" + name;
  if (!fs.exists(path)) {
    SHOAL_ASSIGN_OR_RETURN(transport::NKeyPair fresh, transport::generateNKey(role));
    SHOAL_RETURN_IF_ERROR(writeFileAtomically(fs, path, fresh.seed + "\n"));
  }
  SHOAL_RETURN_IF_ERROR(checkOwnerOnlyFile(path));
  SHOAL_ASSIGN_OR_RETURN(std::string text, fs.readFile(path));
  SHOAL_ASSIGN_OR_RETURN(transport::NKeyPair pair, transport::nkeyFromSeed(text));
  if (pair.role != role) {
    return invalidArgument("bad-nkey-seed", path + " holds a key of the wrong kind");
  }
  return pair.seed;
}

std::string publicOf(const std::string& seed) {
  return transport::nkeyFromSeed(seed)->publicKey;
}

Result<std::map<std::string, int64_t>> readRevocations(FileSystem& fs, const std::string& path) {
  std::map<std::string, int64_t> out;
  if (!fs.exists(path)) return out;
  SHOAL_ASSIGN_OR_RETURN(std::string text, fs.readFile(path));
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return dataLoss("bad-revocations", path + " is not a JSON object");
  for (const auto& [key, at] : v.as_object()) {
    if (!at.is_int64()) return dataLoss("bad-revocations", path + ": a time is not an integer");
    out[std::string(key)] = at.as_int64();
  }
  return out;
}

json::object toJson(const IssuedCredential& c) {
  return json::object{{"userKey", c.userKey},
                      {"name", c.name},
                      {"profile", c.profile},
                      {"issuedAt", c.issuedAt},
                      {"expiresAt", c.expiresAt}};
}

}  // namespace

Result<CredentialAuthority> CredentialAuthority::openOrCreate(FileSystem& fs,
                                                              const std::string& dir,
                                                              std::string_view space,
                                                              const Clock& clock) {
  SHOAL_RETURN_IF_ERROR(ensureOwnerOnlyDir(dir));
  CredentialAuthority a;
  a.fs_ = &fs;
  a.clock_ = &clock;
  a.dir_ = dir;
  a.space_ = std::string(space);
  SHOAL_ASSIGN_OR_RETURN(a.operatorSeed_, seedFile(fs, dir, "operator.seed", NKeyRole::kOperator));
  SHOAL_ASSIGN_OR_RETURN(a.systemSeed_, seedFile(fs, dir, "system.seed", NKeyRole::kAccount));
  SHOAL_ASSIGN_OR_RETURN(a.accountSeed_, seedFile(fs, dir, "account.seed", NKeyRole::kAccount));
  SHOAL_ASSIGN_OR_RETURN(a.signingSeed_, seedFile(fs, dir, "signing.seed", NKeyRole::kAccount));
  a.operatorKey_ = publicOf(a.operatorSeed_);
  a.systemKey_ = publicOf(a.systemSeed_);
  a.accountKey_ = publicOf(a.accountSeed_);
  a.signingKey_ = publicOf(a.signingSeed_);
  SHOAL_ASSIGN_OR_RETURN(a.revocations_, readRevocations(fs, dir + "/revocations.json"));
  SHOAL_RETURN_IF_ERROR(a.signJwts());
  return a;
}

Status CredentialAuthority::signJwts() {
  const int64_t now = clock_->wallMs() / 1000;
  SHOAL_ASSIGN_OR_RETURN(
      operatorJwt_,
      transport::encodeOperatorJwt({"shoal", operatorKey_, systemKey_, {}}, operatorSeed_, now));
  SHOAL_ASSIGN_OR_RETURN(systemJwt_, transport::encodeAccountJwt({"SYS", systemKey_, false, {}, {}},
                                                                 operatorSeed_, now));
  SHOAL_ASSIGN_OR_RETURN(accountJwt_, transport::encodeAccountJwt(
                                          {space_, accountKey_, true, {signingKey_}, revocations_},
                                          operatorSeed_, now));
  return Status::ok();
}

std::string CredentialAuthority::serverConfig(const std::string& resolverDir) const {
  std::string c;
  c += "operator: \"" + operatorJwt_ + "\"\n";
  c += "system_account: " + systemKey_ + "\n";
  // An agent's JWT carries its whole grant table (some 60 subjects): the client's CONNECT line
  // is then far longer than the 4 KiB a server allows by default.
  c += "max_control_line: " + std::to_string(kMaxControlLine) + "\n";
  c += "resolver: { type: full, dir: \"" + resolverDir + "\", allow_delete: false }\n";
  c += "resolver_preload: {\n";
  c += "  " + systemKey_ + ": \"" + systemJwt_ + "\"\n";
  c += "  " + accountKey_ + ": \"" + accountJwt_ + "\"\n";
  c += "}\n";
  return c;
}

Result<MintedUser> CredentialAuthority::mint(const std::string& name,
                                             const std::vector<GrantRow>& rows,
                                             std::chrono::seconds ttl) const {
  SHOAL_ASSIGN_OR_RETURN(transport::NKeyPair user, transport::generateNKey(NKeyRole::kUser));
  SHOAL_ASSIGN_OR_RETURN(MintedJwt jwt, mintFor(user.publicKey, name, rows, ttl));
  MintedUser out;
  out.userKey = user.publicKey;
  out.expiresAt = jwt.expiresAt;
  out.creds = transport::formatCreds(jwt.jwt, user.seed);
  return out;
}

Result<MintedJwt> CredentialAuthority::mintFor(const std::string& userKey, const std::string& name,
                                               const std::vector<GrantRow>& rows,
                                               std::chrono::seconds ttl) const {
  if (!transport::isNKeyPublic(userKey, NKeyRole::kUser)) {
    return invalidArgument("bad-user-key", "`" + userKey + "` is not a user public key (U…)");
  }
  const int64_t now = clock_->wallMs() / 1000;
  MintedJwt out;
  out.expiresAt = now + ttl.count();
  transport::UserClaims claims{name, userKey, accountKey_, permissionsOf(rows), out.expiresAt};
  SHOAL_ASSIGN_OR_RETURN(out.jwt, transport::encodeUserJwt(claims, signingSeed_, now));
  return out;
}

Result<MintedUser> CredentialAuthority::mintSystemUser(const std::string& connId,
                                                       std::chrono::seconds ttl) const {
  SHOAL_ASSIGN_OR_RETURN(transport::NKeyPair user, transport::generateNKey(NKeyRole::kUser));
  const int64_t now = clock_->wallMs() / 1000;
  transport::UserPermissions p;
  p.publish.allow = {"$SYS.REQ.CLAIMS.UPDATE", "$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE"};
  p.subscribe.allow = {"_INBOX_" + connId + ".>"};
  MintedUser out;
  out.userKey = user.publicKey;
  out.expiresAt = now + ttl.count();
  transport::UserClaims claims{"shoal-claims", user.publicKey, systemKey_, p, out.expiresAt};
  SHOAL_ASSIGN_OR_RETURN(std::string jwt, transport::encodeUserJwt(claims, systemSeed_, now));
  out.creds = transport::formatCreds(jwt, user.seed);
  return out;
}

Status CredentialAuthority::revoke(const std::string& userKey) {
  if (!transport::isNKeyPublic(userKey, NKeyRole::kUser)) {
    return invalidArgument("bad-user-key", "`" + userKey + "` is not a user public key (U…)");
  }
  // Revocation covers JWTs issued at or before the time: this second, and what came before.
  revocations_[userKey] = clock_->wallMs() / 1000;
  json::object o;
  for (const auto& [key, at] : revocations_)
    o[key] = at;
  SHOAL_RETURN_IF_ERROR(writeFileAtomically(*fs_, dir_ + "/revocations.json", json::serialize(o)));
  return signJwts();
}

Result<std::vector<IssuedCredential>> CredentialAuthority::issued() const {
  std::vector<IssuedCredential> out;
  const std::string path = dir_ + "/issued.json";
  if (!fs_->exists(path)) return out;
  SHOAL_ASSIGN_OR_RETURN(std::string content, fs_->readFile(path));
  boost::system::error_code ec;
  json::value v = json::parse(content, ec);
  if (ec || !v.is_array()) return dataLoss("bad-issued", path + " is not a JSON array");
  for (const json::value& row : v.as_array()) {
    const json::object* o = row.if_object();
    if (o == nullptr) return dataLoss("bad-issued", path + ": a row is not an object");
    auto text = [&](std::string_view key) {
      const json::value* f = o->if_contains(key);
      return f != nullptr && f->is_string() ? std::string(f->as_string()) : std::string();
    };
    auto number = [&](std::string_view key) {
      const json::value* f = o->if_contains(key);
      return f != nullptr && f->is_int64() ? f->as_int64() : int64_t{0};
    };
    out.push_back(
        {text("userKey"), text("name"), text("profile"), number("issuedAt"), number("expiresAt")});
  }
  return out;
}

bool CredentialAuthority::isRevokedOnDisk(const std::string& userKey) const {
  auto current = readRevocations(*fs_, dir_ + "/revocations.json");
  return !current.isOk() || current->count(userKey) > 0;
}

Status CredentialAuthority::recordIssued(const IssuedCredential& credential) const {
  SHOAL_ASSIGN_OR_RETURN(std::vector<IssuedCredential> all, issued());
  all.push_back(credential);
  // A credential expired for a week is of no more interest to `shoal creds list`.
  const int64_t forgetBefore = clock_->wallMs() / 1000 - 7 * 86'400;
  json::array rows;
  for (const auto& c : all) {
    if (c.expiresAt >= forgetBefore) rows.push_back(toJson(c));
  }
  return writeFileAtomically(*fs_, dir_ + "/issued.json", json::serialize(rows));
}

}  // namespace shoal::planes
