#include "daemon/seat_credentials.h"

#include <algorithm>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/owner_only.h"
#include "mesh/credential_rail.h"
#include "transport/jwt.h"
#include "transport/nkey.h"

namespace shoal::daemon {
namespace {

constexpr int64_t kRenewRetrySeconds = 10;

int64_t nowSeconds() {
  return Clock::real().wallMs() / 1000;
}

// The grants a credential was issued for: a change in any of them needs a new one.
bool sameGrants(const SeatProfile& a, const SeatProfile& b) {
  return a.principal == b.principal && a.lifecycleUid == b.lifecycleUid && a.role == b.role &&
         a.channels == b.channels;
}

}  // namespace

SeatCredentials::SeatCredentials(transport::Connection& conn, std::string space,
                                 DaemonIdentity identity, std::string dir,
                                 std::chrono::milliseconds timeout)
    : conn_(conn),
      space_(std::move(space)),
      identity_(std::move(identity)),
      dir_(std::move(dir)),
      timeout_(timeout) {}

Result<SeatCredential> SeatCredentials::issue(const SeatProfile& profile) {
  MutexLock lock(mu_);
  const std::string id = profile.principal.dotForm();
  auto it = held_.find(id);
  if (it != held_.end() && sameGrants(it->second.profile, profile)) {
    const Held& h = it->second;
    if (nowSeconds() < h.credential.expiresAt - (h.credential.expiresAt - h.issuedAt) / 2) {
      return h.credential;
    }
  }
  if (it == held_.end() || !sameGrants(it->second.profile, profile)) {
    // A new key and inbox: the grants differ, so nothing of the old credential carries over.
    SHOAL_ASSIGN_OR_RETURN(transport::NKeyPair key,
                           transport::generateNKey(transport::NKeyRole::kUser));
    SHOAL_ASSIGN_OR_RETURN(std::string uid, newLifecycleUid());
    Held fresh;
    fresh.seed = key.seed;
    fresh.userKey = key.publicKey;
    fresh.connId = "ibxseat" + uid;
    it = held_.insert_or_assign(id, std::move(fresh)).first;
  }
  it->second.profile = profile;
  return issueLocked(it->second);
}

Result<SeatCredential> SeatCredentials::issueLocked(Held& held) {
  mesh::IssueRequest request;
  request.principal = held.profile.principal;
  request.lifecycleUid = held.profile.lifecycleUid;
  request.connId = held.connId;
  request.userKey = held.userKey;
  request.role = held.profile.role;
  request.channels = held.profile.channels;
  SHOAL_ASSIGN_OR_RETURN(mesh::IssueReply reply,
                         mesh::requestSeatCredential(conn_, space_, identity_.owner,
                                                     identity_.machine, request, timeout_));
  SHOAL_RETURN_IF_ERROR(ensureOwnerOnlyDir(dir_));
  SeatCredential out;
  out.credsFile = dir_ + "/" + held.profile.principal.dotForm() + ".creds";
  out.inboxPrefix = "_INBOX_" + held.connId;
  out.expiresAt = reply.expiresAt;
  SHOAL_RETURN_IF_ERROR(writeFileAtomically(FileSystem::posix(), out.credsFile,
                                            transport::formatCreds(reply.jwt, held.seed)));
  held.credential = out;
  held.issuedAt = nowSeconds();
  return out;
}

void SeatCredentials::forget(const wire::Principal& principal) {
  MutexLock lock(mu_);
  auto it = held_.find(principal.dotForm());
  if (it == held_.end()) return;
  (void)FileSystem::posix().remove(it->second.credential.credsFile);
  held_.erase(it);
}

size_t SeatCredentials::renewDue() {
  MutexLock lock(mu_);
  const int64_t now = nowSeconds();
  size_t renewed = 0;
  for (auto& [id, held] : held_) {
    const SeatCredential& c = held.credential;
    if (c.expiresAt == 0 || now < c.expiresAt - (c.expiresAt - held.issuedAt) / 2) continue;
    if (now < held.retryAt) continue;
    auto again = issueLocked(held);
    if (again.isOk()) {
      ++renewed;
      log::info("daemon: renewed seat {}'s credential (until {})", id, again->expiresAt);
    } else {
      // A tenth of the lifetime, at most 10 s: a short credential must not expire between tries.
      held.retryAt =
          now + std::clamp<int64_t>((c.expiresAt - held.issuedAt) / 10, 1, kRenewRetrySeconds);
      log::warn("daemon: renewing seat {}'s credential (expires at {}): {}", id, c.expiresAt,
                again.status().toString());
    }
  }
  return renewed;
}

}  // namespace shoal::daemon
