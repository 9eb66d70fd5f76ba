// Grants: the broker permissions of every credential a space mints in auth mode, generated from
// one table per profile (issue 19 item 2; Cotal Appendix B as digested in the wire notes §8).
// Every profile is default-deny: a subject not allowed by a row is refused by the broker, and
// the deny rows refuse what an allow wildcard would otherwise let through.
//
// Profiles (P = `cotal.<space>`; <o>.<a> the principal, <uid> its lifecycle uid):
//   agent     a seat or `shoal join`: its reply inbox `_INBOX_<connId>.>`; publish forge-locked
//             to its own sender suffix (`P.inst.*.*.<o>.<a>`, `P.svc.*.<o>.<a>`), `P.chat.<o>.<a>.
//             <ch>` only for declared channels; its own presence key; bind-only on its DM / DLV
//             (and role's svc) durables — consumer creates on DM/TASK/DLV denied; the chat
//             history consumer only on its own durable over its read channels; liveness
//             requests on its own `P.live.<plane>.<o>.<a>` with replies confined to `.reply.`;
//             the manager's and delivery plane's rails only for itself (`P.ep.one.manager.
//             provision.<o>.<a>.<uid>.*`, `P.ep.one.delivery.*.<o>.<a>.<uid>.*`);
//             its own receipts (`P.rcpt.<o>.<a>.*.*`) and the wake feed (Shoal rows); as a
//             seat, receipts to any sender of what it received (`P.rcpt.*.*.<o>.<a>`) and its
//             own lifecycle events (`P.wake.<o>.<a>`).
//   observer  read-only: the channels' live traffic, presence, the channel registry, wake
//             events; no application publish at all.
//   admin     observer plus the messaging plane's reads (`P.inst.>`, `P.svc.>`, DM history):
//             for the dashboard and `shoal watch`; still no application publish.
//   manager   the manager plane (Cotal's supervisor and provisioner): creates the space's
//             streams and buckets if absent, creates and reads the directed durables (DM, TASK,
//             DLV) and writes ACL rows; serves the provision rail and the credential rail (it
//             reads the seat profiles for a seat's machine) and the join rail (it records each
//             used invite in `shoal_invites_<space>`), answers `live.manager` probes. No
//             application publish.
//   delivery  the delivery plane: its own `fanout` (CHAT) and `reader` (INBOX) durables, copies
//             to `P.dinbox.>` and `P.dlv.>`, the lease and membership rows it writes, the ACL,
//             registry and roster it reads; serves the membership rail and answers
//             `live.delivery` probes. No application publish.
//   daemon    a machine's seat daemon: reads the seat-profile bucket and writes only its own
//             records, `<machine>.<owner>.<actor>` (its machine's prefix, its owner's seats);
//             asks the manager for its seats' credentials on its own `P.ep.one.manager.issue.
//             <owner>.<machine>.*` (so the manager knows who asks from the subject); claims its
//             own machine name in the machine-claim bucket, and no other; no application
//             publish, no presence, no durable.
//   bootstrap an invite's one-time credential (`shoal invite`, minutes to hours): its reply
//             inbox and one publish, the join rail subject of its own invite
//             (`P.ep.one.manager.join.<owner>.<machine|*>.<inviteId>`); nothing else.
//   A plane's liveness filter `P.live.<plane>.*.*` is held by that plane's profile alone; its
//   answers are confined to `P.live.<plane>.*.*.reply.>`, so it cannot send a probe. Rail
//   replies go back through allow_responses (one per request received): a caller's inbox is a
//   token prefix (`_INBOX_<connId>`) no subject wildcard can name, and the planes answer only
//   reply subjects that begin with `_INBOX` (a request naming any other reply is dropped).
//
// Thread safety: pure functions. Lifetime: rows own their strings.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "transport/jwt.h"
#include "wire/principal.h"

namespace shoal::planes {

struct GrantRow {
  // kRespond: one reply to the reply subject of each request received (allow_responses);
  // its subject is empty.
  enum class Direction { kPublish, kSubscribe, kRespond };
  enum class Effect { kAllow, kDeny };
  Direction direction = Direction::kPublish;
  Effect effect = Effect::kAllow;
  std::string subject;  // a NATS subject, wildcards allowed
  std::string purpose;  // why the profile holds it (for `shoal creds show` and the docs)
};

struct AgentScope {
  std::string space;
  wire::Principal principal;
  std::string lifecycleUid;
  std::string connId;                     // the reply inbox is `_INBOX_<connId>`
  std::vector<std::string> readChannels;  // channel patterns it may read (allowSubscribe)
  std::vector<std::string> postChannels;  // concrete channels it may post to (allowPublish)
  std::optional<std::string> role;        // anycast work it serves
};

struct ReaderScope {
  std::string space;
  std::string connId;
};

// A machine's seat daemon: the owner whose seats it runs and the machine it runs them on.
struct DaemonScope {
  std::string space;
  std::string owner;
  std::string machine;
  std::string connId;
};

// An invite's bootstrap credential (`shoal invite`): the owner and machine the joining daemon
// will run as (`machine` empty: the joiner names it) and the invite's id.
struct BootstrapScope {
  std::string space;
  std::string owner;
  std::string machine;
  std::string inviteId;
  std::string connId;
};

// A plane's connection: the space it serves and the inbox its own requests' replies come to.
using PlaneScope = ReaderScope;

// The rows of each profile; kInvalidArgument naming the bad field (space, principal, uid,
// connId `[A-Za-z0-9_-]{8,120}`, a channel, the role).
Result<std::vector<GrantRow>> agentGrants(const AgentScope& scope);
Result<std::vector<GrantRow>> observerGrants(const ReaderScope& scope);
Result<std::vector<GrantRow>> adminGrants(const ReaderScope& scope);
// The person reading their own mail (`shoal inbox|read|reply`, `shoal history --dm`): the
// roster, a history reader on DM_<space> pinned to the DMs addressed to `principal` or sent by
// it (the filter rides in the create subject), its chat-history reader, its own DM durable
// (bind only) and its own provisioning. Publishes no application traffic; every other consumer
// create on DM/TASK/DLV is refused. Uses the scope's principal, lifecycle uid and connId only.
Result<std::vector<GrantRow>> mailboxGrants(const AgentScope& scope);

// The space's owner managing channels (`shoal channels list|set|default`): the roster, registry
// and durable-membership reads, and writes of the registry's records (privileged write, the
// digest's §6.1) — no application publish, no other bucket written.
Result<std::vector<GrantRow>> registrarGrants(const ReaderScope& scope);
// The space admin removing a dead machine's seat records (`shoal seat forget`): reads and
// writes every machine's records in the seat bucket — the one writer besides each machine's
// own daemon (issue 19 item 5). A record it wrote carries no daemon's seal, so no daemon runs
// it. Nothing else.
Result<std::vector<GrantRow>> seatKeeperGrants(const ReaderScope& scope);
Result<std::vector<GrantRow>> managerGrants(const PlaneScope& scope);
Result<std::vector<GrantRow>> deliveryGrants(const PlaneScope& scope);
Result<std::vector<GrantRow>> daemonGrants(const DaemonScope& scope);
Result<std::vector<GrantRow>> bootstrapGrants(const BootstrapScope& scope);

// The rows as a user JWT's permissions; allow_responses (one reply, no time limit) only when a
// kRespond row is among them.
transport::UserPermissions permissionsOf(const std::vector<GrantRow>& rows);

}  // namespace shoal::planes
