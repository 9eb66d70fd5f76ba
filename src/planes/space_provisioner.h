// Space and principal provisioning: the manager plane's JetStream resources (Cotal SPEC §8;
// docs/architecture.md, Processes). Only the manager creates streams, buckets and durables;
// agents bind to what it made.
//
// ensureSpace creates, when absent:
//   CHAT_<space>  cotal.<space>.chat.>   Limits, file, max_msgs_per_subject 1000, discard old,
//                                        allow_direct, duplicate window 2 min
//   DM_<space>    cotal.<space>.inst.>   Limits, file, no direct get, dup 2 min
//   TASK_<space>  cotal.<space>.svc.>    WorkQueue, file, no direct get, dup 2 min
//   WAKE_<space>  cotal.<space>.wake.> + cotal.<space>.rcpt.>  Limits, file, dup 2 min
//   INBOX_<space> cotal.<space>.dinbox.> Limits, file, max_msgs_per_subject 1000, dup 2 h
//   DLV_<space>   cotal.<space>.dlv.>    Limits, file, max_msgs_per_subject 1000, dup 2 h
//   cotal_presence_<space>  TTL 6000 ms, history 1
//   cotal_channels_<space>  no TTL, history 1, row `=defaults` = {"deliveryClass":"durable"}
//                           written only if absent (KV create), never overwritten
//   cotal_delivery_<space>  TTL 30 000 ms, history 1
//   cotal_members_<space>   no TTL, history 1 (durable memberships; the delivery plane writes)
//   cotal_acl_<space>       no TTL, history 1 (read ACL per lifecycle; provisioning writes)
// A resource that exists is compared on the fields above; a difference is reported as drift
// and never silently rewritten. Running it again creates nothing and says so.
//
// provisionPrincipal creates `dm_<o>-<a>-<uid>` on DM_<space> (filter
// `cotal.<space>.inst.<o>.<a>.>`, AckExplicit, ack wait 60 s, starting after the activation
// frontier = the DM stream's last_seq read now; frontier 0 ⇒ deliver all) and `svc_<role>` on
// TASK_<space> for each role (filter `cotal.<space>.svc.<role>.>`, AckExplicit, ack wait 60 s;
// role-shared, all holders pull-compete), `dlv_<o>-<a>-<uid>` on DLV_<space> (filter
// `cotal.<space>.dlv.<o>.<a>.<uid>`, AckExplicit, ack wait 60 s, deliver all: the lifecycle's
// durable channel copies) and the lifecycle's read-ACL row `<o>.<a>.<uid>` in cotal_acl_<space>
// when absent (open profile: `[">"]`, every channel; an existing row is never rewritten). An
// existing durable is left exactly as it is (it keeps its original frontier) and reported as
// existing.
//
// Thread safety: the functions may be called from any thread; they only use `js`.
// Lifetime: reports own their strings.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "transport/jetstream.h"
#include "wire/channel_config.h"
#include "wire/names.h"
#include "wire/principal.h"

namespace shoal::planes {

inline constexpr std::chrono::milliseconds kStreamDuplicateWindow{2 * 60 * 1000};
inline constexpr int64_t kChatMaxMsgsPerSubject = 1000;
inline constexpr std::chrono::milliseconds kPresenceTtl{6000};
inline constexpr std::chrono::milliseconds kDeliveryLeaseTtl{30000};
inline constexpr int kRegistryHistory = 1;
inline constexpr std::chrono::milliseconds kMessagingAckWait{60000};
// INBOX / DLV keep per-copy ids for 2 h, so a fan-out repeated after a crash stores nothing new.
inline constexpr std::chrono::milliseconds kBackstopDuplicateWindow{2 * 60 * 60 * 1000};
inline constexpr int64_t kBackstopMaxMsgsPerSubject = 1000;
// The read ACL provisioning writes for a lifecycle in the open (dev) profile: every channel.
inline constexpr std::string_view kOpenReadAcl = ">";

// Where the space runs; it fixes the space's default channel delivery class (seed 000
// "Channel delivery": local / self-hosted ⇒ durable).
enum class Deployment { kLocal, kSelfHosted };

struct SpaceProfile {
  Deployment deployment = Deployment::kLocal;
  int replicas = 1;  // R3 for a clustered broker
};

wire::DeliveryClass defaultDeliveryClass(const SpaceProfile& profile);

enum class ResourceKind { kStream, kBucket, kRow, kDurable };
enum class ResourceState { kCreated, kAlreadyPresent, kDrifted };

std::string_view resourceKindName(ResourceKind kind);
std::string_view resourceStateName(ResourceState state);

struct ResourceOutcome {
  ResourceKind kind = ResourceKind::kStream;
  std::string name;  // stream / bucket / durable name; a row is `<bucket>/<key>`
  ResourceState state = ResourceState::kCreated;
  std::vector<std::string> drift;  // kDrifted: "max_msgs_per_subject is 500, want 1000", ...
};

struct SpaceReport {
  std::string space;
  std::vector<ResourceOutcome> resources;  // in creation order

  std::vector<std::string> namesIn(ResourceState state) const;
  bool changedNothing() const { return namesIn(ResourceState::kCreated).empty(); }
};

// The exact configs ensureSpace creates (exposed so tests and drift checks share them).
transport::StreamConfig spaceStreamConfig(wire::Stream stream, std::string_view space,
                                          const SpaceProfile& profile);

// Creates what is missing; see the contract above. Errors: an invalid space
// (kInvalidArgument), or the first JetStream failure (with context naming the resource).
Result<SpaceReport> ensureSpace(transport::JetStream& js, std::string_view space,
                                const SpaceProfile& profile = {});

struct PrincipalReport {
  std::string dmDurable;
  bool dmCreated = false;
  uint64_t frontier = 0;  // the durable's activation frontier (original one if it existed)
  std::map<std::string, std::string> roleDurables;  // role -> svc_<role>
  std::map<std::string, bool> roleCreated;          // role -> created now
  std::string dlvDurable;
  bool dlvCreated = false;
  bool aclCreated = false;
};

// See the contract above. The space must have been ensured (kNotFound `stream-not-found`).
Result<PrincipalReport> provisionPrincipal(transport::JetStream& js, std::string_view space,
                                           const wire::Principal& principal,
                                           std::string_view lifecycleUid,
                                           const std::vector<std::string>& roles);

}  // namespace shoal::planes
