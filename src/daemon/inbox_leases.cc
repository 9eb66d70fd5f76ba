#include "daemon/inbox_leases.h"

#include <algorithm>

namespace shoal::daemon {

void InboxLeases::open(uint64_t generation) {
  MutexLock lock(mu_);
  open_ = generation;
}

void InboxLeases::close() {
  MutexLock lock(mu_);
  open_.reset();
}

bool InboxLeases::accepting(uint64_t generation) const {
  MutexLock lock(mu_);
  return open_ == generation;
}

bool InboxLeases::drain(TimePoint deadline) {
  MutexLock lock(mu_);
  while (awaitingWrite_ > 0) {
    if (!cv_.waitUntil(mu_, deadline) && awaitingWrite_ > 0) return false;
  }
  return true;
}

bool InboxLeases::add(std::vector<InboxClaim> claims) {
  MutexLock lock(mu_);
  if (claims.empty()) return true;
  if (open_ != claims.front().generation) return false;
  awaitingWrite_ += claims.size();
  for (auto& c : claims)
    leases_.push_back(std::move(c));
  return true;
}

std::vector<InboxClaim> InboxLeases::finishWrite(const std::vector<std::string>& receipts,
                                                 uint64_t generation, bool complete) {
  MutexLock lock(mu_);
  std::vector<InboxClaim> out;
  if (!complete || open_ != generation) return out;  // the leases stay until their deadline
  for (const auto& receipt : receipts) {
    auto it = std::find_if(leases_.begin(), leases_.end(), [&](const InboxClaim& c) {
      return c.receipt == receipt && c.generation == generation;
    });
    if (it == leases_.end()) continue;  // expired meanwhile
    out.push_back(std::move(*it));
    leases_.erase(it);
  }
  return out;
}

void InboxLeases::handled(size_t claims) {
  MutexLock lock(mu_);
  awaitingWrite_ = claims > awaitingWrite_ ? 0 : awaitingWrite_ - claims;
  cv_.notifyAll();
}

std::vector<InboxClaim> InboxLeases::expire(TimePoint now) {
  MutexLock lock(mu_);
  std::vector<InboxClaim> out;
  auto past = [&](const InboxClaim& c) {
    if (c.deadline > now) return false;
    out.push_back(c);
    return true;
  };
  leases_.erase(std::remove_if(leases_.begin(), leases_.end(), past), leases_.end());
  return out;
}

std::optional<InboxLeases::TimePoint> InboxLeases::nextDeadline() const {
  MutexLock lock(mu_);
  std::optional<TimePoint> out;
  for (const auto& c : leases_) {
    if (!out || c.deadline < *out) out = c.deadline;
  }
  return out;
}

bool InboxLeases::holds(const std::string& id) const {
  MutexLock lock(mu_);
  return std::any_of(leases_.begin(), leases_.end(),
                     [&](const InboxClaim& c) { return c.id == id; });
}

size_t InboxLeases::size() const {
  MutexLock lock(mu_);
  return leases_.size();
}

}  // namespace shoal::daemon
