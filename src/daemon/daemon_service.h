// DaemonService: the running `shoal daemon` of one space on this machine — today the seat
// registry behind the control socket; the seats' runtimes join it as issue 5 lands.
//
// It connects to the space's broker, opens the seat-profile store, and serves the control
// socket (control_socket.h) with these ops:
//   status                          {"space","pid","url","seats":N}
//   seat.add   {profile fields}     mints the seat's lifecycle uid, creates the profile
//                                   → {"revision",…,"profile":{…}}  (seat-exists if present)
//   seat.list                       [{"revision","profile"}] sorted by id
//   seat.show  {"id"}               {"revision","profile"}
//   seat.rm    {"id","revision"?}   removes it (CAS on `revision`, or on the revision read now)
// Unknown ops and unknown argument keys are refused with a named error.
//
// Thread safety: requests run one at a time on the control socket's thread.
// Lifetime: the destructor stops serving, then closes the broker connection.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/result.h"
#include "daemon/control_socket.h"
#include "daemon/profile_store.h"
#include "transport/connection.h"
#include "transport/jetstream.h"

namespace shoal::daemon {

struct DaemonOptions {
  std::string space = "main";
  std::string url;         // the broker
  std::string socketPath;  // empty: controlSocketPath(space)
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

  DaemonOptions options_;
  std::unique_ptr<transport::Connection> conn_;
  std::optional<transport::JetStream> js_;
  std::optional<ProfileStore> store_;
  std::unique_ptr<ControlServer> server_;
};

}  // namespace shoal::daemon
