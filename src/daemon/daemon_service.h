// DaemonService: the running `shoal daemon` of one space on this machine: the seat registry
// behind the control socket, and the seats it runs.
//
// It connects to the space's broker, opens the seat-profile store, starts every registered
// seat whose runtime is built (today `exec`: ExecSeat; a seat of another runtime is listed as
// not running, with the reason), and serves the control socket (control_socket.h):
//   status                          {"space","pid","url","seats":[{"id","name","runtime",
//                                    "running","admitted","surfaced","failed","receipts",
//                                    "note"}]}
//   seat.add   {profile fields}     mints the seat's lifecycle uid, creates the profile, starts
//                                   the seat → {"revision","profile":{…},"running","note"}
//   seat.list                       [{"revision","profile"}] sorted by id
//   seat.show  {"id"}               {"revision","profile"}
//   seat.start {"id"} / seat.stop {"id"}   → {"id","running","note"}
//   seat.rm    {"id","revision"?}   stops the seat, removes it (CAS on `revision`, or on the
//                                   revision read now)
// Unknown ops and unknown argument keys are refused with a named error.
//
// Thread safety: requests run one at a time on the control socket's thread.
// Lifetime: the destructor stops serving, then closes the broker connection.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/result.h"
#include "daemon/control_socket.h"
#include "daemon/exec_seat.h"
#include "daemon/profile_store.h"
#include "transport/connection.h"
#include "transport/jetstream.h"

namespace shoal::daemon {

struct DaemonOptions {
  std::string space = "main";
  std::string url;         // the broker
  std::string socketPath;  // empty: controlSocketPath(space)
  bool runSeats = true;    // false: registry only
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

 private:
  explicit DaemonService(DaemonOptions options) : options_(std::move(options)) {}

  // Starts `profile`'s seat if it is not running; the note says why it does not run.
  std::string startSeat(const SeatProfile& profile);
  std::string seatsJson();

  DaemonOptions options_;
  std::map<std::string, std::unique_ptr<ExecSeat>> seats_;  // by id; control thread only
  std::map<std::string, std::string> notes_;                // by id: why a seat is not running
  std::unique_ptr<transport::Connection> conn_;
  std::optional<transport::JetStream> js_;
  std::optional<ProfileStore> store_;
  std::unique_ptr<ControlServer> server_;
};

}  // namespace shoal::daemon
