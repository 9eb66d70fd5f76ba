// The person's credential files, shared by the commands that run at once (auth mode).
//
// A command's credential is a `.creds` file nats.c reads when it connects (and again at each
// reconnect). Two kinds:
//   - a shared one (`<space>-cli.creds`, `-admin`, `-registrar`, `-mailbox`, a joined machine's
//     `cli.creds`): reused while valid, minted again when not. Commands started together take
//     turns on `<file>.lock`, so the second finds the first one's fresh credential instead of
//     replacing the file between the first one's mint and its connect (which pairs one
//     command's inbox with another's credential: every request then times out);
//   - a command's own (`<stem>.<pid>.<n>.creds` beside the shared one): a credential minted for one
//     command only (the channels it posts to), which no other command may replace. It is
//     removed when the last copy of its guard goes, and files left by commands that died are
//     removed by the next one.
//
// Thread safety: free functions over the file system; the lock orders processes, not threads.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/result.h"
#include "supervisor/auth_mode.h"

namespace shoal::supervisor {

// The credential `held` finds in the shared `file` (heldCredential's rule), else `mint(file)`,
// with `<file>.lock` held throughout (waited for up to a few seconds: `lock-held` after that).
Result<CliCredential> heldOrMinted(const std::string& file,
                                   const std::function<std::optional<CliCredential>()>& held,
                                   const std::function<Result<CliCredential>()>& mint);

// A file of this command's own beside `shared`, and the guard that removes it.
struct OwnCredsFile {
  std::string path;
  std::shared_ptr<const void> guard;
};
OwnCredsFile ownCredsFile(const std::string& shared);

}  // namespace shoal::supervisor
