#include "daemon/own_credential.h"

#include <algorithm>

#include <unistd.h>

#include "base/file_system.h"
#include "base/log.h"
#include "mesh/credential_rail.h"
#include "transport/creds_file.h"
#include "transport/jwt.h"

namespace shoal::daemon {

OwnCredential::OwnCredential(transport::Connection& conn, std::string space,
                             DaemonIdentity identity, std::string credsFile,
                             std::chrono::milliseconds timeout)
    : conn_(conn),
      space_(std::move(space)),
      identity_(std::move(identity)),
      credsFile_(std::move(credsFile)),
      timeout_(timeout) {}

bool OwnCredential::renewIfDue(int64_t nowSeconds) {
  if (nowSeconds < retryAt_) return false;
  auto held = transport::readCredsFile(FileSystem::posix(), credsFile_);
  if (!held.isOk()) {
    log::warn("daemon: cannot read its own credential: {}", held.status().toString());
    retryAt_ = nowSeconds + 60;
    return false;
  }
  const int64_t lifetime = std::max<int64_t>(held->expiresAt - held->issuedAt, 1);
  if (held->expiresAt == 0 || nowSeconds < held->issuedAt + lifetime / 2) return false;
  if (Status st = renew(); !st.isOk()) {
    retryAt_ = nowSeconds + std::clamp<int64_t>(lifetime / 10, 1, 60);
    log::warn("daemon: renewing its own credential failed (again in {} s): {}",
              retryAt_ - nowSeconds, st.toString());
    return false;
  }
  retryAt_ = 0;
  return true;
}

Status OwnCredential::renew() {
  FileSystem& fs = FileSystem::posix();
  SHOAL_ASSIGN_OR_RETURN(std::string text, fs.readFile(credsFile_));
  SHOAL_ASSIGN_OR_RETURN(transport::CredsInfo info, transport::parseCreds(text));
  SHOAL_ASSIGN_OR_RETURN(std::string seed, transport::credsSeed(text));
  constexpr std::string_view kInbox = "_INBOX_";
  if (info.inboxPrefix.rfind(kInbox, 0) != 0) {
    return failedPrecondition("bad-creds", credsFile_ + " names no reply inbox to keep");
  }
  mesh::DaemonRenewal renewal{info.userKey, info.inboxPrefix.substr(kInbox.size())};
  SHOAL_ASSIGN_OR_RETURN(mesh::IssueReply reply,
                         mesh::requestDaemonRenewal(conn_, space_, identity_.owner,
                                                    identity_.machine, renewal, timeout_));
  const std::string staging = credsFile_ + "." + std::to_string(::getpid());
  SHOAL_RETURN_IF_ERROR(writeFileAtomically(fs, staging, transport::formatCreds(reply.jwt, seed)));
  SHOAL_RETURN_IF_ERROR(fs.rename(staging, credsFile_));
  log::info("daemon: renewed its own credential (until {})", reply.expiresAt);
  return Status::ok();
}

}  // namespace shoal::daemon
