// AuthMode: a local space that runs on NATS decentralized JWT auth (issue 19; `shoal up
// --auth`). The space's credential authority (planes/credential_authority.h) lives on the
// machine that ran `shoal up --auth`, beside the mesh's other secrets:
//
//   <secrets>/<space>-authority/       the authority's keys (0700; each file 0600)
//   <secrets>/<space>-manager.creds    the manager plane's credential (24 h, renewed at half)
//   <secrets>/<space>-delivery.creds   the delivery plane's
//   <secrets>/<space>-cli.creds        the person's own, for one-shot commands (15 min)
//   <secrets>/<space>-daemon.creds     this machine's seat daemon's (24 h, renewed at half)
//   <secrets>/<space>-seat-creds/      the seats' own, which the daemon asks the manager for
//   <data>/resolver/                   the broker's account resolver (account JWTs; public)
//
// The mode is the space's, not a command's: a space whose authority exists runs in auth mode
// from then on, with or without `--auth`. `--auth` on a space whose broker store already holds
// open-mode data is refused (`space-is-open`): the open account's streams would be invisible to
// the space's account, so the space would start empty while its messages stayed on disk.
//
// The person at the CLI is `<owner>.<login>`, the owner derived from the key in
// `<secrets>/identity.seed` (user_identity.h); its credential holds the agent profile's grants
// (planes/grants.h), reading every channel and posting to those a command names.
//
// Thread safety: free functions over the file system; one caller at a time per space.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "planes/credential_authority.h"
#include "supervisor/mesh_paths.h"
#include "wire/plane.h"
#include "wire/principal.h"

namespace shoal::supervisor {

inline constexpr std::chrono::hours kPlaneCredentialLifetime{24};
inline constexpr std::chrono::minutes kCliCredentialLifetime{15};

struct AuthPaths {
  std::string authorityDir;
  std::string resolverDir;
  std::string managerCreds;
  std::string deliveryCreds;
  std::string cliCreds;
  std::string daemonCreds;
  std::string seatCredsDir;
};
AuthPaths authPathsOf(const MeshPaths& paths);

// Whether the space's authority exists on this machine (the space runs in auth mode).
bool spaceUsesAuth(const MeshPaths& paths);

// kFailedPrecondition `space-is-open` when the space's broker store holds open-mode data and
// the space has no authority yet.
Status checkCanEnterAuthMode(const MeshPaths& paths);

// Opens (or, the first time, creates) the space's authority.
Result<planes::CredentialAuthority> openAuthority(const MeshPaths& paths);

// A plane connection's inbox id (`ibx` + the plane + 26 random characters).
Result<std::string> newPlaneConnId(wire::Plane plane);

// Mints `plane`'s credential (its grant profile for the inbox `_INBOX_<connId>`, valid for
// `lifetime`) into its file, replacing the previous one; returns the new expiry (Unix
// seconds). A renewal must keep the connId: a connection keeps its inbox across reconnects,
// and reads the renewed file at the next one.
Result<int64_t> mintPlaneCredential(const planes::CredentialAuthority& authority,
                                    const MeshPaths& paths, wire::Plane plane,
                                    const std::string& connId, std::chrono::seconds lifetime);

// Pushes the authority's current account JWT (its revocations) to the broker at `url`, as a
// user of the system account: the broker then refuses revoked users and closes their
// connections. kUnavailable when the broker cannot be reached or does not confirm.
Status pushAccountClaims(const planes::CredentialAuthority& authority, const MeshPaths& paths,
                         const std::string& url, const std::string& caFile = "");

// This machine's name as its daemons report it, kept in `<state>/machine-name`: made once from
// the host name (a routing token: lower case, [a-z0-9_-], at most 64; `machine` when the host
// has none) and read back ever after, so a host renamed later (a DHCP-assigned name) does not
// leave its seats "elsewhere". Edit the file to rename the machine (then `shoal seat move`).
// Errors: the file cannot be written, or holds no machine name (`bad-machine-name`).
Result<std::string> thisMachineName(const MeshPaths& paths);

// Mints the seat daemon's credential (the daemon profile for `owner` on `machine`, inbox
// `_INBOX_<connId>`) into its file; returns the expiry. A renewal keeps the connId.
Result<int64_t> mintDaemonCredential(const planes::CredentialAuthority& authority,
                                     const MeshPaths& paths, const std::string& owner,
                                     const std::string& machine, const std::string& connId,
                                     std::chrono::seconds lifetime);
// A fresh daemon connection id.
Result<std::string> newDaemonConnId();

struct CliCredential {
  std::string credsFile;
  std::string inboxPrefix;
  wire::Principal caller;
  int64_t expiresAt = 0;
  // A file of the command's own (credential_files.h): removed when the last copy goes.
  std::shared_ptr<const void> fileGuard;
};

// The credential in `file` for `caller` when it names `name` and stays valid for five more
// minutes (a command started now finishes under it); nullopt otherwise.
std::optional<CliCredential> heldCredential(const std::string& file, const wire::Principal& caller,
                                            const std::string& name);

// The person's credential for one command: the file while it stays valid for a few more
// minutes and is the same person's, else a fresh mint from the local authority. It reads every
// channel (the person holds the space's keys) and posts to none, or, minted afresh for the
// command, to exactly `postChannels`. kFailedPrecondition `no-authority` when this machine does
// not hold the space's authority.
Result<CliCredential> cliCredential(const MeshPaths& paths,
                                    const std::vector<std::string>& postChannels = {});

// What a person's command needs beyond the agent profile of cliCredential, from the profiles of
// planes/grants.h: kAdminReads (adminGrants: every read, DM / TASK / WAKE history included, no
// application publish) for `shoal seat events`, `shoal watch` and `shoal deliver pending <peer>`;
// kRegistryWrites (registrarGrants) for `shoal channels list|set|default`; kMailbox
// (mailboxGrants: the person's own DMs, through a history reader pinned to them) for
// `shoal inbox|read|reply` and `shoal history --dm`.
// kSeatRecords (seatKeeperGrants) for `shoal seat forget`: every machine's seat records.
enum class Privilege { kAdminReads, kRegistryWrites, kMailbox, kSeatRecords };

// The person's credential of `privilege`: the file `<secrets>/<space>-admin.creds`,
// `-registrar.creds`, `-mailbox.creds` or `-keeper.creds` while it stays valid for a few more
// minutes, else a fresh mint for kCliCredentialLifetime. `no-authority` as cliCredential.
Result<CliCredential> privilegedCredential(const MeshPaths& paths, Privilege privilege);

// A peer the person runs by hand (`shoal join`): an agent-profile credential for `principal`
// (one of the person's own: kPermissionDenied `not-this-owner` otherwise) and its lifecycle,
// reading and posting to `channels`, serving `role`, for `renewal.lifetime`, in
// `<secrets>/<space>-peer-<o>.<a>.creds`. `no-authority` as cliCredential. A running peer
// renews before expiry with the connId its connection was opened with (`renewal.connId`: its
// inbox stays the same); it reads the renewed file when the broker ends the old credential's
// connection at expiry and it reconnects.
inline constexpr std::chrono::hours kPeerCredentialLifetime{24};
struct PeerRenewal {
  std::chrono::seconds lifetime{kPeerCredentialLifetime};
  std::string connId;  // empty: a fresh connection
};
Result<CliCredential> peerCredential(const MeshPaths& paths, const wire::Principal& principal,
                                     const std::string& lifecycleUid,
                                     const std::vector<std::string>& channels,
                                     const std::optional<std::string>& role,
                                     const PeerRenewal& renewal = {});

}  // namespace shoal::supervisor
