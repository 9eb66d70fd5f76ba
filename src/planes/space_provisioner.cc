#include "planes/space_provisioner.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "base/log.h"
#include "transport/kv.h"
#include "wire/membership.h"
#include "wire/subject.h"
#include "wire/token.h"

namespace shoal::planes {
namespace {

using transport::JetStream;
using transport::StreamConfig;

constexpr std::string_view kKvStreamPrefix = "KV_";

std::string_view retentionName(transport::RetentionPolicy r) {
  switch (r) {
    case transport::RetentionPolicy::kLimits:
      return "limits";
    case transport::RetentionPolicy::kInterest:
      return "interest";
    case transport::RetentionPolicy::kWorkQueue:
      return "workqueue";
  }
  return "?";
}

// Differences between what exists and what the space needs, one line per field.
std::vector<std::string> streamDrift(const StreamConfig& have, const StreamConfig& want) {
  std::vector<std::string> out;
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  if (sorted(have.subjects) != sorted(want.subjects)) {
    out.push_back(fmt::format("subjects are [{}], want [{}]", fmt::join(have.subjects, ", "),
                              fmt::join(want.subjects, ", ")));
  }
  if (have.retention != want.retention) {
    out.push_back(fmt::format("retention is {}, want {}", retentionName(have.retention),
                              retentionName(want.retention)));
  }
  if (have.storage != want.storage) {
    out.push_back(fmt::format("storage is {}, want {}",
                              have.storage == transport::StorageType::kFile ? "file" : "memory",
                              want.storage == transport::StorageType::kFile ? "file" : "memory"));
  }
  if (have.discard != want.discard) {
    out.push_back(fmt::format("discard is {}, want {}",
                              have.discard == transport::DiscardPolicy::kOld ? "old" : "new",
                              want.discard == transport::DiscardPolicy::kOld ? "old" : "new"));
  }
  if (have.maxMsgsPerSubject != want.maxMsgsPerSubject) {
    out.push_back(fmt::format("max_msgs_per_subject is {}, want {}", have.maxMsgsPerSubject,
                              want.maxMsgsPerSubject));
  }
  if (have.allowDirect != want.allowDirect) {
    out.push_back(fmt::format("allow_direct is {}, want {}", have.allowDirect, want.allowDirect));
  }
  if (have.duplicateWindow != want.duplicateWindow) {
    out.push_back(fmt::format("duplicate_window is {} ms, want {} ms", have.duplicateWindow.count(),
                              want.duplicateWindow.count()));
  }
  if (have.replicas != want.replicas) {
    out.push_back(fmt::format("replicas is {}, want {}", have.replicas, want.replicas));
  }
  return out;
}

Result<ResourceOutcome> ensureStream(JetStream& js, const StreamConfig& want) {
  ResourceOutcome out;
  out.kind = ResourceKind::kStream;
  out.name = want.name;
  auto info = js.streamInfo(want.name);
  if (info.isOk()) {
    out.drift = streamDrift(info->config, want);
    out.state = out.drift.empty() ? ResourceState::kAlreadyPresent : ResourceState::kDrifted;
    return out;
  }
  if (info.status().code() != StatusCode::kNotFound) {
    return info.status().withContext("reading stream " + want.name);
  }
  auto added = js.addStream(want);
  if (!added.isOk()) return added.status().withContext("creating stream " + want.name);
  out.state = ResourceState::kCreated;
  return out;
}

struct BucketSpec {
  wire::Bucket bucket;
  std::chrono::milliseconds ttl;
};

Result<ResourceOutcome> ensureBucket(JetStream& js, const transport::KvConfig& want) {
  ResourceOutcome out;
  out.kind = ResourceKind::kBucket;
  out.name = want.bucket;
  const std::string stream = std::string(kKvStreamPrefix) + want.bucket;
  auto info = js.streamInfo(stream);
  if (info.isOk()) {
    const StreamConfig& have = info->config;
    if (have.maxAge != want.ttl) {
      out.drift.push_back(
          fmt::format("ttl is {} ms, want {} ms", have.maxAge.count(), want.ttl.count()));
    }
    if (have.maxMsgsPerSubject != want.history) {
      out.drift.push_back(
          fmt::format("history is {}, want {}", have.maxMsgsPerSubject, want.history));
    }
    if (have.replicas != want.replicas) {
      out.drift.push_back(fmt::format("replicas is {}, want {}", have.replicas, want.replicas));
    }
    out.state = out.drift.empty() ? ResourceState::kAlreadyPresent : ResourceState::kDrifted;
    return out;
  }
  if (info.status().code() != StatusCode::kNotFound) {
    return info.status().withContext("reading bucket " + want.bucket);
  }
  auto made = transport::KeyValue::createBucket(js, want);
  if (!made.isOk()) return made.status().withContext("creating bucket " + want.bucket);
  out.state = ResourceState::kCreated;
  return out;
}

Result<ResourceOutcome> ensureDefaultsRow(JetStream& js, const std::string& bucket,
                                          const SpaceProfile& profile) {
  ResourceOutcome out;
  out.kind = ResourceKind::kRow;
  out.name = bucket + "/" + std::string(wire::kChannelDefaultsKey);
  wire::ChannelDefaults defaults;
  defaults.deliveryClass = defaultDeliveryClass(profile);
  SHOAL_ASSIGN_OR_RETURN(std::string value, wire::encodeChannelDefaults(defaults));
  auto kv = transport::KeyValue::openBucket(js, bucket);
  if (!kv.isOk()) return kv.status().withContext("opening " + bucket);
  auto created = kv->create(wire::kChannelDefaultsKey, value);
  if (created.isOk()) {
    out.state = ResourceState::kCreated;
  } else if (created.status().code() == StatusCode::kAlreadyExists) {
    out.state = ResourceState::kAlreadyPresent;  // an operator's value is kept as it is
  } else {
    return created.status().withContext("writing " + out.name);
  }
  return out;
}

// The activation frontier an existing DM durable was created with.
uint64_t frontierOf(const transport::ConsumerConfig& c) {
  if (c.deliverPolicy == transport::DeliverPolicy::kByStartSequence && c.optStartSeq > 0) {
    return c.optStartSeq - 1;
  }
  return 0;
}

}  // namespace

wire::DeliveryClass defaultDeliveryClass(const SpaceProfile& profile) {
  switch (profile.deployment) {
    case Deployment::kLocal:
    case Deployment::kSelfHosted:
      return wire::DeliveryClass::kDurable;
  }
  return wire::DeliveryClass::kDurable;
}

std::string_view resourceKindName(ResourceKind kind) {
  switch (kind) {
    case ResourceKind::kStream:
      return "stream";
    case ResourceKind::kBucket:
      return "bucket";
    case ResourceKind::kRow:
      return "row";
    case ResourceKind::kDurable:
      return "durable";
  }
  return "?";
}

std::string_view resourceStateName(ResourceState state) {
  switch (state) {
    case ResourceState::kCreated:
      return "created";
    case ResourceState::kAlreadyPresent:
      return "present";
    case ResourceState::kDrifted:
      return "drifted";
  }
  return "?";
}

std::vector<std::string> SpaceReport::namesIn(ResourceState state) const {
  std::vector<std::string> out;
  for (const auto& r : resources) {
    if (r.state == state) out.push_back(r.name);
  }
  return out;
}

StreamConfig spaceStreamConfig(wire::Stream stream, std::string_view space,
                               const SpaceProfile& profile) {
  StreamConfig c;
  c.name = wire::streamName(stream, space).valueOr("");
  c.subjects = wire::streamSubjects(stream, space).valueOr({});
  c.retention = transport::RetentionPolicy::kLimits;
  c.storage = transport::StorageType::kFile;
  c.discard = transport::DiscardPolicy::kOld;
  c.duplicateWindow = kStreamDuplicateWindow;
  c.replicas = profile.replicas;
  c.allowDirect = false;
  switch (stream) {
    case wire::Stream::kChat:
      c.maxMsgsPerSubject = kChatMaxMsgsPerSubject;
      c.allowDirect = true;
      break;
    case wire::Stream::kTask:
      c.retention = transport::RetentionPolicy::kWorkQueue;
      break;
    case wire::Stream::kInbox:
    case wire::Stream::kDlv:
      c.maxMsgsPerSubject = kBackstopMaxMsgsPerSubject;
      c.duplicateWindow = kBackstopDuplicateWindow;
      break;
    default:
      break;
  }
  return c;
}

Result<SpaceReport> ensureSpace(JetStream& js, std::string_view space,
                                const SpaceProfile& profile) {
  SHOAL_RETURN_IF_ERROR(wire::validateSpace(space));
  SpaceReport report;
  report.space = std::string(space);
  for (wire::Stream s : {wire::Stream::kChat, wire::Stream::kDm, wire::Stream::kTask,
                         wire::Stream::kWake, wire::Stream::kInbox, wire::Stream::kDlv}) {
    SHOAL_ASSIGN_OR_RETURN(ResourceOutcome r,
                           ensureStream(js, spaceStreamConfig(s, space, profile)));
    report.resources.push_back(std::move(r));
  }
  const BucketSpec buckets[] = {{wire::Bucket::kPresence, kPresenceTtl},
                                {wire::Bucket::kChannels, std::chrono::milliseconds(0)},
                                {wire::Bucket::kDelivery, kDeliveryLeaseTtl},
                                {wire::Bucket::kMembers, std::chrono::milliseconds(0)},
                                {wire::Bucket::kAcl, std::chrono::milliseconds(0)}};
  for (const BucketSpec& spec : buckets) {
    SHOAL_ASSIGN_OR_RETURN(std::string name, wire::bucketName(spec.bucket, space));
    transport::KvConfig config;
    config.bucket = name;
    config.history = kRegistryHistory;
    config.ttl = spec.ttl;
    config.replicas = profile.replicas;
    SHOAL_ASSIGN_OR_RETURN(ResourceOutcome r, ensureBucket(js, config));
    report.resources.push_back(std::move(r));
    if (spec.bucket == wire::Bucket::kChannels) {
      SHOAL_ASSIGN_OR_RETURN(ResourceOutcome row, ensureDefaultsRow(js, name, profile));
      report.resources.push_back(std::move(row));
    }
  }
  for (const auto& r : report.resources) {
    if (r.state == ResourceState::kDrifted) {
      log::warn("space {}: {} {} differs from Shoal's config: {}", space, resourceKindName(r.kind),
                r.name, fmt::join(r.drift, "; "));
    }
  }
  return report;
}

Result<PrincipalReport> provisionPrincipal(JetStream& js, std::string_view space,
                                           const wire::Principal& principal,
                                           std::string_view lifecycleUid,
                                           const std::vector<std::string>& roles) {
  SHOAL_RETURN_IF_ERROR(wire::validateSpace(space));
  SHOAL_RETURN_IF_ERROR(wire::validatePrincipal(principal));
  for (const auto& role : roles)
    SHOAL_RETURN_IF_ERROR(wire::validateRole(role));
  SHOAL_ASSIGN_OR_RETURN(std::string dmStream, wire::streamName(wire::Stream::kDm, space));
  SHOAL_ASSIGN_OR_RETURN(std::string taskStream, wire::streamName(wire::Stream::kTask, space));

  PrincipalReport report;
  SHOAL_ASSIGN_OR_RETURN(report.dmDurable, wire::dmDurable(principal, lifecycleUid));
  auto existing = js.consumerInfo(dmStream, report.dmDurable);
  if (existing.isOk()) {
    report.frontier = frontierOf(existing->config);
  } else if (existing.status().code() != StatusCode::kNotFound ||
             existing.status().reason() == "stream-not-found") {
    return existing.status().withContext("reading durable " + report.dmDurable);
  } else {
    SHOAL_ASSIGN_OR_RETURN(auto info, js.streamInfo(dmStream));
    transport::ConsumerConfig c;
    c.durable = report.dmDurable;
    SHOAL_ASSIGN_OR_RETURN(c.filterSubject, wire::dmFilter(space, principal));
    c.ackPolicy = transport::AckPolicy::kExplicit;
    c.ackWait = kMessagingAckWait;
    report.frontier = info.state.lastSeq;
    if (report.frontier == 0) {
      c.deliverPolicy = transport::DeliverPolicy::kAll;  // same effect as start at 1
    } else {
      c.deliverPolicy = transport::DeliverPolicy::kByStartSequence;
      c.optStartSeq = report.frontier + 1;
    }
    auto added = js.addConsumer(dmStream, c);
    if (!added.isOk()) return added.status().withContext("creating durable " + c.durable);
    report.dmCreated = true;
  }

  for (const auto& role : roles) {
    SHOAL_ASSIGN_OR_RETURN(std::string durable, wire::svcDurable(role));
    report.roleDurables[role] = durable;
    auto have = js.consumerInfo(taskStream, durable);
    if (have.isOk()) {
      report.roleCreated[role] = false;
      continue;
    }
    if (have.status().code() != StatusCode::kNotFound ||
        have.status().reason() == "stream-not-found") {
      return have.status().withContext("reading durable " + durable);
    }
    transport::ConsumerConfig c;
    c.durable = durable;
    SHOAL_ASSIGN_OR_RETURN(c.filterSubject, wire::svcFilter(space, role));
    c.ackPolicy = transport::AckPolicy::kExplicit;
    c.ackWait = kMessagingAckWait;
    auto added = js.addConsumer(taskStream, c);
    if (!added.isOk()) return added.status().withContext("creating durable " + durable);
    report.roleCreated[role] = true;
  }

  // The lifecycle's durable channel copies (the delivery plane's trusted reader writes them).
  SHOAL_ASSIGN_OR_RETURN(std::string dlvStream, wire::streamName(wire::Stream::kDlv, space));
  SHOAL_ASSIGN_OR_RETURN(report.dlvDurable, wire::dlvDurable(principal, lifecycleUid));
  auto dlv = js.consumerInfo(dlvStream, report.dlvDurable);
  if (!dlv.isOk()) {
    if (dlv.status().code() != StatusCode::kNotFound ||
        dlv.status().reason() == "stream-not-found") {
      return dlv.status().withContext("reading durable " + report.dlvDurable +
                                      " (re-run `shoal serve` to ensure the space)");
    }
    transport::ConsumerConfig c;
    c.durable = report.dlvDurable;
    SHOAL_ASSIGN_OR_RETURN(c.filterSubject, wire::dlvSubject(space, principal, lifecycleUid));
    c.ackPolicy = transport::AckPolicy::kExplicit;
    c.ackWait = kMessagingAckWait;
    c.deliverPolicy = transport::DeliverPolicy::kAll;
    auto added = js.addConsumer(dlvStream, c);
    if (!added.isOk()) return added.status().withContext("creating durable " + c.durable);
    report.dlvCreated = true;
  }

  // The read ACL the trusted reader re-checks every copy against (open profile: everything).
  SHOAL_ASSIGN_OR_RETURN(std::string aclBucket, wire::bucketName(wire::Bucket::kAcl, space));
  auto acl = transport::KeyValue::openBucket(js, aclBucket);
  if (!acl.isOk()) return acl.status().withContext("opening " + aclBucket);
  SHOAL_ASSIGN_OR_RETURN(std::string aclKey, wire::lifecycleKeyForm(principal, lifecycleUid));
  wire::AclRecord record;
  record.allowSubscribe = {std::string(kOpenReadAcl)};
  record.revision = 1;
  record.updatedAt = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  SHOAL_ASSIGN_OR_RETURN(std::string aclValue, wire::encodeAcl(record));
  auto created = acl->create(aclKey, aclValue);
  if (created.isOk()) {
    report.aclCreated = true;
  } else if (created.status().code() != StatusCode::kAlreadyExists) {
    return created.status().withContext("writing the read ACL of " + aclKey);
  }
  return report;
}

}  // namespace shoal::planes
