#include "supervisor/local_mesh.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <deque>
#include <thread>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/log.h"
#include "base/process_info.h"
#include "base/subprocess.h"
#include "transport/local_broker.h"

namespace shoal::supervisor {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kFirstBackoff{500};
constexpr milliseconds kMaxBackoff{8'000};
constexpr int kMaxCrashesPerWindow = 5;
constexpr milliseconds kCrashWindow{60'000};
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

std::string tailOf(const std::string& path, size_t maxBytes = 2000) {
  auto text = FileSystem::posix().readFile(path);
  if (!text.isOk()) return "";
  if (text->size() > maxBytes) return "…" + text->substr(text->size() - maxBytes);
  return *text;
}

bool waitUntilGone(pid_t pid, milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (processExists(pid)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPollInterval);
  }
  return true;
}

}  // namespace

Result<std::string> findNatsServer(const std::string& configured) {
  return transport::LocalBroker::findServerBinary(configured);
}

Status runSupervisor(const MeshPaths& paths, const UpOptions& options,
                     const std::function<void(const MeshRecord&)>& onReady) {
  FileSystem& fs = FileSystem::posix();
  SHOAL_ASSIGN_OR_RETURN(std::string binary, findNatsServer(options.natsServer));
  for (const std::string& dir : {paths.brokerStoreDir, paths.logDir}) {
    auto made = fs.createDirs(dir);
    if (!made.isOk()) return made.status().withContext("preparing " + dir);
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
  Status written = writeMeshRecord(fs, paths.registryFile, record);
  if (!written.isOk()) {
    (void)broker->stop();
    return written.withContext("writing the mesh registry");
  }
  log::info("mesh {} up: broker {} pid {}", paths.space, record.url, record.brokerPid);
  onReady(record);

  std::deque<std::chrono::steady_clock::time_point> crashes;
  milliseconds backoff = kFirstBackoff;
  Status outcome;
  for (;;) {
    int sig = waitForStopSignal(stopSignals, kPollInterval * 5);
    if (sig != 0) {
      log::info("mesh {}: signal {}, stopping", paths.space, sig);
      break;
    }
    if (broker->running()) continue;

    auto now = std::chrono::steady_clock::now();
    crashes.push_back(now);
    while (!crashes.empty() && now - crashes.front() > kCrashWindow) crashes.pop_front();
    log::warn("mesh {}: nats-server exited unexpectedly ({} in the last minute); log: {}",
              paths.space, crashes.size(), paths.brokerLog);
    if (static_cast<int>(crashes.size()) > kMaxCrashesPerWindow) {
      outcome = unavailable("broker-crash-loop",
                            "nats-server crashed " + std::to_string(crashes.size()) +
                                " times in a minute; see " + paths.brokerLog);
      break;
    }
    if (waitForStopSignal(stopSignals, backoff) != 0) break;
    backoff = std::min(backoff * 2, kMaxBackoff);
    Status restarted = broker->restart();
    if (!restarted.isOk()) {
      log::warn("mesh {}: restart failed: {}", paths.space, restarted.toString());
      continue;  // counted as another crash on the next poll
    }
    record.brokerPid = broker->pid();
    Status rewritten = writeMeshRecord(fs, paths.registryFile, record);
    if (!rewritten.isOk()) log::warn("mesh {}: {}", paths.space, rewritten.toString());
  }

  Status stopped = broker->stop();
  if (!stopped.isOk()) log::warn("mesh {}: stopping nats-server: {}", paths.space, stopped.toString());
  Status removed = fs.remove(paths.registryFile);
  if (!removed.isOk() && removed.code() != StatusCode::kNotFound) {
    log::warn("mesh {}: {}", paths.space, removed.toString());
  }
  return outcome;
}

Result<UpOutcome> startDetached(const MeshPaths& paths, const UpOptions& options) {
  FileSystem& fs = FileSystem::posix();
  UpOutcome outcome;

  auto existing = readMeshRecord(fs, paths.registryFile);
  if (existing.isOk()) {
    if (isOurSupervisor(static_cast<pid_t>(existing->supervisorPid), paths.space)) {
      outcome.record = *existing;
      outcome.alreadyRunning = true;
      return outcome;
    }
    outcome.replacedStaleRecord = true;  // its supervisor is gone: the record is stale
    (void)fs.remove(paths.registryFile);
  } else if (existing.status().code() != StatusCode::kNotFound) {
    return existing.status();
  }

  SHOAL_ASSIGN_OR_RETURN(std::string binary, findNatsServer(options.natsServer));
  SHOAL_ASSIGN_OR_RETURN(std::string self, selfExecutablePath());
  auto made = fs.createDirs(paths.logDir);
  if (!made.isOk()) return made.status().withContext("preparing " + paths.logDir);

  SpawnOptions spawn;
  spawn.argv = {self,     "up",          "--foreground", "--space", paths.space,
                "--host", options.host,  "--port",       std::to_string(options.preferredPort),
                "--nats-server", binary};
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
      return deadlineExceeded("broker-not-ready",
                              "the broker did not become ready in time; see " +
                                  paths.supervisorLog + " and " + paths.brokerLog);
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
  auto brokerPid = static_cast<pid_t>(record->brokerPid);

  if (isOurSupervisor(supervisorPid, paths.space)) {
    SHOAL_RETURN_IF_ERROR(signalProcess(supervisorPid, SIGTERM));
    if (!waitUntilGone(supervisorPid, timeout)) {
      return deadlineExceeded("supervisor-stuck",
                              "the mesh supervisor (pid " + std::to_string(supervisorPid) +
                                  ") did not stop in time; see " + paths.supervisorLog);
    }
    outcome.wasRunning = true;
  } else if (isOurBroker(brokerPid, record->storeDir)) {
    // The supervisor died but left its broker behind: stop the broker it started.
    SHOAL_RETURN_IF_ERROR(signalProcess(brokerPid, SIGTERM));
    if (!waitUntilGone(brokerPid, timeout)) (void)signalProcess(brokerPid, SIGKILL);
    outcome.wasRunning = true;
  } else {
    outcome.removedStaleRecord = true;
  }
  Status removed = fs.remove(paths.registryFile);
  if (!removed.isOk() && removed.code() != StatusCode::kNotFound) return removed;
  return outcome;
}

}  // namespace shoal::supervisor
