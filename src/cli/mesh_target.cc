#include "cli/mesh_target.h"

#include <CLI/CLI.hpp>

#include "base/file_system.h"
#include "mesh/operator_identity.h"
#include "supervisor/mesh_paths.h"
#include "supervisor/mesh_record.h"

namespace shoal::cli {

void addMeshTargetOptions(CLI::App* command, MeshTargetArgs& args, std::string_view timeoutWhat) {
  command->add_option("--space", args.space, "space name")->capture_default_str();
  command->add_option("--server", args.server, "broker URL (default: the local mesh)");
  command
      ->add_option("--timeout", args.timeoutSeconds,
                   "seconds to wait for " + std::string(timeoutWhat))
      ->capture_default_str();
}

Result<MeshTarget> resolveMeshTarget(const MeshTargetArgs& args) {
  SHOAL_ASSIGN_OR_RETURN(auto paths, supervisor::MeshPaths::resolve(args.space));
  SHOAL_ASSIGN_OR_RETURN(
      std::string url,
      supervisor::meshBrokerUrl(FileSystem::posix(), paths.registryFile, args.server));
  return MeshTarget{paths.space, url};
}

Result<std::unique_ptr<mesh::Endpoint>> openObserver(const MeshTarget& target,
                                                     std::string_view connectionName) {
  mesh::OperatorIdentity me = mesh::localOperator();
  mesh::EndpointOptions options;
  options.servers = {target.url};
  options.space = target.space;
  options.principal = me.principal;
  options.displayName = me.displayName;
  options.presence = false;
  options.receiveDirect = false;
  options.connectionName = std::string(connectionName);
  options.onWarning = [](const Status&) {};  // a one-shot command reports its own outcome
  auto endpoint = mesh::Endpoint::open(std::move(options));
  if (!endpoint.isOk() && endpoint.status().code() == StatusCode::kUnavailable) {
    return endpoint.status().withContext("broker " + target.url +
                                         " unreachable (is the mesh up? `shoal status`)");
  }
  return endpoint;
}

}  // namespace shoal::cli
