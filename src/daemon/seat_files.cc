#include "daemon/seat_files.h"

#include <sys/stat.h>

#include "journal/ownership_journal.h"

namespace shoal::daemon {
namespace {

constexpr std::string_view kExcludeLine = ".shoal/";

std::string parentOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
    s.pop_back();
  return s;
}

// The repository directory whose info/exclude applies to `cwd`, or empty.
std::string gitCommonDir(const std::string& cwd) {
  FileSystem& fs = FileSystem::posix();
  for (std::string dir = cwd;; dir = parentOf(dir)) {
    const std::string dotGit = dir + "/.git";
    struct stat st {};
    if (::stat(dotGit.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) return dotGit;
      // A linked worktree or submodule: `gitdir: <path>`, and maybe a `commondir` in it.
      auto text = fs.readFile(dotGit);
      if (!text.isOk() || text->rfind("gitdir: ", 0) != 0) return "";
      std::string gitdir = trimmed(text->substr(8));
      if (!gitdir.empty() && gitdir.front() != '/') gitdir = dir + "/" + gitdir;
      auto common = fs.readFile(gitdir + "/commondir");
      if (!common.isOk()) return gitdir;
      std::string c = trimmed(*common);
      return c.front() == '/' ? c : gitdir + "/" + c;
    }
    if (dir == "/") return "";
  }
}

}  // namespace

std::string seatFilesDir(const std::string& cwd) {
  return cwd + "/.shoal";
}

Status prepareSeatFiles(FileSystem& fs, const std::string& cwd) {
  const std::string dir = seatFilesDir(cwd);
  SHOAL_RETURN_IF_ERROR(fs.createDirs(dir).status());
  ::chmod(dir.c_str(), 0700);  // the MCP token and the journal's message bodies live here
  const std::string oldJournal = cwd + "/" + std::string(journal::kStateFileName);
  const std::string newJournal = dir + "/" + std::string(journal::kStateFileName);
  if (!fs.exists(oldJournal)) return Status::ok();
  if (fs.exists(newJournal)) {
    return failedPrecondition("journal-location-conflict",
                              "seat journals exist both at " + oldJournal +
                                  " (the old place) and " + newJournal +
                                  "; keep the current one and remove the other");
  }
  const std::string oldLock = cwd + "/" + std::string(journal::kLockFileName);
  auto lock = fs.lockFile(oldLock, "shoal daemon (moving the journal into .shoal/)");
  if (!lock.isOk()) return lock.status().withContext("moving " + oldJournal);
  SHOAL_RETURN_IF_ERROR(fs.rename(oldJournal, newJournal));
  SHOAL_RETURN_IF_ERROR(fs.syncDir(dir));
  SHOAL_RETURN_IF_ERROR(fs.syncDir(cwd));
  (void)fs.remove(oldLock);
  return Status::ok();
}

Status excludeFromGit(const std::string& cwd) {
  const std::string common = gitCommonDir(cwd);
  if (common.empty()) return Status::ok();
  FileSystem& fs = FileSystem::posix();
  const std::string exclude = common + "/info/exclude";
  std::string text = fs.readFile(exclude).valueOr("");
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (trimmed(text.substr(pos, end - pos)) == kExcludeLine) return Status::ok();
    pos = end + 1;
  }
  SHOAL_RETURN_IF_ERROR(fs.createDirs(common + "/info").status());
  if (!text.empty() && text.back() != '\n') text += '\n';
  text += "# a Shoal seat's own files (journal, MCP token, runtime log)\n";
  text += std::string(kExcludeLine) + "\n";
  return writeFileAtomically(fs, exclude, text);
}

}  // namespace shoal::daemon
