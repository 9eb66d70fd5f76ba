// Owner-only places: the directories and files that hold what only the mesh owner may read —
// the mesh secret, the daemon's profile key, bearer tokens, the broker's store, seat journals
// (the project's rule: secrets live in 0600 files in 0700 directories).
//
//   ensureOwnerOnlyDir(dir)    creates `dir` (and missing parents, 0700) or, when it exists
//                              and belongs to this user, tightens it to 0700; a directory of
//                              another user is refused (kPermissionDenied `not-owner`) — a
//                              secret must never be placed where someone else can swap it.
//   checkOwnerOnlyFile(path)   the file exists, belongs to this user and no other user can read
//                              or write it (kPermissionDenied `secret-exposed` otherwise, naming
//                              the mode and the remedy `chmod 600`).
//
// Thread safety: free functions; the OS serialises the calls.
#pragma once

#include <string>

#include "base/status.h"

namespace shoal {

Status ensureOwnerOnlyDir(const std::string& dir);
Status checkOwnerOnlyFile(const std::string& path);

}  // namespace shoal
