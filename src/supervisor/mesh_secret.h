// MeshSecret: what admits the mesh owner's processes, and nobody else, to the embedded broker.
//
// `shoal up` makes one user nkey per space (transport/nkey.h) the first time and keeps it in
// MeshPaths::meshSecretFile — the seed only, one line, 0600 in the 0700 secrets directory —
// and starts nats-server with that nkey as the only user it admits. Every `shoal` command,
// plane and daemon of the owner signs the broker's nonce with it (ConnectOptions::nkeySeedFile);
// any other local account is refused by the broker (`Authorization Violation`). The seed never
// crosses the wire, and the record and `shoal status --json` name the file, never its content.
// The secret is kept across `shoal down` / `shoal up` so the owner's own scripts keep working;
// removing the file makes the next `shoal up` mint a new one.
//
// Thread safety: free functions over the file system; call from one thread per space.
#pragma once

#include <string>

#include "base/result.h"
#include "supervisor/mesh_paths.h"

namespace shoal::supervisor {

struct MeshSecret {
  std::string seedFile;
  std::string publicKey;  // "U…": what the broker's config lists
};

// Reads the space's secret, minting it first when there is none. Refuses a secret file that
// another user could read or write (`secret-exposed`) or that is not an nkey seed.
Result<MeshSecret> ensureMeshSecret(const MeshPaths& paths);

// Reads an existing secret file (kNotFound `no-mesh-secret` when absent), with the same checks.
Result<MeshSecret> readMeshSecret(const std::string& seedFile);

// The nats-server configuration block that admits exactly this secret's holder.
std::string brokerAuthorization(const MeshSecret& secret);

}  // namespace shoal::supervisor
