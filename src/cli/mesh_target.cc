#include "cli/mesh_target.h"

#include <CLI/CLI.hpp>

#include "cli/option_checks.h"
#include "mesh/operator_identity.h"
#include "supervisor/auth_mode.h"
#include "supervisor/joined_credential.h"
#include "supervisor/mesh_paths.h"
#include "supervisor/peer_uid.h"
#include "supervisor/space_join.h"
#include "supervisor/user_identity.h"
#include "wire/principal.h"

namespace shoal::cli {

void addMeshTargetOptions(CLI::App* command, MeshTargetArgs& args, std::string_view timeoutWhat) {
  command->add_option("--space", args.space, "space name")->capture_default_str();
  command->add_option("--server", args.server, "broker URL (default: the local mesh)");
  command->add_option("--nkey", args.nkeyFile,
                      "file holding the nkey seed the broker requires (default: the local "
                      "mesh's secret)");
  command
      ->add_option("--timeout", args.timeoutSeconds,
                   "seconds to wait for " + std::string(timeoutWhat))
      ->capture_default_str()
      ->check(secondsUpTo(kMaxWaitSeconds));
}

Result<MeshTarget> resolveMeshTarget(const MeshTargetArgs& args) {
  SHOAL_ASSIGN_OR_RETURN(auto paths, supervisor::MeshPaths::resolve(args.space));
  return supervisor::resolveBrokerTarget(paths, args.server, args.nkeyFile, args.postChannels,
                                         args.asDaemon);
}

Result<std::unique_ptr<transport::Connection>> openConnection(const MeshTarget& target,
                                                              std::string_view name,
                                                              std::chrono::milliseconds timeout) {
  transport::ConnectOptions options;
  target.applyTo(options);
  options.name = std::string(name);
  options.allowReconnect = false;
  options.connectTimeout = timeout;
  auto conn = transport::Connection::connect(options);
  if (!conn.isOk()) return supervisor::explainConnectFailure(target, conn.status());
  return conn;
}

namespace {

// `target` connects under `held` from now on.
Status connectUnder(MeshTarget& target, const supervisor::CliCredential& held) {
  target.credentialsFile = held.credsFile;
  target.credentialsGuard = held.fileGuard;
  target.inboxPrefix = held.inboxPrefix;
  return Status::ok();
}

}  // namespace

Status usePrivilege(const MeshTargetArgs& args, MeshTarget& target, supervisor::Privilege privilege,
                    std::string_view what) {
  if (target.mode != "auth") return Status::ok();
  if (target.joined && privilege == supervisor::Privilege::kMailbox) {
    // The person's own mail: the manager issues their mail reader to this machine's daemon.
    SHOAL_ASSIGN_OR_RETURN(auto paths, supervisor::MeshPaths::resolve(args.space));
    SHOAL_ASSIGN_OR_RETURN(supervisor::JoinedSpace joined, supervisor::readJoinedSpace(paths));
    SHOAL_ASSIGN_OR_RETURN(supervisor::CliCredential held,
                           supervisor::joinedMailboxCredential(paths, joined));
    return connectUnder(target, held);
  }
  if (target.joined) {
    return failedPrecondition(
        "needs-authority-machine",
        std::string(what) + " needs the space owner's " +
            (privilege == supervisor::Privilege::kAdminReads       ? "history and traffic reads"
             : privilege == supervisor::Privilege::kRegistryWrites ? "channel registry writes"
                                                                   : "seat record writes") +
            ", which only the machine holding the space's authority can mint; run it there");
  }
  SHOAL_ASSIGN_OR_RETURN(auto paths, supervisor::MeshPaths::resolve(args.space));
  SHOAL_ASSIGN_OR_RETURN(supervisor::CliCredential held,
                         supervisor::privilegedCredential(paths, privilege));
  return connectUnder(target, held);
}

std::string seatOwnerOf(const MeshTargetArgs& args) {
  auto paths = supervisor::MeshPaths::resolve(args.space);
  if (!paths.isOk()) return std::string(wire::kLocalOwner);
  if (auto joined = supervisor::readJoinedSpace(*paths); joined.isOk()) return joined->owner;
  if (!supervisor::spaceUsesAuth(*paths)) return std::string(wire::kLocalOwner);
  auto identity = supervisor::ensureUserIdentity(paths->secretsDir);
  return identity.isOk() ? identity->owner : std::string(wire::kLocalOwner);
}

Result<std::unique_ptr<mesh::Endpoint>> openObserver(const MeshTarget& target,
                                                     std::string_view connectionName) {
  mesh::OperatorIdentity me = mesh::localOperator();
  mesh::EndpointOptions options;
  options.servers = {target.url};
  options.nkeySeedFile = target.nkeySeedFile;
  options.credentialsFile = target.credentialsFile;
  options.inboxPrefix = target.inboxPrefix;
  options.tlsCaFile = target.caFile;
  options.space = target.space;
  options.principal = target.caller;
  options.displayName = me.displayName;
  options.presence = false;
  options.receiveDirect = false;
  if (target.mode == "auth" && !target.joined) {
    // The person's credential names its lifecycle (its chat-history reader is
    // `chathist_<o>-<a>-<uid>`): the endpoint reads under that one, not a fresh uid.
    auto paths = supervisor::MeshPaths::resolve(target.space);
    if (!paths.isOk()) return paths.status();
    SHOAL_ASSIGN_OR_RETURN(options.lifecycleUid, supervisor::peerUid(*paths, target.caller));
  }
  options.connectionName = std::string(connectionName);
  options.onWarning = [](const Status&) {};  // a one-shot command reports its own outcome
  auto endpoint = mesh::Endpoint::open(std::move(options));
  if (!endpoint.isOk()) return supervisor::explainConnectFailure(target, endpoint.status());
  return endpoint;
}

}  // namespace shoal::cli
