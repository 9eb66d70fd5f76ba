// MeshRecord: the registry entry that `shoal up` writes so later commands find the local mesh.
//
// One JSON file per space (MeshPaths::registryFile), written atomically by the supervisor when
// the broker is ready and removed when it stops. Format (version 1):
//
//   {"version":1,"space":"main","url":"nats://127.0.0.1:4222","host":"127.0.0.1","port":4222,
//    "storeDir":"…/broker","brokerPid":124,"supervisorPid":123,"servePid":125,
//    "daemonPid":126,"startedAtMs":1764500000000,"mode":"open",
//    "secretFile":"…/secrets/main.nk","caFile":"…/secrets/main-tls/ca.pem"}
//
// `servePid` and `daemonPid` may be absent (read as 0); `secretFile` (the mesh secret the
// broker requires, mesh_secret.h — its path, never its content) is absent in records of
// brokers started without one; `caFile` in records of plaintext brokers.
//
// Unknown fields are ignored on read; a file that is not this shape is refused with kDataLoss
// naming the file and the remedy (`shoal down --force` removes it).
//
// Thread safety: value type; the functions touch only the given FileSystem.
#pragma once

#include <cstdint>
#include <string>

#include "base/file_system.h"
#include "base/result.h"

namespace shoal::supervisor {

struct MeshRecord {
  int version = 1;
  std::string space;
  std::string url;
  std::string host;
  int port = 0;
  std::string storeDir;
  int64_t brokerPid = 0;
  int64_t supervisorPid = 0;
  int64_t servePid = 0;   // the planes process (`shoal serve`); 0 while it is not running
  int64_t daemonPid = 0;  // the seat daemon (`shoal daemon run`); 0 while it is not running
  int64_t startedAtMs = 0;
  // "open": owner `local`, no per-principal identity; only the holder of `secretFile` (the
  // mesh owner) may connect.
  std::string mode = "open";
  std::string secretFile;
  // The CA certificate a client of a broker that requires TLS trusts (broker_tls.h); empty
  // for a plaintext broker.
  std::string caFile;

  friend bool operator==(const MeshRecord&, const MeshRecord&) = default;
};

std::string encodeMeshRecord(const MeshRecord& record);
Result<MeshRecord> decodeMeshRecord(std::string_view json, std::string_view path);

// kNotFound when there is no record (the mesh is not up).
Result<MeshRecord> readMeshRecord(FileSystem& fs, const std::string& path);
// Creates the registry directory if needed; durable (temp → fsync → rename → fsync dir).
Status writeMeshRecord(FileSystem& fs, const std::string& path, const MeshRecord& record);

}  // namespace shoal::supervisor
