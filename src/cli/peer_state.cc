#include "cli/peer_state.h"

#include <sstream>

#include <fmt/format.h>
#include <unistd.h>

#include "base/ids.h"
#include "supervisor/mesh_paths.h"
#include "supervisor/peer_uid.h"

namespace shoal::cli {
namespace {

Result<std::string> baseOf(const std::string& space, const wire::Principal& p) {
  SHOAL_ASSIGN_OR_RETURN(auto paths, supervisor::MeshPaths::resolve(space));
  return supervisor::peerFileBase(paths, p);
}

}  // namespace

std::string knownPeerLifecycleUid(const std::string& space, const wire::Principal& p) {
  auto paths = supervisor::MeshPaths::resolve(space);
  return paths.isOk() ? supervisor::knownPeerUid(paths.value(), p) : std::string();
}

Result<std::string> peerLifecycleUid(const std::string& space, const wire::Principal& p) {
  SHOAL_ASSIGN_OR_RETURN(auto paths, supervisor::MeshPaths::resolve(space));
  return supervisor::peerUid(paths, p);
}

Result<std::unique_ptr<FileLock>> lockPeerDurable(const std::string& space,
                                                  const wire::Principal& p,
                                                  const std::string& holder) {
  SHOAL_ASSIGN_OR_RETURN(std::string base, baseOf(space, p));
  auto lock = FileSystem::posix().lockFile(base + ".lock", holder);
  if (!lock.isOk()) {
    return lock.status().withContext(p.dotForm() +
                                     " is already joined (or its inbox followed) on this machine");
  }
  return lock;
}

Result<std::unique_ptr<FileLock>> takeMailReaderTurn(const std::string& space,
                                                     const wire::Principal& p,
                                                     std::chrono::milliseconds timeout) {
  SHOAL_ASSIGN_OR_RETURN(std::string base, baseOf(space, p));
  return lockFileWaiting(FileSystem::posix(), base + ".mail.lock",
                         fmt::format("pid {} (reading {}'s mail)", ::getpid(), p.dotForm()),
                         timeout);
}

Result<ReadMarks> ReadMarks::load(const std::string& space, const wire::Principal& p) {
  SHOAL_ASSIGN_OR_RETURN(std::string base, baseOf(space, p));
  ReadMarks marks;
  marks.path_ = base + ".read";
  auto text = FileSystem::posix().readFile(marks.path_);
  if (!text.isOk()) {
    if (text.status().code() == StatusCode::kNotFound) return marks;
    return text.status();
  }
  std::istringstream lines(*text);
  std::string id;
  while (std::getline(lines, id)) {
    if (!id.empty()) marks.add(id);
  }
  return marks;
}

void ReadMarks::add(const std::string& id) {
  if (!ids_.insert(id).second) return;
  order_.push_back(id);
  while (order_.size() > kMaxReadMarks) {
    ids_.erase(order_.front());
    order_.erase(order_.begin());
  }
}

Status ReadMarks::save() const {
  std::string text;
  for (const auto& id : order_)
    text += id + "\n";
  return writeFileAtomically(FileSystem::posix(), path_, text);
}

}  // namespace shoal::cli
