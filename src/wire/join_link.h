// Join link: the one-time invite `shoal invite` prints and `shoal daemon join` takes, in the
// Cotal join-link form (SPEC §10: `cotals://host[:port]/space[?…]`, TLS required; default port
// 4222):
//
//   cotals://<host>:<port>/<space>?owner=<o>&machine=<m>&invite=<id>&ca=<sha256 hex>
//          &jwt=<bootstrap user JWT>&seed=<its nkey seed>
//
// `machine` is absent when the invite lets the joiner name its machine. `ca` is the SHA-256
// fingerprint of the space's certificate authority (transport/tls_identity.h): the joiner
// trusts the broker only if it presents a chain to that CA. `jwt` and `seed` are the invite's
// bootstrap credential (planes/grants.h `bootstrap`): the link is a secret, printed once.
//
// Only `cotals://` carries an invite: a `cotal://` (plaintext) link is refused
// (`plaintext-link`), since the bootstrap credential and the daemon's would cross the network
// in the clear. Every field is checked against its alphabet; anything else is `bad-join-link`
// naming the field (never echoing the secret parts).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace shoal::wire {

struct JoinLink {
  std::string host;
  int port = 4222;
  std::string space;
  std::string owner;
  std::string machine;  // empty: the joiner names its machine
  std::string inviteId;
  std::string caFingerprint;  // 64 lower-case hex
  std::string jwt;
  std::string seed;

  bool operator==(const JoinLink&) const = default;
};

Result<std::string> encodeJoinLink(const JoinLink& link);
Result<JoinLink> parseJoinLink(std::string_view text);

}  // namespace shoal::wire
