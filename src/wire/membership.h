// Durable channel membership and the read ACL, as the delivery plane keeps them (Cotal SPEC §7;
// seed 000 "Channel delivery"):
//
//   cotal_members_<space>  key `<channel>/<o>.<a>.<uid>`, value MembershipRecord:
//     {"channel","owner":"<o>.<a>" (the full principal; the legacy field name),"lifecycleUid",
//      "state":"durable-active"|"live-confirmed","joinCursor","leaveCursor"?,"activated",
//      "generation","writerIdentity","updatedAt"}
//   cotal_acl_<space>      key `<o>.<a>.<uid>`, value AclRecord:
//     {"allowSubscribe":["team.>",…],"revision","updatedAt"}
//
// Only the delivery plane writes memberships (agents never self-assert one); only the manager
// writes ACL rows. A membership is a read boundary for the backstop, not authorisation: a copy
// of CHAT sequence `seq` is deliverable iff joinCursor < seq ≤ leaveCursor (no leaveCursor = no
// upper bound). A present leaveCursor is a tombstone (state live-confirmed); a rejoin writes a
// new joinCursor and generation + 1, so the gap is never redelivered.
//
// Thread safety: pure functions. Lifetime: value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "wire/principal.h"

namespace shoal::wire {

struct MembershipRecord {
  std::string channel;  // concrete
  Principal member;
  std::string lifecycleUid;
  uint64_t joinCursor = 0;
  std::optional<uint64_t> leaveCursor;  // present: left (tombstone)
  bool activated = false;               // reporting only, never a delivery gate
  uint64_t generation = 0;
  std::string writerIdentity;
  int64_t updatedAt = 0;  // Unix epoch ms

  bool active() const { return !leaveCursor.has_value(); }
  // joinCursor < seq ≤ leaveCursor.
  bool covers(uint64_t seq) const;
  bool operator==(const MembershipRecord&) const = default;
};

Result<std::string> encodeMembership(const MembershipRecord& record);
// Reasons: malformed-json, bad-membership (types, a non-concrete channel, a bad principal,
// leaveCursor < joinCursor).
Result<MembershipRecord> decodeMembership(std::string_view json);

struct AclRecord {
  std::vector<std::string> allowSubscribe;  // channel patterns this lifecycle may read
  uint64_t revision = 0;
  int64_t updatedAt = 0;

  // Some pattern matches the concrete `channel` (`team.>` does not cover bare `team`).
  bool covers(std::string_view channel) const;
  bool operator==(const AclRecord&) const = default;
};

Result<std::string> encodeAcl(const AclRecord& record);
// Reasons: malformed-json, bad-acl (types, an invalid pattern).
Result<AclRecord> decodeAcl(std::string_view json);

}  // namespace shoal::wire
