// PeerUid: where this machine keeps the state of a principal the person speaks as, and that
// principal's lifecycle uid — one rule shared by the CLI (`shoal join`, `shoal inbox`) and the
// auth-mode credential the person's commands connect with (auth_mode.h), whose rail grants
// name the same uid.
//
//   <state>/peers/<space>/<o>.<a>.uid    the lifecycle uid (made on first use)
//
// Thread safety: free functions over the file system.
#pragma once

#include <string>

#include "base/result.h"
#include "supervisor/mesh_paths.h"
#include "wire/principal.h"

namespace shoal::supervisor {

// `<state>/peers/<space>/<o>.<a>` (its directory made if absent); files add a suffix.
Result<std::string> peerFileBase(const MeshPaths& paths, const wire::Principal& p);

// The uid kept for `p`, or empty when none (or the file is damaged).
std::string knownPeerUid(const MeshPaths& paths, const wire::Principal& p);

// The uid kept for `p`, minted and kept on first use.
Result<std::string> peerUid(const MeshPaths& paths, const wire::Principal& p);

}  // namespace shoal::supervisor
