#include "base/owner_only.h"

#include <cerrno>

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_system.h"

namespace shoal {

Status ensureOwnerOnlyDir(const std::string& dir) {
  auto made = FileSystem::posix().createDirs(dir);
  if (!made.isOk()) return made.status();
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return statusFromErrno(errno, "stat", dir);
  if (st.st_uid != ::geteuid()) {
    return permissionDenied("not-owner",
                            fmt::format("{} belongs to uid {}, not to you (uid {}); Shoal keeps "
                                        "secrets only in directories of their owner",
                                        dir, st.st_uid, ::geteuid()));
  }
  if ((st.st_mode & 077) != 0 && ::chmod(dir.c_str(), 0700) != 0) {
    return statusFromErrno(errno, "chmod 700", dir);
  }
  return Status::ok();
}

Status checkOwnerOnlyFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return statusFromErrno(errno, "stat", path);
  if (st.st_uid != ::geteuid()) {
    return permissionDenied("secret-exposed",
                            fmt::format("{} belongs to uid {}, not to you (uid {}); remove it "
                                        "and let Shoal write a new one",
                                        path, st.st_uid, ::geteuid()));
  }
  if ((st.st_mode & 077) != 0) {
    return permissionDenied("secret-exposed",
                            fmt::format("{} is readable or writable by others (mode {:03o}); "
                                        "`chmod 600 {}`, and consider it leaked: remove it and "
                                        "restart the mesh for a new one",
                                        path, st.st_mode & 0777, path));
  }
  return Status::ok();
}

}  // namespace shoal
