// The local mesh on this machine: what `shoal up`, `shoal down` and `shoal status` act on.
//
// `shoal up` first makes sure the space's mesh secret exists (mesh_secret.h) and its data and
// state directories are owner-only; it then starts a supervisor process (this same binary, `shoal
// up --foreground`) in its own session, so it outlives the terminal. The supervisor starts
// nats-server with JetStream on 127.0.0.1 (the preferred port, else the next free one) with its
// store under MeshPaths::brokerStoreDir, admitting only the holder of the mesh secret, writes the
// MeshRecord once the broker accepts connections, restarts the broker if it dies (backoff 0.5 s
// doubling to 8 s; more than 5 crashes in 60 s gives up), runs the space's planes (`shoal serve`)
// and seat daemon (`shoal daemon run`) beside it, restarted the same way (if one crash-loops the
// broker stays up), and on SIGTERM/SIGINT stops the daemon, then the planes, then the broker, and
// removes the record. A later issue adds the dashboard to the same supervisor.
//
// In auth mode (auth_mode.h) the broker runs in operator mode trusting the space's authority
// instead of admitting the mesh secret, the supervisor mints the planes' credentials before
// each start of `shoal serve` and renews them at half their lifetime, and the seat daemon is
// not started (seats' credentials are still planned).
//
// `shoal down` only stops what a supervisor started: it checks the recorded pids' command
// lines before signalling anything, so a reused pid or a foreign broker is never touched.
//
// Thread safety: the functions are called from the CLI's one thread.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "supervisor/auth_mode.h"
#include "supervisor/mesh_paths.h"
#include "supervisor/mesh_record.h"

namespace shoal::supervisor {

struct UpOptions {
  std::string host = "127.0.0.1";
  int preferredPort = 4222;  // 4222 or the next free port
  std::string natsServer;    // empty: find nats-server on PATH or in /usr/sbin
  bool withPlanes = true;    // also run `shoal serve` (the manager plane) for the space
  bool withDaemon = true;    // also run `shoal daemon run` (the seats) for the space
  // Auth mode (auth_mode.h): the broker in operator mode trusting the space's authority, each
  // plane under its own credential. A space that has its authority runs in auth mode anyway.
  bool auth = false;
  // Auth mode: the broker requires TLS with the space's own CA (broker_tls.h). On whenever auth
  // mode listens beyond loopback, and kept once a space has its CA.
  bool tls = false;
  // Auth mode: how long the planes' credentials live; they are renewed at half of it.
  std::chrono::seconds planeCredentialLifetime{kPlaneCredentialLifetime};
  std::chrono::milliseconds readyTimeout{20'000};
};

// Open mode listens on loopback only: 127.0.0.0/8, ::1 or `localhost`. Any other host is
// kFailedPrecondition `open-mode-off-loopback` — the broker would be reachable from the network
// with one shared secret, no per-principal credentials and no TLS. runSupervisor() and
// startDetached() check it first. Auth mode may listen anywhere, and beyond loopback it always
// runs with TLS; TLS without auth mode is refused (`tls-needs-auth`).
Status checkOpenModeHost(std::string_view host);

// Runs the supervisor in this process until SIGTERM or SIGINT; `onReady` is called once the
// broker accepts connections and the record is written. Returns OK on a requested stop, an
// error if the broker cannot be started or keeps crashing.
Status runSupervisor(const MeshPaths& paths, const UpOptions& options,
                     const std::function<void(const MeshRecord&)>& onReady);

struct UpOutcome {
  MeshRecord record;
  bool alreadyRunning = false;  // a live supervisor for this space was found; nothing started
  bool replacedStaleRecord = false;
  bool auth = false;  // the space runs in auth mode
  // With planes: the manager plane answered its liveness probe `bound` before `up` returned.
  bool managerBound = false;
  // With the daemon: its control socket answered before `up` returned.
  bool daemonReady = false;
};

// `shoal up`: finds a running local mesh, or detaches a new supervisor and waits until its
// broker is ready. Fails with the tail of the supervisor's log if it does not come up.
Result<UpOutcome> startDetached(const MeshPaths& paths, const UpOptions& options);

struct DownOutcome {
  bool wasRunning = false;          // a live supervisor was stopped
  bool removedStaleRecord = false;  // the record named processes that were already gone
  MeshRecord record;
};

// `shoal down`: stops the supervisor (which stops its broker) and waits until both are gone.
// With `force`, also removes a record that cannot be read.
Result<DownOutcome> stopMesh(const MeshPaths& paths, bool force,
                             std::chrono::milliseconds timeout = std::chrono::seconds(15));

// Whether `record`'s supervisor is alive and is a `shoal up` supervisor of `space` (its command
// line is checked, so a reused pid does not count).
bool isLiveSupervisor(const MeshRecord& record, const std::string& space);

// The nats-server binary: `configured` if non-empty, else PATH, else /usr/sbin/nats-server.
// kFailedPrecondition (reason `nats-server-missing`) naming scripts/bootstrap otherwise.
Result<std::string> findNatsServer(const std::string& configured);

}  // namespace shoal::supervisor
