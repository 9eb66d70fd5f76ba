#include "supervisor/local_mesh.h"

#include <cerrno>
#include <optional>
#include <thread>

#include <arpa/inet.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/log.h"
#include "base/owner_only.h"
#include "base/process_info.h"
#include "base/restart_policy.h"
#include "base/subprocess.h"
#include "mesh/liveness_probe.h"
#include "mesh/operator_identity.h"
#include "supervisor/auth_mode.h"
#include "supervisor/broker_tls.h"
#include "supervisor/mesh_secret.h"
#include "supervisor/user_identity.h"
#include "transport/connection.h"
#include "transport/local_broker.h"
#include "wire/liveness.h"

namespace shoal::supervisor {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kPollInterval{100};

// Waits up to `timeout` for one of the blocked stop signals. Returns the signal or 0.
int waitForStopSignal(const sigset_t& set, milliseconds timeout) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  ts.tv_nsec = static_cast<long>((timeout.count() % 1000) * 1'000'000);
  for (;;) {
    int sig = ::sigtimedwait(&set, nullptr, &ts);
    if (sig > 0) return sig;
    if (errno == EINTR) continue;
    return 0;  // EAGAIN: timed out
  }
}

bool argsContain(const std::vector<std::string>& args, std::string_view needle) {
  for (const auto& a : args) {
    if (a.find(needle) != std::string::npos) return true;
  }
  return false;
}

// Is `pid` a supervisor started by `shoal up` for this space?
bool isOurSupervisor(pid_t pid, const std::string& space) {
  auto args = processCommandLine(pid);
  if (!args.isOk() || args->size() < 3) return false;
  return argsContain(*args, "--foreground") && argsContain(*args, "up") &&
         (argsContain(*args, space) || !argsContain(*args, "--space"));
}

// Is `pid` a nats-server using this store directory?
bool isOurBroker(pid_t pid, const std::string& storeDir) {
  auto args = processCommandLine(pid);
  if (!args.isOk() || args->empty()) return false;
  return (*args)[0].find("nats-server") != std::string::npos && argsContain(*args, storeDir);
}

// Is `pid` the seat daemon (`shoal daemon run`) a supervisor started for this space?
bool isOurDaemon(pid_t pid, const std::string& space) {
  auto args = processCommandLine(pid);
  if (!args.isOk() || args->size() < 3) return false;
  return (*args)[1] == "daemon" && (*args)[2] == "run" && argsContain(*args, "--space") &&
         argsContain(*args, space);
}

// Is `pid` the planes process (`shoal serve`) a supervisor started for this space?
bool isOurPlanes(pid_t pid, const std::string& space) {
  auto args = processCommandLine(pid);
  if (!args.isOk() || args->size() < 4) return false;
  return (*args)[1] == "serve" && argsContain(*args, "--space") && argsContain(*args, space);
}

std::string tailOf(const std::string& path, size_t maxBytes = 2000) {
  auto text = FileSystem::posix().readFile(path);
  if (!text.isOk()) return "";
  if (text->size() > maxBytes) return "…" + text->substr(text->size() - maxBytes);
  return *text;
}

// Polls the seat daemon's control socket until it accepts a connection or `timeout` passes.
bool waitForDaemon(const MeshPaths& paths, milliseconds timeout) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (paths.controlSocket.size() >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, paths.controlSocket.c_str(), paths.controlSocket.size() + 1);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool up = fd >= 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    if (fd >= 0) ::close(fd);
    if (up) return true;
    std::this_thread::sleep_for(kPollInterval);
  }
  return false;
}

// Polls the manager plane's liveness, then the delivery plane's, until both answer `bound` or
// `timeout` passes; true when the manager is bound (the delivery plane may still be waiting
// out a crashed holder's lease: `shoal status` shows it).
bool waitForManager(const MeshPaths& paths, const MeshRecord& record, milliseconds timeout) {
  transport::ConnectOptions options;
  options.servers = {record.url};
  options.nkeySeedFile = record.secretFile;
  options.tlsCaFile = record.caFile;
  options.name = "shoal up";
  options.allowReconnect = false;
  wire::Principal caller = mesh::localOperator().principal;
  if (record.mode == "auth") {
    auto credential = cliCredential(paths);
    if (!credential.isOk()) return false;
    options.credentialsFile = credential->credsFile;
    options.inboxPrefix = credential->inboxPrefix;
    caller = credential->caller;
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  // An operator-mode broker listens a moment before its preloaded accounts admit users: a
  // refused first connect is tried again until the deadline.
  auto conn = transport::Connection::connect(options);
  while (!conn.isOk() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kPollInterval);
    conn = transport::Connection::connect(options);
  }
  if (!conn.isOk()) return false;
  bool manager = false;
  while (std::chrono::steady_clock::now() < deadline) {
    const char* plane = manager ? "delivery" : "manager";
    auto verdict = mesh::probeLiveness(**conn, record.space, caller, plane, milliseconds(500));
    if (verdict.isOk() && verdict->responder == wire::Responder::kBound) {
      if (manager) return true;
      manager = true;
      continue;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  return manager;
}

bool waitUntilGone(pid_t pid, milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (processExists(pid)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPollInterval);
  }
  return true;
}

bool waitUntilGoneOrKill(pid_t pid, milliseconds timeout) {
  if (waitUntilGone(pid, timeout)) return true;
  (void)signalProcess(pid, SIGKILL);
  return waitUntilGone(pid, milliseconds(2'000));
}

// A supervisor that died (SIGKILL, OOM) leaves its planes and broker running. Stops the ones
// whose command lines prove they are this space's; returns whether any was found.
bool stopOrphans(const MeshRecord& record, const std::string& space, milliseconds timeout) {
  bool found = false;
  auto daemonPid = static_cast<pid_t>(record.daemonPid);
  if (isOurDaemon(daemonPid, space)) {
    found = true;
    (void)signalProcess(daemonPid, SIGTERM);
    (void)waitUntilGoneOrKill(daemonPid, timeout);
  }
  auto planesPid = static_cast<pid_t>(record.servePid);
  if (isOurPlanes(planesPid, space)) {
    found = true;
    (void)signalProcess(planesPid, SIGTERM);
    (void)waitUntilGoneOrKill(planesPid, timeout);
  }
  auto brokerPid = static_cast<pid_t>(record.brokerPid);
  if (isOurBroker(brokerPid, record.storeDir)) {
    found = true;
    (void)signalProcess(brokerPid, SIGTERM);
    (void)waitUntilGoneOrKill(brokerPid, timeout);
  }
  return found;
}

// The space's data and state directories, owner-only: the broker's store holds every message of
// the space, the state dir the logs, the registry and the secrets.
Status prepareOwnerOnlyDirs(const MeshPaths& paths) {
  for (const std::string& dir :
       {paths.dataDir, paths.brokerStoreDir, paths.stateDir, paths.logDir, paths.secretsDir}) {
    Status st = ensureOwnerOnlyDir(dir);
    if (!st.isOk()) return st.withContext("preparing " + dir);
  }
  return Status::ok();
}

}  // namespace

bool isLiveSupervisor(const MeshRecord& record, const std::string& space) {
  return isOurSupervisor(static_cast<pid_t>(record.supervisorPid), space);
}

Result<std::string> findNatsServer(const std::string& configured) {
  return transport::LocalBroker::findServerBinary(configured);
}

namespace {

// A process the supervisor runs beside the broker — the planes (`shoal serve`) and the seat
// daemon (`shoal daemon run`) — restarted like the broker. Each is optional to the mesh: if one
// crash-loops the broker stays up and `shoal status` shows what is missing.
class ServiceProcess {
 public:
  // `beforeStart` (optional) runs before every start; its failure counts as a failed start.
  ServiceProcess(std::string name, std::vector<std::string> args, std::string logPath,
                 std::string space, std::function<Status()> beforeStart = {})
      : name_(std::move(name)),
        args_(std::move(args)),
        logPath_(std::move(logPath)),
        space_(std::move(space)),
        beforeStart_(std::move(beforeStart)) {}

  Status start() {
    if (beforeStart_) SHOAL_RETURN_IF_ERROR(beforeStart_());
    SHOAL_ASSIGN_OR_RETURN(std::string self, selfExecutablePath());
    SpawnOptions spawn;
    spawn.argv = {self};
    spawn.argv.insert(spawn.argv.end(), args_.begin(), args_.end());
    spawn.stdoutTarget = StdioTarget::appendTo(logPath_);
    spawn.stderrTarget = StdioTarget::appendTo(logPath_);
    auto child = Subprocess::spawn(spawn);
    if (!child.isOk()) return child.status();
    process_.emplace(std::move(child).value());
    policy_.started(std::chrono::steady_clock::now());
    return Status::ok();
  }

  // Reaps a dead process and restarts it when its backoff is due. Returns the pid to record
  // (0 while down or given up).
  pid_t tend() {
    auto now = std::chrono::steady_clock::now();
    if (gaveUp_) return 0;
    if (process_ && process_->running()) {
      auto exited = process_->poll();
      if (!exited.isOk() || !exited->has_value()) return process_->pid();
      log::warn("mesh {}: {} exited ({}); log: {}", space_, name_, (*exited)->toString(), logPath_);
      process_.reset();
      if (!policy_.crashed(now)) {
        log::error("mesh {}: {} keeps crashing; not restarting it (see {})", space_, name_,
                   logPath_);
        gaveUp_ = true;
        return 0;
      }
    }
    if (!process_ && now >= policy_.nextStartAt()) {
      Status st = start();
      if (!st.isOk()) {
        log::warn("mesh {}: starting {}: {}", space_, name_, st.toString());
        if (!policy_.crashed(now, /*failedToStart=*/true)) gaveUp_ = true;
        return 0;
      }
      return process_->pid();
    }
    return 0;
  }

  void stop(std::chrono::milliseconds grace) {
    if (process_ && process_->running()) (void)process_->terminate(grace);
  }

 private:
  const std::string name_;
  const std::vector<std::string> args_;
  const std::string logPath_;
  const std::string space_;
  const std::function<Status()> beforeStart_;
  std::optional<Subprocess> process_;
  RestartPolicy policy_;
  bool gaveUp_ = false;
};

// In auth mode, the planes' and the seat daemon's credentials: each minted before each start
// of its process and all renewed when half their lifetime has passed (the files are replaced
// in place; nats.c reads them at every reconnect, and the broker closes a connection whose
// credential expires).
class PlaneCredentials {
 public:
  PlaneCredentials(const planes::CredentialAuthority& authority, const MeshPaths& paths,
                   std::chrono::seconds lifetime)
      : authority_(authority), paths_(paths), lifetime_(lifetime) {}

  // Before each start of `shoal serve`: fresh inboxes (a new process connects afresh).
  Status mint() {
    SHOAL_ASSIGN_OR_RETURN(managerConnId_, newPlaneConnId(wire::Plane::kManager));
    SHOAL_ASSIGN_OR_RETURN(deliveryConnId_, newPlaneConnId(wire::Plane::kDelivery));
    return renew();
  }

  // Before each start of `shoal daemon run`: the daemon of this person on this machine.
  Status mintDaemon(const std::string& owner, const std::string& machine) {
    owner_ = owner;
    machine_ = machine;
    SHOAL_ASSIGN_OR_RETURN(daemonConnId_, newDaemonConnId());
    return renew();
  }

  // The same inboxes, a new lifetime: the running processes pick the files up at their
  // reconnect.
  Status renew() {
    int64_t earliest = 0;
    auto keep = [&earliest](int64_t at) { earliest = earliest == 0 ? at : std::min(earliest, at); };
    if (!managerConnId_.empty()) {
      SHOAL_ASSIGN_OR_RETURN(int64_t manager,
                             mintPlaneCredential(authority_, paths_, wire::Plane::kManager,
                                                 managerConnId_, lifetime_));
      SHOAL_ASSIGN_OR_RETURN(int64_t delivery,
                             mintPlaneCredential(authority_, paths_, wire::Plane::kDelivery,
                                                 deliveryConnId_, lifetime_));
      keep(manager);
      keep(delivery);
    }
    if (!daemonConnId_.empty()) {
      SHOAL_ASSIGN_OR_RETURN(
          int64_t daemon,
          mintDaemonCredential(authority_, paths_, owner_, machine_, daemonConnId_, lifetime_));
      keep(daemon);
    }
    expiresAt_ = earliest;
    return Status::ok();
  }

  void renewIfDue() {
    const int64_t now = Clock::real().wallMs() / 1000;
    const int64_t half = lifetime_.count() / 2;
    if (expiresAt_ == 0 || now < expiresAt_ - half) return;
    Status st = renew();
    if (st.isOk()) {
      log::info("mesh {}: renewed the planes' and the daemon's credentials", paths_.space);
    } else {
      log::warn("mesh {}: renewing the planes' and the daemon's credentials: {}", paths_.space,
                st.toString());
    }
  }

 private:
  const planes::CredentialAuthority& authority_;
  const MeshPaths& paths_;
  const std::chrono::seconds lifetime_;
  std::string managerConnId_, deliveryConnId_, daemonConnId_;
  std::string owner_, machine_;
  int64_t expiresAt_ = 0;
};

std::vector<std::string> planesArgs(const MeshPaths& paths, const MeshRecord& record,
                                    std::chrono::seconds credentialLifetime) {
  std::vector<std::string> args{"serve", "--space", paths.space, "--server", record.url};
  if (record.mode == "auth") {
    const AuthPaths auth = authPathsOf(paths);
    args.insert(args.end(), {"--manager-creds", auth.managerCreds, "--delivery-creds",
                             auth.deliveryCreds, "--authority", auth.authorityDir,
                             "--seat-creds-ttl", std::to_string(credentialLifetime.count())});
  } else {
    args.insert(args.end(), {"--nkey", record.secretFile});
  }
  args.insert(args.end(), {"--lease-wait", "45"});
  return args;
}

// Watches the broker (and the planes) until a stop signal or a broker crash loop.
Status superviseUntilStopped(const MeshPaths& paths, const UpOptions& options,
                             const sigset_t& stopSignals, transport::LocalBroker& broker,
                             MeshRecord& record, PlaneCredentials* planeCredentials) {
  FileSystem& fs = FileSystem::posix();
  RestartPolicy brokerPolicy;
  brokerPolicy.started(std::chrono::steady_clock::now());
  std::optional<ServiceProcess> planes;
  if (options.withPlanes) {
    std::function<Status()> mint;
    if (planeCredentials != nullptr) mint = [planeCredentials] { return planeCredentials->mint(); };
    planes.emplace("shoal serve", planesArgs(paths, record, options.planeCredentialLifetime),
                   paths.planesLog, paths.space, std::move(mint));
  }
  std::optional<ServiceProcess> daemon;
  if (options.withDaemon && record.mode == "auth" && planeCredentials != nullptr) {
    auto identity = ensureUserIdentity(paths.secretsDir);
    if (!identity.isOk()) return identity.status().withContext("the seat daemon's owner");
    auto named = thisMachineName(paths);
    if (!named.isOk()) return named.status().withContext("the seat daemon's machine name");
    const std::string owner = identity->owner, machine = *named;
    daemon.emplace(
        "shoal daemon",
        std::vector<std::string>{"daemon", "run", "--space", paths.space, "--server", record.url,
                                 "--creds", authPathsOf(paths).daemonCreds, "--machine", machine},
        paths.daemonLog, paths.space, [planeCredentials, owner, machine] {
          return planeCredentials->mintDaemon(owner, machine);
        });
  } else if (options.withDaemon) {
    daemon.emplace("shoal daemon",
                   std::vector<std::string>{"daemon", "run", "--space", paths.space, "--server",
                                            record.url, "--nkey", record.secretFile},
                   paths.daemonLog, paths.space);
  }
  bool brokerDown = false;
  Status outcome;

  auto rewrite = [&] {
    Status st = writeMeshRecord(fs, paths.registryFile, record);
    if (!st.isOk()) log::warn("mesh {}: {}", paths.space, st.toString());
  };

  for (;;) {
    if (planeCredentials != nullptr) planeCredentials->renewIfDue();
    if (planes && !brokerDown) {
      auto pid = planes->tend();
      if (pid != record.servePid) {
        record.servePid = pid;
        rewrite();
      }
    }
    if (daemon && !brokerDown) {
      auto pid = daemon->tend();
      if (pid != record.daemonPid) {
        record.daemonPid = pid;
        rewrite();
      }
    }
    int sig = waitForStopSignal(stopSignals, kPollInterval * 5);
    if (sig != 0) {
      log::info("mesh {}: signal {}, stopping", paths.space, sig);
      break;
    }
    auto now = std::chrono::steady_clock::now();
    if (!brokerDown && !broker.running()) {
      brokerDown = true;
      log::warn("mesh {}: nats-server exited unexpectedly; log: {}", paths.space, paths.brokerLog);
      if (!brokerPolicy.crashed(now)) {
        outcome =
            unavailable("broker-crash-loop", "nats-server crashed " +
                                                 std::to_string(brokerPolicy.crashesInARow()) +
                                                 " times in a row; see " + paths.brokerLog);
        break;
      }
    }
    if (brokerDown && now >= brokerPolicy.nextStartAt()) {
      Status restarted = broker.restart();
      if (!restarted.isOk()) {
        log::warn("mesh {}: restarting nats-server: {}", paths.space, restarted.toString());
        if (!brokerPolicy.crashed(now, /*failedToStart=*/true)) {
          outcome = restarted.withContext("nats-server keeps failing to start");
          break;
        }
        continue;
      }
      brokerDown = false;
      brokerPolicy.started(now);
      record.brokerPid = broker.pid();
      rewrite();
    }
  }
  // The daemon first (its seats stop their runtimes within its own 5 s deadline), then the
  // planes, then (the caller) the broker.
  if (daemon) daemon->stop(std::chrono::seconds(8));
  if (planes) planes->stop(std::chrono::seconds(5));
  record.daemonPid = 0;
  record.servePid = 0;
  return outcome;
}

}  // namespace

namespace {

bool isLoopbackHost(const std::string& h) {
  in_addr v4{};
  in6_addr v6{};
  return h == "localhost" ||
         (inet_pton(AF_INET, h.c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127) ||
         (inet_pton(AF_INET6, h.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6));
}

struct SpaceMode {
  bool auth = false;
  bool tls = false;
};

// The mode the space runs in (auth_mode.h: once a space has its authority it stays in auth
// mode; broker_tls.h: once it has its CA it keeps TLS) and whether `options.host` is allowed
// in it. Auth mode off loopback always runs with TLS.
Result<SpaceMode> chooseMode(const MeshPaths& paths, const UpOptions& options) {
  SpaceMode mode;
  mode.auth = options.auth || spaceUsesAuth(paths);
  mode.tls = options.tls || spaceUsesTls(paths) || (mode.auth && !isLoopbackHost(options.host));
  if (!mode.auth) {
    if (mode.tls) {
      return failedPrecondition("tls-needs-auth",
                                "TLS is for a space in auth mode (`shoal up --auth --tls`): open "
                                "mode has one shared secret and stays on loopback");
    }
    SHOAL_RETURN_IF_ERROR(checkOpenModeHost(options.host));
    return mode;
  }
  SHOAL_RETURN_IF_ERROR(checkCanEnterAuthMode(paths));
  return mode;
}

}  // namespace

Status checkOpenModeHost(std::string_view host) {
  const std::string h(host);
  if (isLoopbackHost(h)) return Status::ok();
  return failedPrecondition(
      "open-mode-off-loopback",
      "`--host " + h +
          "` would expose the broker beyond this machine, but open mode has one shared secret, "
          "no per-principal credentials and no TLS; it listens on loopback only");
}

Status runSupervisor(const MeshPaths& paths, const UpOptions& options,
                     const std::function<void(const MeshRecord&)>& onReady) {
  SHOAL_ASSIGN_OR_RETURN(const SpaceMode mode, chooseMode(paths, options));
  const bool auth = mode.auth;
  FileSystem& fs = FileSystem::posix();
  SHOAL_ASSIGN_OR_RETURN(std::string binary, findNatsServer(options.natsServer));
  SHOAL_RETURN_IF_ERROR(prepareOwnerOnlyDirs(paths));
  std::optional<MeshSecret> secret;
  std::optional<planes::CredentialAuthority> authority;
  if (auth) {
    SHOAL_ASSIGN_OR_RETURN(authority, openAuthority(paths));
  } else {
    SHOAL_ASSIGN_OR_RETURN(secret, ensureMeshSecret(paths));
  }

  // Stop signals are taken synchronously; block them before any thread exists.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGTERM);
  sigaddset(&stopSignals, SIGINT);
  sigaddset(&stopSignals, SIGHUP);
  ::pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);

  transport::LocalBrokerOptions brokerOptions;
  brokerOptions.serverBinary = binary;
  brokerOptions.host = options.host;
  brokerOptions.preferredPort = options.preferredPort;
  brokerOptions.storeDir = paths.brokerStoreDir;
  brokerOptions.logPath = paths.brokerLog;
  brokerOptions.startTimeout = options.readyTimeout;
  brokerOptions.extraConfig =
      auth ? authority->serverConfig(authPathsOf(paths).resolverDir) : brokerAuthorization(*secret);
  std::string caFile;
  if (mode.tls) {
    SHOAL_ASSIGN_OR_RETURN(BrokerTlsFiles tls, ensureBrokerTls(paths, options.host));
    brokerOptions.tlsCertFile = tls.certFile;
    brokerOptions.tlsKeyFile = tls.keyFile;
    caFile = tls.caFile;
  }

  auto started = transport::LocalBroker::start(brokerOptions);
  if (!started.isOk()) return started.status().withContext("starting nats-server");
  std::unique_ptr<transport::LocalBroker> broker = std::move(started).value();

  MeshRecord record;
  record.space = paths.space;
  record.url = broker->url();
  record.host = options.host;
  record.port = broker->port();
  record.storeDir = paths.brokerStoreDir;
  record.brokerPid = broker->pid();
  record.supervisorPid = ::getpid();
  record.startedAtMs = Clock::real().wallMs();
  record.mode = auth ? "auth" : "open";
  record.secretFile = auth ? std::string() : secret->seedFile;
  record.caFile = caFile;
  Status written = writeMeshRecord(fs, paths.registryFile, record);
  if (!written.isOk()) {
    (void)broker->stop();
    return written.withContext("writing the mesh registry");
  }
  log::info("mesh {} up: broker {} pid {}", paths.space, record.url, record.brokerPid);
  onReady(record);

  std::optional<PlaneCredentials> planeCredentials;
  if (auth) planeCredentials.emplace(*authority, paths, options.planeCredentialLifetime);
  Status outcome = superviseUntilStopped(paths, options, stopSignals, *broker, record,
                                         planeCredentials ? &*planeCredentials : nullptr);

  Status stopped = broker->stop();
  if (!stopped.isOk())
    log::warn("mesh {}: stopping nats-server: {}", paths.space, stopped.toString());
  Status removed = fs.remove(paths.registryFile);
  if (!removed.isOk() && removed.code() != StatusCode::kNotFound) {
    log::warn("mesh {}: {}", paths.space, removed.toString());
  }
  return outcome;
}

Result<UpOutcome> startDetached(const MeshPaths& paths, const UpOptions& options) {
  SHOAL_ASSIGN_OR_RETURN(const SpaceMode mode, chooseMode(paths, options));
  const bool auth = mode.auth;
  FileSystem& fs = FileSystem::posix();
  UpOutcome outcome;

  auto existing = readMeshRecord(fs, paths.registryFile);
  if (existing.isOk()) {
    if (isOurSupervisor(static_cast<pid_t>(existing->supervisorPid), paths.space)) {
      outcome.record = *existing;
      outcome.alreadyRunning = true;
      return outcome;
    }
    // Its supervisor is gone: the record is stale. Orphans would hold the port and the store.
    outcome.replacedStaleRecord = true;
    (void)stopOrphans(*existing, paths.space, milliseconds(10'000));
    (void)fs.remove(paths.registryFile);
  } else if (existing.status().code() != StatusCode::kNotFound) {
    return existing.status();
  }

  SHOAL_ASSIGN_OR_RETURN(std::string binary, findNatsServer(options.natsServer));
  SHOAL_ASSIGN_OR_RETURN(std::string self, selfExecutablePath());
  SHOAL_RETURN_IF_ERROR(prepareOwnerOnlyDirs(paths));
  // The secret (or the authority) exists before the supervisor starts, so a failure to make it
  // is told here.
  if (auth) {
    SHOAL_ASSIGN_OR_RETURN(planes::CredentialAuthority authority, openAuthority(paths));
    (void)authority;
  } else {
    SHOAL_ASSIGN_OR_RETURN(MeshSecret secret, ensureMeshSecret(paths));
    (void)secret;
  }
  outcome.auth = auth;

  SpawnOptions spawn;
  spawn.argv = {self,
                "up",
                "--foreground",
                "--space",
                paths.space,
                "--host",
                options.host,
                "--port",
                std::to_string(options.preferredPort),
                "--nats-server",
                binary};
  if (!options.withPlanes) spawn.argv.push_back("--no-planes");
  if (!options.withDaemon) spawn.argv.push_back("--no-daemon");
  if (auth) {
    spawn.argv.insert(spawn.argv.end(), {"--auth", "--plane-creds-ttl",
                                         std::to_string(options.planeCredentialLifetime.count())});
  }
  if (mode.tls) spawn.argv.push_back("--tls");
  spawn.stdoutTarget = StdioTarget::appendTo(paths.supervisorLog);
  spawn.stderrTarget = StdioTarget::appendTo(paths.supervisorLog);
  spawn.newSession = true;
  auto child = Subprocess::spawn(spawn);
  if (!child.isOk()) return child.status().withContext("starting the supervisor");

  auto deadline = std::chrono::steady_clock::now() + options.readyTimeout + milliseconds(5'000);
  for (;;) {
    auto record = readMeshRecord(fs, paths.registryFile);
    if (record.isOk() && record->supervisorPid == child->pid()) {
      outcome.record = *record;
      child->release();  // it lives on in its own session
      if (options.withPlanes)
        outcome.managerBound = waitForManager(paths, *record, options.readyTimeout);
      if (options.withDaemon) outcome.daemonReady = waitForDaemon(paths, options.readyTimeout);
      return outcome;
    }
    auto exited = child->poll();
    if (!exited.isOk() || exited->has_value()) {
      return unavailable("supervisor-exited",
                         "the mesh supervisor exited before the broker was ready; its log (" +
                             paths.supervisorLog + ") ends with:\n" + tailOf(paths.supervisorLog));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      (void)child->terminate(std::chrono::seconds(5));
      return deadlineExceeded("broker-not-ready", "the broker did not become ready in time; see " +
                                                      paths.supervisorLog + " and " +
                                                      paths.brokerLog);
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

Result<DownOutcome> stopMesh(const MeshPaths& paths, bool force, milliseconds timeout) {
  FileSystem& fs = FileSystem::posix();
  DownOutcome outcome;
  auto record = readMeshRecord(fs, paths.registryFile);
  if (!record.isOk()) {
    if (record.status().code() == StatusCode::kNotFound) return outcome;  // nothing is up
    if (force) {
      SHOAL_RETURN_IF_ERROR(fs.remove(paths.registryFile));
      outcome.removedStaleRecord = true;
      return outcome;
    }
    return record.status();
  }
  outcome.record = *record;
  auto supervisorPid = static_cast<pid_t>(record->supervisorPid);

  if (isOurSupervisor(supervisorPid, paths.space)) {
    SHOAL_RETURN_IF_ERROR(signalProcess(supervisorPid, SIGTERM));
    if (!waitUntilGone(supervisorPid, timeout)) {
      return deadlineExceeded("supervisor-stuck",
                              "the mesh supervisor (pid " + std::to_string(supervisorPid) +
                                  ") did not stop in time; see " + paths.supervisorLog);
    }
    outcome.wasRunning = true;
  } else if (stopOrphans(*record, paths.space, timeout)) {
    // The supervisor died but left what it started behind.
    outcome.wasRunning = true;
  } else {
    outcome.removedStaleRecord = true;
  }
  Status removed = fs.remove(paths.registryFile);
  if (!removed.isOk() && removed.code() != StatusCode::kNotFound) return removed;
  return outcome;
}

}  // namespace shoal::supervisor
