// BacklogMark: which of a seat's directed deliveries were already stored when the seat attached
// (backlog: queued, never waking a sleeping seat) and which came after (current events).
//
// Two ways to know it. With the stream's info (open mode: the daemon reads DM_<space> and
// TASK_<space>), the stream's last sequence at attach: everything at or below it is backlog.
// In auth mode an agent's grants do not reach DM_<space>'s info (per-subject counts would tell
// who DMs whom), but they do reach its own durable's: everything up to the durable's last
// delivered sequence is backlog, and so are the next `pending` deliveries beyond it — JetStream
// hands a durable its new messages in stream order, so the pending ones at attach are exactly
// the first that many fresh sequences the seat is given. Each one counted raises the mark, so a
// redelivery of a counted message stays backlog.
//
// Thread safety: a mutex; one instance per stream, fed in arrival order.
#pragma once

#include <cstdint>

#include "base/mutex.h"

namespace shoal::daemon {

class BacklogMark {
 public:
  // Until set, nothing is backlog (a new durable, or nothing could be read).
  // From the stream's info: its last sequence at attach.
  void setStreamSequence(uint64_t lastSeq);
  // From the seat's own durable's info at attach.
  void setFromDurable(uint64_t deliveredStreamSeq, uint64_t numPending);

  // True when the delivery of `streamSeq` was stored after the attach. Counts (see above):
  // call for the deliveries in the order they arrive.
  bool isFresh(uint64_t streamSeq);

 private:
  Mutex mu_;
  uint64_t mark_ SHOAL_GUARDED_BY(mu_) = 0;         // at or below: backlog
  uint64_t pendingLeft_ SHOAL_GUARDED_BY(mu_) = 0;  // fresh sequences above mark_ still backlog
};

}  // namespace shoal::daemon
