#include "mesh/channel_registry.h"

#include "transport/kv.h"
#include "wire/channel.h"
#include "wire/names.h"

namespace shoal::mesh {
namespace {

// The row's bytes, or nullopt when there is none (absent or deleted).
Result<std::optional<std::string>> row(transport::KeyValue& kv, std::string_view key) {
  auto entry = kv.get(key);
  if (entry.isOk()) {
    if (entry->operation != transport::KvOperation::kPut) return std::optional<std::string>();
    return std::optional<std::string>(entry->value);
  }
  if (entry.status().code() == StatusCode::kNotFound) return std::optional<std::string>();
  return entry.status();
}

}  // namespace

Result<EffectiveChannel> readEffectiveChannel(transport::JetStream& js, std::string_view space,
                                              std::string_view channel) {
  SHOAL_RETURN_IF_ERROR(wire::validateConcreteChannel(channel));
  SHOAL_ASSIGN_OR_RETURN(std::string bucket, wire::bucketName(wire::Bucket::kChannels, space));
  auto kv = transport::KeyValue::openBucket(js, bucket);
  if (!kv.isOk()) return kv.status().withContext("opening the channel registry");
  EffectiveChannel out;
  out.channel = std::string(channel);
  SHOAL_ASSIGN_OR_RETURN(auto defaults, row(*kv, wire::kChannelDefaultsKey));
  if (defaults) {
    auto d = wire::decodeChannelDefaults(*defaults);
    if (!d.isOk()) return d.status().withContext("the space's channel defaults");
    out.defaults = *d;
  }
  SHOAL_ASSIGN_OR_RETURN(auto config, row(*kv, channel));
  if (config) {
    auto c = wire::decodeChannelConfig(*config);
    if (!c.isOk()) return c.status().withContext("channel #" + std::string(channel));
    out.config = *c;
  }
  out.deliveryClass = wire::effectiveClass(out.config, out.defaults);
  out.replay = wire::effectiveReplay(out.config, out.defaults);
  out.replayWindowMs = wire::effectiveReplayWindowMs(out.config, out.defaults);
  return out;
}

}  // namespace shoal::mesh
