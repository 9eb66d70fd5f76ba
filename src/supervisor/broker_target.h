// BrokerTarget: which broker a command talks to, and with what proof — one rule for every
// `shoal` command, plane and daemon, so none can quietly end up on someone else's mesh.
//
//   --server URL given   that broker. The credential is --nkey FILE when given; else the
//                        space's local mesh secret when the registry's broker is that same URL
//                        (the owner's own broker); else none.
//   joined space         (space_join.h) when this machine ran `shoal daemon join` for the
//                        space and runs no local mesh of it: the joined broker, its CA and
//                        the daemon's credential (--server may name the same URL).
//   no --server          the space's registry entry (MeshRecord) written by `shoal up`, and
//                        the mesh secret it names — or, for a space in auth mode, the
//                        person's own credential minted by the local authority (auth_mode.h). No
//                        entry → kNotFound `no-mesh` ("start it with `shoal up`, or name a broker
//                        with --server"); an entry whose supervisor is gone → kFailedPrecondition
//                        `mesh-not-running`. There is no default URL: nats://127.0.0.1:4222 may be
//                        another user's broker.
//
// Thread safety: reads files; call from one thread at a time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "supervisor/mesh_paths.h"
#include "transport/connection.h"
#include "wire/principal.h"

namespace shoal::supervisor {

struct BrokerTarget {
  std::string space;
  std::string url;
  std::string mode = "open";  // "open" | "auth" (the local mesh's record)
  std::string nkeySeedFile;   // open mode; empty: connect without credentials
  // Auth mode: the person's `.creds` and the reply inbox its grants allow.
  std::string credentialsFile;
  std::string inboxPrefix;
  // Keeps a credential file of the command's own (credential_files.h) while a copy is alive.
  std::shared_ptr<const void> credentialsGuard;
  // The CA certificate to trust when the broker requires TLS (broker_tls.h); empty: plaintext.
  std::string caFile;
  // The person at the CLI: `local.<login>` in open mode, `<owner>.<login>` in auth mode.
  wire::Principal caller;
  bool localMesh = false;  // the space's recorded local mesh (by registry or matching URL)
  // This machine joined the space's broker elsewhere (space_join.h): the person's credential
  // the manager issued (joined_credential.h), or the daemon's.
  bool joined = false;

  // Sets the servers and the credential on `options`.
  void applyTo(transport::ConnectOptions& options) const;
};

// `postChannels`: in auth mode, the channels the person's credential must let it post to
// (cliCredential, or joinedPersonCredential on a joined machine). `asDaemon`: on a joined
// machine, the daemon's own credential (for `shoal daemon run`), not the person's.
Result<BrokerTarget> resolveBrokerTarget(const MeshPaths& paths, const std::string& serverOverride,
                                         const std::string& nkeyOverride = "",
                                         const std::vector<std::string>& postChannels = {},
                                         bool asDaemon = false);

// A connect failure, with the remedy that fits the target: an authorization refusal says which
// credential was presented; an unreachable local mesh says `shoal status` / `shoal up`.
Status explainConnectFailure(const BrokerTarget& target, const Status& failure);

}  // namespace shoal::supervisor
