#include "mesh/channel_history.h"

#include "wire/channel.h"
#include "wire/names.h"
#include "wire/subject.h"

namespace shoal::mesh {

Result<HistoryPage> readChannelHistory(transport::JetStream& js, std::string_view space,
                                       const wire::Principal& reader, std::string_view lifecycleUid,
                                       std::string_view channel, const HistoryOptions& options) {
  SHOAL_RETURN_IF_ERROR(wire::validateConcreteChannel(channel));
  StoredRead read;
  SHOAL_ASSIGN_OR_RETURN(read.stream, wire::streamName(wire::Stream::kChat, space));
  SHOAL_ASSIGN_OR_RETURN(read.consumer, wire::chathistDurable(reader, lifecycleUid));
  SHOAL_ASSIGN_OR_RETURN(read.filter, wire::chatFilter(space, channel));
  read.description = "history read of " + std::string(channel);
  read.watermark = options.watermark;
  read.sinceMs = options.sinceMs;
  read.limit = options.limit;
  read.fetchWait = options.fetchWait;
  SHOAL_ASSIGN_OR_RETURN(StoredPage stored, readStored(js, read));
  HistoryPage page;
  page.channel = std::string(channel);
  page.watermark = stored.watermark;
  page.entries = std::move(stored.entries);
  page.skipped = stored.skipped;
  page.lastSkipReason = std::move(stored.lastSkipReason);
  return page;
}

}  // namespace shoal::mesh
