// Names of the JetStream objects of a space: streams, KV buckets, durable consumers and the
// lifecycle-scoped principal forms they are keyed on (Cotal §8, Appendix B; docs/architecture.md,
// Conventions).
//
//   streams   CHAT_<space> DM_<space> TASK_<space> INBOX_<space> DLV_<space> WAKE_<space>
//   buckets   cotal_presence_<space> cotal_channels_<space> cotal_members_<space>
//             cotal_acl_<space> cotal_delivery_<space> cotal_membership_<space>
//             cotal_manager_<space>
//   durables  dm_<o>-<a>-<uid>  dlv_<o>-<a>-<uid>  chathist_<o>-<a>-<uid>  svc_<role>
//   forms     name-form <o>-<a>-<uid> (consumer names), key-form <o>.<a>.<uid> (ACL keys)
//
// Every builder validates its inputs (space and role are routing tokens, principals are real,
// uids match [a-z0-9]{26,32}), so a returned name is always a legal JetStream name or KV key.
//
// Thread safety: pure functions.
// Lifetime: results own their bytes; constants have static storage.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "wire/principal.h"

namespace shoal::wire {

enum class Stream { kChat, kDm, kTask, kInbox, kDlv, kWake };

// CHAT_<space>, ...
Result<std::string> streamName(Stream stream, std::string_view space);
// The subjects a stream stores: CHAT `cotal.<space>.chat.>`, DM `…inst.>`, TASK `…svc.>`,
// INBOX `…dinbox.>`, DLV `…dlv.>`, WAKE `…wake.>` and `…rcpt.>` (receipts live with wake
// events: docs/architecture.md, Conventions).
Result<std::vector<std::string>> streamSubjects(Stream stream, std::string_view space);

enum class Bucket {
  kPresence,
  kChannels,
  kMembers,
  kAcl,
  kDelivery,
  kMembership,
  kManager,
  kSeats,     // Shoal's own: the seat profiles the daemons run (shoal_seats_<space>)
  kMachines,  // Shoal's own: which daemon holds each machine name (shoal_machines_<space>)
  kInvites,   // Shoal's own: the join invites already used (shoal_invites_<space>)
};

// cotal_presence_<space>, ... (the KV API stream is `KV_` + this name).
Result<std::string> bucketName(Bucket bucket, std::string_view space);

// Reserved presence key (TTL canary); readers ignore it.
inline constexpr std::string_view kPresenceCanaryKey = "_cotal_ttl_reconcile";
// The delivery plane's single shard lease key in cotal_delivery_<space>.
inline constexpr std::string_view kDeliveryLeaseKey = "lease.0";

// `<o>-<a>-<uid>`: the lifecycle-scoped name-form.
Result<std::string> lifecycleNameForm(const Principal& p, std::string_view lifecycleUid);
// `<o>.<a>.<uid>`: the lifecycle-scoped subject/KV form (ACL registry key).
Result<std::string> lifecycleKeyForm(const Principal& p, std::string_view lifecycleUid);

Result<std::string> dmDurable(const Principal& p, std::string_view lifecycleUid);
Result<std::string> dlvDurable(const Principal& p, std::string_view lifecycleUid);
Result<std::string> chathistDurable(const Principal& p, std::string_view lifecycleUid);
// `dmhist_<o>-<a>-<uid>`: a transient read-only reader of DM_<space> (Shoal's, not Cotal's).
Result<std::string> dmhistConsumer(const Principal& p, std::string_view lifecycleUid);
// `svc_<role>`: role-shared, not lifecycle-scoped.
Result<std::string> svcDurable(std::string_view role);

// Durable membership registry key `<channel>/<o>.<a>.<uid>` (concrete channel).
Result<std::string> memberKey(std::string_view channel, const Principal& p,
                              std::string_view lifecycleUid);

}  // namespace shoal::wire
