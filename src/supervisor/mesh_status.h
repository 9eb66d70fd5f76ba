// MeshStatus: what `shoal status` reports about a space's mesh — read, never changed.
//
// The broker is found from the mesh registry (MeshRecord) or from an explicit URL; it is then
// asked directly (a real connection, server INFO and a JetStream account request), so a stale
// registry shows as "unreachable", not as up. Each plane is probed over the same connection
// (Cotal plane liveness): bound / unbound / stale / unknown, as the plane grades itself.
//
// Thread safety: inspectMesh may be called from any thread; it opens its own connection.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "supervisor/broker_target.h"
#include "supervisor/mesh_paths.h"
#include "supervisor/mesh_record.h"
#include "supervisor/space_join.h"

namespace shoal::supervisor {

struct BrokerStatus {
  std::string url;
  bool reachable = false;
  std::string version;  // nats-server version, e.g. "2.9.10"
  std::string serverId;
  bool jetstream = false;
  double rttMs = 0;
  bool refused = false;  // it answered but refused our credential (authorization)
  Status error;          // why it is unreachable or JetStream is off; OK otherwise
};

// A plane's liveness as a probe from the operator's principal saw it (mesh::probeLiveness).
struct PlaneStatus {
  std::string plane;      // "manager" | "delivery"
  std::string responder;  // "bound" | "unbound" | "stale" | "unknown"
  std::string instance;   // the responder's per-bind token, when it answered
  std::string detail;     // how the verdict was reached ("no responders", "timeout", ...)
  // delivery, when bound: its fan-out job totals by state (delivered, suppressed, retry,
  // failed, leased) plus "pending" (posts not fetched yet), from the plane's `jobs` op.
  std::map<std::string, uint64_t> jobs;
};

struct MeshStatus {
  std::string space;
  std::optional<MeshRecord> record;  // absent: no local mesh recorded for this space
  // This machine joined the space's broker elsewhere (space_join.h) and runs no local mesh of
  // it: the context `shoal daemon join` stored (mode "auth").
  std::optional<JoinedSpace> joined;
  bool supervisorAlive = false;
  BrokerStatus broker;
  std::vector<PlaneStatus> planes;  // manager, delivery (empty when the broker is unreachable)
  // "open" (owner `local`, no per-principal identity, only the mesh secret's holder may
  // connect), "auth" (NATS JWT auth, each principal its own credential; auth_mode.h) or
  // "external" (a broker Shoal did not start)
  std::string mode;
  std::string secretFile;  // the credential presented: its path, never its content
  // Auth mode: the person's credential (its path), principal and expiry (Unix seconds).
  std::string credentialFile;
  std::string principal;
  int64_t credentialExpiresAt = 0;
};

// With `serverUrl` empty, inspects the recorded local mesh, or else the joined space's broker
// under the person's credential the manager issues (joined_credential.h); kNotFound (reason
// `mesh-not-up`) when neither is there. With a URL, inspects that broker directly (broker_target.h
// says which credential is presented; `nkeyFile` overrides it).
Result<MeshStatus> inspectMesh(const MeshPaths& paths, const std::string& serverUrl,
                               const std::string& nkeyFile, std::chrono::milliseconds timeout);

}  // namespace shoal::supervisor
