// BrokerTls: the certificates of a space's embedded broker when it runs with TLS (issue 19:
// `shoal up --auth --host ADDR`, or `--tls` on loopback). They live beside the space's other
// secrets:
//
//   <secrets>/<space>-tls/ca.pem           the space's certificate authority (public; a join
//                                          link carries its SHA-256 fingerprint)
//   <secrets>/<space>-tls/ca-key.pem       its key (0600; never leaves this machine)
//   <secrets>/<space>-tls/server.pem       the broker's certificate chain, re-issued at every
//   <secrets>/<space>-tls/server-key.pem   start for the host it listens on
//
// Like auth mode, TLS is the space's once chosen: a space whose CA exists keeps requiring TLS,
// so a machine that joined it never meets a plaintext broker under the same name.
//
// Thread safety: free functions over the file system; one caller at a time per space.
#pragma once

#include <string>

#include "base/result.h"
#include "supervisor/mesh_paths.h"

namespace shoal::supervisor {

struct BrokerTlsFiles {
  std::string dir;
  std::string caFile;
  std::string caKeyFile;
  std::string certFile;
  std::string keyFile;
};
BrokerTlsFiles brokerTlsFilesOf(const MeshPaths& paths);

// Whether the space's broker requires TLS (its CA exists).
bool spaceUsesTls(const MeshPaths& paths);

// Makes the CA the first time, then a server certificate naming `host` (and 127.0.0.1 and
// localhost, for this machine's own processes). Returns the files.
Result<BrokerTlsFiles> ensureBrokerTls(const MeshPaths& paths, const std::string& host);

// The SHA-256 fingerprint of the space's CA (tls_identity.h); kNotFound `no-tls` without one.
Result<std::string> brokerCaFingerprint(const MeshPaths& paths);

}  // namespace shoal::supervisor
