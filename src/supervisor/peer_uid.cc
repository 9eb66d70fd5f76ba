#include "supervisor/peer_uid.h"

#include "base/file_system.h"
#include "base/ids.h"

namespace shoal::supervisor {
namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

}  // namespace

Result<std::string> peerFileBase(const MeshPaths& paths, const wire::Principal& p) {
  std::string dir = paths.stateDir + "/peers/" + paths.space;
  SHOAL_RETURN_IF_ERROR(FileSystem::posix().createDirs(dir).status());
  return dir + "/" + p.owner + "." + p.actor;
}

std::string knownPeerUid(const MeshPaths& paths, const wire::Principal& p) {
  auto base = peerFileBase(paths, p);
  if (!base.isOk()) return "";
  auto existing = FileSystem::posix().readFile(*base + ".uid");
  if (!existing.isOk()) return "";
  std::string uid = trimmed(*existing);
  return isLifecycleUid(uid) ? uid : "";
}

Result<std::string> peerUid(const MeshPaths& paths, const wire::Principal& p) {
  std::string known = knownPeerUid(paths, p);
  if (!known.empty()) return known;
  SHOAL_ASSIGN_OR_RETURN(std::string base, peerFileBase(paths, p));
  SHOAL_ASSIGN_OR_RETURN(std::string uid, newLifecycleUid());
  SHOAL_RETURN_IF_ERROR(writeFileAtomically(FileSystem::posix(), base + ".uid", uid + "\n"));
  return uid;
}

}  // namespace shoal::supervisor
