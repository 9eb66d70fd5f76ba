// ExecSeat: one running seat whose runtime is the `exec` kind — any program that reads its
// prompts on stdin — with journal-backed admission and a surfaced receipt per delivery
// (issue 5, first vertical slice; seed 004 §2, §2.1 raw-stdin rules).
//
// The path of one message:
//   1. the seat's mesh::Endpoint fetches it from the seat's DM durable (or its role's svc
//      durable, or a joined channel);
//   2. admission: the journal commits it `queued` (or recognises the id as already owned /
//      terminal) and only then does the handler return kAccepted, so the broker's ack follows
//      durable ownership; a journal failure naks it for later;
//   3. dispatch (one thread): every queued owner, oldest first, is rendered into one delivery
//      block (presentation.h); all of them become inflight(dispatching) in one transaction
//      BEFORE the first byte is written; then the block is written to the runtime's stdin:
//        - every byte written  → surfaced (the raw-stdin boundary), and a receipt is published;
//        - zero bytes written  → requeued (the runtime never saw it), the runtime is retired;
//        - a partial write     → terminal `failed` (ambiguous: it may have read half), never
//                                replayed; the runtime is retired;
//   4. items the block could not hold stay queued for the next block.
// On start, inflight owners left by a previous daemon become terminal `failed`
// (`no-read-reconciliation`): a raw-stdin runtime cannot say whether it read them, and a blind
// replay could run the work twice.
//
// Receipts: `cotal.<space>.rcpt.<sender o>.<sender a>.<seat o>.<seat a>` (stored in
// WAKE_<space>) with `{"id","recipient","surfacedAt"}` and Nats-Msg-Id `rcpt-<id>`.
//
// The runtime's stdout is appended to `<cwd>/.shoal/runtime.log` (stderr too). A runtime that
// exits stops dispatch; queued owners stay durable for the next start.
//
// Not built yet (issue 5): Process generations and restore, sleeping seats and cold start,
// busy-turn continuation, the Claude driver, lifecycle events on the wake stream.
//
// Thread safety: stop() and the accessors may be called from any thread.
// Lifetime: the destructor stops the seat (graceful presence leave, runtime terminated).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/result.h"
#include "daemon/seat_profile.h"
#include "journal/ownership_journal.h"
#include "mesh/endpoint.h"
#include "runtime/child_process.h"

namespace shoal::daemon {

struct ExecSeatOptions {
  std::string url;    // the broker
  std::string space;  // the seat's space
};

struct ExecSeatCounters {
  uint64_t admitted = 0;
  uint64_t surfaced = 0;
  uint64_t failed = 0;
  uint64_t receipts = 0;
};

class ExecSeat {
 public:
  static Result<std::unique_ptr<ExecSeat>> start(const SeatProfile& profile,
                                                 const ExecSeatOptions& options);
  ~ExecSeat();
  ExecSeat(const ExecSeat&) = delete;
  ExecSeat& operator=(const ExecSeat&) = delete;

  // Stops dispatch, leaves the mesh, terminates the runtime. Idempotent.
  void stop();

  const SeatProfile& profile() const { return profile_; }
  std::string runtimeLogPath() const;
  ExecSeatCounters counters() const;
  bool runtimeRunning() const { return runtimeUp_.load(); }

 private:
  ExecSeat(SeatProfile profile, ExecSeatOptions options)
      : profile_(std::move(profile)), options_(std::move(options)) {}
  Status open();
  mesh::HandlerVerdict admit(const mesh::Delivery& delivery);
  void dispatchLoop();
  // One block: false when the runtime is gone and dispatch must stop.
  bool dispatchOnce();
  void publishReceipt(const journal::OwnershipRecord& record, int64_t surfacedAtMs);
  void pumpOutput();

  const SeatProfile profile_;
  const ExecSeatOptions options_;
  std::unique_ptr<journal::OwnershipJournal> journal_;
  std::unique_ptr<runtime::ChildProcess> child_;
  std::unique_ptr<mesh::Endpoint> endpoint_;

  std::mutex mu_;
  std::condition_variable wake_;
  bool pending_ = false;  // guarded by mu_: a delivery was admitted since the last dispatch
  std::atomic<bool> stopping_{false};
  std::atomic<bool> runtimeUp_{false};
  std::thread dispatcher_;
  std::thread outputPump_;

  mutable std::mutex countersMu_;
  ExecSeatCounters counters_;
};

}  // namespace shoal::daemon
