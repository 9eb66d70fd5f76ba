#include "supervisor/user_identity.h"

#include <algorithm>
#include <array>
#include <cctype>

#include <openssl/evp.h>

#include "base/base32.h"
#include "base/file_system.h"
#include "base/owner_only.h"
#include "transport/nkey.h"

namespace shoal::supervisor {

Result<std::string> ownerTokenOf(std::string_view userPublicKey) {
  if (!transport::isNKeyPublic(userPublicKey, transport::NKeyRole::kUser)) {
    return invalidArgument("bad-user-key", "not a user public key (U…)");
  }
  std::array<unsigned char, 32> digest{};
  unsigned int len = 0;
  if (EVP_Digest(userPublicKey.data(), userPublicKey.size(), digest.data(), &len, EVP_sha256(),
                 nullptr) != 1) {
    return internalError("openssl", "SHA-256 failed");
  }
  std::string b32 =
      base32Encode(std::string_view(reinterpret_cast<const char*>(digest.data()), len));
  std::transform(b32.begin(), b32.end(), b32.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return "u_" + b32.substr(0, 26);
}

Result<UserIdentity> ensureUserIdentity(const std::string& secretsDir) {
  SHOAL_RETURN_IF_ERROR(ensureOwnerOnlyDir(secretsDir));
  FileSystem& fs = FileSystem::posix();
  UserIdentity id;
  id.seedFile = secretsDir + "/identity.seed";
  if (!fs.exists(id.seedFile)) {
    SHOAL_ASSIGN_OR_RETURN(transport::NKeyPair fresh,
                           transport::generateNKey(transport::NKeyRole::kUser));
    SHOAL_RETURN_IF_ERROR(writeFileAtomically(fs, id.seedFile, fresh.seed + "\n"));
  }
  SHOAL_RETURN_IF_ERROR(checkOwnerOnlyFile(id.seedFile));
  SHOAL_ASSIGN_OR_RETURN(std::string text, fs.readFile(id.seedFile));
  SHOAL_ASSIGN_OR_RETURN(transport::NKeyPair pair, transport::nkeyFromSeed(text));
  if (pair.role != transport::NKeyRole::kUser) {
    return invalidArgument("bad-nkey-seed", id.seedFile + " holds a key that is not a user's");
  }
  id.publicKey = pair.publicKey;
  SHOAL_ASSIGN_OR_RETURN(id.owner, ownerTokenOf(id.publicKey));
  return id;
}

}  // namespace shoal::supervisor
