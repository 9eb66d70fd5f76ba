#include "supervisor/mesh_secret.h"

#include "base/file_system.h"
#include "base/owner_only.h"
#include "transport/nkey.h"

namespace shoal::supervisor {

Result<MeshSecret> readMeshSecret(const std::string& seedFile) {
  FileSystem& fs = FileSystem::posix();
  if (!fs.exists(seedFile)) {
    return notFound("no-mesh-secret", "the mesh secret " + seedFile + " does not exist");
  }
  SHOAL_RETURN_IF_ERROR(checkOwnerOnlyFile(seedFile));
  SHOAL_ASSIGN_OR_RETURN(std::string text, fs.readFile(seedFile));
  auto pair = transport::nkeyFromSeed(text);
  if (!pair.isOk() || pair->role != transport::NKeyRole::kUser) {
    return dataLoss("bad-mesh-secret", "the mesh secret " + seedFile +
                                           " does not hold a user nkey seed; remove it and run "
                                           "`shoal down && shoal up` for a new one");
  }
  return MeshSecret{seedFile, pair->publicKey};
}

Result<MeshSecret> ensureMeshSecret(const MeshPaths& paths) {
  SHOAL_RETURN_IF_ERROR(ensureOwnerOnlyDir(paths.secretsDir));
  auto existing = readMeshSecret(paths.meshSecretFile);
  if (existing.isOk() || existing.status().code() != StatusCode::kNotFound) return existing;
  SHOAL_ASSIGN_OR_RETURN(auto pair, transport::generateNKey(transport::NKeyRole::kUser));
  SHOAL_RETURN_IF_ERROR(
      writeFileAtomically(FileSystem::posix(), paths.meshSecretFile, pair.seed + "\n"));
  return MeshSecret{paths.meshSecretFile, pair.publicKey};
}

std::string brokerAuthorization(const MeshSecret& secret) {
  return "# Only the holder of the mesh secret (" + secret.seedFile +
         ") may connect.\n"
         "authorization {\n  users: [\n    { nkey: \"" +
         secret.publicKey + "\" }\n  ]\n}\n";
}

}  // namespace shoal::supervisor
