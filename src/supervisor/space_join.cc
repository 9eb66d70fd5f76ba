#include "supervisor/space_join.h"

#include <arpa/inet.h>
#include <boost/json.hpp>
#include <unistd.h>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/ids.h"
#include "base/owner_only.h"
#include "mesh/credential_rail.h"
#include "mesh/join_rail.h"
#include "planes/grants.h"
#include "supervisor/auth_mode.h"
#include "supervisor/broker_tls.h"
#include "supervisor/user_identity.h"
#include "transport/connection.h"
#include "transport/creds_file.h"
#include "transport/jwt.h"
#include "transport/nkey.h"
#include "transport/server_probe.h"
#include "transport/tls_identity.h"
#include "wire/join_link.h"

namespace shoal::supervisor {
namespace {

namespace json = boost::json;

bool isWildcardHost(const std::string& host) {
  return host == "0.0.0.0" || host == "::" || host == "[::]" || host.empty();
}

// Staged under this process's own name, then renamed (auth_mode.cc's rule).
Status writeSecret(const std::string& path, std::string_view text) {
  FileSystem& fs = FileSystem::posix();
  const std::string staging = path + "." + std::to_string(::getpid());
  SHOAL_RETURN_IF_ERROR(writeFileAtomically(fs, staging, text));
  return fs.rename(staging, path);
}

std::string urlOf(const wire::JoinLink& link) {
  const bool v6 = link.host.find(':') != std::string::npos;
  return "tls://" + (v6 ? "[" + link.host + "]" : link.host) + ":" + std::to_string(link.port);
}

// The CA the link names, among the certificates the broker presents.
Result<std::string> verifiedCa(const wire::JoinLink& link, std::chrono::milliseconds timeout) {
  SHOAL_ASSIGN_OR_RETURN(std::vector<std::string> presented,
                         transport::fetchPresentedCertificates(link.host, link.port, timeout));
  for (const auto& pem : presented) {
    auto print = transport::certificateFingerprint(pem);
    if (print.isOk() && *print == link.caFingerprint) return pem;
  }
  return permissionDenied("ca-mismatch",
                          "the broker at " + link.host + ":" + std::to_string(link.port) +
                              " presents no certificate authority with the fingerprint the "
                              "link names (" +
                              link.caFingerprint.substr(0, 16) +
                              "…): it is not the space's broker, or something stands between "
                              "you; nothing was sent to it");
}

Status writeContext(const JoinedPaths& files, const JoinedSpace& joined) {
  json::object o{{"version", 1},
                 {"space", joined.space},
                 {"url", joined.url},
                 {"owner", joined.owner},
                 {"machine", joined.machine},
                 {"joinedAtMs", joined.joinedAtMs},
                 {"expiresAt", joined.expiresAt}};
  return writeFileAtomically(FileSystem::posix(), files.contextFile, json::serialize(o) + "\n");
}

// Connects under the bootstrap credential and exchanges the invite for the daemon's JWT.
Result<mesh::IssueReply> exchangeInvite(const wire::JoinLink& link, const JoinedPaths& files,
                                        const std::string& caFile, const mesh::JoinCaller& caller,
                                        const mesh::JoinRequest& request,
                                        std::chrono::milliseconds timeout) {
  FileSystem& fs = FileSystem::posix();
  const std::string bootstrap = files.dir + "/bootstrap.creds";
  SHOAL_RETURN_IF_ERROR(writeSecret(bootstrap, transport::formatCreds(link.jwt, link.seed)));
  auto creds = transport::readCredsFile(fs, bootstrap);
  transport::ConnectOptions options;
  options.servers = {urlOf(link)};
  options.tlsCaFile = caFile;
  options.credentialsFile = bootstrap;
  options.inboxPrefix = creds.isOk() ? creds->inboxPrefix : std::string();
  options.name = "shoal daemon join";
  options.allowReconnect = false;
  options.connectTimeout = timeout;
  auto conn = transport::Connection::connect(options);
  (void)fs.remove(bootstrap);
  if (!creds.isOk()) return creds.status().withContext("the link's bootstrap credential");
  if (!conn.isOk()) {
    if (conn.status().code() == StatusCode::kPermissionDenied) {
      return permissionDenied("invite-expired",
                              "the broker refused the invite's credential: the invite expired "
                              "or was revoked; ask for a new one (`shoal invite` on the "
                              "space's machine)");
    }
    return conn.status().withContext("connecting to the space's broker");
  }
  return mesh::requestDaemonCredential(**conn, link.space, caller, request, timeout);
}

}  // namespace

JoinedPaths joinedPathsOf(const MeshPaths& paths) {
  JoinedPaths files;
  files.dir = paths.secretsDir + "/" + paths.space + "-joined";
  files.contextFile = files.dir + "/context.json";
  files.caFile = files.dir + "/ca.pem";
  files.daemonCreds = files.dir + "/daemon.creds";
  return files;
}

Result<Invite> createInvite(const MeshPaths& paths, const MeshRecord& record,
                            const InviteOptions& options) {
  if (!spaceUsesAuth(paths)) {
    return failedPrecondition("no-authority",
                              "space " + paths.space +
                                  " has no credential authority on this machine: invites come "
                                  "from the machine that ran `shoal up --auth`");
  }
  if (record.caFile.empty()) {
    return failedPrecondition("invite-needs-tls",
                              "the broker of space " + paths.space +
                                  " runs without TLS, and an invite carries credentials: "
                                  "restart it with `shoal down && shoal up --auth --host ADDR`");
  }
  if (isWildcardHost(record.host)) {
    return failedPrecondition("invite-needs-address",
                              "the broker listens on " + record.host +
                                  ", which names no address to dial: start it with `--host "
                                  "ADDR`, the address the other machines reach it on");
  }
  if (options.ttl < std::chrono::seconds(60) || options.ttl > kMaxInviteLifetime) {
    return invalidArgument("bad-ttl", "an invite lives between 60 s and 7 days");
  }
  if (!options.machine.empty()) SHOAL_RETURN_IF_ERROR(mesh::validateMachineName(options.machine));
  SHOAL_ASSIGN_OR_RETURN(UserIdentity me, ensureUserIdentity(paths.secretsDir));
  SHOAL_ASSIGN_OR_RETURN(planes::CredentialAuthority authority, openAuthority(paths));
  SHOAL_ASSIGN_OR_RETURN(std::string inviteId, mesh::newInviteId(options.machine.empty()));
  SHOAL_ASSIGN_OR_RETURN(std::string uid, newLifecycleUid());
  const std::string connId = "ibxinv" + uid;
  SHOAL_ASSIGN_OR_RETURN(auto rows, planes::bootstrapGrants(planes::BootstrapScope{
                                        paths.space, me.owner, options.machine, inviteId, connId}));
  SHOAL_ASSIGN_OR_RETURN(transport::NKeyPair key,
                         transport::generateNKey(transport::NKeyRole::kUser));
  SHOAL_ASSIGN_OR_RETURN(
      planes::MintedJwt minted,
      authority.mintFor(key.publicKey, "invite-" + inviteId.substr(0, 8), rows, options.ttl));
  wire::JoinLink link;
  link.host = record.host;
  link.port = record.port;
  link.space = paths.space;
  link.owner = me.owner;
  link.machine = options.machine;
  link.inviteId = inviteId;
  SHOAL_ASSIGN_OR_RETURN(link.caFingerprint, brokerCaFingerprint(paths));
  link.jwt = minted.jwt;
  link.seed = key.seed;
  SHOAL_ASSIGN_OR_RETURN(std::string text, wire::encodeJoinLink(link));
  return Invite{std::move(text), me.owner, options.machine, minted.expiresAt};
}

Result<JoinedSpace> readJoinedSpace(const MeshPaths& paths) {
  const JoinedPaths files = joinedPathsOf(paths);
  FileSystem& fs = FileSystem::posix();
  if (!fs.exists(files.contextFile)) {
    return notFound("space-not-joined", "this machine has not joined space " + paths.space +
                                            " (`shoal daemon join <link>`)");
  }
  SHOAL_ASSIGN_OR_RETURN(std::string text, fs.readFile(files.contextFile));
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  const json::object* o = !ec && v.is_object() ? &v.as_object() : nullptr;
  auto str = [&](std::string_view key, std::string& out) {
    const json::value* f = o != nullptr ? o->if_contains(key) : nullptr;
    if (f == nullptr || !f->is_string()) return false;
    out = std::string(f->as_string());
    return true;
  };
  auto num = [&](std::string_view key, int64_t& out) {
    const json::value* f = o != nullptr ? o->if_contains(key) : nullptr;
    if (f == nullptr || !f->is_int64()) return false;
    out = f->as_int64();
    return true;
  };
  JoinedSpace joined;
  if (!str("space", joined.space) || !str("url", joined.url) || !str("owner", joined.owner) ||
      !str("machine", joined.machine) || !num("joinedAtMs", joined.joinedAtMs) ||
      !num("expiresAt", joined.expiresAt) || joined.space != paths.space) {
    return dataLoss("bad-joined-context", files.contextFile +
                                              " is not a joined space's context; join again "
                                              "(`shoal daemon join <link>`)");
  }
  joined.caFile = files.caFile;
  joined.daemonCreds = files.daemonCreds;
  return joined;
}

Result<JoinedSpace> joinSpace(const MeshPaths& paths, const std::string& linkText,
                              const std::string& machine, std::chrono::milliseconds timeout) {
  SHOAL_ASSIGN_OR_RETURN(wire::JoinLink link, wire::parseJoinLink(linkText));
  if (link.space != paths.space) {
    return invalidArgument("space-mismatch", "the link invites to space " + link.space + ", not " +
                                                 paths.space + " (drop --space)");
  }
  mesh::JoinCaller caller{link.owner, link.machine, link.inviteId};
  if (!link.machine.empty() && !machine.empty() && machine != link.machine) {
    return invalidArgument("invite-names-machine",
                           "the invite is for machine " + link.machine + ", not " + machine +
                               " (drop --machine, or ask for an invite without one)");
  }
  if (caller.machine.empty()) {
    if (!machine.empty()) {
      caller.machine = machine;
    } else {
      SHOAL_ASSIGN_OR_RETURN(caller.machine, thisMachineName(paths));
    }
  }
  SHOAL_RETURN_IF_ERROR(mesh::validateMachineName(caller.machine));
  SHOAL_ASSIGN_OR_RETURN(std::string caPem, verifiedCa(link, timeout));

  const JoinedPaths files = joinedPathsOf(paths);
  SHOAL_RETURN_IF_ERROR(ensureOwnerOnlyDir(paths.secretsDir));
  SHOAL_RETURN_IF_ERROR(ensureOwnerOnlyDir(files.dir));
  // A context joined before stays whole until this join succeeds: the new CA is staged.
  const std::string stagedCa = files.caFile + ".new";
  SHOAL_RETURN_IF_ERROR(writeFileAtomically(FileSystem::posix(), stagedCa, caPem));
  SHOAL_ASSIGN_OR_RETURN(transport::NKeyPair key,
                         transport::generateNKey(transport::NKeyRole::kUser));
  SHOAL_ASSIGN_OR_RETURN(std::string connId, newDaemonConnId());
  SHOAL_ASSIGN_OR_RETURN(mesh::IssueReply reply, exchangeInvite(link, files, stagedCa, caller,
                                                                {key.publicKey, connId}, timeout));
  SHOAL_RETURN_IF_ERROR(
      writeSecret(files.daemonCreds, transport::formatCreds(reply.jwt, key.seed)));
  SHOAL_RETURN_IF_ERROR(FileSystem::posix().rename(stagedCa, files.caFile));
  JoinedSpace joined;
  joined.space = paths.space;
  joined.url = urlOf(link);
  joined.owner = link.owner;
  joined.machine = caller.machine;
  joined.joinedAtMs = Clock::real().wallMs();
  joined.expiresAt = reply.expiresAt;
  joined.caFile = files.caFile;
  joined.daemonCreds = files.daemonCreds;
  SHOAL_RETURN_IF_ERROR(writeContext(files, joined));
  return joined;
}

}  // namespace shoal::supervisor
