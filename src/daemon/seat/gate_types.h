// The values the seat's gate passes between its parts: a command's completion, an inbox page
// request, a gate event, an owner handed to the runtime and the handoff that carries it, an
// owner waiting for reconciliation. Private to the seat: include it only from
// src/daemon/seat/.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "daemon/reply_ledger.h"
#include "daemon/seat/direct_lane.h"
#include "daemon/seat/rules.h"
#include "daemon/stored_delivery.h"
#include "journal/record.h"
#include "mcp/tool.h"
#include "runtime/driver.h"
#include "wire/principal.h"

namespace shoal::daemon {
namespace seat_parts {

// One command's completion, shared by every caller waiting for it.
class Completion {
 public:
  void finish(Status status) {
    MutexLock lock(mu_);
    if (done_) return;
    done_ = true;
    status_ = std::move(status);
    cv_.notifyAll();
  }
  // nullopt deadline: as long as it takes. False when the deadline passed first.
  bool wait(std::optional<TimePoint> deadline) {
    MutexLock lock(mu_);
    while (!done_) {
      if (!deadline) {
        cv_.wait(mu_);
      } else if (!cv_.waitUntil(mu_, *deadline) && !done_) {
        return false;
      }
    }
    return true;
  }
  Status status() {
    MutexLock lock(mu_);
    return status_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool done_ SHOAL_GUARDED_BY(mu_) = false;
  Status status_ SHOAL_GUARDED_BY(mu_);
};

// One shoal_inbox page: asked on an MCP worker thread, claimed on the gate.
// A caller that gave up waiting abandons it; the gate then claims nothing (a page nobody will
// write must not take deliveries out of the queue).
struct InboxRequest {
  size_t limit = kInboxPageDefault;
  mcp::ToolResult result;
  Completion done;
  Mutex mu;
  bool taken SHOAL_GUARDED_BY(mu) = false;      // the gate began the claim
  bool abandoned SHOAL_GUARDED_BY(mu) = false;  // the caller stopped waiting first
};

struct GateEvent {
  enum class Kind { kAdmitted, kDriver, kWake, kSleep, kStop, kInbox, kCompact, kInterrupt };
  Kind kind = Kind::kAdmitted;
  std::string id;      // kAdmitted
  bool fresh = false;  // kAdmitted: a current directed event (may cold-start a sleeping seat)
  // kAdmitted: `id` was refused by the full local inbox and waits at the broker (not queued).
  bool waiting = false;
  runtime::DriverEvent driver;  // kDriver
  std::shared_ptr<Completion> done;
  std::optional<TimePoint> deadline;    // kStop
  std::shared_ptr<InboxRequest> inbox;  // kInbox
  // kAdmitted: `id` was admitted inflight(dispatching) on the direct lane (direct_lane.h).
  std::optional<DirectLane::Claim> direct;
};

// An owner handed to the current generation, with the token of its last transition.
struct Handed {
  std::string id;
  journal::OwnerToken token;
  std::string sender;
  // Visible-reply obligation once surfaced (reply_ledger.h); empty: none.
  std::string replyTarget;
  std::string replyKey;
  uint64_t replySeq = 0;  // ReplyLedger::reserve() at handoff
};

// Where a reply to `d` goes, for a delivery that asks for one: a DM or job → its sender, an
// @mention of the seat → the channel. Ambient channel posts ask for none.
inline std::optional<std::pair<std::string, std::string>> replyTargetOf(
    const StoredDelivery& d, const wire::Principal& self) {
  switch (d.kind) {
    case wire::DeliveryKind::kDm:
    case wire::DeliveryKind::kAnycast:
      return std::make_pair(d.message.from.id, peerTargetKey(d.message.from.id));
    case wire::DeliveryKind::kChannel:
      for (const auto& m : d.message.mentions) {
        if (m == self.dotForm() || m == self.actor) {
          return std::make_pair(d.message.routing.target,
                                channelTargetKey(d.message.routing.target));
        }
      }
      return std::nullopt;
  }
  return std::nullopt;
}

struct ActiveHandoff {
  std::string id;  // the uuid the runtime acknowledges
  std::vector<Handed> owners;
  bool acked = false;
  std::vector<size_t> ends;  // surfacedOnRead: the byte of the block after each owner's item
};

// A block rendered for the runtime and what each of its owners needs once it is written.
struct PreparedHandoff {
  runtime::Handoff handoff;
  std::vector<journal::OwnershipRecord> owners;  // in the block's order
  // Each owner's visible-reply obligation (target, key), when the runtime's replies are tracked.
  std::vector<std::optional<std::pair<std::string, std::string>>> replyTargets;
  std::vector<size_t> itemEnds;  // the byte of the text after each owner's item
};

enum class Retiring { kNone, kSleep, kStop };

// Reconciliation (seed 004 §3.2): a handoff a runtime that can be asked (Codex) may or may not
// have read when it died, waiting for the next generation's thread/read.
struct Reconciling {
  Handed owner;
  std::string handoffId;  // the userMessage clientId, or the inbox receipt when `marker`
  std::string threadId;
  bool marker = false;  // an inbox receipt: looked for in the history's tool items
};

}  // namespace seat_parts

// The parts name these unqualified.
using seat_parts::ActiveHandoff;
using seat_parts::Completion;
using seat_parts::DirectLane;
using seat_parts::GateEvent;
using seat_parts::Handed;
using seat_parts::InboxRequest;
using seat_parts::PreparedHandoff;
using seat_parts::Reconciling;
using seat_parts::replyTargetOf;
using seat_parts::Retiring;

}  // namespace shoal::daemon
