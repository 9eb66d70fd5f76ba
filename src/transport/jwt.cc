#include "transport/jwt.h"

#include <array>
#include <memory>

#include <boost/json.hpp>
#include <openssl/evp.h>

#include "base/base32.h"
#include "base/base64.h"
#include "transport/nkey.h"

namespace shoal::transport {
namespace {

namespace json = boost::json;

constexpr int kJwtVersion = 2;
constexpr std::string_view kHeader = R"({"typ":"JWT","alg":"ed25519-nkey"})";

Status badClaims(std::string_view why) {
  return invalidArgument("bad-jwt-claims", "cannot mint a JWT: " + std::string(why));
}

Status badJwt(std::string_view why) {
  return invalidArgument("bad-jwt", "not a valid NATS JWT: " + std::string(why));
}

std::string sha512_256(std::string_view data) {
  std::array<unsigned char, 32> digest{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), digest.data(), &len, EVP_sha512_256(), nullptr) != 1)
    return {};
  return std::string(reinterpret_cast<const char*>(digest.data()), len);
}

json::array strings(const std::vector<std::string>& items) {
  json::array out;
  for (const auto& s : items)
    out.emplace_back(s);
  return out;
}

json::object permission(const SubjectPermission& p) {
  json::object o;
  if (p.allow.empty() && p.deny.empty()) {
    o["deny"] = json::array{">"};  // default-deny (header comment)
    return o;
  }
  if (!p.allow.empty()) o["allow"] = strings(p.allow);
  if (!p.deny.empty()) o["deny"] = strings(p.deny);
  return o;
}

// Signs `nats` (the type-specific claims) for `subject`, issued by `signerSeed`'s key.
Result<std::string> sign(std::string_view signerSeed, const std::string& subject,
                         const std::string& name, int64_t issuedAt, int64_t expiresAt,
                         json::object nats) {
  SHOAL_ASSIGN_OR_RETURN(NKeyPair signer, nkeyFromSeed(signerSeed));
  // The standard claims in their order, first without jti (what jti hashes), then with it.
  auto standard = [&](const std::string* jti) {
    json::object c;
    if (expiresAt > 0) c["exp"] = expiresAt;
    if (jti != nullptr) c["jti"] = *jti;
    c["iat"] = issuedAt;
    c["iss"] = signer.publicKey;
    if (!name.empty()) c["name"] = name;
    c["sub"] = subject;
    return c;
  };
  const std::string digest = sha512_256(json::serialize(standard(nullptr)));
  if (digest.empty()) return internalError("openssl", "SHA-512/256 failed");
  const std::string jti = base32Encode(digest);
  json::object claims = standard(&jti);
  claims["nats"] = std::move(nats);
  const std::string signingInput =
      base64UrlEncode(kHeader) + "." + base64UrlEncode(json::serialize(claims));
  SHOAL_ASSIGN_OR_RETURN(std::string signature, nkeySign(signerSeed, signingInput));
  return signingInput + "." + base64UrlEncode(signature);
}

// The public key of the signer's seed; `bad-nkey-seed` when it is not a seed.
Result<std::string> signerKey(std::string_view seed) {
  SHOAL_ASSIGN_OR_RETURN(NKeyPair pair, nkeyFromSeed(seed));
  return pair.publicKey;
}

}  // namespace

Result<std::string> encodeOperatorJwt(const OperatorClaims& c, std::string_view signerSeed,
                                      int64_t issuedAt) {
  if (!isNKeyPublic(c.operatorKey, NKeyRole::kOperator))
    return badClaims("the operator key is not an operator public key");
  SHOAL_ASSIGN_OR_RETURN(std::string signer, signerKey(signerSeed));
  if (signer != c.operatorKey)
    return badClaims("an operator JWT is signed by the operator's own seed");
  if (!c.systemAccount.empty() && !isNKeyPublic(c.systemAccount, NKeyRole::kAccount))
    return badClaims("the system account is not an account public key");
  json::object nats;
  if (!c.signingKeys.empty()) nats["signing_keys"] = strings(c.signingKeys);
  if (!c.systemAccount.empty()) nats["system_account"] = c.systemAccount;
  nats["type"] = "operator";
  nats["version"] = kJwtVersion;
  return sign(signerSeed, c.operatorKey, c.name, issuedAt, 0, std::move(nats));
}

Result<std::string> encodeAccountJwt(const AccountClaims& c, std::string_view signerSeed,
                                     int64_t issuedAt) {
  if (!isNKeyPublic(c.accountKey, NKeyRole::kAccount))
    return badClaims("the account key is not an account public key");
  SHOAL_ASSIGN_OR_RETURN(std::string signer, signerKey(signerSeed));
  if (!isNKeyPublic(signer, NKeyRole::kOperator))
    return badClaims("an account JWT is signed by an operator seed");
  for (const auto& [key, at] : c.revocations) {
    if (key != "*" && !isNKeyPublic(key, NKeyRole::kUser))
      return badClaims("a revocation names a user public key or *");
  }
  json::object limits{{"subs", -1},    {"data", -1},        {"payload", -1}, {"imports", -1},
                      {"exports", -1}, {"wildcards", true}, {"conn", -1},    {"leaf", -1}};
  if (c.jetstream) {
    limits["mem_storage"] = -1;
    limits["disk_storage"] = -1;
    limits["streams"] = -1;
    limits["consumer"] = -1;
  }
  json::object nats;
  nats["limits"] = std::move(limits);
  if (!c.signingKeys.empty()) nats["signing_keys"] = strings(c.signingKeys);
  if (!c.revocations.empty()) {
    json::object revoked;
    for (const auto& [key, at] : c.revocations)
      revoked[key] = at;
    nats["revocations"] = std::move(revoked);
  }
  nats["type"] = "account";
  nats["version"] = kJwtVersion;
  return sign(signerSeed, c.accountKey, c.name, issuedAt, 0, std::move(nats));
}

Result<std::string> encodeUserJwt(const UserClaims& c, std::string_view signerSeed,
                                  int64_t issuedAt) {
  if (!isNKeyPublic(c.userKey, NKeyRole::kUser))
    return badClaims("the user key is not a user public key");
  if (!isNKeyPublic(c.accountKey, NKeyRole::kAccount))
    return badClaims("the user's account is not an account public key");
  SHOAL_ASSIGN_OR_RETURN(std::string signer, signerKey(signerSeed));
  if (!isNKeyPublic(signer, NKeyRole::kAccount))
    return badClaims("a user JWT is signed by its account's seed or one of its signing keys");
  json::object nats;
  nats["pub"] = permission(c.permissions.publish);
  nats["sub"] = permission(c.permissions.subscribe);
  if (c.permissions.responses) {
    // ttl is a Go duration in nanoseconds.
    nats["resp"] = json::object{{"max", c.permissions.responses->maxResponses},
                                {"ttl", c.permissions.responses->ttlSeconds * 1'000'000'000}};
  }
  nats["subs"] = -1;
  nats["data"] = -1;
  nats["payload"] = -1;
  if (signer != c.accountKey) nats["issuer_account"] = c.accountKey;
  nats["type"] = "user";
  nats["version"] = kJwtVersion;
  return sign(signerSeed, c.userKey, c.name, issuedAt, c.expiresAt, std::move(nats));
}

Result<DecodedJwt> decodeJwt(std::string_view token) {
  const size_t a = token.find('.');
  const size_t b = a == std::string_view::npos ? a : token.find('.', a + 1);
  if (b == std::string_view::npos || token.find('.', b + 1) != std::string_view::npos)
    return badJwt("it does not have three parts");
  auto header = base64UrlDecode(token.substr(0, a));
  auto payload = base64UrlDecode(token.substr(a + 1, b - a - 1));
  auto signature = base64UrlDecode(token.substr(b + 1));
  if (!header || !payload || !signature) return badJwt("a part is not base64url");
  boost::system::error_code ec;
  json::value h = json::parse(*header, ec);
  if (ec || !h.is_object() || h.as_object().if_contains("alg") == nullptr ||
      *h.as_object().if_contains("alg") != "ed25519-nkey")
    return badJwt("the header does not name ed25519-nkey");
  json::value v = json::parse(*payload, ec);
  if (ec || !v.is_object()) return badJwt("the claims are not a JSON object");
  DecodedJwt out;
  out.claims = std::move(v.as_object());
  auto text = [&](const json::object& o, std::string_view key) {
    const json::value* f = o.if_contains(key);
    return f != nullptr && f->is_string() ? std::string(f->as_string()) : std::string();
  };
  auto number = [&](std::string_view key) {
    const json::value* f = out.claims.if_contains(key);
    return f != nullptr && f->is_int64() ? f->as_int64() : int64_t{0};
  };
  out.issuer = text(out.claims, "iss");
  out.subject = text(out.claims, "sub");
  out.name = text(out.claims, "name");
  out.issuedAt = number("iat");
  out.expiresAt = number("exp");
  if (const json::value* nats = out.claims.if_contains("nats"); nats && nats->is_object())
    out.type = text(nats->as_object(), "type");
  if (out.issuer.empty() || out.subject.empty() || out.type.empty())
    return badJwt("iss, sub or nats.type is missing");
  if (!nkeyVerify(out.issuer, token.substr(0, b), *signature))
    return badJwt("the signature is not its issuer's");
  return out;
}

std::string formatCreds(std::string_view userJwt, std::string_view userSeed) {
  std::string out;
  out += "-----BEGIN NATS USER JWT-----\n";
  out += userJwt;
  out += "\n------END NATS USER JWT------\n\n";
  out += "# A Shoal credential: the JWT above is public, the seed below is a secret.\n";
  out += "# Keep this file owner-only (mode 0600) and never copy it into a seat's directory.\n\n";
  out += "-----BEGIN USER NKEY SEED-----\n";
  out += userSeed;
  out += "\n------END USER NKEY SEED------\n";
  return out;
}

}  // namespace shoal::transport
