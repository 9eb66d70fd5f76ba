#include "daemon/reply_ledger.h"

#include <algorithm>

namespace shoal::daemon {

std::string peerTargetKey(const std::string& principalId) {
  return "peer:" + principalId;
}

std::string channelTargetKey(const std::string& channel) {
  return "channel:" + channel;
}

uint64_t ReplyLedger::reserve(const std::string& targetKey) {
  MutexLock lock(mu_);
  return ++lastSeq_[targetKey];
}

std::optional<WakeResult> ReplyLedger::add(ReplyRow row) {
  MutexLock lock(mu_);
  for (const auto& r : rows_) {
    if (r.messageId == row.messageId) return std::nullopt;
  }
  if (auto it = replied_.find(row.targetKey);
      it != replied_.end() && row.targetSeq != 0 && row.targetSeq <= it->second.upTo) {
    return WakeResult{row.messageId, row.targetKey, "replied", it->second.replyId, ""};
  }
  rows_.push_back(std::move(row));
  return std::nullopt;
}

uint64_t ReplyLedger::frontier(const std::string& targetKey) const {
  MutexLock lock(mu_);
  auto it = lastSeq_.find(targetKey);
  return it == lastSeq_.end() ? 0 : it->second;
}

std::vector<WakeResult> ReplyLedger::settle(const std::string& targetKey, uint64_t seenUpTo,
                                            const std::string& replyId) {
  MutexLock lock(mu_);
  Replied& replied = replied_[targetKey];
  if (seenUpTo >= replied.upTo) replied = Replied{seenUpTo, replyId};
  std::vector<WakeResult> out;
  auto settled = [&](const ReplyRow& r) {
    if (r.targetKey != targetKey || r.targetSeq > seenUpTo) return false;
    out.push_back(WakeResult{r.messageId, r.targetKey, "replied", replyId, ""});
    return true;
  };
  rows_.erase(std::remove_if(rows_.begin(), rows_.end(), settled), rows_.end());
  return out;
}

std::vector<WakeResult> ReplyLedger::finalCheck(const std::string& failedReason) {
  MutexLock lock(mu_);
  std::vector<WakeResult> out;
  for (const auto& r : rows_) {
    out.push_back(
        failedReason.empty()
            ? WakeResult{r.messageId, r.targetKey, "completed_without_visible_reply", "", ""}
            : WakeResult{r.messageId, r.targetKey, "failed", "", failedReason});
  }
  rows_.clear();
  return out;
}

size_t ReplyLedger::size() const {
  MutexLock lock(mu_);
  return rows_.size();
}

bool ReplyLedger::full() const {
  MutexLock lock(mu_);
  return rows_.size() >= bound_;
}

std::vector<ReplyRow> ReplyLedger::rows() const {
  MutexLock lock(mu_);
  return rows_;
}

}  // namespace shoal::daemon
