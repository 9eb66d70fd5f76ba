// The seat's numbers and journal section names, shared by the files of src/daemon/seat/ (each
// names the rule it bounds). Private to the seat: include it only from src/daemon/seat/.
#pragma once

#include <chrono>
#include <cstddef>
#include <string_view>

namespace shoal::daemon {
namespace seat_parts {

using Clock_ = std::chrono::steady_clock;
using TimePoint = Clock_::time_point;
using std::chrono::milliseconds;

constexpr milliseconds kCrashWindow{60000};
constexpr milliseconds kDispatchRetry{1000};
constexpr milliseconds kWorkEventEvery{1000};
// A refusal repeated (a flood of poison messages) is logged once per reason per interval.
constexpr milliseconds kRefusalLogInterval{10000};
// Inside WAKE_<space>'s 2-minute duplicate window, with a margin: how far back a journal
// without a receipt outbox (an older Shoal's) republishes receipts.
constexpr milliseconds kReceiptReplayWindow{100000};
// The journal section holding the receipts owed to senders (receipt_outbox.h).
constexpr std::string_view kReceiptsSection = "seat.receipts";
// The receipt outbox is written at most this often (and at a stop).
constexpr milliseconds kReceiptsSaveEvery{2000};
// The journal section holding the DM stream sequences admitted (admitted_seqs.h).
constexpr std::string_view kDmAdmittedSection = "seat.dm_admitted";
// The journal section naming the current runtime Process: {"pid":N,"program":"<argv[0]>"}.
constexpr std::string_view kProcessSection = "runtime.process";
// The journal section holding the runtime session to resume: {"id":"<session id>"}.
constexpr std::string_view kSessionSection = "runtime.session";
// A runtime that does not answer its readiness handshake in this time is retired.
constexpr milliseconds kReadyTimeout{60000};
// The journal section holding per-channel attention: {"<channel>":"quiet"|"muted",…}.
constexpr std::string_view kChannelModesSection = "attention.channels";
// The journal `wake` class of a delivery (the record's `wake`): directed ones (dm, anycast,
// channel-mention) always go out; ambient channel posts follow the attention mode; pull-only
// ones (a quiet channel's posts, historical ambient) only an inbox page takes.
constexpr std::string_view kAmbientWake = "channel";
constexpr std::string_view kMentionWake = "channel-mention";
constexpr std::string_view kPullOnlyWake = "channel-pull";
// An admission whose evictions lost a race with the gate (a victim was dispatched or claimed
// meanwhile) chooses again, at most this many times in all.
constexpr int kInboxAttempts = 3;
// Steered handoffs one turn takes at most; later arrivals wait for the turn's end.
constexpr size_t kMaxSteersPerTurn = 8;
// Owners handed to a runtime that proves reading (exec) and not proven read yet: no new block
// goes out beyond this many, so the gate settles what was read before it hands out more (a
// burst otherwise piles inflight owners up to the journal's cap, whose reclaim would fail
// messages the runtime had read).
constexpr size_t kMaxUnreadOwners = 128;
// A directed arrival that finds the local inbox full of directed messages waits this long for
// room on its pump thread (the broker keeps the rest of the burst) before it is left
// unacknowledged for the broker to redeliver. After one such wait times out, arrivals do not
// wait again until room is made (a runtime that stopped reading costs one wait, not one each).
constexpr milliseconds kRoomWait{2000};
// Reconciliation reads (seed 004 §3.2): six attempts, backoff from 100 ms doubling to 5 s.
constexpr int kReconcileAttempts = 6;
// A delivery handed to the runtime this many times, each time given back unread (the runtime
// died first, reconciliation proved it absent, or it took no byte), is poison: failed.
constexpr int kMaxHandoffs = 3;
constexpr milliseconds kReconcileMaxBackoff{5000};
// How long a retirement waits for inbox pages whose write outcome is not known yet.
constexpr milliseconds kLeaseDrain{2000};
// How long a shoal_inbox call waits for the gate.
constexpr milliseconds kInboxWait{10000};
constexpr size_t kInboxPageDefault = 10;
constexpr size_t kInboxPageMax = 50;
constexpr size_t kRecentResults = 20;

}  // namespace seat_parts

// The parts name these unqualified.
using seat_parts::Clock_;
using seat_parts::kAmbientWake;
using seat_parts::kChannelModesSection;
using seat_parts::kCrashWindow;
using seat_parts::kDispatchRetry;
using seat_parts::kDmAdmittedSection;
using seat_parts::kInboxAttempts;
using seat_parts::kInboxPageDefault;
using seat_parts::kInboxPageMax;
using seat_parts::kInboxWait;
using seat_parts::kLeaseDrain;
using seat_parts::kMaxHandoffs;
using seat_parts::kMaxSteersPerTurn;
using seat_parts::kMaxUnreadOwners;
using seat_parts::kMentionWake;
using seat_parts::kProcessSection;
using seat_parts::kPullOnlyWake;
using seat_parts::kReadyTimeout;
using seat_parts::kReceiptReplayWindow;
using seat_parts::kReceiptsSaveEvery;
using seat_parts::kReceiptsSection;
using seat_parts::kRecentResults;
using seat_parts::kReconcileAttempts;
using seat_parts::kReconcileMaxBackoff;
using seat_parts::kRefusalLogInterval;
using seat_parts::kRoomWait;
using seat_parts::kSessionSection;
using seat_parts::kWorkEventEvery;
using seat_parts::milliseconds;
using seat_parts::TimePoint;

}  // namespace shoal::daemon
