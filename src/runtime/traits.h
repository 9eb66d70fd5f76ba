// RuntimeTraits: what one runtime's protocol can do — how its surfaced boundary is proven,
// whether it has a readiness handshake, takes input mid-turn, can be asked what it read, can
// compact or be interrupted, and resumes sessions. Each driver declares its own (the
// `k*Traits` constants next to it); runtimeTraits() (launch.h) answers for a kind before any
// Process exists, and RuntimeDriver::traits() for a running one — the same value.
#pragma once

namespace shoal::runtime {

// What a runtime's protocol can do; fixed for a driver's life.
struct RuntimeTraits {
  // True: a complete write is the surfaced boundary (raw stdin). False: the runtime
  // acknowledges each handoff (kAck) and ends turns (kTurnEnded).
  bool surfacedOnWrite = false;
  // The surfaced boundary is the runtime reading the handoff's last byte from its stdin: the
  // driver reports kAck (`detail` "stdin-read") once the pipe holds none of its bytes, and a
  // handoff still unread when the Process ends fails (`runtime-exited-before-reading`). No
  // turns: the seat may hand the next block over at once.
  bool surfacedOnRead = false;
  // With surfacedOnRead: reading is not enough — the program acknowledges each message it
  // handled (`ack <shown id>` on $SHOAL_ACK_FD, exec/driver.cc), and only that surfaces it
  // (kAck with `ackedId`, detail "runtime-ack"); a message unacknowledged when the Process
  // ends fails `runtime-exited-before-ack`.
  bool acksMessages = false;
  // No handoff before kReady (the driver started a readiness handshake at launch).
  bool needsReady = false;
  // A handoff may be written while a turn runs (Codex `turn/steer`); it is acknowledged on its
  // own and ends with the turn. False: the seat waits for the turn's end.
  bool steersMidTurn = false;
  // The runtime can be asked what it read (reconcile()); its answer is kReconciled.
  bool reconciles = false;
  // The runtime can compact its session's context on request (compact()).
  bool compacts = false;
  // The running turn can be interrupted on request (interrupt()).
  bool interrupts = false;
  // The runtime reports a session the seat can resume in a later generation.
  bool resumesSessions = false;
};

}  // namespace shoal::runtime
