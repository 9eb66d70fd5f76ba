#include "supervisor/mesh_status.h"

#include <boost/json.hpp>
#include <sys/types.h>

#include "base/file_system.h"
#include "base/ids.h"
#include "base/process_info.h"
#include "mesh/delivery_rail.h"
#include "mesh/liveness_probe.h"
#include "mesh/operator_identity.h"
#include "supervisor/auth_mode.h"
#include "supervisor/local_mesh.h"
#include "supervisor/peer_uid.h"
#include "transport/connection.h"
#include "transport/creds_file.h"
#include "wire/liveness.h"

namespace shoal::supervisor {
namespace {

namespace json = boost::json;

// The delivery plane's job totals (empty when it does not answer).
std::map<std::string, uint64_t> deliveryJobs(transport::Connection& conn, const MeshPaths& paths,
                                             const wire::Principal& caller,
                                             std::chrono::milliseconds timeout) {
  const std::string& space = paths.space;
  std::map<std::string, uint64_t> out;
  // The uid the person's commands use: in auth mode the only one its grants name.
  auto uid = peerUid(paths, caller);
  if (!uid.isOk()) return out;
  auto data = mesh::requestDeliveryJobs(conn, space, caller, *uid, timeout);
  if (!data.isOk()) return out;
  boost::system::error_code ec;
  json::value v = json::parse(*data, ec);
  if (ec || !v.is_object()) return out;
  auto take = [&](const json::value* o, std::string_view key, const std::string& as) {
    if (o == nullptr || !o->is_object()) return;
    const json::value* n = o->as_object().if_contains(key);
    if (n != nullptr && n->is_number()) out[as] = n->to_number<uint64_t>();
  };
  if (const json::value* totals = v.as_object().if_contains("totals");
      totals != nullptr && totals->is_object()) {
    for (const auto& kv : totals->as_object())
      take(totals, kv.key(), std::string(kv.key()));
  }
  take(v.as_object().if_contains("pending"), "fanout", "pending");
  return out;
}

BrokerStatus askBroker(const BrokerTarget& target, std::chrono::milliseconds timeout,
                       const MeshPaths& paths, std::vector<PlaneStatus>* planes) {
  const std::string& space = paths.space;
  BrokerStatus out;
  out.url = target.url;
  transport::ConnectOptions options;
  target.applyTo(options);
  options.name = "shoal status";
  options.allowReconnect = false;
  options.connectTimeout = timeout;
  auto conn = transport::Connection::connect(options);
  if (!conn.isOk()) {
    out.error = explainConnectFailure(target, conn.status());
    out.refused = conn.status().code() == StatusCode::kPermissionDenied;
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

  const wire::Principal& caller = target.caller;
  for (std::string_view plane : {"manager", "delivery"}) {
    PlaneStatus ps;
    ps.plane = std::string(plane);
    auto verdict = mesh::probeLiveness(**conn, space, caller, plane, timeout);
    if (verdict.isOk()) {
      ps.responder = std::string(wire::responderName(verdict->responder));
      ps.instance = verdict->instance.value_or("");
      ps.detail = verdict->detail.empty()
                      ? std::string(mesh::livenessEvidenceName(verdict->evidence))
                      : verdict->detail;
    } else {
      ps.responder = "unknown";
      ps.detail = verdict.status().toString();
    }
    if (plane == "delivery" && ps.responder == "bound")
      ps.jobs = deliveryJobs(**conn, paths, caller, timeout);
    planes->push_back(std::move(ps));
  }
  return out;
}

// A joined machine (space_join.h): the broker the context names, asked under the credential
// the person's commands use there. A credential the broker or the manager refuses is reported
// as the broker's error (named: `daemon-credential-refused`, `principal-is-a-seat`, ...).
MeshStatus inspectJoined(const MeshPaths& paths, const JoinedSpace& joined,
                         std::chrono::milliseconds timeout) {
  MeshStatus status;
  status.space = paths.space;
  status.mode = "auth";
  status.joined = joined;
  auto target = resolveBrokerTarget(paths, "", "");
  if (!target.isOk()) {
    status.broker.url = joined.url;
    status.broker.error = target.status();
    status.broker.refused = true;
    return status;
  }
  status.credentialFile = target->credentialsFile;
  // The daemon's credential stands in while the manager does not answer: no person then.
  if (target->credentialsFile != joined.daemonCreds) status.principal = target->caller.dotForm();
  auto creds = transport::readCredsFile(FileSystem::posix(), target->credentialsFile);
  if (creds.isOk()) status.credentialExpiresAt = creds->expiresAt;
  status.broker = askBroker(*target, timeout, paths, &status.planes);
  return status;
}

}  // namespace

Result<MeshStatus> inspectMesh(const MeshPaths& paths, const std::string& serverUrl,
                               const std::string& nkeyFile, std::chrono::milliseconds timeout) {
  MeshStatus status;
  status.space = paths.space;
  if (!serverUrl.empty()) {
    SHOAL_ASSIGN_OR_RETURN(BrokerTarget target, resolveBrokerTarget(paths, serverUrl, nkeyFile));
    status.mode = target.localMesh ? target.mode : "external";
    status.secretFile = target.nkeySeedFile;
    status.broker = askBroker(target, timeout, paths, &status.planes);
    return status;
  }
  auto record = readMeshRecord(FileSystem::posix(), paths.registryFile);
  if (!record.isOk()) {
    if (record.status().code() == StatusCode::kNotFound) {
      if (auto joined = readJoinedSpace(paths); joined.isOk())
        return inspectJoined(paths, *joined, timeout);
      return notFound("mesh-not-up", "no local mesh is running for space `" + paths.space +
                                         "`; start it with `shoal up`" +
                                         (paths.space == "main" ? "" : " --space " + paths.space) +
                                         " (or pass --server URL)");
    }
    return record.status();
  }
  status.record = *record;
  status.mode = record->mode;
  status.supervisorAlive = isLiveSupervisor(*record, paths.space);
  BrokerTarget target;
  target.space = paths.space;
  target.url = record->url;
  target.caFile = record->caFile;
  target.nkeySeedFile = nkeyFile.empty() ? record->secretFile : nkeyFile;
  target.caller = mesh::localOperator().principal;
  target.localMesh = true;
  if (nkeyFile.empty() && record->mode == "auth") {
    auto credential = cliCredential(paths);
    if (!credential.isOk()) {
      status.broker.url = record->url;
      status.broker.error = credential.status();
      return status;
    }
    target.mode = "auth";
    target.nkeySeedFile.clear();
    target.credentialsFile = credential->credsFile;
    target.inboxPrefix = credential->inboxPrefix;
    target.caller = credential->caller;
    status.credentialFile = credential->credsFile;
    status.principal = credential->caller.dotForm();
    status.credentialExpiresAt = credential->expiresAt;
  }
  status.secretFile = target.nkeySeedFile;
  status.broker = askBroker(target, timeout, paths, &status.planes);
  return status;
}

}  // namespace shoal::supervisor
