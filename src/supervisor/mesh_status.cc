#include "supervisor/mesh_status.h"

#include <sys/types.h>

#include "base/file_system.h"
#include "base/process_info.h"
#include "transport/connection.h"

namespace shoal::supervisor {
namespace {

BrokerStatus askBroker(const std::string& url, std::chrono::milliseconds timeout) {
  BrokerStatus out;
  out.url = url;
  transport::ConnectOptions options;
  options.servers = {url};
  options.name = "shoal status";
  options.allowReconnect = false;
  options.connectTimeout = timeout;
  auto conn = transport::Connection::connect(options);
  if (!conn.isOk()) {
    out.error = conn.status();
    return out;
  }
  out.reachable = true;
  auto info = (*conn)->serverInfo();
  if (!info.isOk()) {
    out.error = info.status();
    return out;
  }
  out.version = info->version;
  out.serverId = info->serverId;
  out.jetstream = info->jetstream;
  if (!out.jetstream) {
    out.error = failedPrecondition("jetstream-off",
                                   "the broker does not offer JetStream to this account; start "
                                   "nats-server with -js (`shoal up` does)");
  }
  auto rtt = (*conn)->rtt();
  if (rtt.isOk()) out.rttMs = static_cast<double>(rtt->count()) / 1e6;
  return out;
}

}  // namespace

Result<MeshStatus> inspectMesh(const MeshPaths& paths, const std::string& serverUrl,
                               std::chrono::milliseconds timeout) {
  MeshStatus status;
  status.space = paths.space;
  if (!serverUrl.empty()) {
    status.mode = "external";
    status.broker = askBroker(serverUrl, timeout);
    return status;
  }
  auto record = readMeshRecord(FileSystem::posix(), paths.registryFile);
  if (!record.isOk()) {
    if (record.status().code() == StatusCode::kNotFound) {
      return notFound("mesh-not-up", "no local mesh is running for space `" + paths.space +
                                         "`; start it with `shoal up`" +
                                         (paths.space == "main" ? "" : " --space " + paths.space) +
                                         " (or pass --server URL)");
    }
    return record.status();
  }
  status.record = *record;
  status.mode = record->mode;
  status.supervisorAlive = processExists(static_cast<pid_t>(record->supervisorPid));
  status.broker = askBroker(record->url, timeout);
  return status;
}

}  // namespace shoal::supervisor
