#include "planes/grants.h"

#include "mesh/credential_rail.h"
#include "mesh/delivery_rail.h"
#include "mesh/join_rail.h"
#include "mesh/provision_client.h"
#include "planes/delivery_plane.h"
#include "wire/channel.h"
#include "wire/channel_config.h"
#include "wire/names.h"
#include "wire/plane.h"
#include "wire/subject.h"
#include "wire/token.h"

namespace shoal::planes {
namespace {

using Direction = GrantRow::Direction;
using Effect = GrantRow::Effect;

// Collects rows; every builder result is checked once, at the end.
class Rows {
 public:
  void pub(std::string subject, std::string purpose) {
    rows_.push_back({Direction::kPublish, Effect::kAllow, std::move(subject), std::move(purpose)});
  }
  void sub(std::string subject, std::string purpose) {
    rows_.push_back(
        {Direction::kSubscribe, Effect::kAllow, std::move(subject), std::move(purpose)});
  }
  void respond(std::string purpose) {
    rows_.push_back({Direction::kRespond, Effect::kAllow, "", std::move(purpose)});
  }
  void denyPub(std::string subject, std::string purpose) {
    rows_.push_back({Direction::kPublish, Effect::kDeny, std::move(subject), std::move(purpose)});
  }
  std::vector<GrantRow> take() { return std::move(rows_); }

 private:
  std::vector<GrantRow> rows_;
};

struct Names {
  std::string root, chat, dm, task, dlv, inbox, wake;
  std::string presence, channels, delivery, membership, members, acl, seats, machines, invites;
};

Result<Names> namesOf(std::string_view space) {
  Names n;
  SHOAL_ASSIGN_OR_RETURN(n.chat, wire::streamName(wire::Stream::kChat, space));
  SHOAL_ASSIGN_OR_RETURN(n.dm, wire::streamName(wire::Stream::kDm, space));
  SHOAL_ASSIGN_OR_RETURN(n.task, wire::streamName(wire::Stream::kTask, space));
  SHOAL_ASSIGN_OR_RETURN(n.dlv, wire::streamName(wire::Stream::kDlv, space));
  SHOAL_ASSIGN_OR_RETURN(n.inbox, wire::streamName(wire::Stream::kInbox, space));
  SHOAL_ASSIGN_OR_RETURN(n.wake, wire::streamName(wire::Stream::kWake, space));
  SHOAL_ASSIGN_OR_RETURN(n.presence, wire::bucketName(wire::Bucket::kPresence, space));
  SHOAL_ASSIGN_OR_RETURN(n.channels, wire::bucketName(wire::Bucket::kChannels, space));
  SHOAL_ASSIGN_OR_RETURN(n.delivery, wire::bucketName(wire::Bucket::kDelivery, space));
  SHOAL_ASSIGN_OR_RETURN(n.membership, wire::bucketName(wire::Bucket::kMembership, space));
  SHOAL_ASSIGN_OR_RETURN(n.members, wire::bucketName(wire::Bucket::kMembers, space));
  SHOAL_ASSIGN_OR_RETURN(n.acl, wire::bucketName(wire::Bucket::kAcl, space));
  SHOAL_ASSIGN_OR_RETURN(n.seats, wire::bucketName(wire::Bucket::kSeats, space));
  SHOAL_ASSIGN_OR_RETURN(n.machines, wire::bucketName(wire::Bucket::kMachines, space));
  SHOAL_ASSIGN_OR_RETURN(n.invites, wire::bucketName(wire::Bucket::kInvites, space));
  n.root = "cotal." + std::string(space);
  return n;
}

Status checkConnId(std::string_view connId) {
  const bool ok = connId.size() >= 8 && connId.size() <= 120 && wire::isRoutingToken(connId);
  return ok ? Status::ok()
            : invalidArgument("bad-conn-id", "a connection id is 8-120 of [A-Za-z0-9_-]");
}

// Reads of a KV bucket: its stream's info, single-key gets and ordered-consumer watches.
void kvReads(Rows& r, const std::string& bucket, const std::string& why) {
  const std::string stream = "KV_" + bucket;
  r.pub("$JS.API.STREAM.INFO." + stream, why);
  r.pub("$JS.API.STREAM.MSG.GET." + stream, why);
  r.pub("$JS.API.DIRECT.GET." + stream + ".>", why);  // a KV get of a direct-get bucket
  r.pub("$JS.API.CONSUMER.CREATE." + stream, why);
  r.pub("$JS.API.CONSUMER.CREATE." + stream + ".>", why);
  r.pub("$JS.API.CONSUMER.INFO." + stream + ".>", why);
  r.pub("$JS.API.CONSUMER.DELETE." + stream + ".>", why);
}

// Bind-only use of one durable: its info, pulls and acks — never a create.
void bindOnly(Rows& r, const std::string& stream, const std::string& durable,
              const std::string& why) {
  r.pub("$JS.API.CONSUMER.INFO." + stream + "." + durable, why);
  r.pub("$JS.API.CONSUMER.MSG.NEXT." + stream + "." + durable, why);
  r.pub("$JS.ACK." + stream + "." + durable + ".>", why);
}

// What an allow wildcard must never reach: creating consumers on the directed streams.
void denyDirectedCreates(Rows& r, const Names& n) {
  for (const std::string* stream : {&n.dm, &n.task, &n.dlv}) {
    r.denyPub("$JS.API.CONSUMER.CREATE." + *stream, "no consumer creates on " + *stream);
    r.denyPub("$JS.API.CONSUMER.CREATE." + *stream + ".>", "no consumer creates on " + *stream);
    r.denyPub("$JS.API.CONSUMER.DURABLE.CREATE." + *stream + ".>",
              "no durable creates on " + *stream);
  }
}

// Every form of creating (or reading) the durable `durable` on `stream` — nats.c picks the
// form by server version and whether a filter is set.
void createsOf(Rows& r, const std::string& stream, const std::string& durable,
               const std::string& why) {
  r.pub("$JS.API.CONSUMER.INFO." + stream + "." + durable, why);
  r.pub("$JS.API.CONSUMER.CREATE." + stream + "." + durable, why);
  r.pub("$JS.API.CONSUMER.CREATE." + stream + "." + durable + ".>", why);
  r.pub("$JS.API.CONSUMER.DURABLE.CREATE." + stream + "." + durable, why);
}

// A plane's own rail and liveness responder: the rail filter and the plane's probe filter (no
// other profile holds it), answers confined to the probe's `.reply.` leaf, rail replies by
// allow_responses.
Status planeRails(Rows& r, const PlaneScope& s, const std::string& railFilter, wire::Plane plane) {
  SHOAL_RETURN_IF_ERROR(checkConnId(s.connId));
  SHOAL_ASSIGN_OR_RETURN(std::string probes, wire::livenessServeFilter(s.space, plane));
  SHOAL_ASSIGN_OR_RETURN(std::string answers, wire::livenessReplyGrant(s.space, plane));
  r.sub("_INBOX_" + s.connId + ".>", "replies to its own JetStream requests");
  r.sub(railFilter, "its rail's requests");
  r.sub(probes, "its liveness probes: the responder filter no other profile holds");
  r.pub(answers, "liveness answers, only under the probe's .reply. leaf");
  r.respond("one reply to each rail request received, to the caller's inbox");
  r.pub("$JS.API.INFO", "JetStream account info");
  r.pub("$JS.API.STREAM.NAMES", "nats.c finds a KV watch's stream by subject (names only)");
  r.pub("$JS.FC.>", "flow control of its watches");
  return Status::ok();
}

void readerBase(Rows& r, const Names& n, const std::string& connId) {
  r.sub("_INBOX_" + connId + ".>", "replies, pulls and watches to this connection");
  r.pub("$JS.API.INFO", "JetStream account info");
  r.pub("$JS.API.STREAM.NAMES", "nats.c finds a KV watch's stream by subject (names only)");
  r.pub("$JS.FC.>", "flow control of its watches");
  kvReads(r, n.presence, "the roster");
  kvReads(r, n.channels, "the channel registry");
  kvReads(r, n.delivery, "the delivery plane's lease");
}

}  // namespace

Result<std::vector<GrantRow>> agentGrants(const AgentScope& s) {
  SHOAL_ASSIGN_OR_RETURN(Names n, namesOf(s.space));
  SHOAL_RETURN_IF_ERROR(wire::validatePrincipal(s.principal));
  SHOAL_RETURN_IF_ERROR(wire::validateLifecycleUid(s.lifecycleUid));
  SHOAL_RETURN_IF_ERROR(checkConnId(s.connId));
  const std::string me = s.principal.owner + "." + s.principal.actor;
  SHOAL_ASSIGN_OR_RETURN(std::string chathist, wire::chathistDurable(s.principal, s.lifecycleUid));
  SHOAL_ASSIGN_OR_RETURN(std::string dmD, wire::dmDurable(s.principal, s.lifecycleUid));
  SHOAL_ASSIGN_OR_RETURN(std::string dlvD, wire::dlvDurable(s.principal, s.lifecycleUid));

  Rows r;
  r.sub("_INBOX_" + s.connId + ".>", "replies, pulls and watches to this connection");
  for (const auto& pattern : s.readChannels) {
    SHOAL_ASSIGN_OR_RETURN(std::string filter, wire::chatFilter(s.space, pattern));
    r.sub(filter, "live posts of a channel it may read");
    r.pub("$JS.API.CONSUMER.CREATE." + n.chat + "." + chathist + "." + filter,
          "its chat history reader, pinned to a channel it may read");
  }
  r.sub(n.root + ".live.*." + me + ".reply.*", "answers to its liveness probes");
  r.sub(n.root + ".rcpt." + me + ".*.*", "receipts of what it sent");
  r.sub(n.root + ".wake.*.*", "seats' lifecycle events and wake results");

  for (const auto& channel : s.postChannels) {
    SHOAL_RETURN_IF_ERROR(wire::validateConcreteChannel(channel));
    r.pub(n.root + ".chat." + me + "." + channel, "posts to a declared channel, as itself");
  }
  r.pub(n.root + ".inst.*.*." + me, "DMs to anyone, as itself");
  r.pub(n.root + ".svc.*." + me, "work for any role, as itself");
  r.pub(n.root + ".live.*." + me, "liveness probes of the planes, as itself");
  r.pub(n.root + ".rcpt.*.*." + me, "receipts of what it received, as the recipient");
  r.pub(n.root + ".wake." + me, "its own lifecycle events and wake results (a seat)");
  const std::string self = me + "." + s.lifecycleUid;
  r.pub(n.root + ".ep.one.manager.provision." + self + ".*",
        "asks the manager for its own durables (self mode)");
  r.pub(n.root + ".ep.one.delivery.*." + self + ".*",
        "joins, leaves and lists its own durable channel memberships (self mode)");
  r.pub("$JS.API.INFO", "JetStream account info");
  r.pub("$JS.API.STREAM.NAMES", "nats.c finds a KV watch's stream by subject (names only)");
  r.pub("$JS.FC.>", "flow control of its watches");
  r.pub("$JS.API.STREAM.INFO." + n.chat, "channel watermarks and counts");
  r.pub("$JS.API.CONSUMER.INFO." + n.chat + "." + chathist, "its chat history reader");
  r.pub("$JS.API.CONSUMER.MSG.NEXT." + n.chat + "." + chathist, "its chat history reader");
  r.pub("$JS.API.CONSUMER.DELETE." + n.chat + "." + chathist, "its chat history reader");
  bindOnly(r, n.dm, dmD, "its DM durable (bind only)");
  bindOnly(r, n.dlv, dlvD, "its durable-channel backstop (bind only)");
  r.pub("$KV." + n.presence + "." + me, "its own presence record");
  kvReads(r, n.presence, "the roster");
  kvReads(r, n.channels, "the channel registry");
  r.pub("$JS.API.STREAM.MSG.GET.KV_" + n.delivery, "the delivery plane's lease");
  if (s.role) {
    SHOAL_RETURN_IF_ERROR(wire::validateRole(*s.role));
    SHOAL_ASSIGN_OR_RETURN(std::string svcD, wire::svcDurable(*s.role));
    r.pub("$JS.API.STREAM.INFO." + n.task, "the work queue of its role");
    bindOnly(r, n.task, svcD, "work for its role (bind only)");
  }
  denyDirectedCreates(r, n);
  return r.take();
}

Result<std::vector<GrantRow>> observerGrants(const ReaderScope& s) {
  SHOAL_ASSIGN_OR_RETURN(Names n, namesOf(s.space));
  SHOAL_RETURN_IF_ERROR(checkConnId(s.connId));
  Rows r;
  readerBase(r, n, s.connId);
  r.sub(n.root + ".chat.>", "every channel's live posts");
  r.sub(n.root + ".wake.>", "seats' lifecycle events and wake results");
  r.pub("$JS.API.STREAM.INFO." + n.chat, "channel watermarks and counts");
  r.pub("$JS.API.CONSUMER.CREATE." + n.chat, "channel history readers");
  r.pub("$JS.API.CONSUMER.CREATE." + n.chat + ".>", "channel history readers");
  r.pub("$JS.API.CONSUMER.INFO." + n.chat + ".>", "channel history readers");
  r.pub("$JS.API.CONSUMER.MSG.NEXT." + n.chat + ".>", "channel history readers");
  r.pub("$JS.API.CONSUMER.DELETE." + n.chat + ".>", "channel history readers");
  kvReads(r, n.membership, "durable channel memberships");
  denyDirectedCreates(r, n);
  return r.take();
}

Result<std::vector<GrantRow>> adminGrants(const ReaderScope& s) {
  SHOAL_ASSIGN_OR_RETURN(std::vector<GrantRow> rows, observerGrants(s));
  SHOAL_ASSIGN_OR_RETURN(Names n, namesOf(s.space));
  Rows r;
  r.sub(n.root + ".inst.>", "every DM as it is sent (the messaging plane only)");
  r.sub(n.root + ".svc.>", "every work item as it is sent");
  r.sub(n.root + ".rcpt.>", "every receipt");
  kvReads(r, n.members, "the durable membership registry (`shoal watch` shows joins and leaves)");
  for (const std::string* stream : {&n.dm, &n.task, &n.wake}) {
    r.pub("$JS.API.STREAM.INFO." + *stream, "history of " + *stream);
    r.pub("$JS.API.STREAM.MSG.GET." + *stream, "history of " + *stream + ", by sequence");
  }
  for (const std::string* stream : {&n.dm, &n.task, &n.dlv}) {
    r.pub("$JS.API.CONSUMER.INFO." + *stream + ".>",
          "what each durable on " + *stream + " holds (`shoal deliver pending <peer>`)");
  }
  for (auto& row : r.take())
    rows.push_back(std::move(row));
  return rows;
}

Result<std::vector<GrantRow>> mailboxGrants(const AgentScope& s) {
  SHOAL_ASSIGN_OR_RETURN(Names n, namesOf(s.space));
  SHOAL_RETURN_IF_ERROR(wire::validatePrincipal(s.principal));
  SHOAL_RETURN_IF_ERROR(wire::validateLifecycleUid(s.lifecycleUid));
  SHOAL_RETURN_IF_ERROR(checkConnId(s.connId));
  const std::string me = s.principal.owner + "." + s.principal.actor;
  SHOAL_ASSIGN_OR_RETURN(std::string dmhist, wire::dmhistConsumer(s.principal, s.lifecycleUid));
  SHOAL_ASSIGN_OR_RETURN(std::string chathist, wire::chathistDurable(s.principal, s.lifecycleUid));
  SHOAL_ASSIGN_OR_RETURN(std::string dmD, wire::dmDurable(s.principal, s.lifecycleUid));
  SHOAL_ASSIGN_OR_RETURN(std::string toMe, wire::dmFilter(s.space, s.principal));
  SHOAL_ASSIGN_OR_RETURN(std::string posts, wire::chatFilter(s.space, ">"));
  Rows r;
  readerBase(r, n, s.connId);
  const std::string create = "$JS.API.CONSUMER.CREATE." + n.dm + "." + dmhist + ".";
  r.pub(create + toMe, "its mail reader, pinned to the DMs addressed to it");
  r.pub(create + n.root + ".inst.*.*." + me, "its mail reader, pinned to the DMs it sent");
  for (const char* api : {"INFO", "MSG.NEXT", "DELETE"}) {
    r.pub(std::string("$JS.API.CONSUMER.") + api + "." + n.dm + "." + dmhist, "its mail reader");
    r.pub(std::string("$JS.API.CONSUMER.") + api + "." + n.chat + "." + chathist,
          "its chat history reader (a message looked up by id)");
  }
  r.pub("$JS.API.CONSUMER.CREATE." + n.chat + "." + chathist + "." + posts,
        "its chat history reader (a message looked up by id)");
  r.pub("$JS.API.STREAM.INFO." + n.dm, "the DM stream's watermark");
  r.pub("$JS.API.STREAM.INFO." + n.chat, "the channel stream's watermark");
  bindOnly(r, n.dm, dmD, "its DM durable (bind only: `shoal inbox --follow`)");
  r.pub(n.root + ".ep.one.manager.provision." + me + "." + s.lifecycleUid + ".*",
        "asks the manager for its own DM durable (self mode)");
  for (const std::string* stream : {&n.dm, &n.task, &n.dlv}) {
    r.denyPub("$JS.API.CONSUMER.DURABLE.CREATE." + *stream + ".>",
              "no unpinned consumer creates on " + *stream);
  }
  for (const std::string* stream : {&n.task, &n.dlv}) {
    r.denyPub("$JS.API.CONSUMER.CREATE." + *stream + ".>", "no consumer creates on " + *stream);
  }
  return r.take();
}

Result<std::vector<GrantRow>> registrarGrants(const ReaderScope& s) {
  SHOAL_ASSIGN_OR_RETURN(Names n, namesOf(s.space));
  SHOAL_RETURN_IF_ERROR(checkConnId(s.connId));
  Rows r;
  readerBase(r, n, s.connId);
  r.pub("$KV." + n.channels + ".>", "channel records and the space defaults (privileged write)");
  kvReads(r, n.members, "the durable membership registry `shoal channels list` shows");
  denyDirectedCreates(r, n);
  return r.take();
}

Result<std::vector<GrantRow>> seatKeeperGrants(const ReaderScope& s) {
  SHOAL_ASSIGN_OR_RETURN(Names n, namesOf(s.space));
  SHOAL_RETURN_IF_ERROR(checkConnId(s.connId));
  Rows r;
  readerBase(r, n, s.connId);
  kvReads(r, n.seats, "every machine's seat records");
  r.pub("$KV." + n.seats + ".>", "removes a dead machine's seat records (the space admin)");
  denyDirectedCreates(r, n);
  return r.take();
}

Result<std::vector<GrantRow>> managerGrants(const PlaneScope& s) {
  SHOAL_ASSIGN_OR_RETURN(Names n, namesOf(s.space));
  SHOAL_ASSIGN_OR_RETURN(std::string rail, mesh::provisionServeFilter(s.space));
  SHOAL_ASSIGN_OR_RETURN(std::string issue, mesh::issueServeFilter(s.space));
  Rows r;
  SHOAL_RETURN_IF_ERROR(planeRails(r, s, rail, wire::Plane::kManager));
  r.sub(issue, "the credential rail's requests (daemons asking for their seats' credentials)");
  SHOAL_ASSIGN_OR_RETURN(std::string join, mesh::joinServeFilter(s.space));
  r.sub(join, "the join rail's requests (a machine's invite exchanged for its daemon's)");
  r.pub("$JS.API.STREAM.CREATE.KV_" + n.invites, "creates the used-invite bucket if absent");
  kvReads(r, n.invites, "which invites were used, and by which key");
  r.pub("$KV." + n.invites + ".>", "records each invite's one use");
  kvReads(r, n.machines, "an open invite admits only a machine name no daemon claims");
  for (const std::string* stream : {&n.chat, &n.dm, &n.task, &n.wake, &n.inbox, &n.dlv}) {
    r.pub("$JS.API.STREAM.INFO." + *stream, "checks the space's streams (frontiers, drift)");
    r.pub("$JS.API.STREAM.CREATE." + *stream, "creates a stream of the space if absent");
  }
  for (const std::string* bucket : {&n.presence, &n.channels, &n.delivery, &n.members, &n.acl}) {
    r.pub("$JS.API.STREAM.INFO.KV_" + *bucket, "checks the space's buckets (drift)");
    r.pub("$JS.API.STREAM.CREATE.KV_" + *bucket, "creates a bucket of the space if absent");
  }
  r.pub("$KV." + n.channels + "." + std::string(wire::kChannelDefaultsKey),
        "writes the channel defaults row once");
  kvReads(r, n.channels, "the channel defaults row");
  for (const std::string* stream : {&n.dm, &n.task, &n.dlv}) {
    const std::string why = "creates and reads the directed durables on " + *stream;
    r.pub("$JS.API.CONSUMER.INFO." + *stream + ".*", why);
    r.pub("$JS.API.CONSUMER.CREATE." + *stream + ".>", why);
    r.pub("$JS.API.CONSUMER.DURABLE.CREATE." + *stream + ".*", why);
  }
  r.pub("$KV." + n.acl + ".>", "writes each provisioned lifecycle's read ACL row");
  kvReads(r, n.seats, "checks a seat's machine before issuing its credential");
  kvReads(r, n.acl, "reads ACL rows before writing them");
  return r.take();
}

Result<std::vector<GrantRow>> deliveryGrants(const PlaneScope& s) {
  SHOAL_ASSIGN_OR_RETURN(Names n, namesOf(s.space));
  SHOAL_ASSIGN_OR_RETURN(std::string rail, mesh::deliveryServeFilter(s.space));
  Rows r;
  SHOAL_RETURN_IF_ERROR(planeRails(r, s, rail, wire::Plane::kDelivery));
  const std::string fanout(kFanoutDurable), reader(kReaderDurable);
  r.pub("$JS.API.STREAM.INFO." + n.chat, "CHAT's last sequence: join cursors, tombstones");
  r.pub("$JS.API.STREAM.MSG.GET." + n.chat, "a channel's past posts, copied at a join");
  r.pub("$JS.API.DIRECT.GET." + n.chat, "a channel's past posts, copied at a join");
  r.pub("$JS.API.STREAM.INFO." + n.inbox, "the fan-out's store");
  for (const auto& [stream, durable] :
       {std::pair{&n.chat, &fanout}, std::pair{&n.inbox, &reader}}) {
    const std::string why = "its own " + *durable + " durable on " + *stream;
    createsOf(r, *stream, *durable, why);
    r.pub("$JS.API.CONSUMER.MSG.NEXT." + *stream + "." + *durable, why);
    r.pub("$JS.ACK." + *stream + "." + *durable + ".>", why);
  }
  r.pub(n.root + ".dinbox.>", "fan-out entries, one per recipient (INBOX)");
  r.pub(n.root + ".dlv.>", "durable channel copies, one per member lifecycle (DLV)");
  r.pub("$KV." + n.delivery + "." + std::string(wire::kDeliveryLeaseKey),
        "holds, renews and releases the shard lease");
  kvReads(r, n.delivery, "the shard lease");
  r.pub("$KV." + n.members + ".>", "writes membership rows (join, leave)");
  kvReads(r, n.members, "membership rows");
  kvReads(r, n.acl, "re-checks each copy against its reader's ACL");
  kvReads(r, n.channels, "each post's channel class, read fresh");
  kvReads(r, n.presence, "live-class mentions go to live lifecycles");
  return r.take();
}

Result<std::vector<GrantRow>> daemonGrants(const DaemonScope& s) {
  SHOAL_ASSIGN_OR_RETURN(Names n, namesOf(s.space));
  SHOAL_RETURN_IF_ERROR(checkConnId(s.connId));
  SHOAL_ASSIGN_OR_RETURN(std::string issue, mesh::issueCallerGrant(s.space, s.owner, s.machine));
  Rows r;
  r.sub("_INBOX_" + s.connId + ".>", "replies to its own requests and watches");
  r.pub(issue, "asks the manager for its seats' credentials, as this owner and machine");
  r.pub("$JS.API.INFO", "JetStream account info");
  r.pub("$JS.API.STREAM.NAMES", "nats.c finds a KV watch's stream by subject (names only)");
  r.pub("$JS.FC.>", "flow control of its watches");
  r.pub("$JS.API.STREAM.CREATE.KV_" + n.seats, "creates the seat-profile bucket if absent");
  kvReads(r, n.seats, "the seat profiles it runs");
  SHOAL_RETURN_IF_ERROR(mesh::validateMachineName(s.machine));
  r.pub("$KV." + n.seats + "." + s.machine + "." + s.owner + ".*",
        "writes its own seat profiles (`shoal seat add|rm|start|stop`): its machine's prefix, "
        "its owner's seats, no other");
  r.pub("$JS.API.STREAM.CREATE.KV_" + n.machines, "creates the machine-claim bucket if absent");
  kvReads(r, n.machines, "who holds each machine name");
  r.pub("$KV." + n.machines + "." + s.machine, "claims its own machine name, and no other");
  denyDirectedCreates(r, n);
  return r.take();
}

Result<std::vector<GrantRow>> bootstrapGrants(const BootstrapScope& s) {
  SHOAL_RETURN_IF_ERROR(checkConnId(s.connId));
  SHOAL_ASSIGN_OR_RETURN(std::string join,
                         mesh::joinCallerGrant(s.space, s.owner, s.machine, s.inviteId));
  Rows r;
  r.sub("_INBOX_" + s.connId + ".>", "the manager's answer");
  r.pub(join, "exchanges this one invite for a daemon credential, and nothing else");
  return r.take();
}

transport::UserPermissions permissionsOf(const std::vector<GrantRow>& rows) {
  transport::UserPermissions p;
  for (const auto& row : rows) {
    if (row.direction == Direction::kRespond) {
      p.responses = transport::ResponsePermission{1, 0};
      continue;
    }
    auto& side = row.direction == Direction::kPublish ? p.publish : p.subscribe;
    (row.effect == Effect::kAllow ? side.allow : side.deny).push_back(row.subject);
  }
  return p;
}

}  // namespace shoal::planes
