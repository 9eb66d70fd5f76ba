#include "planes/manager_plane.h"

#include <algorithm>

#include <boost/json.hpp>

#include "base/log.h"
#include "mesh/credential_rail.h"
#include "mesh/join_rail.h"
#include "mesh/provision_client.h"
#include "planes/grants.h"
#include "planes/space_provisioner.h"
#include "wire/names.h"
#include "wire/subject.h"

namespace shoal::planes {
namespace {

namespace json = boost::json;

constexpr std::chrono::milliseconds kBindFlushTimeout{5000};
// A used invite is remembered longer than any invite lives (`shoal invite --ttl` ≤ 7 days).
constexpr std::chrono::milliseconds kInviteRecordLifetime{8LL * 24 * 3600 * 1000};

// The machine a stored seat profile names: the stored form is {"profile":{…},"seal":{…}}, or
// the bare profile (unsealed); nullopt for a profile from before machines.
Result<std::optional<std::string>> machineOfStoredProfile(std::string_view stored) {
  boost::system::error_code ec;
  json::value v = json::parse(stored, ec);
  const json::object* profile = !ec && v.is_object() ? &v.as_object() : nullptr;
  if (profile != nullptr) {
    if (const json::value* inner = profile->if_contains("profile"); inner && inner->is_object()) {
      profile = &inner->as_object();
    }
  }
  if (profile == nullptr) {
    return failedPrecondition("bad-stored-profile", "a stored seat profile does not parse");
  }
  const json::value* named = profile->if_contains("machine");
  if (named == nullptr) return std::optional<std::string>();
  if (!named->is_string()) {
    return failedPrecondition("bad-stored-profile",
                              "a stored seat profile's machine is not a name");
  }
  return std::optional<std::string>(std::string(named->as_string()));
}

}  // namespace

ManagerPlane::ManagerPlane(transport::Connection& conn, transport::JetStream& js, std::string space)
    : conn_(conn), js_(js), space_(std::move(space)) {}

ManagerPlane::~ManagerPlane() {
  provisionSub_.reset();  // no new requests are posted after this
  issueSub_.reset();
  joinSub_.reset();
  liveness_.reset();
  loop_.stop();  // the request running now finishes; queued ones are dropped
}

Result<std::unique_ptr<ManagerPlane>> ManagerPlane::start(transport::Connection& conn,
                                                          transport::JetStream& js,
                                                          std::string_view space,
                                                          std::optional<CredentialIssuer> issuer) {
  SHOAL_ASSIGN_OR_RETURN(std::string filter, mesh::provisionServeFilter(space));
  SHOAL_ASSIGN_OR_RETURN(std::string issueFilter, mesh::issueServeFilter(space));
  SHOAL_ASSIGN_OR_RETURN(std::string joinFilter, mesh::joinServeFilter(space));
  std::unique_ptr<ManagerPlane> plane(new ManagerPlane(conn, js, std::string(space)));
  if (issuer && issuer->authority != nullptr) plane->issuer_ = issuer;
  transport::Connection* c = &conn;
  SHOAL_ASSIGN_OR_RETURN(
      plane->liveness_, LivenessResponder::bind(conn, space, wire::Plane::kManager, [c] {
        return c->state() == transport::ConnectionState::kConnected ? wire::Responder::kBound
                                                                    : wire::Responder::kUnbound;
      }));
  ManagerPlane* self = plane.get();
  SHOAL_ASSIGN_OR_RETURN(
      auto sub, conn.queueSubscribe(filter, mesh::kManagerQueueGroup, [self](transport::Message m) {
        self->loop_.post([self, m = std::move(m)] { self->handleProvision(m); });
      }));
  plane->provisionSub_.emplace(std::move(sub));
  SHOAL_ASSIGN_OR_RETURN(
      auto issueSub,
      conn.queueSubscribe(issueFilter, mesh::kManagerQueueGroup, [self](transport::Message m) {
        self->loop_.post(
            [self, m = std::move(m)] { self->handleCredentialRequest(m, &ManagerPlane::issue); });
      }));
  plane->issueSub_.emplace(std::move(issueSub));
  SHOAL_ASSIGN_OR_RETURN(
      auto joinSub,
      conn.queueSubscribe(joinFilter, mesh::kManagerQueueGroup, [self](transport::Message m) {
        self->loop_.post(
            [self, m = std::move(m)] { self->handleCredentialRequest(m, &ManagerPlane::join); });
      }));
  plane->joinSub_.emplace(std::move(joinSub));
  SHOAL_RETURN_IF_ERROR(conn.flush(kBindFlushTimeout));
  log::info("manager {}: serving provision rail{} and liveness (instance {})", space,
            plane->issuer_ ? ", credential and join rails" : "", plane->liveness_->instance());
  return plane;
}

void ManagerPlane::onConnectionEvent(const transport::ConnectionEvent& event) {
  switch (event.kind) {
    case transport::ConnectionEventKind::kDisconnected:
      log::warn("manager {}: broker connection lost; reconnecting", space_);
      break;
    case transport::ConnectionEventKind::kReconnected:
      if (liveness_ != nullptr) {
        if (Status st = liveness_->onReconnected(); !st.isOk()) {
          log::error("manager {}: cannot mint a liveness instance: {}", space_, st.toString());
        }
      }
      log::warn("manager {}: reconnected; liveness re-bound as instance {}", space_,
                livenessInstance());
      break;
    case transport::ConnectionEventKind::kClosed:
      log::warn("manager {}: broker connection closed", space_);
      break;
    case transport::ConnectionEventKind::kAsyncError:
      log::warn("manager {}: {}", space_, event.status.toString());
      break;
  }
}

std::string ManagerPlane::livenessInstance() const {
  return liveness_ != nullptr ? liveness_->instance() : std::string();
}

uint64_t ManagerPlane::livenessDropped() const {
  return liveness_ != nullptr ? liveness_->dropped() : 0;
}

void ManagerPlane::handleProvision(const transport::Message& request) {
  if (Status target = wire::checkRailReplyTarget(request.reply); !target.isOk()) {
    log::warn("manager {}: dropped a provision request on {}: {}", space_, request.subject,
              target.message());
    return;
  }
  auto reply = [&]() -> std::string {
    auto caller = mesh::parseProvisionSubject(request.subject, space_);
    if (!caller.isOk()) return mesh::encodeProvisionError(caller.status());
    auto body = mesh::decodeProvisionRequest(request.data);
    if (!body.isOk()) return mesh::encodeProvisionError(body.status());
    auto report =
        provisionPrincipal(js_, space_, caller->principal, caller->lifecycleUid, body->roles);
    if (!report.isOk()) {
      log::warn("manager {}: provisioning {} failed: {}", space_, caller->principal.dotForm(),
                report.status().toString());
      return mesh::encodeProvisionError(report.status());
    }
    log::info("manager {}: provisioned {} ({}, frontier {})", space_, report->dmDurable,
              report->dmCreated ? "created" : "existing", report->frontier);
    mesh::ProvisionReply out;
    out.durable = report->dmDurable;
    out.created = report->dmCreated;
    out.frontier = report->frontier;
    out.roles = report->roleDurables;
    return mesh::encodeProvisionReply(out);
  }();
  if (Status st = conn_.publish(request.reply, reply); !st.isOk()) {
    log::warn("manager {}: provision reply to {} not sent: {}", space_, request.reply,
              st.toString());
    return;
  }
  provisionReplies_.fetch_add(1);
}

Status ManagerPlane::checkSeatMachine(const wire::Principal& seat, const std::string& machine) {
  if (!seats_) {
    SHOAL_ASSIGN_OR_RETURN(std::string bucket, wire::bucketName(wire::Bucket::kSeats, space_));
    auto kv = transport::KeyValue::openBucket(js_, bucket);
    if (!kv.isOk()) {
      return failedPrecondition("unknown-seat", "space " + space_ + " has no seat profiles yet");
    }
    seats_.emplace(std::move(kv).value());
  }
  // The asking machine's own record (`<machine>.<owner>.<actor>`: only its daemon credential
  // writes that prefix) must name it.
  const std::string suffix = "." + seat.dotForm();
  auto entry = seats_->get(machine + suffix);
  if (!entry.isOk()) {
    if (entry.status().code() == StatusCode::kNotFound) {
      return failedPrecondition("unknown-seat", "machine " + machine +
                                                    " keeps no profile of seat " + seat.dotForm() +
                                                    ": a daemon asks only for the seats it keeps");
    }
    return entry.status().withContext("reading the seat profile of " + seat.dotForm());
  }
  SHOAL_ASSIGN_OR_RETURN(std::optional<std::string> named, machineOfStoredProfile(entry->value));
  if (named && *named != machine) {
    return permissionDenied("not-this-machine", "seat " + seat.dotForm() + " runs on machine " +
                                                    *named + ", not on " + machine +
                                                    " (the asking daemon's)");
  }
  // And no other machine keeps the seat for itself: one principal, one machine.
  SHOAL_ASSIGN_OR_RETURN(std::vector<std::string> keys, seats_->keys());
  for (const std::string& key : keys) {
    const bool prefixed = std::count(key.begin(), key.end(), '.') == 2;
    if (!prefixed || key == machine + suffix || key.size() <= suffix.size() ||
        key.compare(key.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    const std::string other = key.substr(0, key.size() - suffix.size());
    auto held = seats_->get(key);
    if (!held.isOk()) continue;  // removed meanwhile
    auto names = machineOfStoredProfile(held->value);
    if (!names.isOk() || !*names || **names == other) {
      return permissionDenied("seat-on-two-machines",
                              "seat " + seat.dotForm() + " is kept by machines " + machine +
                                  " and " + other +
                                  " both; no credential is issued for it "
                                  "until one removes it (`shoal seat rm` there)");
    }
  }
  return Status::ok();
}

Result<std::string> ManagerPlane::issue(const transport::Message& request) {
  if (!issuer_) {
    return failedPrecondition("no-authority",
                              "this manager holds no credential authority: the space runs in "
                              "open mode, or `shoal serve` was started without --authority");
  }
  SHOAL_ASSIGN_OR_RETURN(mesh::IssueCaller caller,
                         mesh::parseIssueSubject(request.subject, space_));
  SHOAL_ASSIGN_OR_RETURN(auto renewal, mesh::decodeDaemonRenewal(request.data));
  if (renewal) return renewDaemon(caller, *renewal);
  SHOAL_ASSIGN_OR_RETURN(mesh::IssueRequest body, mesh::decodeIssueRequest(request.data));
  if (body.principal.owner != caller.owner) {
    return permissionDenied("not-this-owner",
                            "the daemon of " + caller.owner + " on " + caller.machine +
                                " may ask only for principals of " + caller.owner + ", not " +
                                body.principal.dotForm());
  }
  // A seat runs on the machine that keeps it; the person's command credential (`person`) goes
  // to a principal no machine keeps as a seat, for minutes, serving no role.
  SHOAL_RETURN_IF_ERROR(body.person ? checkNotASeat(body.principal)
                                    : checkSeatMachine(body.principal, caller.machine));
  AgentScope scope;
  scope.space = space_;
  scope.principal = body.principal;
  scope.lifecycleUid = body.lifecycleUid;
  scope.connId = body.connId;
  scope.readChannels = body.channels;
  scope.postChannels = body.channels;
  if (!body.person) scope.role = body.role;
  SHOAL_ASSIGN_OR_RETURN(std::vector<GrantRow> rows,
                         body.mailbox ? mailboxGrants(scope) : agentGrants(scope));
  SHOAL_ASSIGN_OR_RETURN(
      MintedJwt minted,
      issuer_->authority->mintFor(body.userKey, body.principal.dotForm(), rows,
                                  body.person ? kPersonLifetime : issuer_->seatLifetime));
  log::info("manager {}: issued {}'s {} to the daemon on {} (until {})", space_,
            body.principal.dotForm(),
            body.mailbox  ? "mail reader"
            : body.person ? "command credential"
                          : "credential",
            caller.machine, minted.expiresAt);
  return mesh::encodeIssueReply(mesh::IssueReply{minted.jwt, minted.expiresAt});
}

Status ManagerPlane::checkMachineIsNew(const std::string& machine) {
  auto inUse = [&](const std::string& why) {
    return permissionDenied("machine-in-use",
                            "machine " + machine + " " + why +
                                ": an invite without --machine admits a new machine name only "
                                "(join with another --machine, or ask for an invite naming it)");
  };
  SHOAL_ASSIGN_OR_RETURN(std::string claims, wire::bucketName(wire::Bucket::kMachines, space_));
  if (auto kv = transport::KeyValue::openBucket(js_, claims); kv.isOk()) {
    if (kv->get(machine).isOk()) return inUse("is claimed by a running daemon");
  }
  SHOAL_ASSIGN_OR_RETURN(std::string bucket, wire::bucketName(wire::Bucket::kSeats, space_));
  auto seats = transport::KeyValue::openBucket(js_, bucket);
  if (!seats.isOk()) return Status::ok();  // no seat profiles at all yet
  SHOAL_ASSIGN_OR_RETURN(std::vector<std::string> keys, seats->keys());
  for (const std::string& key : keys) {
    auto entry = seats->get(key);
    if (!entry.isOk()) continue;  // removed meanwhile
    auto named = machineOfStoredProfile(entry->value);
    if (named.isOk() && *named == machine) return inUse("has seats (" + key + ")");
  }
  return Status::ok();
}

Status ManagerPlane::useInvite(const std::string& inviteId, const std::string& userKey) {
  if (!invites_) {
    SHOAL_ASSIGN_OR_RETURN(std::string bucket, wire::bucketName(wire::Bucket::kInvites, space_));
    transport::KvConfig config;
    config.bucket = bucket;
    config.description = "Shoal: join invites already used (one use each)";
    config.ttl = kInviteRecordLifetime;
    SHOAL_ASSIGN_OR_RETURN(auto kv, transport::KeyValue::createBucket(js_, config));
    invites_.emplace(std::move(kv));
  }
  const std::string record = json::serialize(json::object{{"userKey", userKey}});
  auto created = invites_->create(inviteId, record);
  if (created.isOk()) return Status::ok();
  if (created.status().code() != StatusCode::kAlreadyExists) {
    return created.status().withContext("recording the invite's use");
  }
  SHOAL_ASSIGN_OR_RETURN(transport::KvEntry held, invites_->get(inviteId));
  if (held.value == record) return Status::ok();  // the same joiner, whose reply was lost
  return permissionDenied("invite-used", "invite " + inviteId.substr(0, 8) +
                                             "… was used already; an invite admits one "
                                             "machine once (ask for a new `shoal invite`)");
}

Result<std::string> ManagerPlane::mintDaemon(const std::string& owner, const std::string& machine,
                                             const std::string& userKey,
                                             const std::string& connId) {
  SHOAL_ASSIGN_OR_RETURN(std::vector<GrantRow> rows,
                         daemonGrants(DaemonScope{space_, owner, machine, connId}));
  const std::string name = space_ + "-daemon-" + machine;
  SHOAL_ASSIGN_OR_RETURN(MintedJwt minted,
                         issuer_->authority->mintFor(userKey, name, rows, issuer_->seatLifetime));
  // In the ledger, so `shoal creds list` shows the machine and `shoal creds revoke` finds it.
  const int64_t issuedAt = minted.expiresAt - issuer_->seatLifetime.count();
  if (Status st = issuer_->authority->recordIssued(
          IssuedCredential{userKey, name, "daemon", issuedAt, minted.expiresAt});
      !st.isOk()) {
    log::warn("manager {}: the ledger did not take {}: {}", space_, name, st.toString());
  }
  return mesh::encodeIssueReply(mesh::IssueReply{minted.jwt, minted.expiresAt});
}

Result<std::string> ManagerPlane::renewDaemon(const mesh::IssueCaller& caller,
                                              const mesh::DaemonRenewal& renewal) {
  const std::string name = space_ + "-daemon-" + caller.machine;
  SHOAL_ASSIGN_OR_RETURN(std::vector<IssuedCredential> issued, issuer_->authority->issued());
  const bool joined = std::any_of(issued.begin(), issued.end(), [&](const IssuedCredential& c) {
    return c.profile == "daemon" && c.name == name && c.userKey == renewal.daemonKey;
  });
  if (!joined) {
    return permissionDenied("not-this-machine",
                            "no machine joined as " + caller.machine +
                                " holds that key: a daemon renews only the credential its join "
                                "gave it");
  }
  if (issuer_->authority->isRevokedOnDisk(renewal.daemonKey)) {
    return permissionDenied("daemon-credential-refused", "the daemon credential of machine " +
                                                             caller.machine +
                                                             " was revoked; it needs a new invite");
  }
  log::info("manager {}: renewed the daemon credential of machine {}", space_, caller.machine);
  return mintDaemon(caller.owner, caller.machine, renewal.daemonKey, renewal.connId);
}

Result<std::string> ManagerPlane::join(const transport::Message& request) {
  if (!issuer_) {
    return failedPrecondition("no-authority",
                              "this manager holds no credential authority: the space runs in "
                              "open mode, or `shoal serve` was started without --authority");
  }
  SHOAL_ASSIGN_OR_RETURN(mesh::JoinCaller caller, mesh::parseJoinSubject(request.subject, space_));
  SHOAL_ASSIGN_OR_RETURN(mesh::JoinRequest body, mesh::decodeJoinRequest(request.data));
  if (mesh::isOpenMachineInvite(caller.inviteId)) {
    SHOAL_RETURN_IF_ERROR(checkMachineIsNew(caller.machine));
  }
  SHOAL_RETURN_IF_ERROR(useInvite(caller.inviteId, body.userKey));
  log::info("manager {}: machine {} joined as a daemon of {} (invite {}…)", space_, caller.machine,
            caller.owner, caller.inviteId.substr(0, 8));
  return mintDaemon(caller.owner, caller.machine, body.userKey, body.connId);
}

Status ManagerPlane::checkNotASeat(const wire::Principal& principal) {
  SHOAL_ASSIGN_OR_RETURN(std::string bucket, wire::bucketName(wire::Bucket::kSeats, space_));
  auto kv = transport::KeyValue::openBucket(js_, bucket);
  if (!kv.isOk()) return Status::ok();  // no seat profiles at all yet
  const std::string id = principal.dotForm();
  SHOAL_ASSIGN_OR_RETURN(std::vector<std::string> keys, kv->keys());
  for (const std::string& key : keys) {
    // `<machine>.<owner>.<actor>` or, from before machine prefixes, `<owner>.<actor>`.
    if (key == id || (key.size() > id.size() && key[key.size() - id.size() - 1] == '.' &&
                      key.compare(key.size() - id.size(), id.size(), id) == 0)) {
      return permissionDenied("principal-is-a-seat",
                              id + " is a seat (" + key +
                                  "): a person's command runs under a principal no machine keeps "
                                  "as a seat");
    }
  }
  return Status::ok();
}

void ManagerPlane::handleCredentialRequest(
    const transport::Message& request,
    Result<std::string> (ManagerPlane::*answer)(const transport::Message&)) {
  if (Status target = wire::checkRailReplyTarget(request.reply); !target.isOk()) {
    log::warn("manager {}: dropped a credential request on {}: {}", space_, request.subject,
              target.message());
    return;
  }
  auto reply = (this->*answer)(request);
  if (!reply.isOk()) {
    log::warn("manager {}: refused a credential request on {}: {}", space_, request.subject,
              reply.status().toString());
  }
  const std::string body = reply.isOk() ? *reply : mesh::encodeProvisionError(reply.status());
  if (Status st = conn_.publish(request.reply, body); !st.isOk()) {
    log::warn("manager {}: credential reply to {} not sent: {}", space_, request.reply,
              st.toString());
    return;
  }
  if (reply.isOk()) credentialsIssued_.fetch_add(1);
}

}  // namespace shoal::planes
