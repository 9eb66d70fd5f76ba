// Where a seat keeps its own files inside its working directory: `<cwd>/.shoal/` and nowhere
// else — the ownership journal `.daemon-state.json` and its lock, the MCP client config (a
// bearer token) and the runtime log — so a seat never dirties the user's project.
//
//   prepareSeatFiles(fs, cwd)  creates `<cwd>/.shoal` (0700), then moves a journal of the older
//                              layout (`<cwd>/.daemon-state.json`) into it once: under the old
//                              lock (a daemon still holding it is refused, `lock-held`), one
//                              rename, both directories fsynced, the old lock removed. A
//                              journal in both places is refused (`journal-location-conflict`):
//                              which one is current cannot be told.
//   excludeFromGit(cwd)        when `cwd` is inside a git worktree, adds `.shoal/` to the
//                              repository's `info/exclude` (once; linked worktrees use their
//                              common dir). A tracked `.gitignore` is never edited.
//
// Thread safety: free functions; one seat opens its files at a time.
#pragma once

#include <string>

#include "base/file_system.h"
#include "base/status.h"

namespace shoal::daemon {

std::string seatFilesDir(const std::string& cwd);  // `<cwd>/.shoal`

Status prepareSeatFiles(FileSystem& fs, const std::string& cwd);

// OK when there is nothing to do (not in a worktree, already excluded).
Status excludeFromGit(const std::string& cwd);

}  // namespace shoal::daemon
