#include "mesh/mailbox.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "wire/names.h"
#include "wire/subject.h"
#include "wire/token.h"

namespace shoal::mesh {
namespace {

Result<StoredPage> readDm(transport::JetStream& js, const MailboxReader& reader, std::string filter,
                          std::string what, size_t limit) {
  StoredRead read;
  SHOAL_ASSIGN_OR_RETURN(read.stream, wire::streamName(wire::Stream::kDm, reader.space));
  SHOAL_ASSIGN_OR_RETURN(read.consumer, wire::dmhistConsumer(reader.me, reader.lifecycleUid));
  read.filter = std::move(filter);
  read.description = std::move(what);
  read.limit = limit;
  return readStored(js, read);
}

// `cotal.<space>.inst.*.*.<me>`: every DM `me` sent.
Result<std::string> sentFilter(std::string_view space, const wire::Principal& me) {
  SHOAL_RETURN_IF_ERROR(wire::validateSpace(space));
  SHOAL_RETURN_IF_ERROR(wire::validatePrincipal(me));
  return "cotal." + std::string(space) + ".inst.*.*." + me.owner + "." + me.actor;
}

// The one entry of `page` whose id matches, or nullopt; two matches are ambiguous.
Result<std::optional<StoredEntry>> pick(StoredPage page, std::string_view idOrSuffix) {
  std::optional<StoredEntry> found;
  for (auto& e : page.entries) {
    if (!idMatches(e.delivery.message.id, idOrSuffix)) continue;
    if (found && found->delivery.message.id != e.delivery.message.id) {
      return invalidArgument(
          "ambiguous-id",
          "more than one message ends with `" + std::string(idOrSuffix) + "`; give more of the id");
    }
    found = std::move(e);
  }
  return found;
}

}  // namespace

bool idMatches(std::string_view id, std::string_view idOrSuffix) {
  if (id == idOrSuffix) return true;
  return idOrSuffix.size() >= kMinIdSuffix && id.size() > idOrSuffix.size() &&
         id.ends_with(idOrSuffix);
}

Result<StoredPage> readInbox(transport::JetStream& js, const MailboxReader& reader, size_t limit) {
  SHOAL_ASSIGN_OR_RETURN(std::string filter, wire::dmFilter(reader.space, reader.me));
  return readDm(js, reader, std::move(filter), "inbox read of " + reader.me.dotForm(), limit);
}

Result<StoredPage> readConversation(transport::JetStream& js, const MailboxReader& reader,
                                    const wire::Principal& peer, size_t limit) {
  SHOAL_ASSIGN_OR_RETURN(std::string toMe, wire::instSubject(reader.space, reader.me, peer));
  SHOAL_ASSIGN_OR_RETURN(std::string toPeer, wire::instSubject(reader.space, peer, reader.me));
  const std::string what = "conversation of " + reader.me.dotForm() + " and " + peer.dotForm();
  SHOAL_ASSIGN_OR_RETURN(StoredPage in, readDm(js, reader, toMe, what, limit));
  StoredPage page = std::move(in);
  if (toPeer != toMe) {
    SHOAL_ASSIGN_OR_RETURN(StoredPage out, readDm(js, reader, toPeer, what, limit));
    page.watermark = std::max(page.watermark, out.watermark);
    page.skipped += out.skipped;
    for (auto& e : out.entries)
      page.entries.push_back(std::move(e));
    std::sort(page.entries.begin(), page.entries.end(),
              [](const StoredEntry& a, const StoredEntry& b) { return a.seq < b.seq; });
    if (limit != 0 && page.entries.size() > limit) {
      page.entries.erase(page.entries.begin(),
                         page.entries.end() - static_cast<std::ptrdiff_t>(limit));
    }
  }
  return page;
}

Result<StoredEntry> findMessage(transport::JetStream& js, const MailboxReader& reader,
                                std::string_view idOrSuffix) {
  if (idOrSuffix.size() < kMinIdSuffix) {
    return invalidArgument("bad-message-id",
                           "name a message by its id, or by at least its last 6 characters");
  }
  SHOAL_ASSIGN_OR_RETURN(StoredPage inbox, readInbox(js, reader));
  SHOAL_ASSIGN_OR_RETURN(auto found, pick(std::move(inbox), idOrSuffix));
  if (found) return *found;
  SHOAL_ASSIGN_OR_RETURN(std::string sent, sentFilter(reader.space, reader.me));
  SHOAL_ASSIGN_OR_RETURN(StoredPage mine, readDm(js, reader, sent, "sent mail", 0));
  SHOAL_ASSIGN_OR_RETURN(found, pick(std::move(mine), idOrSuffix));
  if (found) return *found;
  StoredRead chat;
  SHOAL_ASSIGN_OR_RETURN(chat.stream, wire::streamName(wire::Stream::kChat, reader.space));
  SHOAL_ASSIGN_OR_RETURN(chat.consumer, wire::chathistDurable(reader.me, reader.lifecycleUid));
  SHOAL_ASSIGN_OR_RETURN(chat.filter, wire::chatFilter(reader.space, ">"));
  chat.description = "message lookup";
  SHOAL_ASSIGN_OR_RETURN(StoredPage posts, readStored(js, chat));
  SHOAL_ASSIGN_OR_RETURN(found, pick(std::move(posts), idOrSuffix));
  if (found) return *found;
  return notFound("unknown-message", "no message `" + std::string(idOrSuffix) +
                                         "` to or from you, nor in the space's channels "
                                         "(`shoal inbox --all` lists your ids)");
}

}  // namespace shoal::mesh
