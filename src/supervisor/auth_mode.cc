#include "supervisor/auth_mode.h"

#include <cctype>

#include <unistd.h>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/ids.h"
#include "mesh/credential_rail.h"
#include "mesh/operator_identity.h"
#include "planes/grants.h"
#include "supervisor/credential_files.h"
#include "supervisor/peer_uid.h"
#include "supervisor/user_identity.h"
#include "transport/connection.h"
#include "transport/creds_file.h"

namespace shoal::supervisor {
namespace {

// A fresh credential is used for at least this long by one command.
constexpr int64_t kCliRenewMarginSeconds = 5 * 60;

// An inbox connId: `ibx` + 26 random base32 characters, as the grant tables require.
Result<std::string> newConnId(std::string_view role) {
  SHOAL_ASSIGN_OR_RETURN(std::string uid, newLifecycleUid());
  return "ibx" + std::string(role) + uid;
}

// Staged under a name of this process's own, then renamed: two commands minting at once must
// not share one temporary file (the loser's rename would find it gone).
Status writeCreds(const std::string& path, const planes::MintedUser& minted) {
  FileSystem& fs = FileSystem::posix();
  const std::string staging = path + "." + std::to_string(::getpid());
  SHOAL_RETURN_IF_ERROR(writeFileAtomically(fs, staging, minted.creds));
  return fs.rename(staging, path);
}

// `no-authority` unless this machine holds the space's credential authority.
Status requireAuthority(const MeshPaths& paths) {
  if (spaceUsesAuth(paths)) return Status::ok();
  return failedPrecondition("no-authority",
                            "space " + paths.space +
                                " runs in auth mode but this machine does not hold its "
                                "authority, so it cannot mint your credential here");
}

// An agent-profile credential for `scope` minted by this machine's authority into `file`;
// `no-authority` when this machine does not hold it. `scope.connId` empty: a fresh inbox
// `ibx<connRole>…`; set: a renewal for the connection that keeps that inbox.
Result<CliCredential> mintAgentCredential(const MeshPaths& paths, planes::AgentScope scope,
                                          std::string_view connRole, const std::string& file,
                                          std::chrono::seconds lifetime) {
  SHOAL_RETURN_IF_ERROR(requireAuthority(paths));
  SHOAL_ASSIGN_OR_RETURN(planes::CredentialAuthority authority, openAuthority(paths));
  if (scope.connId.empty()) {
    SHOAL_ASSIGN_OR_RETURN(scope.connId, newConnId(connRole));
  }
  SHOAL_ASSIGN_OR_RETURN(auto rows, planes::agentGrants(scope));
  SHOAL_ASSIGN_OR_RETURN(planes::MintedUser minted,
                         authority.mint(scope.principal.dotForm(), rows, lifetime));
  SHOAL_RETURN_IF_ERROR(writeCreds(file, minted));
  CliCredential out;
  out.credsFile = file;
  out.inboxPrefix = "_INBOX_" + scope.connId;
  out.caller = scope.principal;
  out.expiresAt = minted.expiresAt;
  return out;
}

}  // namespace

AuthPaths authPathsOf(const MeshPaths& paths) {
  AuthPaths a;
  const std::string base = paths.secretsDir + "/" + paths.space;
  a.authorityDir = base + "-authority";
  a.managerCreds = base + "-manager.creds";
  a.deliveryCreds = base + "-delivery.creds";
  a.cliCreds = base + "-cli.creds";
  a.daemonCreds = base + "-daemon.creds";
  a.seatCredsDir = base + "-seat-creds";
  a.resolverDir = paths.dataDir + "/resolver";
  return a;
}

bool spaceUsesAuth(const MeshPaths& paths) {
  return FileSystem::posix().exists(authPathsOf(paths).authorityDir + "/account.seed");
}

Status checkCanEnterAuthMode(const MeshPaths& paths) {
  if (spaceUsesAuth(paths)) return Status::ok();
  if (!FileSystem::posix().exists(paths.brokerStoreDir + "/jetstream/$G")) return Status::ok();
  return failedPrecondition(
      "space-is-open",
      "space " + paths.space + " was created in open mode and its broker store (" +
          paths.brokerStoreDir +
          ") holds its messages; in auth mode they would be invisible and the space would start "
          "empty. Use another space (`--space NAME --auth`), or remove " +
          paths.dataDir + " (after `shoal down`) to start this one over in auth mode");
}

Result<planes::CredentialAuthority> openAuthority(const MeshPaths& paths) {
  return planes::CredentialAuthority::openOrCreate(
      FileSystem::posix(), authPathsOf(paths).authorityDir, paths.space, Clock::real());
}

Result<std::string> newPlaneConnId(wire::Plane plane) {
  return newConnId(wire::planeName(plane).substr(0, 3));
}

Result<int64_t> mintPlaneCredential(const planes::CredentialAuthority& authority,
                                    const MeshPaths& paths, wire::Plane plane,
                                    const std::string& connId, std::chrono::seconds lifetime) {
  const std::string name(wire::planeName(plane));
  const planes::PlaneScope scope{paths.space, connId};
  SHOAL_ASSIGN_OR_RETURN(auto rows, plane == wire::Plane::kManager ? planes::managerGrants(scope)
                                                                   : planes::deliveryGrants(scope));
  SHOAL_ASSIGN_OR_RETURN(planes::MintedUser minted,
                         authority.mint(paths.space + "-" + name + "-plane", rows, lifetime));
  const AuthPaths auth = authPathsOf(paths);
  SHOAL_RETURN_IF_ERROR(
      writeCreds(plane == wire::Plane::kManager ? auth.managerCreds : auth.deliveryCreds, minted));
  return minted.expiresAt;
}

namespace {

std::string machineNameFromHost() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::string name;
  for (const char* c = host; *c != '\0' && *c != '.' && name.size() < 64; ++c) {
    const char ch = static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
    const bool token =
        (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_';
    name.push_back(token ? ch : '_');
  }
  return name.empty() ? std::string("machine") : name;
}

}  // namespace

Result<std::string> thisMachineName(const MeshPaths& paths) {
  FileSystem& fs = FileSystem::posix();
  const std::string file = paths.stateDir + "/machine-name";
  if (fs.exists(file)) {
    SHOAL_ASSIGN_OR_RETURN(std::string text, fs.readFile(file));
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
      text.pop_back();
    if (Status st = mesh::validateMachineName(text); !st.isOk()) return st.withContext(file);
    return text;
  }
  const std::string name = machineNameFromHost();
  SHOAL_RETURN_IF_ERROR(fs.createDirs(paths.stateDir).status());
  SHOAL_RETURN_IF_ERROR(writeFileAtomically(fs, file, name + "\n"));
  return name;
}

Result<std::string> newDaemonConnId() {
  return newConnId("dmn");
}

Result<int64_t> mintDaemonCredential(const planes::CredentialAuthority& authority,
                                     const MeshPaths& paths, const std::string& owner,
                                     const std::string& machine, const std::string& connId,
                                     std::chrono::seconds lifetime) {
  SHOAL_ASSIGN_OR_RETURN(
      auto rows, planes::daemonGrants(planes::DaemonScope{paths.space, owner, machine, connId}));
  SHOAL_ASSIGN_OR_RETURN(planes::MintedUser minted,
                         authority.mint(paths.space + "-daemon-" + machine, rows, lifetime));
  SHOAL_RETURN_IF_ERROR(writeCreds(authPathsOf(paths).daemonCreds, minted));
  return minted.expiresAt;
}

Status pushAccountClaims(const planes::CredentialAuthority& authority, const MeshPaths& paths,
                         const std::string& url, const std::string& caFile) {
  SHOAL_ASSIGN_OR_RETURN(std::string connId, newConnId("sys"));
  SHOAL_ASSIGN_OR_RETURN(planes::MintedUser system,
                         authority.mintSystemUser(connId, std::chrono::minutes(2)));
  const std::string path = authPathsOf(paths).authorityDir + "/claims-push.creds";
  SHOAL_RETURN_IF_ERROR(writeCreds(path, system));
  transport::ConnectOptions options;
  options.servers = {url};
  options.tlsCaFile = caFile;
  options.credentialsFile = path;
  options.inboxPrefix = "_INBOX_" + connId;
  options.name = "shoal creds (claims update)";
  options.allowReconnect = false;
  auto conn = transport::Connection::connect(options);
  (void)FileSystem::posix().remove(path);
  if (!conn.isOk()) return conn.status().withContext("pushing the account's revocations");
  auto answer =
      (*conn)->request("$SYS.REQ.CLAIMS.UPDATE", authority.accountJwt(), std::chrono::seconds(5));
  if (!answer.isOk()) return answer.status().withContext("pushing the account's revocations");
  if (answer->data.find("\"code\":200") == std::string::npos) {
    return unavailable("claims-not-updated",
                       "the broker did not accept the account's new claims: " + answer->data);
  }
  return Status::ok();
}

std::optional<CliCredential> heldCredential(const std::string& file, const wire::Principal& caller,
                                            const std::string& name) {
  FileSystem& fs = FileSystem::posix();
  if (!fs.exists(file)) return std::nullopt;
  auto held = transport::readCredsFile(fs, file);
  const int64_t now = Clock::real().wallMs() / 1000;
  if (!held.isOk() || held->name != name || held->expiresAt <= now + kCliRenewMarginSeconds ||
      held->inboxPrefix.empty()) {
    return std::nullopt;
  }
  return CliCredential{file, held->inboxPrefix, caller, held->expiresAt, nullptr};
}

Result<CliCredential> cliCredential(const MeshPaths& paths,
                                    const std::vector<std::string>& postChannels) {
  const AuthPaths auth = authPathsOf(paths);
  SHOAL_ASSIGN_OR_RETURN(UserIdentity identity, ensureUserIdentity(paths.secretsDir));
  const wire::Principal caller = mesh::operatorOwnedBy(identity.owner).principal;
  auto mint = [&](const std::string& file) -> Result<CliCredential> {
    planes::AgentScope scope;
    scope.space = paths.space;
    scope.principal = caller;
    // The uid the person's commands use (the provision rail names it): peer_uid.h's.
    SHOAL_ASSIGN_OR_RETURN(scope.lifecycleUid, peerUid(paths, caller));
    scope.readChannels = {">"};
    scope.postChannels = postChannels;
    return mintAgentCredential(paths, std::move(scope), "cli", file, kCliCredentialLifetime);
  };
  if (postChannels.empty()) {
    return heldOrMinted(
        auth.cliCreds, [&] { return heldCredential(auth.cliCreds, caller, caller.dotForm()); },
        [&] { return mint(auth.cliCreds); });
  }
  // Posting to named channels: a credential of this command's own.
  OwnCredsFile own = ownCredsFile(auth.cliCreds);
  SHOAL_ASSIGN_OR_RETURN(CliCredential minted, mint(own.path));
  minted.fileGuard = own.guard;
  return minted;
}

namespace {

// A fresh credential of `privilege` for `caller` (privilegedCredential) into `file`.
Result<CliCredential> mintPrivileged(const MeshPaths& paths, Privilege privilege,
                                     const std::string& kind, const wire::Principal& caller,
                                     const std::string& file) {
  SHOAL_RETURN_IF_ERROR(requireAuthority(paths));
  SHOAL_ASSIGN_OR_RETURN(planes::CredentialAuthority authority, openAuthority(paths));
  planes::AgentScope scope;
  scope.space = paths.space;
  scope.principal = caller;
  SHOAL_ASSIGN_OR_RETURN(scope.connId, newConnId(kind.substr(0, 3)));
  std::vector<planes::GrantRow> rows;
  const planes::ReaderScope reader{scope.space, scope.connId};
  if (privilege == Privilege::kAdminReads) {
    SHOAL_ASSIGN_OR_RETURN(rows, planes::adminGrants(reader));
  } else if (privilege == Privilege::kRegistryWrites) {
    SHOAL_ASSIGN_OR_RETURN(rows, planes::registrarGrants(reader));
  } else if (privilege == Privilege::kSeatRecords) {
    SHOAL_ASSIGN_OR_RETURN(rows, planes::seatKeeperGrants(reader));
  } else {
    SHOAL_ASSIGN_OR_RETURN(scope.lifecycleUid, peerUid(paths, caller));
    SHOAL_ASSIGN_OR_RETURN(rows, planes::mailboxGrants(scope));
  }
  SHOAL_ASSIGN_OR_RETURN(planes::MintedUser minted, authority.mint(caller.dotForm() + "-" + kind,
                                                                   rows, kCliCredentialLifetime));
  SHOAL_RETURN_IF_ERROR(writeCreds(file, minted));
  return CliCredential{file, "_INBOX_" + scope.connId, caller, minted.expiresAt, nullptr};
}

}  // namespace

Result<CliCredential> privilegedCredential(const MeshPaths& paths, Privilege privilege) {
  const std::string kind = privilege == Privilege::kAdminReads       ? "admin"
                           : privilege == Privilege::kRegistryWrites ? "registrar"
                           : privilege == Privilege::kSeatRecords    ? "keeper"
                                                                     : "mailbox";
  SHOAL_ASSIGN_OR_RETURN(UserIdentity identity, ensureUserIdentity(paths.secretsDir));
  const wire::Principal caller = mesh::operatorOwnedBy(identity.owner).principal;
  const std::string file = paths.secretsDir + "/" + paths.space + "-" + kind + ".creds";
  return heldOrMinted(
      file, [&] { return heldCredential(file, caller, caller.dotForm() + "-" + kind); },
      [&] { return mintPrivileged(paths, privilege, kind, caller, file); });
}

Result<CliCredential> peerCredential(const MeshPaths& paths, const wire::Principal& principal,
                                     const std::string& lifecycleUid,
                                     const std::vector<std::string>& channels,
                                     const std::optional<std::string>& role,
                                     const PeerRenewal& renewal) {
  SHOAL_ASSIGN_OR_RETURN(UserIdentity identity, ensureUserIdentity(paths.secretsDir));
  if (principal.owner != identity.owner) {
    return permissionDenied("not-this-owner", "in auth mode you run peers of your own owner " +
                                                  identity.owner + " only, not " +
                                                  principal.dotForm() +
                                                  "; leave out --id (the "
                                                  "default is " +
                                                  identity.owner + ".<name>)");
  }
  planes::AgentScope scope;
  scope.space = paths.space;
  scope.principal = principal;
  scope.lifecycleUid = lifecycleUid;
  scope.readChannels = channels;
  scope.postChannels = channels;
  scope.role = role;
  scope.connId = renewal.connId;
  return mintAgentCredential(
      paths, std::move(scope), "peer",
      paths.secretsDir + "/" + paths.space + "-peer-" + principal.dotForm() + ".creds",
      renewal.lifetime);
}

}  // namespace shoal::supervisor
