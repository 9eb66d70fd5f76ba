#include "supervisor/broker_target.h"

#include "base/file_system.h"
#include "mesh/operator_identity.h"
#include "supervisor/auth_mode.h"
#include "supervisor/joined_credential.h"
#include "supervisor/local_mesh.h"
#include "supervisor/mesh_record.h"
#include "supervisor/space_join.h"
#include "transport/creds_file.h"

namespace shoal::supervisor {
namespace {

std::string spaceFlag(const std::string& space) {
  return space == kDefaultSpace ? std::string() : " --space " + space;
}

// The local mesh runs in auth mode: the person's own credential instead of a mesh secret.
Status useAuthCredential(const MeshPaths& paths, BrokerTarget& target,
                         const std::vector<std::string>& postChannels) {
  SHOAL_ASSIGN_OR_RETURN(CliCredential credential, cliCredential(paths, postChannels));
  target.mode = "auth";
  target.nkeySeedFile.clear();
  target.credentialsFile = credential.credsFile;
  target.credentialsGuard = credential.fileGuard;
  target.inboxPrefix = credential.inboxPrefix;
  target.caller = credential.caller;
  return Status::ok();
}

// This machine joined the space (space_join.h): its broker, CA and daemon credential, or, for
// the person's commands, the credential the manager issues them (joined_credential.h). While
// the manager cannot be reached the daemon's stands in: `shoal status` still reports.
Status useJoinedSpace(const MeshPaths& paths, const JoinedSpace& joined, BrokerTarget& target,
                      const std::vector<std::string>& postChannels, bool asDaemon) {
  SHOAL_ASSIGN_OR_RETURN(transport::CredsInfo creds,
                         transport::readCredsFile(FileSystem::posix(), joined.daemonCreds));
  target.url = joined.url;
  target.caFile = joined.caFile;
  target.mode = "auth";
  target.nkeySeedFile.clear();
  target.credentialsFile = joined.daemonCreds;
  target.inboxPrefix = creds.inboxPrefix;
  target.caller = mesh::operatorOwnedBy(joined.owner).principal;
  target.joined = true;
  if (asDaemon) return Status::ok();
  auto person = joinedPersonCredential(paths, joined, postChannels);
  if (!person.isOk()) {
    if (person.status().code() == StatusCode::kUnavailable) return Status::ok();
    return person.status().withContext("asking the manager for this person's credential");
  }
  target.credentialsFile = person->credsFile;
  target.credentialsGuard = person->fileGuard;
  target.inboxPrefix = person->inboxPrefix;
  return Status::ok();
}

}  // namespace

void BrokerTarget::applyTo(transport::ConnectOptions& options) const {
  options.servers = {url};
  options.nkeySeedFile = nkeySeedFile;
  options.credentialsFile = credentialsFile;
  options.tlsCaFile = caFile;
  if (!inboxPrefix.empty()) options.inboxPrefix = inboxPrefix;
}

Result<BrokerTarget> resolveBrokerTarget(const MeshPaths& paths, const std::string& serverOverride,
                                         const std::string& nkeyOverride,
                                         const std::vector<std::string>& postChannels,
                                         bool asDaemon) {
  BrokerTarget target;
  target.space = paths.space;
  target.caller = mesh::localOperator().principal;
  auto record = readMeshRecord(FileSystem::posix(), paths.registryFile);
  if (!record.isOk() && record.status().code() != StatusCode::kNotFound) {
    if (serverOverride.empty()) return record.status();
  }
  auto joined = readJoinedSpace(paths);
  if (!joined.isOk() && joined.status().code() != StatusCode::kNotFound) return joined.status();
  const bool recordUp = record.isOk() && isLiveSupervisor(*record, paths.space);
  if (joined.isOk() && !recordUp && nkeyOverride.empty() &&
      (serverOverride.empty() || serverOverride == joined->url)) {
    SHOAL_RETURN_IF_ERROR(useJoinedSpace(paths, *joined, target, postChannels, asDaemon));
    return target;
  }
  if (!serverOverride.empty()) {
    target.url = serverOverride;
    target.localMesh = record.isOk() && record->url == serverOverride;
    target.nkeySeedFile = !nkeyOverride.empty() ? nkeyOverride
                          : target.localMesh    ? record->secretFile
                                                : std::string();
    if (target.localMesh) target.caFile = record->caFile;
    if (target.localMesh && nkeyOverride.empty() && record->mode == "auth") {
      SHOAL_RETURN_IF_ERROR(useAuthCredential(paths, target, postChannels));
    }
    return target;
  }
  if (!record.isOk()) {
    return notFound("no-mesh", "no local mesh is running for space `" + paths.space +
                                   "` on this machine; start it with `shoal up" +
                                   spaceFlag(paths.space) +
                                   "`, or name a broker with --server URL");
  }
  if (!isLiveSupervisor(*record, paths.space)) {
    return failedPrecondition("mesh-not-running", "the local mesh for space `" + paths.space +
                                                      "` is not running (its supervisor, pid " +
                                                      std::to_string(record->supervisorPid) +
                                                      ", is gone); start it again with `shoal up" +
                                                      spaceFlag(paths.space) + "`");
  }
  target.url = record->url;
  target.caFile = record->caFile;
  target.localMesh = true;
  target.nkeySeedFile = nkeyOverride.empty() ? record->secretFile : nkeyOverride;
  if (nkeyOverride.empty() && record->mode == "auth") {
    SHOAL_RETURN_IF_ERROR(useAuthCredential(paths, target, postChannels));
  }
  return target;
}

Status explainConnectFailure(const BrokerTarget& target, const Status& failure) {
  if (failure.code() == StatusCode::kPermissionDenied) {
    std::string presented = !target.credentialsFile.empty()
                                ? "the credential " + target.credentialsFile
                            : target.nkeySeedFile.empty() ? "no credential"
                                                          : "the nkey in " + target.nkeySeedFile;
    return permissionDenied(
        "broker-auth-refused",
        "the broker " + target.url + " refused " + presented +
            (target.localMesh ? "; the local mesh admits only its owner's secret — run this as "
                                "the user who ran `shoal up`"
                              : "; pass the credential it requires with --nkey FILE"));
  }
  if (failure.code() == StatusCode::kUnavailable && target.localMesh) {
    return failure.withContext("broker " + target.url +
                               " unreachable (is the mesh up? `shoal status" +
                               spaceFlag(target.space) + "`)");
  }
  return failure;
}

}  // namespace shoal::supervisor
