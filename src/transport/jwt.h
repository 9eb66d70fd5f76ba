// NatsJwt: the JWTs of NATS decentralized authentication, minted by Shoal itself (issue 19;
// no external `nsc`). A chain of trust: an operator JWT (self-signed) names the system
// account; an account JWT, signed by the operator, is one space; a user JWT, signed by the
// account (or one of its signing keys), is one principal's credential with its grants. A broker
// that trusts the operator admits a client presenting a user JWT whose chain verifies and who
// signs the server's nonce with the user's seed.
//
// Encoding (facts of the NATS JWT v2 format): `base64url(header) . base64url(claims) .
// base64url(Ed25519 signature of the first two parts by the issuer's seed)`, header
// `{"typ":"JWT","alg":"ed25519-nkey"}`; claims `{exp?, jti, iat, iss, name, sub, nats:{…,
// type, version:2}}`, times in Unix seconds, `jti` the base32 SHA-512/256 of the standard
// claims without it.
//
// Default-deny: a permission with no allow and no deny entries is emitted as `deny: [">"]`, so
// an empty list never means "everything" (which is NATS's reading of an absent list).
//
// `.creds`: the JWT and the user seed between the standard BEGIN/END markers, the file
// nats.c reads with natsOptions_SetUserCredentialsFromFiles (keep it owner-only).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "base/result.h"

namespace shoal::transport {

struct SubjectPermission {
  std::vector<std::string> allow;
  std::vector<std::string> deny;
};

// allow_responses: the user may publish to the reply subject of a request it received, at most
// `maxResponses` times per request within `ttlSeconds` (0: no time limit).
struct ResponsePermission {
  int maxResponses = 1;
  int64_t ttlSeconds = 0;
};

struct UserPermissions {
  SubjectPermission publish;
  SubjectPermission subscribe;
  std::optional<ResponsePermission> responses;
};

struct OperatorClaims {
  std::string name;
  std::string operatorKey;    // "O…": subject and issuer (self-signed)
  std::string systemAccount;  // "A…": the account the server's own traffic lives in
  std::vector<std::string> signingKeys;
};

struct AccountClaims {
  std::string name;
  std::string accountKey;  // "A…"
  bool jetstream = true;   // unlimited JetStream (memory and disk) for the account
  std::vector<std::string> signingKeys;
  // Users revoked: every user JWT of that key issued at or before the time (Unix seconds) is
  // refused; the key "*" revokes every user.
  std::map<std::string, int64_t> revocations;
};

struct UserClaims {
  std::string name;
  std::string userKey;     // "U…"
  std::string accountKey;  // the account it belongs to (issuer_account when a signing key signs)
  UserPermissions permissions;
  int64_t expiresAt = 0;  // Unix seconds; 0: never
};

// Each signs with `signerSeed`: the operator's seed (operator, account JWTs), the account's or
// one of its signing keys' seed (user JWTs). kInvalidArgument `bad-jwt-claims` names a key of
// the wrong role or a missing field; `bad-nkey-seed` a seed that is not one.
Result<std::string> encodeOperatorJwt(const OperatorClaims& claims, std::string_view signerSeed,
                                      int64_t issuedAt);
Result<std::string> encodeAccountJwt(const AccountClaims& claims, std::string_view signerSeed,
                                     int64_t issuedAt);
Result<std::string> encodeUserJwt(const UserClaims& claims, std::string_view signerSeed,
                                  int64_t issuedAt);

struct DecodedJwt {
  std::string type;  // nats.type: operator | account | user
  std::string issuer;
  std::string subject;
  std::string name;
  int64_t issuedAt = 0;
  int64_t expiresAt = 0;       // 0: never
  boost::json::object claims;  // the whole claims object
};

// Parses `token` and checks its signature against its own `iss` key (what the chain says of
// that key is the caller's to check). kInvalidArgument `bad-jwt` otherwise.
Result<DecodedJwt> decodeJwt(std::string_view token);

// The `.creds` text of a user: its JWT and seed.
std::string formatCreds(std::string_view userJwt, std::string_view userSeed);

}  // namespace shoal::transport
