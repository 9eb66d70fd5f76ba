#include "mesh/endpoint.h"

#include <future>
#include <utility>

#include <fmt/format.h>

#include "base/backoff.h"
#include "base/ids.h"
#include "base/log.h"
#include "mesh/channel_registry.h"
#include "mesh/delivery_rail.h"
#include "mesh/durable_pump.h"
#include "mesh/provision_client.h"
#include "transport/pull_consumer.h"
#include "wire/channel.h"
#include "wire/delivery_frame.h"
#include "wire/inbound.h"
#include "wire/names.h"
#include "wire/subject.h"
#include "wire/token.h"

namespace shoal::mesh {
namespace {

// Raised from nats.c's 65536 messages / 64 MiB so a burst on a busy channel is buffered rather
// than dropped; a drop is still reported as a `slow-consumer` async error.
constexpr int kChannelPendingMessages = 1 << 20;
constexpr int kChannelPendingBytes = 512 * 1024 * 1024;
constexpr std::chrono::milliseconds kJoinFlushTimeout{2000};

std::string statusWord(const RosterRow& row, const PresenceViewInfo& view) {
  std::string status(wire::presenceStatusName(row.presence.status));
  return view.fresh ? status : "last known " + status;
}

}  // namespace

Endpoint::Endpoint(EndpointOptions options)
    : options_(std::move(options)), seen_(options_.dedupCapacity) {}

Result<std::unique_ptr<Endpoint>> Endpoint::open(EndpointOptions options) {
  SHOAL_RETURN_IF_ERROR(wire::validatePrincipal(options.principal));
  if (options.displayName.empty()) options.displayName = options.principal.actor;
  if (options.lifecycleUid.empty()) {
    SHOAL_ASSIGN_OR_RETURN(options.lifecycleUid, newLifecycleUid());
  } else if (!isLifecycleUid(options.lifecycleUid)) {
    return invalidArgument("bad-lifecycle-uid",
                           "a lifecycle uid is 26 to 32 characters of [a-z0-9]");
  }
  for (const auto& role : options.serviceRoles)
    SHOAL_RETURN_IF_ERROR(wire::validateRole(role));
  bool receives = options.receiveDirect || !options.serviceRoles.empty();
  if (receives && !options.onDelivery) {
    return invalidArgument("no-delivery-handler",
                           "an endpoint that receives needs an onDelivery handler");
  }
  std::unique_ptr<Endpoint> endpoint(new Endpoint(std::move(options)));
  Status started = endpoint->start();
  if (!started.isOk()) {
    (void)endpoint->close();
    return started;
  }
  return endpoint;
}

Status Endpoint::start() {
  selfId_ = options_.principal.dotForm();
  transport::ConnectOptions connect;
  connect.servers = options_.servers;
  connect.nkeySeedFile = options_.nkeySeedFile;
  connect.credentialsFile = options_.credentialsFile;
  connect.inboxPrefix = options_.inboxPrefix;
  connect.tlsCaFile = options_.tlsCaFile;
  connect.name =
      options_.connectionName.empty() ? "shoal " + options_.displayName : options_.connectionName;
  connect.reconnectWait = options_.reconnectWait;
  // Pull requests and acks leave at once instead of waiting for nats.c's flusher: without it a
  // DM's send → receive → ack round trip sits on a ~1 ms floor (bench/README.md, dm_bench).
  connect.sendAsap = true;
  connect.reconnectWaitMax = std::max(options_.reconnectWait * 8, options_.reconnectWait);
  connect.onEvent = [this](const transport::ConnectionEvent& event) { onConnectionEvent(event); };
  SHOAL_ASSIGN_OR_RETURN(conn_, transport::Connection::connect(std::move(connect)));
  SHOAL_ASSIGN_OR_RETURN(auto js, transport::JetStream::create(*conn_));
  js_.emplace(std::move(js));

  SHOAL_ASSIGN_OR_RETURN(std::string bucket,
                         wire::bucketName(wire::Bucket::kPresence, options_.space));
  transport::JetStreamOptions presenceJs;
  presenceJs.defaultTimeout = std::max(options_.heartbeat, std::chrono::milliseconds(500));
  SHOAL_ASSIGN_OR_RETURN(auto pjs, transport::JetStream::create(*conn_, presenceJs));
  presenceJs_.emplace(std::move(pjs));
  auto kv = transport::KeyValue::openBucket(*presenceJs_, bucket);
  if (!kv.isOk()) {
    if (kv.status().code() == StatusCode::kNotFound) {
      return notFound("space-not-provisioned",
                      fmt::format("space '{}' has no presence bucket; start the mesh with "
                                  "`shoal up` (or run `shoal serve`)",
                                  options_.space));
    }
    return kv.status().withContext("opening " + bucket);
  }
  presenceKv_.emplace(std::move(kv).value());

  // Durables first: a peer that appears in the roster can already be written to.
  std::optional<transport::PullConsumer> dm;
  std::optional<transport::PullConsumer> dlv;
  std::vector<transport::PullConsumer> roles;
  if (options_.receiveDirect || !options_.serviceRoles.empty()) {
    SHOAL_ASSIGN_OR_RETURN(
        ProvisionReply reply,
        requestProvision(*conn_, options_.space, options_.principal, options_.lifecycleUid,
                         options_.serviceRoles, options_.provisionTimeout));
    SHOAL_ASSIGN_OR_RETURN(std::string dmStream,
                           wire::streamName(wire::Stream::kDm, options_.space));
    SHOAL_ASSIGN_OR_RETURN(std::string taskStream,
                           wire::streamName(wire::Stream::kTask, options_.space));
    if (options_.receiveDirect) {
      SHOAL_ASSIGN_OR_RETURN(auto bound,
                             transport::PullConsumer::bind(*js_, dmStream, reply.durable));
      dm.emplace(std::move(bound));
      dmDurable_ = reply.durable;
    }
    if (options_.receiveDirect) {
      // Durable channel copies (the delivery plane's backstop). A space ensured by an older
      // manager has no DLV stream: channels stay live-only and each durable join says so.
      auto name = wire::dlvDurable(options_.principal, options_.lifecycleUid);
      auto stream = wire::streamName(wire::Stream::kDlv, options_.space);
      auto bound = name.isOk() && stream.isOk()
                       ? transport::PullConsumer::bind(*js_, *stream, *name)
                       : Result<transport::PullConsumer>(name.status());
      if (bound.isOk()) {
        dlv.emplace(std::move(*bound));
        dlvDurable_ = *name;
      } else {
        warn(bound.status().withContext(
            "durable channel copies unavailable (no DLV durable; re-run `shoal serve`)"));
      }
    }
    for (const auto& role : options_.serviceRoles) {
      auto it = reply.roles.find(role);
      if (it == reply.roles.end()) {
        return internalError("provision-incomplete",
                             "the manager did not provision the durable of role " + role);
      }
      SHOAL_ASSIGN_OR_RETURN(auto bound,
                             transport::PullConsumer::bind(*js_, taskStream, it->second));
      roles.push_back(std::move(bound));
    }
  }

  if (options_.presence) {
    store_ = std::make_unique<KvPresenceStore>(*presenceKv_);
    PresencePublisherOptions p;
    p.card.id = selfId_;
    p.card.name = options_.displayName;
    p.card.kind = options_.cardKind;
    p.card.owner = options_.principal.owner;
    p.card.actor = options_.principal.actor;
    p.card.role = options_.role;
    p.lifecycleUid = options_.lifecycleUid;
    p.environment = options_.environment;
    p.heartbeat = options_.heartbeat;
    p.ttl = options_.ttl;
    std::promise<Status> started;
    presenceLoop_.post([&] {
      publisher_ = std::make_unique<PresencePublisher>(presenceLoop_, *store_, std::move(p));
      publisher_->setWarningHandler([this](const Status& s) { warn(s); });
      publisher_->setWriteStuckHandler([this](const Status& s) {
        if (!s.isOk()) warn(s);
        viewLoop_.post([this, s] {
          if (view_) view_->setWriteStuck(s);
        });
      });
      started.set_value(publisher_->start());
    });
    SHOAL_RETURN_IF_ERROR(started.get_future().get());
  }

  watchSource_ = std::make_unique<KvPresenceWatchSource>(*presenceKv_);
  RosterViewOptions v;
  v.ttl = options_.ttl;
  if (options_.presence) {
    v.selfId = selfId_;
    v.republishSelf = [this] {
      presenceLoop_.post([this] {
        if (publisher_) publisher_->republish();
      });
    };
  }
  std::promise<Status> viewStarted;
  viewLoop_.post([&] {
    view_ = std::make_unique<RosterView>(viewLoop_, *watchSource_, std::move(v));
    view_->setWarningHandler([this](const Status& s) { warn(s); });
    if (options_.onRoster) {
      view_->setEventHandler([this](const RosterEvent& event) {
        options_.onRoster(event, event.id.empty() ? std::nullopt : view_->row(event.id));
      });
    }
    viewStarted.set_value(view_->start());
  });
  SHOAL_RETURN_IF_ERROR(viewStarted.get_future().get());

  {
    std::lock_guard lock(pumpsMu_);
    bound_ = BoundDurables{std::move(dm), std::move(dlv), std::move(roles)};
  }
  if (!options_.deferReceiving) startReceiving();
  return Status::ok();
}

void Endpoint::startReceiving() {
  std::lock_guard lock(pumpsMu_);
  if (!bound_ || closed_.load()) return;
  BoundDurables bound = std::move(*bound_);
  bound_.reset();
  DurablePumpOptions pumpOptions;
  pumpOptions.wait = options_.fetchWait;
  auto problem = [this](const Status& s) {
    if (!s.isOk()) warn(s);
  };
  auto admitOne = [this](transport::JsMessage& m) { admitDurable(m); };
  auto admitBatch = [this](std::vector<transport::JsMessage>& ms) { admitDurableBatch(ms); };
  auto pump = [&](transport::PullConsumer consumer) {
    if (options_.onDeliveries) {
      return std::make_unique<DurablePump>(std::move(consumer), DurablePump::AdmitBatch(admitBatch),
                                           problem, pumpOptions);
    }
    return std::make_unique<DurablePump>(std::move(consumer), DurablePump::Admit(admitOne), problem,
                                         pumpOptions);
  };
  if (bound.dm) pumps_.push_back(pump(std::move(*bound.dm)));
  for (auto& role : bound.roles)
    pumps_.push_back(pump(std::move(role)));
  if (bound.dlv) {
    pumps_.push_back(std::make_unique<DurablePump>(
        std::move(*bound.dlv), [this](transport::JsMessage& m) { admitFrame(m); }, problem,
        pumpOptions));
  }
}

Endpoint::~Endpoint() {
  (void)close();
}

Status Endpoint::close() {
  if (closed_.exchange(true)) return finalLeave_;
  {
    std::lock_guard lock(pumpsMu_);  // no pump starts after this
    bound_.reset();
  }
  for (auto& pump : pumps_)
    pump->stop();
  {
    std::lock_guard lock(channelsMu_);
    channels_.clear();
  }
  if (publisher_) {
    std::promise<Status> left;
    presenceLoop_.post([&] { left.set_value(publisher_->leave()); });
    finalLeave_ = left.get_future().get();
  }
  if (view_) {
    std::promise<void> stopped;
    viewLoop_.post([&] {
      view_->stop();
      stopped.set_value();
    });
    stopped.get_future().wait();
  }
  if (watchSource_) watchSource_->stop();
  presenceLoop_.stop();
  viewLoop_.stop();
  return finalLeave_;
}

void Endpoint::warn(const Status& status) {
  if (options_.onWarning) {
    options_.onWarning(status);
  } else {
    log::warn("mesh endpoint {}: {}", selfId_, status.toString());
  }
}

void Endpoint::onConnectionEvent(const transport::ConnectionEvent& event) {
  using Kind = transport::ConnectionEventKind;
  if (closed_.load()) return;  // our own close() ends the connection
  switch (event.kind) {
    case Kind::kDisconnected:
      viewLoop_.post([this] {
        if (view_) view_->setConnectionLive(false);
      });
      warn(unavailable("disconnected", "lost the broker connection; reconnecting"));
      break;
    case Kind::kReconnected:
      viewLoop_.post([this] {
        if (view_) view_->setConnectionLive(true);
      });
      presenceLoop_.post([this] {
        if (publisher_) publisher_->republish();
      });
      log::info("mesh endpoint {}: broker connection re-established", selfId_);
      break;
    case Kind::kClosed:
      break;
    case Kind::kAsyncError:
      if (event.status.code() == StatusCode::kPermissionDenied && !event.subject.empty()) {
        std::lock_guard lock(deniedMu_);
        deniedSubjects_.insert(event.subject);
      }
      warn(event.status);
      break;
  }
}

// --- Receiving ------------------------------------------------------------------------------

Endpoint::Admission Endpoint::admit(Path path, std::string_view subject, std::string_view payload,
                                    uint64_t streamSeq, uint64_t numDelivered) {
  return admitRead(path, wire::readDelivery(subject, payload), subject, payload, streamSeq,
                   numDelivered);
}

Endpoint::Admission Endpoint::admitRead(Path path, Result<wire::InboundDelivery> inbound,
                                        std::string_view subject, std::string_view payload,
                                        uint64_t streamSeq, uint64_t numDelivered) {
  std::lock_guard lock(admitMu_);
  auto prepared = prepare(path, std::move(inbound), subject, payload, streamSeq, numDelivered);
  if (auto* decided = std::get_if<Admission>(&prepared)) return *decided;
  const Delivery& delivery = std::get<Delivery>(prepared);
  return conclude(delivery, options_.onDelivery(delivery));
}

std::variant<Endpoint::Admission, Delivery> Endpoint::prepare(
    Path path, Result<wire::InboundDelivery> inbound, std::string_view subject,
    std::string_view payload, uint64_t streamSeq, uint64_t numDelivered) {
  using Outcome = Admission::Outcome;
  if (!inbound.isOk()) {
    ++counters_.anomalies;
    return Admission{Outcome::kAnomaly, inbound.status()};
  }
  if (inbound->kind == wire::DeliveryKind::kDm &&
      (!inbound->subject.recipient || !(*inbound->subject.recipient == options_.principal))) {
    ++counters_.anomalies;
    return Admission{Outcome::kAnomaly,
                     invalidArgument("not-addressed-here",
                                     "a DM for " + inbound->subject.rest + " reached " + selfId_)};
  }
  if (inbound->message.from.id == selfId_) {
    ++counters_.ownEchoes;
    return Admission{Outcome::kOwnEcho, {}};
  }
  if (seen_.contains(inbound->message.id)) {
    ++counters_.duplicates;
    return Admission{Outcome::kDuplicate, {}};
  }
  if (!options_.onDelivery) {
    return Admission{Outcome::kDuplicate, {}};  // an observer surfaces nothing
  }
  Delivery delivery;
  delivery.kind = inbound->kind;
  delivery.message = std::move(inbound->message);
  delivery.subject = std::string(subject);
  delivery.payload = std::string(payload);
  delivery.historical = path == Path::kHistory;
  delivery.durable = path == Path::kDurable;
  delivery.streamSeq = streamSeq;
  delivery.numDelivered = numDelivered;
  return delivery;
}

Endpoint::Admission Endpoint::conclude(const Delivery& delivery, HandlerVerdict verdict) {
  using Outcome = Admission::Outcome;
  switch (verdict) {
    case HandlerVerdict::kAccepted:
      if (!delivery.historical || !options_.historyYieldsToLaterCopies)
        seen_.insert(delivery.message.id);
      ++counters_.surfaced;
      return {Outcome::kSurfaced, {}};
    case HandlerVerdict::kRetryLater:
      ++counters_.retries;
      return {Outcome::kRetry, {}};
    case HandlerVerdict::kRejected:
      return {Outcome::kRejected, {}};
  }
  return {Outcome::kRejected, {}};
}

void Endpoint::admitDurable(transport::JsMessage& message) {
  const auto& meta = message.metadata();
  Admission a =
      admit(Path::kDurable, message.subject(), message.data(), meta.streamSeq, meta.numDelivered);
  settle(message, a);
  reportRefused(message, a);
}

void Endpoint::admitDurableBatch(std::vector<transport::JsMessage>& messages) {
  std::vector<Admission> admissions(messages.size());
  {
    std::lock_guard lock(admitMu_);
    std::vector<Delivery> handed;
    std::vector<size_t> at;  // handed[i] is messages[at[i]]
    std::set<std::string> ids;
    auto flush = [&] {
      if (handed.empty()) return;
      std::vector<HandlerVerdict> verdicts = options_.onDeliveries(handed);
      for (size_t i = 0; i < handed.size(); ++i) {
        // A handler that answers short leaves the rest for the broker to redeliver.
        admissions[at[i]] = i < verdicts.size() ? conclude(handed[i], verdicts[i])
                                                : Admission{Admission::Outcome::kRetry, {}};
      }
      handed.clear();
      at.clear();
      ids.clear();
    };
    for (size_t i = 0; i < messages.size(); ++i) {
      const auto& meta = messages[i].metadata();
      auto read = wire::readDelivery(messages[i].subject(), messages[i].data());
      // A second copy of one id in the batch waits for the first's verdict (then it is a
      // duplicate, or the handler sees it again).
      if (read.isOk() && ids.contains(read->message.id)) flush();
      auto prepared = prepare(Path::kDurable, std::move(read), messages[i].subject(),
                              messages[i].data(), meta.streamSeq, meta.numDelivered);
      if (auto* decided = std::get_if<Admission>(&prepared)) {
        admissions[i] = *decided;
        continue;
      }
      ids.insert(std::get<Delivery>(prepared).message.id);
      handed.push_back(std::get<Delivery>(std::move(prepared)));
      at.push_back(i);
    }
    flush();
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    settle(messages[i], admissions[i]);
    reportRefused(messages[i], admissions[i]);
  }
}

void Endpoint::reportRefused(transport::JsMessage& message, const Admission& a) {
  const auto& meta = message.metadata();
  if (a.outcome == Admission::Outcome::kAnomaly && options_.onRefused) {
    // Terminated for good: whoever can be named hears why (the seat sends a failed receipt).
    RefusedDelivery refused;
    refused.subject = message.subject();
    refused.streamSeq = meta.streamSeq;
    if (auto parsed = wire::parseSubject(refused.subject);
        parsed.isOk() && parsed->kind == wire::SubjectKind::kInst && parsed->recipient &&
        *parsed->recipient == options_.principal &&
        wire::validatePrincipal(parsed->principal).isOk()) {
      refused.sender = parsed->principal;
    }
    refused.messageId = wire::peekMessageId(message.data());
    refused.why = a.why;
    if (refused.sender) options_.onRefused(refused);
  }
}

void Endpoint::admitFrame(transport::JsMessage& message) {
  const auto& meta = message.metadata();
  // The frame's own checks (Cotal wire contract: DLV frames), then the post goes through the same
  // admission as a live copy, under the CHAT subject its sender published on: the plane checked
  // that sender at fan-out, and from.id must still match it here.
  auto frame = [&]() -> Result<std::pair<std::string, std::string>> {
    if (message.header(wire::kDeliveryFrameHeader) != std::string(wire::kDeliveryFrameVersion)) {
      return invalidArgument("bad-delivery-frame", "missing header Cotal-Delivery-Frame: 1");
    }
    SHOAL_ASSIGN_OR_RETURN(wire::DeliveryFrame f, wire::decodeDeliveryFrame(message.data()));
    SHOAL_ASSIGN_OR_RETURN(wire::Principal sender, wire::parsePrincipal(f.msg.from.id));
    SHOAL_ASSIGN_OR_RETURN(std::string subject,
                           wire::chatSubject(options_.space, sender, f.channel));
    SHOAL_ASSIGN_OR_RETURN(std::string payload, wire::encodeMessage(f.msg));
    return std::make_pair(std::move(subject), std::move(payload));
  }();
  if (!frame.isOk()) {
    std::lock_guard lock(admitMu_);
    ++counters_.anomalies;
    settle(message, Admission{Admission::Outcome::kAnomaly, frame.status()});
    return;
  }
  settle(message,
         admit(Path::kDurable, frame->first, frame->second, meta.streamSeq, meta.numDelivered));
}

void Endpoint::settle(transport::JsMessage& message, const Admission& a) {
  using Outcome = Admission::Outcome;
  const auto& meta = message.metadata();
  Status acked;
  switch (a.outcome) {
    case Outcome::kSurfaced:
    case Outcome::kDuplicate:
    case Outcome::kOwnEcho:
      acked = message.ack();
      break;
    case Outcome::kRetry:
      acked = message.nakWithDelay(
          doublingBackoff(options_.retryDelay, options_.maxRetryDelay, meta.numDelivered));
      break;
    case Outcome::kAnomaly:
      warn(a.why.withContext(fmt::format("terminated {} seq {} on {}", meta.stream, meta.streamSeq,
                                         message.subject())));
      acked = message.term();
      break;
    case Outcome::kRejected:
      acked = message.term();
      break;
  }
  if (!acked.isOk())
    warn(acked.withContext("acknowledging " + meta.stream + " seq " +
                           std::to_string(meta.streamSeq)));
}

// --- Channels -------------------------------------------------------------------------------

Result<JoinReport> Endpoint::join(std::string_view channel, const JoinOptions& options) {
  SHOAL_RETURN_IF_ERROR(wire::validateChannelPattern(channel));
  if (!options_.onDelivery) {
    return failedPrecondition("no-delivery-handler",
                              "joining a channel needs an onDelivery handler to surface its posts");
  }
  if (closed_.load()) return failedPrecondition("endpoint-closed", "the endpoint is closed");
  JoinReport report;
  report.channel = std::string(channel);
  {
    std::lock_guard lock(channelsMu_);
    if (channels_.count(report.channel) != 0) {
      report.alreadyJoined = true;
      return report;
    }
  }
  SHOAL_ASSIGN_OR_RETURN(std::string chat, wire::streamName(wire::Stream::kChat, options_.space));
  auto info = js_->streamInfo(chat);
  if (!info.isOk()) return info.status().withContext("reading the join watermark of " + chat);
  report.watermark = info->state.lastSeq;

  SHOAL_ASSIGN_OR_RETURN(std::string filter, wire::chatFilter(options_.space, channel));
  {
    std::lock_guard lock(deniedMu_);
    deniedSubjects_.erase(filter);
  }
  SHOAL_ASSIGN_OR_RETURN(auto sub, conn_->subscribe(filter, [this](transport::Message m) {
    Admission a = admit(Path::kLive, m.subject, m.data, 0, 0);
    if (a.outcome == Admission::Outcome::kAnomaly) {
      warn(a.why.withContext("dropped a live message on " + m.subject));
    }
  }));
  (void)sub.setPendingLimits(kChannelPendingMessages, kChannelPendingBytes);
  // A subscribe is only known to be accepted once a round trip passed without a refusal (its
  // event may still be on the way: nats.c's recorded text is checked too).
  SHOAL_RETURN_IF_ERROR(conn_->flush(kJoinFlushTimeout).withContext("joining " + report.channel));
  const bool refusedNow = conn_->lastViolationText().find('"' + filter + '"') != std::string::npos;
  {
    std::lock_guard lock(deniedMu_);
    if (refusedNow || deniedSubjects_.count(filter) != 0) {
      return permissionDenied("join-refused",
                              fmt::format("the broker refused to subscribe to {}: this "
                                          "principal may not read channel '{}'",
                                          filter, channel));
    }
  }
  {
    std::lock_guard lock(channelsMu_);
    channels_.emplace(report.channel, std::move(sub));
  }
  // One resolution of class and replay, read fresh (mesh/channel_registry.h). A wildcard
  // pattern is live only: membership and history are per concrete channel.
  std::optional<EffectiveChannel> effective;
  if (wire::isConcreteChannel(channel)) {
    auto read = readEffectiveChannel(*js_, options_.space, channel);
    if (read.isOk()) {
      effective = std::move(*read);
      report.deliveryClass = std::string(wire::deliveryClassName(effective->deliveryClass));
    } else {
      warn(read.status().withContext("joined #" + report.channel +
                                     " live; its registry config could not be read"));
    }
  }
  if (effective && effective->deliveryClass == wire::DeliveryClass::kDurable) {
    if (dlvDurable_.empty()) {
      report.backstop =
          "joined live, durable backstop unestablished: this endpoint has no DLV "
          "durable to receive copies on";
    } else {
      auto member =
          requestDurableJoin(*conn_, options_.space, options_.principal, options_.lifecycleUid,
                             report.channel, report.watermark, options_.provisionTimeout);
      if (member.isOk() && member->durable) {
        report.durable = true;
        report.generation = member->generation;
        report.continued = member->existing;
        std::lock_guard lock(channelsMu_);
        durableGenerations_[report.channel] = member->generation;
      } else {
        report.backstop = "joined live, durable backstop unestablished: " +
                          (member.isOk() ? std::string("the delivery plane declined")
                                         : member.status().toString());
        if (!member.isOk() && options.heldDurably) {
          report.continued = true;
          report.backstop +=
              "; the durable membership this lifecycle held is taken to continue (no replay)";
        }
      }
    }
    if (!report.backstop.empty())
      warn(unavailable("durable-backstop-unestablished",
                       "#" + report.channel + ": " + report.backstop));
  }
  // A membership this lifecycle already held continues: its first join replayed what came before
  // its cursor and the backstop carries every post since, so a replay now would only hand over
  // again posts it took in long ago (and whose journal tombstones may be gone).
  report.replay =
      options.replay.value_or(effective ? effective->replay : false) && !report.continued;
  std::optional<std::chrono::milliseconds> window = options.replayWindow;
  if (!window && effective && effective->replayWindowMs) {
    window = std::chrono::milliseconds(*effective->replayWindowMs);
  }
  if (report.replay && wire::isConcreteChannel(channel) && report.watermark > 0) {
    HistoryOptions h;
    h.watermark = report.watermark;
    if (window) {
      h.sinceMs = Clock::real().wallMs() - window->count();
    }
    auto page = history(channel, h);
    if (!page.isOk()) {
      warn(page.status().withContext("joined " + report.channel + " live, but replay failed"));
      return report;
    }
    report.replaySkipped = page->skipped;
    for (auto& entry : page->entries) {
      // The one admission path, so the echo and dedup rules apply to backfill too.
      Admission a =
          admitRead(Path::kHistory, std::move(entry.delivery), entry.subject, {}, entry.seq, 0);
      if (a.outcome == Admission::Outcome::kSurfaced) ++report.replayed;
    }
  }
  return report;
}

Status Endpoint::leave(std::string_view channel) {
  std::optional<transport::Subscription> sub;
  std::optional<uint64_t> generation;
  {
    std::lock_guard lock(channelsMu_);
    if (channels_.count(std::string(channel)) == 0) {
      return notFound("not-joined", "not joined to channel '" + std::string(channel) + "'");
    }
    if (auto g = durableGenerations_.find(std::string(channel)); g != durableGenerations_.end()) {
      generation = g->second;
    }
  }
  // The membership is tombstoned first (fail-closed): a leave the plane did not record would
  // keep copies coming after the user was told they left.
  if (generation) {
    auto left =
        requestDurableLeave(*conn_, options_.space, options_.principal, options_.lifecycleUid,
                            channel, *generation, options_.provisionTimeout);
    if (!left.isOk()) {
      return left.status().withContext("still joined to #" + std::string(channel) +
                                       ": the delivery plane did not record the leave");
    }
  }
  {
    std::lock_guard lock(channelsMu_);
    auto it = channels_.find(std::string(channel));
    if (it == channels_.end()) {
      return notFound("not-joined", "not joined to channel '" + std::string(channel) + "'");
    }
    sub.emplace(std::move(it->second));
    channels_.erase(it);
    durableGenerations_.erase(std::string(channel));
  }
  sub->unsubscribe();
  return Status::ok();
}

Status Endpoint::endDurableMembership(std::string_view channel) {
  SHOAL_ASSIGN_OR_RETURN(auto held,
                         requestMemberships(*conn_, options_.space, options_.principal,
                                            options_.lifecycleUid, options_.provisionTimeout));
  for (const MembershipSummary& m : held) {
    if (m.channel != channel) continue;
    auto left =
        requestDurableLeave(*conn_, options_.space, options_.principal, options_.lifecycleUid,
                            channel, m.generation, options_.provisionTimeout);
    if (!left.isOk()) {
      return left.status().withContext("ending the durable membership of #" + std::string(channel));
    }
  }
  return Status::ok();
}

std::vector<std::string> Endpoint::channels() const {
  std::lock_guard lock(channelsMu_);
  std::vector<std::string> out;
  for (const auto& [name, sub] : channels_)
    out.push_back(name);
  return out;
}

Result<HistoryPage> Endpoint::history(std::string_view channel, const HistoryOptions& options) {
  std::lock_guard lock(historyMu_);
  return readChannelHistory(*js_, options_.space, options_.principal, options_.lifecycleUid,
                            channel, options);
}

}  // namespace shoal::mesh

// --- Roster ---------------------------------------------------------------------------------

namespace shoal::mesh {

template <typename T>
Result<T> Endpoint::onView(std::function<Result<T>()> fn) {
  if (viewLoop_.inExecutor()) {
    return failedPrecondition("on-endpoint-loop",
                              "a roster handler may not call back into the endpoint");
  }
  if (closed_.load()) return failedPrecondition("endpoint-closed", "the endpoint is closed");
  auto done = std::make_shared<std::promise<Result<T>>>();
  auto future = done->get_future();
  viewLoop_.post([done, fn = std::move(fn)] { done->set_value(fn()); });
  try {
    return future.get();
  } catch (const std::future_error&) {
    // The loop stopped (close() raced this call) and dropped the task.
    return failedPrecondition("endpoint-closed", "the endpoint closed during the call");
  }
}

RosterSnapshot Endpoint::roster() {
  auto snapshot =
      onView<RosterSnapshot>([this]() -> Result<RosterSnapshot> { return view_->snapshot(); });
  if (snapshot.isOk()) return std::move(snapshot).value();
  RosterSnapshot unknown;
  unknown.view.condition = snapshot.status();
  return unknown;
}

Result<RosterSnapshot> Endpoint::waitForRoster(std::chrono::milliseconds timeout) {
  if (viewLoop_.inExecutor()) {
    return failedPrecondition("on-endpoint-loop", "a roster handler may not wait for the roster");
  }
  auto done = std::make_shared<std::promise<Result<RosterSnapshot>>>();
  auto future = done->get_future();
  viewLoop_.post([this, done, timeout] {
    view_->waitForPresenceSnapshot(timeout,
                                   [done](Result<RosterSnapshot> r) { done->set_value(r); });
  });
  // A stopped loop never answers; bound the wait by the timeout plus a margin.
  if (future.wait_for(timeout + std::chrono::seconds(2)) != std::future_status::ready) {
    return deadlineExceeded(kReasonSnapshotTimeout, "the endpoint stopped while waiting");
  }
  return future.get();
}

Result<RosterRow> Endpoint::findPeer(std::string_view idOrName) {
  const std::string wanted(idOrName);
  return onView<RosterRow>([this, wanted]() -> Result<RosterRow> { return view_->find(wanted); });
}

// --- Sending --------------------------------------------------------------------------------

Result<SendReceipt> Endpoint::publishAsSelf(const Outbound& outbound) {
  Sender from{options_.principal, options_.displayName, options_.role};
  SHOAL_ASSIGN_OR_RETURN(StoredReceipt stored,
                         publishMessage(*js_, Clock::real(), options_.space, from, outbound));
  SendReceipt receipt;
  receipt.stored = std::move(stored);
  receipt.kind = outbound.kind;
  receipt.target = outbound.target;
  return receipt;
}

Result<SendReceipt> Endpoint::sendDirect(std::string_view toNameOrId, std::string_view text,
                                         std::optional<std::string> replyTo) {
  struct Resolved {
    wire::Principal to;
    std::optional<RosterRow> row;
    PresenceViewInfo view;
  };
  const std::string wanted(toNameOrId);
  SHOAL_ASSIGN_OR_RETURN(Resolved r, onView<Resolved>([this, wanted]() -> Result<Resolved> {
                           Resolved out;
                           out.view = view_->info();
                           if (auto asId = wire::parsePrincipal(wanted); asId.isOk()) {
                             // A principal id needs no roster row; the row, if any, only informs
                             // the receipt.
                             out.to = *asId;
                             out.row = view_->row(wanted);
                             return out;
                           }
                           SHOAL_ASSIGN_OR_RETURN(RosterRow row, view_->find(wanted));
                           SHOAL_ASSIGN_OR_RETURN(out.to, wire::parsePrincipal(row.id));
                           out.row = std::move(row);
                           return out;
                         }));

  Outbound outbound;
  outbound.kind = wire::DeliveryKind::kDm;
  outbound.target = r.to.dotForm();
  outbound.text = std::string(text);
  outbound.replyTo = std::move(replyTo);
  SHOAL_ASSIGN_OR_RETURN(SendReceipt receipt, publishAsSelf(outbound));
  if (r.row) {
    receipt.recipientStatus = std::string(wire::presenceStatusName(r.row->presence.status));
    receipt.note = fmt::format("{} ({}) was {} at send", r.row->presence.card.name, r.row->id,
                               statusWord(*r.row, r.view));
  } else if (r.view.fresh) {
    receipt.note = "recipient had no roster row at send";
  } else {
    receipt.note = fmt::format("recipient's status unknown at send (presence view {})",
                               viewStateName(r.view.state));
  }
  return receipt;
}

Result<SendReceipt> Endpoint::post(std::string_view channel, std::string_view text,
                                   const std::vector<std::string>& mentions,
                                   std::optional<std::string> replyTo) {
  SHOAL_RETURN_IF_ERROR(wire::validateConcreteChannel(channel));
  std::vector<std::string> normalized = wire::normalizeMentions(mentions);
  std::vector<RosterRow> resolved;
  if (!normalized.empty()) {
    SHOAL_ASSIGN_OR_RETURN(
        resolved,
        onView<std::vector<RosterRow>>([this, normalized]() -> Result<std::vector<RosterRow>> {
          std::vector<RosterRow> rows;
          for (const auto& m : normalized) {
            auto row = view_->find(m);
            if (!row.isOk()) {
              return row.status().withContext("mention @" + m + " (not sent)");
            }
            rows.push_back(std::move(row).value());
          }
          return rows;
        }));
  }
  Outbound outbound;
  outbound.kind = wire::DeliveryKind::kChannel;
  outbound.target = std::string(channel);
  outbound.text = std::string(text);
  outbound.mentions = normalized;
  outbound.replyTo = std::move(replyTo);
  SHOAL_ASSIGN_OR_RETURN(SendReceipt receipt, publishAsSelf(outbound));
  std::string words;
  for (const auto& row : resolved) {
    receipt.mentionIds.push_back(row.id);
    words += fmt::format("{}@{} ({}, {})", words.empty() ? "" : ", ", row.presence.card.name,
                         row.id, wire::presenceStatusName(row.presence.status));
  }
  receipt.note = resolved.empty() ? "posted to #" + outbound.target
                                  : "posted to #" + outbound.target + "; mentions " + words;
  return receipt;
}

Result<SendReceipt> Endpoint::ask(std::string_view role, std::string_view text) {
  SHOAL_RETURN_IF_ERROR(wire::validateRole(role));
  const std::string wanted(role);
  RosterSnapshot snapshot = roster();
  std::vector<std::string> holders;
  for (const auto& row : snapshot.rows) {
    if (row.online() && row.presence.card.role == wanted) holders.push_back(row.id);
  }
  Outbound outbound;
  outbound.kind = wire::DeliveryKind::kAnycast;
  outbound.target = wanted;
  outbound.text = std::string(text);
  SHOAL_ASSIGN_OR_RETURN(SendReceipt receipt, publishAsSelf(outbound));
  if (!snapshot.view.fresh) {
    receipt.note = fmt::format("role holders unknown at send (presence view {})",
                               viewStateName(snapshot.view.state));
  } else if (holders.empty()) {
    receipt.note = fmt::format(
        "no present holder of role {} at send; the work waits in {} until one pulls svc_{}", wanted,
        receipt.stored.stream, wanted);
  } else {
    std::string ids;
    for (const auto& id : holders)
      ids += (ids.empty() ? "" : ", ") + id;
    receipt.note =
        fmt::format("{} present holder(s) of role {} at send: {}", holders.size(), wanted, ids);
  }
  return receipt;
}

// --- Own presence ---------------------------------------------------------------------------

Status Endpoint::setStatus(wire::PresenceStatus status) {
  if (!publisher_ || closed_.load()) return Status::ok();
  auto done = std::make_shared<std::promise<Status>>();
  auto future = done->get_future();
  presenceLoop_.post([this, done, status] { done->set_value(publisher_->setStatus(status)); });
  return future.get();
}

Status Endpoint::setActivity(std::optional<std::string> activity) {
  if (activity) SHOAL_RETURN_IF_ERROR(wire::checkActivity(*activity));
  updatePresence([a = std::move(activity)](PresencePublisher& p) { (void)p.setActivity(a); });
  return Status::ok();
}

void Endpoint::updatePresence(std::function<void(PresencePublisher&)> change) {
  if (!publisher_ || closed_.load()) return;
  presenceLoop_.post([this, change = std::move(change)] { change(*publisher_); });
}

ReceiveCounters Endpoint::counters() const {
  std::lock_guard lock(admitMu_);
  return counters_;
}

}  // namespace shoal::mesh
