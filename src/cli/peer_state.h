// What this machine keeps for a principal the person at the CLI speaks as (`shoal join`,
// `shoal inbox`): its lifecycle uid, so a restarted `join` or the next `inbox --follow` binds
// the same DM durable, and which of its messages the person has read.
//
//   <state>/peers/<space>/<o>.<a>.uid    the lifecycle uid (made on first use)
//   <state>/peers/<space>/<o>.<a>.lock   held by whoever binds the DM durable (join, inbox
//                                        --follow): two binders would split its messages
//   <state>/peers/<space>/<o>.<a>.read   read message ids, one per line, the newest 2,000
//   <state>/peers/<space>/<o>.<a>.mail.lock  the turn on its mail reader (below)
//
// Thread safety: CLI thread only.
#pragma once

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/file_system.h"
#include "base/result.h"
#include "wire/principal.h"

namespace shoal::cli {

inline constexpr size_t kMaxReadMarks = 2000;

// The principal's lifecycle uid, minted and kept on first use.
Result<std::string> peerLifecycleUid(const std::string& space, const wire::Principal& p);
// The uid when one was ever kept, else empty (never mints).
std::string knownPeerLifecycleUid(const std::string& space, const wire::Principal& p);

// The binder's lock; kFailedPrecondition naming the holder when another process has it.
Result<std::unique_ptr<FileLock>> lockPeerDurable(const std::string& space,
                                                  const wire::Principal& p,
                                                  const std::string& holder);

// The turn on the principal's mail reader: its one history consumer on DM_<space> (the grants
// name it, wire::dmhistConsumer), which two reads at once would take from each other (the
// first to finish deletes it under the other). Waited for up to `timeout`; `lock-held` after.
Result<std::unique_ptr<FileLock>> takeMailReaderTurn(const std::string& space,
                                                     const wire::Principal& p,
                                                     std::chrono::milliseconds timeout);

class ReadMarks {
 public:
  static Result<ReadMarks> load(const std::string& space, const wire::Principal& p);
  bool has(const std::string& id) const { return ids_.count(id) != 0; }
  void add(const std::string& id);
  Status save() const;

 private:
  std::string path_;
  std::vector<std::string> order_;  // oldest first
  std::set<std::string> ids_;
};

}  // namespace shoal::cli
