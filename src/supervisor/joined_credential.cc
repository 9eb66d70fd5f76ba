#include "supervisor/joined_credential.h"

#include <unistd.h>

#include "base/file_system.h"
#include "base/ids.h"
#include "mesh/credential_rail.h"
#include "mesh/operator_identity.h"
#include "supervisor/credential_files.h"
#include "supervisor/peer_uid.h"
#include "transport/connection.h"
#include "transport/creds_file.h"
#include "transport/jwt.h"
#include "transport/nkey.h"

namespace shoal::supervisor {
namespace {

constexpr std::chrono::milliseconds kAskTimeout{5000};

// A connection under the machine's daemon credential, to ask on its credential rail.
Result<std::unique_ptr<transport::Connection>> connectAsDaemon(const JoinedSpace& joined) {
  SHOAL_ASSIGN_OR_RETURN(transport::CredsInfo daemon,
                         transport::readCredsFile(FileSystem::posix(), joined.daemonCreds));
  transport::ConnectOptions options;
  options.servers = {joined.url};
  options.credentialsFile = joined.daemonCreds;
  options.inboxPrefix = daemon.inboxPrefix;
  options.tlsCaFile = joined.caFile;
  options.name = "shoal cli (asking for the person's credential)";
  options.allowReconnect = false;
  options.connectTimeout = kAskTimeout;
  return transport::Connection::connect(options);
}

// Asks the manager for the person's credential (module comment) — their mail reader when
// `mailbox` — and writes it to `file`.
Result<CliCredential> askManager(const MeshPaths& paths, const JoinedSpace& joined,
                                 const wire::Principal& caller,
                                 const std::vector<std::string>& postChannels,
                                 const std::string& file, bool mailbox = false) {
  CliCredential out;
  out.credsFile = file;
  out.caller = caller;
  FileSystem& fs = FileSystem::posix();
  SHOAL_ASSIGN_OR_RETURN(auto conn, connectAsDaemon(joined));
  SHOAL_ASSIGN_OR_RETURN(transport::NKeyPair key,
                         transport::generateNKey(transport::NKeyRole::kUser));
  SHOAL_ASSIGN_OR_RETURN(std::string uid, newLifecycleUid());
  mesh::IssueRequest request;
  request.principal = caller;
  SHOAL_ASSIGN_OR_RETURN(request.lifecycleUid, peerUid(paths, caller));
  request.connId = (mailbox ? "ibxmai" : "ibxcli") + uid;
  request.userKey = key.publicKey;
  request.channels = postChannels;
  request.person = true;
  request.mailbox = mailbox;
  SHOAL_ASSIGN_OR_RETURN(mesh::IssueReply reply,
                         mesh::requestSeatCredential(*conn, paths.space, joined.owner,
                                                     joined.machine, request, kAskTimeout));
  // Staged under this process's own name: two commands asking at once must not share a file.
  const std::string staging = file + "." + std::to_string(::getpid());
  SHOAL_RETURN_IF_ERROR(
      writeFileAtomically(fs, staging, transport::formatCreds(reply.jwt, key.seed)));
  SHOAL_RETURN_IF_ERROR(fs.rename(staging, file));
  out.inboxPrefix = "_INBOX_" + request.connId;
  out.expiresAt = reply.expiresAt;
  return out;
}

}  // namespace

Result<CliCredential> joinedPersonCredential(const MeshPaths& paths, const JoinedSpace& joined,
                                             const std::vector<std::string>& postChannels) {
  const std::string shared = joinedPathsOf(paths).dir + "/cli.creds";
  const wire::Principal caller = mesh::operatorOwnedBy(joined.owner).principal;
  if (postChannels.empty()) {
    return heldOrMinted(
        shared, [&] { return heldCredential(shared, caller, caller.dotForm()); },
        [&] { return askManager(paths, joined, caller, postChannels, shared); });
  }
  // Posting to named channels: a credential of this command's own.
  OwnCredsFile own = ownCredsFile(shared);
  SHOAL_ASSIGN_OR_RETURN(CliCredential asked,
                         askManager(paths, joined, caller, postChannels, own.path));
  asked.fileGuard = own.guard;
  return asked;
}

Result<CliCredential> joinedMailboxCredential(const MeshPaths& paths, const JoinedSpace& joined) {
  const std::string shared = joinedPathsOf(paths).dir + "/mailbox.creds";
  const wire::Principal caller = mesh::operatorOwnedBy(joined.owner).principal;
  return heldOrMinted(
      shared, [&] { return heldCredential(shared, caller, caller.dotForm()); },
      [&] { return askManager(paths, joined, caller, {}, shared, true); });
}

}  // namespace shoal::supervisor
