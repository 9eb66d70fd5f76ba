// DaemonService: the running `shoal daemon` of one space on this machine: the seat registry
// behind the control socket, and the seats it runs.
//
// It connects to the space's broker, opens the seat-profile store with this machine's sealing
// key (profile_seal.h), opens every registered seat whose profile it sealed as the profile's
// `state` says (running: a Seat with its runtime; sleeping: a Seat without one; stopped: not
// opened) — an unsealed, forged or foreign profile is never run, its row's `note` says why —
// and serves the control socket (control_socket.h). A seat that failed to open for a
// transient reason (the manager not serving yet, the broker reconnecting: kUnavailable,
// kDeadlineExceeded, kAborted, `space-not-provisioned`) is opened again on the control thread
// with backoff (0.5 s doubling to 30 s) until it opens or its desired state changes; its row
// carries `openFailure` {"reason","message","attempts","retryInMs"} meanwhile. Ops:
//   status                          {"space","pid","url","seats":[{"id","name","runtime",
//                                    "desired","state","running","pid","generation","queued",
//                                    "inflight","admitted","surfaced","failed","receipts",
//                                    "launches","unexpectedExits","coldStarts","turns",
//                                    "inboxClaimed","inboxLeases","awaitingReply","replied",
//                                    "noVisibleReply","replyFailed","direct",
//                                    "directRequeued","note","receiptsOwed",
//                                    "surfacedBy":{"runtime-ack","stdin-read","stdin-write",
//                                    "inbox-page","reconciled"},
//                                    "recentResults":[{"message","target","result",
//                                    "replyId"?,"reason"?,"at"}],"channelModes":{…},
//                                    "session"?:{"id","resumeSafe"},
//                                    "compaction"?:{"state","startedAt","endedAt"?,
//                                    "detail"?}}]}
//   seat.add   {profile fields}     mints the seat's lifecycle uid, creates the profile, opens
//                                   the seat → {"revision","profile":{…},"running","note"}
//   seat.list                       [{"revision","profile","seal"}] sorted by id; `seal` is
//                                   sealed | unsealed | foreign | forged
//   seat.trust {"id"}               seals the stored profile as it is (the owner vouches for
//                                   its command after `seat show`), then opens it →
//                                   {"revision","profile","seal","note"}
//   seat.show  {"id"}               {"revision","profile","seat":{status row}}
//   seat.start|sleep|stop {"id"}    writes the profile's state (CAS on the revision read now),
//                                   then runs / sleeps / stops the seat (each a strong
//                                   completion) → the seat's status row (as in `status`)
//   seat.rm    {"id","revision"?}   stops the seat, removes it (CAS on `revision`, or on the
//                                   revision read now)
//   seat.compact {"id"}             starts compacting a running seat's session (Seat::compact)
//                                   → its status row; the end shows in `compaction`
//   seat.interrupt {"id"}           asks a running seat's runtime to stop its turn
//                                   (Seat::interrupt) → its status row from before asking
//   seat.mcp   {"id"}               where the open seat's MCP client config is →
//                                   {"id","config":"<cwd>/.shoal/mcp.json"}; a seat that is
//                                   not open (stopped, registry-only daemon, failed to open)
//                                   is refused with `seat-not-running`
// Unknown ops and unknown argument keys are refused with a named error.
//
// Thread safety: requests run one at a time on the control socket's thread.
// Lifetime: the destructor stops serving, then closes the broker connection.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "base/result.h"
#include "daemon/control_socket.h"
#include "daemon/machine_claim.h"
#include "daemon/own_credential.h"
#include "daemon/profile_store.h"
#include "daemon/seat.h"
#include "daemon/seat_credentials.h"
#include "transport/connection.h"
#include "transport/jetstream.h"

namespace shoal::daemon {

struct DaemonOptions {
  std::string space = "main";
  std::string url;           // the broker
  std::string nkeySeedFile;  // the broker credential (empty: none)
  std::string socketPath;    // empty: controlSocketPath(space)
  // The seat-profile sealing key (owner-only; made on first use). Required.
  std::string profileKeyFile;
  bool runSeats = true;  // false: registry only
  // The machine this daemon runs seats for (seat profiles name theirs): it opens only its own
  // and lists the others as elsewhere. Empty: every profile (tests of one daemon).
  std::string machine;
  // Auth mode: the daemon's own `.creds` (its daemon profile: the seat bucket and the
  // credential rail, no application traffic), the owner and machine it runs seats for, and
  // the owner-only directory its seats' credentials are written to (seat_credentials.h).
  // Empty credentialsFile: open mode.
  std::string credentialsFile;
  // A broker that requires TLS: the CA certificate to trust (every seat's connections too).
  std::string tlsCaFile;
  DaemonIdentity identity;
  std::string seatCredsDir;
  // A joined machine (supervisor/space_join.h): the daemon renews its own credential over the
  // manager's rail (own_credential.h); on the authority's machine the supervisor re-mints it.
  bool renewsOwnCredential = false;
};

class DaemonService {
 public:
  static Result<std::unique_ptr<DaemonService>> start(DaemonOptions options);
  ~DaemonService();
  DaemonService(const DaemonService&) = delete;
  DaemonService& operator=(const DaemonService&) = delete;

  const std::string& socketPath() const { return server_->path(); }

  // One control request, as the socket would run it (exposed for tests).
  Result<std::string> handle(const ControlRequest& request);

  // Stops serving, then stops every seat concurrently within one total deadline (seed 004
  // §2.2 StopForShutdown). False when some seat did not finish in time: its runtime's process
  // group is then SIGKILLed and the caller should exit without destroying the service.
  bool shutdown(std::chrono::milliseconds deadline = std::chrono::milliseconds(5000));

 private:
  explicit DaemonService(DaemonOptions options) : options_(std::move(options)) {}

  // Opens the seat of `snapshot` as its state says (if not open and sealed here); the note says
  // why it does not run. A transient failure schedules a retry.
  std::string openSeat(const ProfileSnapshot& snapshot);
  // Seat::open with this daemon's options (and, in auth mode, the seat's own credential).
  Result<std::unique_ptr<Seat>> startSeat(const SeatProfile& profile);
  // Auth mode: kPermissionDenied `not-this-owner` for a seat of another owner.
  Status checkSeatCredentialsOwner(const SeatProfile& profile) const;
  // A new seat's cwd: an existing directory (or made now when `create`), and no other seat's —
  // two seats in one cwd would share one journal file (`bad-cwd`, `cwd-in-use`).
  Status checkSeatCwd(const SeatProfile& profile, bool create);
  // The control thread's tick: opens again the seats whose retry is due, and every 2 s reads
  // the profiles again, so a seat added, moved or removed through another machine's daemon
  // is opened or closed here.
  void retryOpens();
  void tendMachineClaim();  // renews, or after `machine-lost` retakes, the machine's name
  void rescanProfiles();
  // The governing profile of every seat, after tidyRecords.
  Result<std::vector<ProfileSnapshot>> tidiedProfiles();
  // Keeps this machine's records in order: a legacy record it sealed moves under its prefix,
  // and an offer of its own that the named machine has taken (that machine now keeps a record
  // naming itself) is removed. Whether any record changed.
  bool tidyRecords(const std::vector<ProfileSnapshot>& records);
  // Whether `profile` runs on another machine than this daemon's.
  bool runsElsewhere(const SeatProfile& profile) const;
  // OK when this daemon may change the seat: it runs here and its profile is sealed here;
  // else `seat-elsewhere` (ending with `remedy`) or the seal's refusal.
  Status changeableHere(const ProfileSnapshot& s, std::string_view remedy) const;
  Result<std::string> moveSeat(const wire::Principal& id, const std::string& machine);
  // `shoal seat channels`: the profile's channels with `add` joined and `remove` left. An open
  // seat reopens with them (in auth mode its credential is minted for exactly these), so it is
  // refused `seat-busy` while a turn runs or a delivery is in flight.
  Result<std::string> setChannels(const wire::Principal& id, const std::vector<std::string>& add,
                                  const std::vector<std::string>& remove);
  // Seats whose journal is poisoned are closed and opened again (backoff 0.5 s doubling to
  // 30 s) until the journal can be written: a healed disk heals the seat.
  void healPoisonedSeats();
  Result<std::string> setState(const wire::Principal& id, DesiredState state);
  std::string seatJson(const SeatProfile& profile);
  std::string seatsJson();

  DaemonOptions options_;
  std::map<std::string, std::unique_ptr<Seat>> seats_;  // by id; control thread only
  std::map<std::string, std::string> notes_;            // by id: why a seat is not running
  struct PendingOpen {
    int attempts = 0;
    std::chrono::steady_clock::time_point nextAt;
    Status last;
  };
  std::map<std::string, PendingOpen> heals_;      // by id: seats with a poisoned journal
  std::map<std::string, PendingOpen> retries_;    // by id: transient open failures; control thread
  std::map<std::string, uint64_t> seenRevision_;  // by id: the profile revision acted on
  std::set<std::string> tidied_;                  // records tidied once: "<key>@<revision>"
  std::chrono::steady_clock::time_point nextRescan_{};
  std::unique_ptr<transport::Connection> conn_;
  std::unique_ptr<SeatCredentials> seatCreds_;    // auth mode only
  std::unique_ptr<OwnCredential> ownCredential_;  // a joined machine only
  std::unique_ptr<MachineClaim> claim_;           // when options_.machine is set
  bool claimLost_ = false;  // runs no seats until MachineClaim::retake succeeds
  std::optional<transport::JetStream> js_;
  std::optional<ProfileStore> store_;
  std::unique_ptr<ControlServer> server_;
};

}  // namespace shoal::daemon
