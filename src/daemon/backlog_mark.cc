#include "daemon/backlog_mark.h"

namespace shoal::daemon {

void BacklogMark::setStreamSequence(uint64_t lastSeq) {
  MutexLock lock(mu_);
  mark_ = lastSeq;
  pendingLeft_ = 0;
}

void BacklogMark::setFromDurable(uint64_t deliveredStreamSeq, uint64_t numPending) {
  MutexLock lock(mu_);
  mark_ = deliveredStreamSeq;
  pendingLeft_ = numPending;
}

bool BacklogMark::isFresh(uint64_t streamSeq) {
  MutexLock lock(mu_);
  if (streamSeq <= mark_) return false;
  if (pendingLeft_ == 0) return true;
  --pendingLeft_;
  mark_ = streamSeq;
  return false;
}

}  // namespace shoal::daemon
