#include "supervisor/credential_files.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <system_error>
#include <utility>

#include <unistd.h>

#include "base/file_system.h"
#include "base/process_info.h"

namespace shoal::supervisor {
namespace {

// Longer than any mint (a local signature, or one request to the manager on a joined machine).
constexpr std::chrono::seconds kTurnTimeout{10};

class RemoveOnLastCopy {
 public:
  explicit RemoveOnLastCopy(std::string path) : path_(std::move(path)) {}
  RemoveOnLastCopy(const RemoveOnLastCopy&) = delete;
  RemoveOnLastCopy& operator=(const RemoveOnLastCopy&) = delete;
  ~RemoveOnLastCopy() { (void)FileSystem::posix().remove(path_); }

 private:
  std::string path_;
};

// `<stem>.<pid>.<n>.creds` files in the directory of `stem` whose process is gone.
void sweepOrphans(const std::string& stem) {
  const std::filesystem::path base(stem);
  const std::string prefix = base.filename().string() + ".";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(base.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || !name.ends_with(".creds")) continue;
    const std::string rest = name.substr(prefix.size(), name.size() - prefix.size() - 6);
    const std::string pid = rest.substr(0, rest.find('.'));
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (!processExists(static_cast<pid_t>(std::stol(pid)))) {
      (void)FileSystem::posix().remove(entry.path().string());
    }
  }
}

}  // namespace

Result<CliCredential> heldOrMinted(const std::string& file,
                                   const std::function<std::optional<CliCredential>()>& held,
                                   const std::function<Result<CliCredential>()>& mint) {
  SHOAL_ASSIGN_OR_RETURN(
      auto turn, lockFileWaiting(FileSystem::posix(), file + ".lock",
                                 "pid " + std::to_string(::getpid()) + " (minting " + file + ")",
                                 kTurnTimeout));
  if (auto found = held()) return *found;
  return mint();
}

OwnCredsFile ownCredsFile(const std::string& shared) {
  const std::string stem =
      shared.ends_with(".creds") ? shared.substr(0, shared.size() - 6) : shared;
  sweepOrphans(stem);
  OwnCredsFile out;
  static std::atomic<uint64_t> made{0};
  out.path = stem + "." + std::to_string(::getpid()) + "." + std::to_string(++made) + ".creds";
  out.guard = std::make_shared<RemoveOnLastCopy>(out.path);
  return out;
}

}  // namespace shoal::supervisor
