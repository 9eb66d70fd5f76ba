// Mailbox: one principal's own mail, read from the space's streams without consuming anything
// — for the person at the CLI (`local.<login>`), whose messages are what agents answer.
//
//   readInbox          the DMs sent to `me` (DM_<space>, filter `cotal.<space>.inst.<me>.>`),
//                      oldest first; what arrived before `me` ever looked is there too (the
//                      stream keeps it; `me`'s DM durable only starts at its frontier).
//   readConversation   the DMs between `me` and `peer` both ways, merged in stream order.
//   findMessage        one message by id (or a unique suffix of at least 6 characters, the
//                      short id listings show): `me`'s inbox, then what `me` sent, then the
//                      space's channel posts. kNotFound `unknown-message`; an ambiguous
//                      suffix is kInvalidArgument `ambiguous-id`.
// Every read goes through readStored (stream_read.h) under `me`'s reader consumer
// `dmhist_<o>-<a>-<uid>` (CHAT: `chathist_…`), so reads by one lifecycle must not overlap.
//
// Thread safety: blocks the calling thread; uses `js` only during the call.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"
#include "mesh/stream_read.h"
#include "transport/jetstream.h"
#include "wire/principal.h"

namespace shoal::mesh {

inline constexpr size_t kMinIdSuffix = 6;

struct MailboxReader {
  std::string space;
  wire::Principal me;
  std::string lifecycleUid;  // names the reader consumers
};

Result<StoredPage> readInbox(transport::JetStream& js, const MailboxReader& reader,
                             size_t limit = 0);
Result<StoredPage> readConversation(transport::JetStream& js, const MailboxReader& reader,
                                    const wire::Principal& peer, size_t limit = 0);
Result<StoredEntry> findMessage(transport::JetStream& js, const MailboxReader& reader,
                                std::string_view idOrSuffix);

// Whether `id` is `idOrSuffix` or ends with it (a suffix of at least kMinIdSuffix characters).
bool idMatches(std::string_view id, std::string_view idOrSuffix);

}  // namespace shoal::mesh
