// ManagerPlane: the running manager of one space — it serves the provisioning rail (so clients
// never create durables themselves) and answers `manager` liveness probes (docs/architecture.md,
// Processes; Cotal SPEC §6.1; docs/planes.md).
//
// Provision rail: `cotal.<space>.ep.one.manager.provision.*.*.*.*`, queue group `manager`
// (codec and subject rules in mesh/provision_client.h). Each request is validated (subject
// arity and tokens, JSON body), then provisionPrincipal runs for the caller named by the
// subject, and the reply is `{"ok":true,…}` or `{"ok":false,"error":{…}}`. Requests run one at
// a time on the plane's own event-loop thread, never on a nats.c thread. A request without a
// reply subject is dropped with a warning.
//
// Credential rail (auth mode; mesh/credential_rail.h): `cotal.<space>.ep.one.manager.issue.*.*.*`
// in the same queue group. With a CredentialIssuer the plane mints a seat's agent credential
// (its grant rows from planes/grants.h, for the public key the daemon sent) for a principal of
// the asking daemon's owner — the subject names the owner, and the broker lets a daemon publish
// only under its own; anything else is refused `not-this-owner` — and whose seat profile names
// the asking daemon's machine (`not-this-machine`; a profile without a machine, from before
// machines, passes; no profile at all is `unknown-seat`). A request marked `person` is the
// daemon asking for its machine's person at the CLI: the same owner rule, a principal that no
// machine keeps as a seat (`principal-is-a-seat`), only the channels named, 15 minutes. Without
// one every request is refused `no-authority`.
//
// Join rail (auth mode; mesh/join_rail.h): `cotal.<space>.ep.one.manager.join.*.*.*`, same
// queue group. A machine holding an invite's bootstrap credential sends its daemon's public
// key; the plane records the invite's one use in `shoal_invites_<space>` (a second key is
// refused `invite-used`) and mints the daemon profile for the owner and machine the subject
// names.
//
// Liveness: a LivenessResponder for plane `manager`, grading itself `bound` while the
// connection is connected and `unbound` otherwise; a reconnect mints a new instance token.
//
// The space must already have been ensured (ensureSpace). The connection should be made with
// ConnectOptions::sendAsap, and its onEvent handler should forward to onConnectionEvent().
//
// Thread safety: onConnectionEvent() and the accessors may be called from any thread.
// Lifetime: must not outlive `conn` or `js`; the destructor unsubscribes both rails, waits for
// running handlers and drops queued provision requests (their callers time out).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/executor.h"
#include "base/result.h"
#include "mesh/credential_rail.h"
#include "planes/credential_authority.h"
#include "planes/liveness_responder.h"
#include "transport/connection.h"
#include "transport/jetstream.h"
#include "transport/kv.h"
#include "wire/principal.h"

namespace shoal::planes {

// The space's credential authority, as the manager mints with it: seats' credentials last
// `seatLifetime` (24 h by default; their daemon renews them at half).
// A person's command credential asked for by a joined machine's daemon lives 15 minutes.
inline constexpr std::chrono::seconds kPersonLifetime{15 * 60};

struct CredentialIssuer {
  const CredentialAuthority* authority = nullptr;  // must outlive the plane
  std::chrono::seconds seatLifetime{std::chrono::hours(24)};
};

class ManagerPlane {
 public:
  static Result<std::unique_ptr<ManagerPlane>> start(
      transport::Connection& conn, transport::JetStream& js, std::string_view space,
      std::optional<CredentialIssuer> issuer = std::nullopt);

  ManagerPlane(const ManagerPlane&) = delete;
  ManagerPlane& operator=(const ManagerPlane&) = delete;
  ~ManagerPlane();

  // Logs disconnects / reconnects and re-mints the liveness instance on a reconnect.
  void onConnectionEvent(const transport::ConnectionEvent& event);

  const std::string& space() const { return space_; }
  std::string livenessInstance() const;
  uint64_t provisionReplies() const { return provisionReplies_.load(); }
  uint64_t credentialsIssued() const { return credentialsIssued_.load(); }
  uint64_t livenessDropped() const;

 private:
  ManagerPlane(transport::Connection& conn, transport::JetStream& js, std::string space);
  void handleProvision(const transport::Message& request);
  // Answers a credential or join request with `answer`'s reply (or its refusal).
  void handleCredentialRequest(
      const transport::Message& request,
      Result<std::string> (ManagerPlane::*answer)(const transport::Message&));
  Result<std::string> issue(const transport::Message& request);
  Result<std::string> join(const transport::Message& request);
  // A joined machine's daemon renewing its own credential: only the key its join recorded in
  // the ledger, and not once revoked.
  Result<std::string> renewDaemon(const mesh::IssueCaller& caller,
                                  const mesh::DaemonRenewal& renewal);
  // The daemon profile's JWT for `userKey`, recorded in the authority's ledger.
  Result<std::string> mintDaemon(const std::string& owner, const std::string& machine,
                                 const std::string& userKey, const std::string& connId);
  // Records the invite's one use by `userKey`: OK the first time and for the same key again,
  // `invite-used` for another key.
  Status useInvite(const std::string& inviteId, const std::string& userKey);
  // An invite that left the machine name to the joiner admits only a name no daemon claims and
  // no seat profile names (else the joiner could take over that machine's seats):
  // `machine-in-use`.
  Status checkMachineIsNew(const std::string& machine);
  // The seat's profile names `machine` (or no machine): `not-this-machine`, `unknown-seat`.
  Status checkSeatMachine(const wire::Principal& seat, const std::string& machine);
  // `principal-is-a-seat` when any machine (or a legacy record) keeps `principal` as a seat.
  Status checkNotASeat(const wire::Principal& principal);

  transport::Connection& conn_;
  transport::JetStream& js_;
  const std::string space_;
  std::optional<CredentialIssuer> issuer_;
  std::optional<transport::KeyValue> seats_;    // the seat-profile bucket, opened at first need
  std::optional<transport::KeyValue> invites_;  // the used-invite bucket, made at first need
  std::atomic<uint64_t> provisionReplies_{0};
  std::atomic<uint64_t> credentialsIssued_{0};
  EventLoopThread loop_;  // runs provision requests; stopped in the destructor
  std::unique_ptr<LivenessResponder> liveness_;
  std::optional<transport::Subscription> provisionSub_;
  std::optional<transport::Subscription> issueSub_;
  std::optional<transport::Subscription> joinSub_;
};

}  // namespace shoal::planes
