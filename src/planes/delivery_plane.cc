#include "planes/delivery_plane.h"

#include <algorithm>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/log.h"
#include "mesh/channel_registry.h"
#include "mesh/delivery_rail.h"
#include "mesh/durable_pump.h"
#include "transport/pull_consumer.h"
#include "wire/channel.h"
#include "wire/delivery_frame.h"
#include "wire/inbound.h"
#include "wire/names.h"
#include "wire/presence.h"
#include "wire/subject.h"
#include "wire/token.h"

namespace shoal::planes {
namespace {

namespace json = boost::json;

constexpr std::chrono::milliseconds kBindFlushTimeout{5000};
constexpr size_t kJobsInReply = 200;

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The id copies are deduplicated on; an empty message id is never a key (seed 000): the CHAT
// sequence stands in for it.
std::string dedupId(const wire::CotalMessage& msg, uint64_t seq) {
  return msg.id.empty() ? fmt::format("chat-seq-{}", seq) : msg.id;
}

Result<transport::KeyValue> openBucket(transport::JetStream& js, wire::Bucket bucket,
                                       std::string_view space) {
  SHOAL_ASSIGN_OR_RETURN(std::string name, wire::bucketName(bucket, space));
  auto kv = transport::KeyValue::openBucket(js, name);
  if (!kv.isOk()) {
    return kv.status().withContext("opening " + name +
                                   " (run `shoal serve` once to ensure the "
                                   "space, or re-run it after upgrading)");
  }
  return kv;
}

Result<json::object> bodyObject(std::string_view body) {
  if (body.size() > mesh::kMaxDeliveryBodyBytes) {
    return invalidArgument("bad-delivery-request", "request body too large");
  }
  if (body.empty()) return json::object{};
  json::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec || !v.is_object())
    return invalidArgument("malformed-json", "the body is not a JSON object");
  return v.get_object();
}

Result<std::string> channelField(const json::object& o) {
  const json::value* c = o.if_contains("channel");
  if (c == nullptr || !c->is_string()) {
    return invalidArgument("bad-delivery-request", "channel must be a string");
  }
  std::string channel(c->get_string());
  if (!wire::isConcreteChannel(channel)) {
    return invalidArgument("bad-delivery-request",
                           "#" + channel +
                               " is not a concrete channel: durable membership is "
                               "per concrete channel (no * or >)");
  }
  return channel;
}

uint64_t u64Field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v != nullptr && v->is_uint64()) return v->get_uint64();
  if (v != nullptr && v->is_int64() && v->get_int64() >= 0) return v->get_int64();
  return 0;
}

}  // namespace

DeliveryPlane::DeliveryPlane(transport::Connection& conn, transport::JetStream& js,
                             DeliveryPlaneOptions o)
    : conn_(conn), js_(js), options_(std::move(o)) {}

DeliveryPlane::~DeliveryPlane() {
  stopped_.store(true);
  railSub_.reset();
  liveness_.reset();
  if (fanoutPump_) fanoutPump_->stop();
  if (readerPump_) readerPump_->stop();
  loop_.stop();
}

Result<std::unique_ptr<DeliveryPlane>> DeliveryPlane::start(transport::Connection& conn,
                                                            transport::JetStream& js,
                                                            DeliveryPlaneOptions options) {
  SHOAL_RETURN_IF_ERROR(wire::validateSpace(options.space));
  std::unique_ptr<DeliveryPlane> plane(new DeliveryPlane(conn, js, std::move(options)));
  SHOAL_ASSIGN_OR_RETURN(ShardLease lease,
                         ShardLease::acquire(js, plane->options_.space, plane->options_.holder));
  plane->incarnation_ = lease.row().incarnation;
  plane->lease_.emplace(std::move(lease));
  if (Status st = plane->bind(); !st.isOk()) {
    plane->railSub_.reset();
    if (plane->fanoutPump_) plane->fanoutPump_->stop();
    if (plane->readerPump_) plane->readerPump_->stop();
    (void)plane->lease_->release();
    return st;
  }
  // Ready only now: the fan-out, the reader and every responder are bound.
  if (Status st = plane->lease_->markReady(); !st.isOk()) {
    plane->stopped_.store(true);
    return st.withContext("marking the delivery lease ready");
  }
  plane->renewSoon();
  log::info("delivery {}: serving (holder {}, incarnation {}, {} memberships)",
            plane->options_.space, plane->options_.holder, plane->incarnation_.substr(0, 8),
            plane->members_.size());
  return plane;
}

Status DeliveryPlane::bind() {
  const std::string& space = options_.space;
  SHOAL_ASSIGN_OR_RETURN(chatStream_, wire::streamName(wire::Stream::kChat, space));
  SHOAL_ASSIGN_OR_RETURN(inboxStream_, wire::streamName(wire::Stream::kInbox, space));
  SHOAL_ASSIGN_OR_RETURN(auto leaseView, openBucket(js_, wire::Bucket::kDelivery, space));
  leaseView_.emplace(std::move(leaseView));
  SHOAL_ASSIGN_OR_RETURN(auto members, openBucket(js_, wire::Bucket::kMembers, space));
  membersKv_.emplace(std::move(members));
  SHOAL_ASSIGN_OR_RETURN(auto acl, openBucket(js_, wire::Bucket::kAcl, space));
  aclKv_.emplace(std::move(acl));
  SHOAL_ASSIGN_OR_RETURN(auto presence, openBucket(js_, wire::Bucket::kPresence, space));
  presenceKv_.emplace(std::move(presence));
  SHOAL_RETURN_IF_ERROR(loadMembers());
  SHOAL_RETURN_IF_ERROR(ensureConsumers());

  auto problem = [space](std::string what) {
    return [space, what](const Status& st) {
      if (st.isOk()) {
        log::info("delivery {}: {} is fetching again", space, what);
      } else {
        log::warn("delivery {}: {} cannot fetch: {}", space, what, st.toString());
      }
    };
  };
  SHOAL_ASSIGN_OR_RETURN(auto fanoutConsumer,
                         transport::PullConsumer::bind(js_, chatStream_, kFanoutDurable));
  fanoutPump_ = std::make_unique<mesh::DurablePump>(
      std::move(fanoutConsumer), [this](transport::JsMessage& m) { fanout(m); },
      problem("the fan-out"));
  SHOAL_ASSIGN_OR_RETURN(auto readerConsumer,
                         transport::PullConsumer::bind(js_, inboxStream_, kReaderDurable));
  readerPump_ = std::make_unique<mesh::DurablePump>(
      std::move(readerConsumer), [this](transport::JsMessage& m) { read(m); },
      problem("the trusted reader"));

  SHOAL_ASSIGN_OR_RETURN(std::string filter, mesh::deliveryServeFilter(space));
  SHOAL_ASSIGN_OR_RETURN(
      auto sub,
      conn_.queueSubscribe(filter, mesh::kDeliveryQueueGroup, [this](transport::Message m) {
        loop_.post([this, m = std::move(m)] { handleRail(m); });
      }));
  railSub_.emplace(std::move(sub));
  SHOAL_ASSIGN_OR_RETURN(
      liveness_, LivenessResponder::bind(conn_, space, wire::Plane::kDelivery, [this] {
        auto row = leaseView_->get(wire::kDeliveryLeaseKey);
        if (!row.isOk()) {
          return row.status().code() == StatusCode::kNotFound ? wire::Responder::kUnbound
                                                              : wire::Responder::kUnknown;
        }
        if (row->operation != transport::KvOperation::kPut) {
          return wire::Responder::kUnbound;
        }
        return responderFromLease(row->value, options_.holder, incarnation_);
      }));
  return conn_.flush(kBindFlushTimeout);
}

Status DeliveryPlane::loadMembers() {
  auto keys = membersKv_->keys();
  if (!keys.isOk()) {
    if (keys.status().code() == StatusCode::kNotFound) return Status::ok();  // no rows yet
    return keys.status().withContext("listing memberships");
  }
  std::lock_guard lock(mu_);
  for (const auto& key : *keys) {
    auto entry = membersKv_->get(key);
    if (!entry.isOk() || entry->operation != transport::KvOperation::kPut) continue;
    auto record = wire::decodeMembership(entry->value);
    if (!record.isOk()) {
      log::warn("delivery {}: membership row {} does not decode, ignored: {}", options_.space, key,
                record.status().toString());
      continue;
    }
    members_[key] = Member{std::move(*record), entry->revision};
  }
  return Status::ok();
}

Status DeliveryPlane::ensureConsumers() {
  auto ensure = [this](const std::string& stream, transport::ConsumerConfig c) -> Status {
    auto have = js_.consumerInfo(stream, c.durable);
    if (have.isOk()) return Status::ok();  // an existing consumer keeps its config and position
    if (have.status().code() != StatusCode::kNotFound ||
        have.status().reason() == "stream-not-found") {
      return have.status().withContext("reading consumer " + c.durable + " on " + stream);
    }
    auto added = js_.addConsumer(stream, c);
    if (!added.isOk()) return added.status().withContext("creating consumer " + c.durable);
    return Status::ok();
  };
  transport::ConsumerConfig fan;
  fan.durable = std::string(kFanoutDurable);
  fan.filterSubject = "cotal." + options_.space + ".chat.>";
  fan.ackPolicy = transport::AckPolicy::kExplicit;
  fan.ackWait = options_.ackWait;
  fan.deliverPolicy = transport::DeliverPolicy::kNew;
  SHOAL_RETURN_IF_ERROR(ensure(chatStream_, fan));
  transport::ConsumerConfig reader;
  reader.durable = std::string(kReaderDurable);
  reader.filterSubject = "cotal." + options_.space + ".dinbox.>";
  reader.ackPolicy = transport::AckPolicy::kExplicit;
  reader.ackWait = options_.ackWait;
  reader.deliverPolicy = transport::DeliverPolicy::kAll;
  reader.maxAckPending = 1000;
  return ensure(inboxStream_, reader);
}

Status DeliveryPlane::copyTo(const wire::Principal& member, const std::string& uid,
                             uint64_t generation, wire::FanoutReason reason,
                             const std::string& channel, uint64_t seq,
                             const wire::CotalMessage& msg) {
  wire::FanoutEntry entry;
  entry.channel = channel;
  entry.seq = seq;
  entry.reason = reason;
  entry.generation = generation;
  entry.msg = msg;
  SHOAL_ASSIGN_OR_RETURN(std::string body, wire::encodeFanoutEntry(entry));
  SHOAL_ASSIGN_OR_RETURN(std::string subject, wire::dinboxSubject(options_.space, member, uid));
  transport::PublishOptions po;
  po.msgId = wire::copyMsgId(dedupId(msg, seq), member, uid, generation);
  auto ack = js_.publish(subject, body, po);
  if (!ack.isOk()) return ack.status().withContext("copying to " + subject);
  return Status::ok();
}

Result<std::optional<wire::AclRecord>> DeliveryPlane::readAcl(const wire::Principal& p,
                                                              const std::string& uid) {
  SHOAL_ASSIGN_OR_RETURN(std::string key, wire::lifecycleKeyForm(p, uid));
  auto entry = aclKv_->get(key);
  if (!entry.isOk()) {
    if (entry.status().code() == StatusCode::kNotFound) return std::optional<wire::AclRecord>();
    return entry.status();
  }
  if (entry->operation != transport::KvOperation::kPut) return std::optional<wire::AclRecord>();
  auto acl = wire::decodeAcl(entry->value);
  if (!acl.isOk()) return acl.status().withContext("ACL row " + key);
  return std::optional<wire::AclRecord>(std::move(*acl));
}

void DeliveryPlane::fanout(transport::JsMessage& m) {
  if (quiesced_.load()) return;  // unacked: the next holder gets it
  const uint64_t seq = m.metadata().streamSeq;
  FanoutJob job;
  job.key = fmt::format("chat:{}", seq);
  job.seq = seq;
  job.attempts = m.metadata().numDelivered;
  job.state = JobState::kLeased;
  auto finish = [&](JobState state, std::string error) {
    job.state = state;
    job.lastError = std::move(error);
    jobs_.update(job);
  };
  auto retry = [&](const Status& why) {
    if (static_cast<int>(job.attempts) >= options_.maxDeliveries) {
      log::error("delivery {}: gave up fanning out CHAT seq {} after {} deliveries: {}",
                 options_.space, seq, job.attempts, why.toString());
      (void)m.term();
      finish(JobState::kFailed, why.toString());
      return;
    }
    (void)m.nakWithDelay(options_.retryDelay);
    finish(JobState::kRetry, why.toString());
  };

  auto in = wire::readDelivery(m.subject(), m.data());
  if (!in.isOk() || in->kind != wire::DeliveryKind::kChannel) {
    // A post that fails the envelope checks reaches nobody's backstop (members dropped it live
    // too); nothing to retry.
    (void)m.ack();
    finish(JobState::kSuppressed,
           in.isOk() ? "not a channel post" : "refused envelope: " + in.status().toString());
    return;
  }
  const wire::CotalMessage& msg = in->message;
  const wire::Principal& sender = in->subject.principal;
  job.channel = msg.routing.target;
  job.messageId = msg.id;
  jobs_.update(job);

  auto effective = mesh::readEffectiveChannel(js_, options_.space, job.channel);
  if (!effective.isOk()) return retry(effective.status().withContext("reading the registry"));

  struct Target {
    wire::Principal member;
    std::string uid;
    uint64_t generation = 0;
    wire::FanoutReason reason = wire::FanoutReason::kDurableChannel;
  };
  std::vector<Target> targets;
  std::string none = "no other member";
  if (effective->deliveryClass == wire::DeliveryClass::kDurable) {
    std::lock_guard lock(mu_);
    const std::string prefix = job.channel + "/";
    for (auto it = members_.lower_bound(prefix);
         it != members_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      const auto& r = it->second.record;
      if (r.member == sender || !r.covers(seq)) continue;
      targets.push_back(
          Target{r.member, r.lifecycleUid, r.generation, wire::FanoutReason::kDurableChannel});
    }
  } else {
    none = msg.mentions.empty() ? "live channel, no mention"
                                : "live channel, no mention resolved to an authorised peer";
    if (!msg.mentions.empty()) {
      // Names resolve from presence at fan-out time: exactly one peer with that name (any
      // case), never the sender, and its read ACL must cover the channel.
      std::map<std::string, std::vector<wire::Presence>> byName;
      auto keys = presenceKv_->keys();
      if (!keys.isOk() && keys.status().code() != StatusCode::kNotFound) {
        return retry(keys.status().withContext("reading presence"));
      }
      for (const auto& key : keys.isOk() ? *keys : std::vector<std::string>{}) {
        auto entry = presenceKv_->get(key);
        if (!entry.isOk() || entry->operation != transport::KvOperation::kPut) continue;
        auto p = wire::decodePresence(key, entry->value);
        if (!p.isOk() || !p->lifecycleUid) continue;
        auto name = wire::normalizeMentions({p->card.name});
        if (!name.empty()) byName[name.front()].push_back(std::move(*p));
      }
      for (const auto& mention : msg.mentions) {
        auto found = byName.find(mention);
        if (found == byName.end() || found->second.size() != 1) continue;
        const wire::Presence& peer = found->second.front();
        auto principal = wire::parsePrincipal(peer.card.id);
        if (!principal.isOk() || *principal == sender) continue;
        auto acl = readAcl(*principal, *peer.lifecycleUid);
        if (!acl.isOk()) return retry(acl.status());
        if (!*acl || !(*acl)->covers(job.channel)) continue;
        targets.push_back(
            Target{*principal, *peer.lifecycleUid, 0, wire::FanoutReason::kLiveMention});
      }
    }
  }
  for (const auto& t : targets) {
    if (Status st = copyTo(t.member, t.uid, t.generation, t.reason, job.channel, seq, msg);
        !st.isOk()) {
      return retry(st);
    }
  }
  job.copies = targets.size();
  // The post is acked last: a plane killed before this line leaves it to be fanned out again,
  // and the per-copy ids make the repeat store nothing new.
  if (Status st = m.ack(); !st.isOk()) return finish(JobState::kRetry, st.toString());
  {
    std::lock_guard lock(mu_);
    ++counters_.posts;
    counters_.copies += targets.size();
  }
  finish(targets.empty() ? JobState::kSuppressed : JobState::kDelivered,
         targets.empty() ? none : "");
}

void DeliveryPlane::read(transport::JsMessage& m) {
  if (quiesced_.load()) return;
  auto parsed = wire::parseSubject(m.subject());
  auto entry = wire::decodeFanoutEntry(m.data());
  if (!parsed.isOk() || parsed->kind != wire::SubjectKind::kDinbox ||
      !wire::validatePrincipal(parsed->principal).isOk() ||
      !wire::validateLifecycleUid(parsed->rest).isOk() || !entry.isOk()) {
    log::warn("delivery {}: dropped a malformed INBOX entry on {}: {}", options_.space, m.subject(),
              entry.isOk() ? "bad subject" : entry.status().toString());
    (void)m.ack();
    jobs_.countReader(&ReaderCounters::malformed);
    return;
  }
  const wire::Principal member = parsed->principal;
  const std::string uid = parsed->rest;
  const std::string copyId =
      wire::copyMsgId(dedupId(entry->msg, entry->seq), member, uid, entry->generation);
  FanoutJob job;
  job.key = "copy:" + copyId;
  job.channel = entry->channel;
  job.messageId = entry->msg.id;
  job.seq = entry->seq;
  job.attempts = m.metadata().numDelivered;
  auto giveUpOrRetry = [&](const Status& why, uint64_t ReaderCounters::*counter) {
    if (static_cast<int>(job.attempts) >= options_.maxDeliveries) {
      log::error("delivery {}: gave up handing {} to {} after {} deliveries: {}", options_.space,
                 copyId, member.dotForm(), job.attempts, why.toString());
      (void)m.term();
      jobs_.countReader(&ReaderCounters::failed);
      job.state = JobState::kFailed;
    } else {
      (void)m.nakWithDelay(options_.retryDelay);
      jobs_.countReader(counter);
      job.state = JobState::kRetry;
    }
    job.lastError = why.toString();
    jobs_.update(job);
  };

  auto acl = readAcl(member, uid);
  if (!acl.isOk()) return giveUpOrRetry(acl.status(), &ReaderCounters::deferred);
  if (!*acl) {
    return giveUpOrRetry(
        failedPrecondition("acl-unknown", "no read ACL row for " + member.dotForm() + "." + uid),
        &ReaderCounters::deferred);
  }
  auto suppress = [&](std::string why) {
    (void)m.ack();
    jobs_.countReader(&ReaderCounters::suppressed);
    job.state = JobState::kSuppressed;
    job.lastError = std::move(why);
    jobs_.update(job);
  };
  if (!(*acl)->covers(entry->channel)) {
    return suppress("the read ACL no longer covers #" + entry->channel);
  }
  if (entry->reason == wire::FanoutReason::kDurableChannel) {
    auto key = wire::memberKey(entry->channel, member, uid);
    std::lock_guard lock(mu_);
    auto it = key.isOk() ? members_.find(*key) : members_.end();
    if (it == members_.end() || !it->second.record.covers(entry->seq)) {
      (void)m.ack();
      jobs_.countReader(&ReaderCounters::suppressed);
      return;  // a leave (or a rejoin after a gap) is a hard boundary
    }
  }
  wire::DeliveryFrame frame{entry->channel, entry->msg};
  auto body = wire::encodeDeliveryFrame(frame);
  auto subject = wire::dlvSubject(options_.space, member, uid);
  if (!body.isOk() || !subject.isOk()) {
    (void)m.term();
    jobs_.countReader(&ReaderCounters::malformed);
    return;
  }
  transport::PublishOptions po;
  po.msgId = copyId;
  po.headers.emplace_back(std::string(wire::kDeliveryFrameHeader),
                          std::string(wire::kDeliveryFrameVersion));
  auto stored = js_.publish(*subject, *body, po);
  if (!stored.isOk()) return giveUpOrRetry(stored.status(), &ReaderCounters::deferred);
  // Only now, with the copy handed over, is the entry acked.
  (void)m.ack();
  jobs_.countReader(&ReaderCounters::handedOver);
}

void DeliveryPlane::handleRail(const transport::Message& request) {
  if (quiesced_.load() || stopped_.load()) return;
  if (Status target = wire::checkRailReplyTarget(request.reply); !target.isOk()) {
    log::warn("delivery {}: dropped a rail request on {}: {}", options_.space, request.subject,
              target.message());
    return;
  }
  auto parsed = mesh::parseDeliverySubject(request.subject, options_.space);
  Result<std::string> data = parsed.status();
  if (parsed.isOk()) {
    const auto& caller = parsed->caller;
    switch (parsed->op) {
      case mesh::DeliveryOp::kJoin:
        data = join(caller.principal, caller.lifecycleUid, request.data);
        break;
      case mesh::DeliveryOp::kLeave:
        data = leave(caller.principal, caller.lifecycleUid, request.data);
        break;
      case mesh::DeliveryOp::kList:
        data = list(caller.lifecycleUid);
        break;
      case mesh::DeliveryOp::kJobs:
        data = jobsJson();
        break;
    }
  }
  std::string reply =
      data.isOk() ? mesh::encodeDeliveryOk(*data) : mesh::encodeDeliveryError(data.status());
  if (Status st = conn_.publish(request.reply, reply); !st.isOk()) {
    log::warn("delivery {}: reply to {} not sent: {}", options_.space, request.reply,
              st.toString());
  }
}

Result<std::string> DeliveryPlane::join(const wire::Principal& caller, const std::string& uid,
                                        std::string_view body) {
  SHOAL_ASSIGN_OR_RETURN(json::object o, bodyObject(body));
  SHOAL_ASSIGN_OR_RETURN(std::string channel, channelField(o));
  const uint64_t cursor = u64Field(o, "cursor");
  SHOAL_ASSIGN_OR_RETURN(auto effective, mesh::readEffectiveChannel(js_, options_.space, channel));
  if (effective.deliveryClass != wire::DeliveryClass::kDurable) {
    return json::serialize(json::object{
        {"durable", false}, {"reason", "#" + channel + " is a live channel: no durable backstop"}});
  }
  SHOAL_ASSIGN_OR_RETURN(auto acl, readAcl(caller, uid));
  if (!acl) {
    return failedPrecondition("acl-unknown", "no read ACL is recorded for " + caller.dotForm() +
                                                 " (lifecycle " + uid + "); provision it first");
  }
  if (!acl->covers(channel)) {
    return failedPrecondition("acl-denies", caller.dotForm() + " may not read #" + channel);
  }
  SHOAL_ASSIGN_OR_RETURN(std::string key, wire::memberKey(channel, caller, uid));
  wire::MembershipRecord record;
  {
    std::lock_guard lock(mu_);
    auto it = members_.find(key);
    if (it != members_.end() && it->second.record.active()) {
      const auto& r = it->second.record;
      return json::serialize(json::object{{"durable", true},
                                          {"existing", true},
                                          {"generation", r.generation},
                                          {"joinCursor", r.joinCursor}});
    }
    SHOAL_ASSIGN_OR_RETURN(auto info, js_.streamInfo(chatStream_));
    record.channel = channel;
    record.member = caller;
    record.lifecycleUid = uid;
    record.joinCursor = std::min(cursor, info.state.lastSeq);
    record.generation = it != members_.end() ? it->second.record.generation + 1 : 1;
    record.writerIdentity = options_.holder + "/" + incarnation_;
    record.updatedAt = nowMs();
    SHOAL_ASSIGN_OR_RETURN(std::string value, wire::encodeMembership(record));
    auto written = it != members_.end() ? membersKv_->update(key, value, it->second.revision)
                                        : membersKv_->create(key, value);
    if (!written.isOk()) return written.status().withContext("writing membership " + key);
    members_[key] = Member{record, *written};
    ++counters_.joins;
  }
  // Posts the fan-out may already have passed: (joinCursor, last_seq now]. Anything stored
  // later meets the row above in the fan-out; a post copied by both is stored once.
  uint64_t caughtUp = 0;
  SHOAL_ASSIGN_OR_RETURN(auto now, js_.streamInfo(chatStream_));
  const std::string filter = "cotal." + options_.space + ".chat.*.*." + channel;
  for (uint64_t seq = record.joinCursor + 1; seq <= now.state.lastSeq;) {
    if (caughtUp >= options_.maxCatchUp) break;
    auto stored = js_.findMessage(chatStream_, seq, filter);
    if (!stored.isOk()) break;  // no-message: nothing more on this channel
    if (stored->seq > now.state.lastSeq) break;
    seq = stored->seq + 1;
    auto in = wire::readDelivery(stored->subject, stored->data);
    if (!in.isOk() || in->subject.principal == caller) continue;
    if (Status st = copyTo(caller, uid, record.generation, wire::FanoutReason::kDurableChannel,
                           channel, stored->seq, in->message);
        !st.isOk()) {
      return st.withContext("catching up #" + channel);
    }
    ++caughtUp;
  }
  {
    std::lock_guard lock(mu_);
    auto it = members_.find(key);
    if (it != members_.end() && it->second.record.generation == record.generation) {
      wire::MembershipRecord activated = it->second.record;
      activated.activated = true;
      activated.updatedAt = nowMs();
      if (auto value = wire::encodeMembership(activated); value.isOk()) {
        if (auto w = membersKv_->update(key, *value, it->second.revision); w.isOk()) {
          it->second = Member{activated, *w};
        }
      }
    }
  }
  log::info("delivery {}: {} joined #{} durably (generation {}, cursor {}, {} caught up)",
            options_.space, caller.dotForm(), channel, record.generation, record.joinCursor,
            caughtUp);
  return json::serialize(json::object{{"durable", true},
                                      {"existing", false},
                                      {"generation", record.generation},
                                      {"joinCursor", record.joinCursor},
                                      {"caughtUp", caughtUp}});
}

Result<std::string> DeliveryPlane::leave(const wire::Principal& caller, const std::string& uid,
                                         std::string_view body) {
  SHOAL_ASSIGN_OR_RETURN(json::object o, bodyObject(body));
  SHOAL_ASSIGN_OR_RETURN(std::string channel, channelField(o));
  const uint64_t generation = u64Field(o, "generation");
  SHOAL_ASSIGN_OR_RETURN(std::string key, wire::memberKey(channel, caller, uid));
  std::lock_guard lock(mu_);
  auto it = members_.find(key);
  if (it == members_.end() || !it->second.record.active()) {
    return json::serialize(json::object{{"alreadyLeft", true}});
  }
  if (generation != 0 && generation != it->second.record.generation) {
    return failedPrecondition(
        "stale-leave", fmt::format("the membership of #{} is at generation {}, not {}", channel,
                                   it->second.record.generation, generation));
  }
  SHOAL_ASSIGN_OR_RETURN(auto info, js_.streamInfo(chatStream_));
  wire::MembershipRecord record = it->second.record;
  record.leaveCursor = std::max(info.state.lastSeq, record.joinCursor);
  record.updatedAt = nowMs();
  SHOAL_ASSIGN_OR_RETURN(std::string value, wire::encodeMembership(record));
  auto written = membersKv_->update(key, value, it->second.revision);
  if (!written.isOk()) return written.status().withContext("writing membership " + key);
  it->second = Member{record, *written};
  ++counters_.leaves;
  log::info("delivery {}: {} left #{} (leave cursor {})", options_.space, caller.dotForm(), channel,
            *record.leaveCursor);
  return json::serialize(json::object{{"leaveCursor", *record.leaveCursor}});
}

std::string DeliveryPlane::list(const std::string& uid) {
  json::array rows;
  std::lock_guard lock(mu_);
  for (const auto& [key, m] : members_) {
    if (m.record.lifecycleUid != uid || !m.record.active()) continue;
    rows.push_back(json::object{{"channel", m.record.channel},
                                {"generation", m.record.generation},
                                {"joinCursor", m.record.joinCursor},
                                {"activated", m.record.activated}});
  }
  return json::serialize(json::object{{"memberships", std::move(rows)}});
}

std::string DeliveryPlane::jobsJson() {
  json::object o;
  json::object pending;
  if (auto f = js_.consumerInfo(chatStream_, kFanoutDurable); f.isOk()) {
    pending["fanout"] = f->numPending;
    pending["fanoutUnacked"] = f->numAckPending;
  }
  if (auto r = js_.consumerInfo(inboxStream_, kReaderDurable); r.isOk()) {
    pending["reader"] = r->numPending;
    pending["readerUnacked"] = r->numAckPending;
  }
  o["pending"] = std::move(pending);
  json::object totals;
  for (const auto& [state, n] : jobs_.totals())
    totals[state] = n;
  o["totals"] = std::move(totals);
  const ReaderCounters r = jobs_.reader();
  o["reader"] = json::object{{"handedOver", r.handedOver},
                             {"suppressed", r.suppressed},
                             {"deferred", r.deferred},
                             {"failed", r.failed},
                             {"malformed", r.malformed}};
  json::array rows;
  auto jobs = jobs_.snapshot();
  const size_t from = jobs.size() > kJobsInReply ? jobs.size() - kJobsInReply : 0;
  for (size_t i = from; i < jobs.size(); ++i) {
    const auto& j = jobs[i];
    rows.push_back(json::object{{"key", j.key},
                                {"channel", j.channel},
                                {"messageId", j.messageId},
                                {"seq", j.seq},
                                {"state", jobStateName(j.state)},
                                {"attempts", j.attempts},
                                {"copies", j.copies},
                                {"lastError", j.lastError},
                                {"updatedMs", j.updatedMs}});
  }
  o["jobs"] = std::move(rows);
  {
    std::lock_guard lock(mu_);
    o["memberships"] = members_.size();
  }
  o["holder"] = options_.holder;
  o["incarnation"] = incarnation_;
  return json::serialize(o);
}

void DeliveryPlane::renewSoon() {
  loop_.postAfter(options_.renewEvery, [this] {
    if (quiesced_.load() || stopped_.load()) return;
    Status st = lease_->renew();
    if (st.code() == StatusCode::kAborted) return quiesce(st);
    if (!st.isOk())
      log::warn("delivery {}: lease renewal failed: {}", options_.space, st.toString());
    renewSoon();
  });
}

void DeliveryPlane::quiesce(const Status& why) {
  if (quiesced_.exchange(true)) return;
  log::error("delivery {}: lost the lease, stopped serving: {}", options_.space, why.toString());
  railSub_.reset();
  if (fanoutPump_) fanoutPump_->stop();
  if (readerPump_) readerPump_->stop();
  if (options_.onLost) options_.onLost(why);
}

Status DeliveryPlane::stop() {
  if (stopped_.exchange(true)) return Status::ok();
  railSub_.reset();
  liveness_.reset();
  if (fanoutPump_) fanoutPump_->stop();
  if (readerPump_) readerPump_->stop();
  loop_.stop();
  if (quiesced_.load()) return Status::ok();  // not ours any more: never delete another's row
  Status st = lease_->release();
  if (st.isOk()) log::info("delivery {}: released the lease", options_.space);
  return st;
}

void DeliveryPlane::onConnectionEvent(const transport::ConnectionEvent& event) {
  switch (event.kind) {
    case transport::ConnectionEventKind::kDisconnected:
      log::warn("delivery {}: broker connection lost; reconnecting", options_.space);
      break;
    case transport::ConnectionEventKind::kReconnected:
      if (liveness_ != nullptr) (void)liveness_->onReconnected();
      log::warn("delivery {}: reconnected", options_.space);
      break;
    default:
      break;
  }
}

std::string DeliveryPlane::livenessInstance() const {
  return liveness_ != nullptr ? liveness_->instance() : std::string();
}

DeliveryPlaneCounters DeliveryPlane::counters() const {
  std::lock_guard lock(mu_);
  return counters_;
}

}  // namespace shoal::planes
