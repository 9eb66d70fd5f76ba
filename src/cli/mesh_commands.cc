#include "cli/mesh_commands.h"

#include <cstdio>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/clock.h"
#include "cli/command.h"
#include "cli/option_checks.h"
#include "cli/output.h"
#include "cli/seat_rows.h"
#include "daemon/control_socket.h"
#include "supervisor/local_mesh.h"
#include "supervisor/mesh_status.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;
using supervisor::MeshPaths;

void addSpace(CLI::App* cmd, MeshCommandArgs& args) {
  cmd->add_option("--space", args.space, "space name")->capture_default_str();
}

std::string describeMode(const supervisor::MeshStatus& s) {
  if (s.mode == "open") {
    return "open mode: owner `local`, no per-principal identity; only holders of the mesh "
           "secret (" +
           s.secretFile + ") may connect — this user (docs/security.md)";
  }
  if (s.mode == "auth") {
    std::string expiry;
    const std::string joined =
        s.joined
            ? fmt::format(", joined from machine {} (docs/multi-machine.md)", s.joined->machine)
            : std::string();
    if (s.credentialExpiresAt > 0) {
      const int64_t left = s.credentialExpiresAt - Clock::real().wallMs() / 1000;
      expiry = fmt::format(", valid {} more min", std::max<int64_t>(left, 0) / 60);
    }
    std::string you = s.principal;
    if (you.empty()) {
      you = s.joined ? "this machine's daemon (the manager did not issue your own credential)"
                     : "(no credential)";
    }
    return "auth mode" + joined + ": each principal connects with its own credential; you are " +
           you + " (" + s.credentialFile + expiry + ") — docs/security.md";
  }
  return "external broker: mode unknown to this CLI";
}

std::string ageOf(int64_t startedAtMs) {
  int64_t s = (Clock::real().wallMs() - startedAtMs) / 1000;
  if (s < 120) return fmt::format("{}s", s);
  if (s < 7200) return fmt::format("{}m", s / 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

// The seat daemon's own account (its control socket), or nullopt with why it did not answer.
struct DaemonSummary {
  std::optional<json::object> status;
  std::string why;
};

DaemonSummary askDaemon(const MeshPaths& paths) {
  DaemonSummary out;
  auto reply = daemon::controlRequest(paths.controlSocket, daemon::ControlRequest{"status", "{}"},
                                      std::chrono::milliseconds(2000));
  if (!reply.isOk()) {
    out.why = std::string(reply.status().message());
    return out;
  }
  boost::system::error_code ec;
  json::value v = json::parse(*reply, ec);
  if (ec || !v.is_object()) {
    out.why = "the daemon's reply is not JSON";
    return out;
  }
  out.status = v.as_object();
  return out;
}

}  // namespace

int runUp(const MeshCommandArgs& args) {
  auto paths = MeshPaths::resolve(args.space);
  if (!paths.isOk()) return printFailure("shoal up", paths.status());
  supervisor::UpOptions options;
  options.host = args.host;
  options.preferredPort = args.port;
  options.natsServer = args.natsServer;
  options.withPlanes = !args.noPlanes;
  options.withDaemon = !args.noDaemon && !args.noPlanes;  // seats need the manager plane
  options.auth = args.auth;
  options.tls = args.tls;
  options.planeCredentialLifetime = std::chrono::seconds(args.planeCredsTtl);

  if (args.foreground) {
    Status st = supervisor::runSupervisor(*paths, options, [](const supervisor::MeshRecord& r) {
      if (jsonOutput()) {
        printJson(json::object{{"event", "up"},
                               {"space", r.space},
                               {"url", r.url},
                               {"brokerPid", r.brokerPid},
                               {"storeDir", r.storeDir},
                               {"mode", r.mode},
                               {"secretFile", r.secretFile},
                               {"caFile", r.caFile}});
      }
      printOk(fmt::format("mesh `{}` up: broker {} (pid {}), store {}", r.space, r.url, r.brokerPid,
                          r.storeDir));
      std::fflush(stdout);
    });
    if (!st.isOk()) return printFailure("shoal up", st);
    if (jsonOutput()) printJson(json::object{{"event", "stopped"}});
    printOk("mesh stopped");
    return 0;
  }

  auto outcome = supervisor::startDetached(*paths, options);
  if (!outcome.isOk()) return printFailure("shoal up", outcome.status());
  const auto& r = outcome->record;
  if (jsonOutput()) {
    printResult(json::object{{"space", r.space},
                             {"url", r.url},
                             {"alreadyRunning", outcome->alreadyRunning},
                             {"replacedStaleRecord", outcome->replacedStaleRecord},
                             {"managerBound", outcome->managerBound},
                             {"daemonReady", outcome->daemonReady},
                             {"supervisorPid", r.supervisorPid},
                             {"brokerPid", r.brokerPid},
                             {"storeDir", r.storeDir},
                             {"logDir", paths->logDir},
                             {"mode", r.mode},
                             {"secretFile", r.secretFile},
                             {"caFile", r.caFile}});
    return 0;
  }
  if (outcome->alreadyRunning) {
    printOk(fmt::format("mesh `{}` already up: broker {} (supervisor pid {}); nothing changed",
                        r.space, r.url, r.supervisorPid));
    return 0;
  }
  if (outcome->replacedStaleRecord)
    printNote("replaced a stale mesh record left by a dead supervisor");
  printOk(fmt::format("mesh `{}` up: broker {} with JetStream{}{}", r.space, r.url,
                      outcome->auth ? ", auth mode (each principal its own credential)" : "",
                      r.caFile.empty() ? "" : ", TLS with the space's own CA"));
  if (!r.caFile.empty() && !args.tls && args.host == "127.0.0.1")
    printNote("the space was created with TLS and keeps it");
  if (outcome->auth && !args.auth) printNote("the space was created in auth mode and keeps it");
  if (options.withPlanes) {
    if (outcome->managerBound) {
      printOk("manager plane serving (space provisioned)");
    } else {
      printNote(fmt::format("manager plane not answering yet; see {}", paths->planesLog));
    }
  }
  if (options.withDaemon) {
    if (outcome->daemonReady) {
      printOk("seat daemon serving (add a seat with `shoal seat add`)");
    } else {
      printNote(fmt::format("seat daemon not answering yet; see {}", paths->daemonLog));
    }
  }
  printDetail(fmt::format("store {}", r.storeDir));
  printDetail(fmt::format("logs  {}", paths->logDir));
  printDetail("stop it with `shoal down" +
              (r.space == "main" ? std::string() : " --space " + r.space) + "`");
  return 0;
}

namespace {

// Why the broker is not healthy, with the remedy that fits.
Status brokerProblem(const supervisor::MeshStatus& s) {
  if (s.broker.refused) return s.broker.error;  // explainConnectFailure named the remedy
  if (!s.broker.reachable) {
    std::string why = s.broker.error.isOk() ? "no answer" : std::string(s.broker.error.message());
    std::string remedy = s.record   ? "; restart it with `shoal down && shoal up`"
                         : s.joined ? "; check the network to it, and `shoal status` on the "
                                      "machine that runs the space's mesh"
                                    : "; start it with `shoal up`";
    return unavailable("unreachable", "broker " + s.broker.url + " unreachable: " + why + remedy);
  }
  return s.broker.error;
}

json::object statusJson(const supervisor::MeshStatus& s) {
  json::object broker;
  broker["url"] = s.broker.url;
  broker["reachable"] = s.broker.reachable;
  broker["version"] = s.broker.version;
  broker["serverId"] = s.broker.serverId;
  broker["jetstream"] = s.broker.jetstream;
  broker["rttUs"] = static_cast<int64_t>(s.broker.rttMs * 1000);
  if (!s.broker.error.isOk()) broker["error"] = errorObject(s.broker.error);
  json::object out;
  out["space"] = s.space;
  out["mode"] = s.mode;
  if (s.mode == "auth") {
    out["principal"] = s.principal;
    out["credentialFile"] = s.credentialFile;
    out["credentialExpiresAt"] = s.credentialExpiresAt;
  }
  // The credential's file, never its content: the owner's own scripts connect with it.
  out["secretFile"] = s.secretFile.empty() ? json::value(nullptr) : json::value(s.secretFile);
  out["broker"] = std::move(broker);
  json::array planes;
  for (const auto& p : s.planes) {
    json::object jobs;
    for (const auto& [state, n] : p.jobs)
      jobs[state] = n;
    planes.push_back(json::object{{"jobs", std::move(jobs)},
                                  {"plane", p.plane},
                                  {"responder", p.responder},
                                  {"instance", p.instance},
                                  {"detail", p.detail}});
  }
  out["planes"] = std::move(planes);
  if (s.record) {
    json::object local;
    local["storeDir"] = s.record->storeDir;
    local["brokerPid"] = s.record->brokerPid;
    local["supervisorPid"] = s.record->supervisorPid;
    local["servePid"] = s.record->servePid;
    local["daemonPid"] = s.record->daemonPid;
    local["supervisorAlive"] = s.supervisorAlive;
    local["startedAtMs"] = s.record->startedAtMs;
    out["local"] = std::move(local);
  } else {
    out["local"] = nullptr;
  }
  if (s.joined) {
    out["joined"] = json::object{{"machine", s.joined->machine},
                                 {"owner", s.joined->owner},
                                 {"url", s.joined->url},
                                 {"joinedAtMs", s.joined->joinedAtMs},
                                 {"daemonCredentialExpiresAt", s.joined->expiresAt}};
  } else {
    out["joined"] = nullptr;
  }
  // Unhealthy is a failure: `ok` false with the error object of the contract, plus the facts.
  out["ok"] = s.broker.reachable && s.broker.jetstream;
  if (!out["ok"].as_bool()) out["error"] = errorObject(brokerProblem(s));
  return out;
}

}  // namespace

int runStatus(const MeshCommandArgs& args) {
  auto paths = MeshPaths::resolve(args.space);
  if (!paths.isOk()) return printFailure("shoal status", paths.status());
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(args.timeoutSeconds * 1000));
  auto st = supervisor::inspectMesh(*paths, args.server, args.nkeyFile, timeout);
  if (!st.isOk()) return printFailure("shoal status", st.status());
  const supervisor::MeshStatus& s = *st;
  bool healthy = s.broker.reachable && s.broker.jetstream;
  DaemonSummary daemon = askDaemon(*paths);
  if (args.json) {
    json::object out = statusJson(s);
    if (daemon.status) {
      out["daemon"] = *daemon.status;
    } else {
      out["daemon"] = json::object{{"running", false}, {"detail", daemon.why}};
    }
    printResult(out);
    return healthy ? 0 : 1;
  }
  if (!s.broker.reachable) return printFailure("shoal status", brokerProblem(s));
  printOk(fmt::format("broker {} reachable: nats-server {}, rtt {:.2f} ms", s.broker.url,
                      s.broker.version, s.broker.rttMs));
  if (s.broker.jetstream) {
    printOk(s.record ? fmt::format("JetStream ready, store {}", s.record->storeDir)
                     : std::string("JetStream ready"));
  } else {
    (void)printFailure("JetStream is not enabled on " + s.broker.url, s.broker.error);
  }
  for (const auto& p : s.planes) {
    std::string line = fmt::format("{} plane: {}", p.plane, p.responder);
    if (!p.instance.empty()) line += fmt::format(" (instance {})", p.instance.substr(0, 12));
    if (p.plane == "delivery" && !p.jobs.empty()) {
      auto n = [&](const char* k) {
        auto it = p.jobs.find(k);
        return it == p.jobs.end() ? uint64_t{0} : it->second;
      };
      line += fmt::format(
          " — jobs: {} delivered, {} suppressed, {} waiting, {} failed "
          "(`shoal deliver pending`)",
          n("delivered"), n("suppressed"), n("pending") + n("leased") + n("retry"), n("failed"));
    }
    if (p.responder == "bound") {
      printOk(line);
    } else {
      printNote(line + (p.detail.empty() ? "" : " — " + p.detail));
    }
  }
  if (daemon.status) {
    const json::array& seats = daemon.status->at("seats").as_array();
    size_t running = 0;
    for (const auto& seat : seats)
      running += seat.at("running").as_bool() ? 1 : 0;
    printOk(
        fmt::format("seat daemon pid {}: {} seat(s), {} with a running runtime "
                    "(`shoal daemon status`)",
                    daemon.status->at("pid").to_number<int64_t>(), seats.size(), running));
    printSeatTrouble(seatsNotRunning(seats));
  } else {
    printNote("seat daemon: not answering — " + daemon.why);
  }
  printNote(describeMode(s));
  if (s.record) {
    printDetail(fmt::format("space {} · supervisor pid {}{} · broker pid {} · up {}", s.space,
                            s.record->supervisorPid, s.supervisorAlive ? "" : " (gone!)",
                            s.record->brokerPid, ageOf(s.record->startedAtMs)));
  }
  return healthy ? 0 : 1;
}

int runDown(const MeshCommandArgs& args) {
  auto paths = MeshPaths::resolve(args.space);
  if (!paths.isOk()) return printFailure("shoal down", paths.status());
  auto outcome = supervisor::stopMesh(*paths, args.force);
  if (!outcome.isOk()) return printFailure("shoal down", outcome.status());
  if (jsonOutput()) {
    printResult(json::object{{"space", paths->space},
                             {"wasRunning", outcome->wasRunning},
                             {"removedStaleRecord", outcome->removedStaleRecord}});
    return 0;
  }
  if (outcome->wasRunning) {
    printOk(fmt::format("mesh `{}` stopped (broker {} and its supervisor)", paths->space,
                        outcome->record.url));
  } else if (outcome->removedStaleRecord) {
    printOk(fmt::format("mesh `{}` was not running; removed its stale record", paths->space));
  } else {
    printOk(fmt::format("mesh `{}` is not running; nothing to stop", paths->space));
  }
  return 0;
}

void registerMeshCommands(CLI::App& app, CommandResult& result) {
  // The parsed values must outlive parsing; the callbacks' captures keep them alive.
  auto up = std::make_shared<MeshCommandArgs>();
  auto status = std::make_shared<MeshCommandArgs>();
  auto down = std::make_shared<MeshCommandArgs>();

  CLI::App* upCmd = app.add_subcommand("up",
                                       "start the local mesh (a supervised nats-server "
                                       "with JetStream on 127.0.0.1)");
  addSpace(upCmd, *up);
  upCmd
      ->add_option("--port", up->port,
                   "preferred broker port; the next free one is used if "
                   "it is taken")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  upCmd->add_option("--host", up->host, "address the broker listens on")->capture_default_str();
  upCmd->add_option("--nats-server", up->natsServer, "nats-server binary (default: from PATH)");
  upCmd->add_flag("--foreground", up->foreground,
                  "run the supervisor in this terminal instead of detaching it");
  upCmd->add_flag("--no-planes", up->noPlanes,
                  "run only the broker, not the space's planes (`shoal serve`) nor the daemon");
  upCmd->add_flag("--no-daemon", up->noDaemon,
                  "do not run the seat daemon (`shoal daemon run`) beside the broker");
  upCmd->add_flag("--auth", up->auth,
                  "auth mode: the broker trusts the space's own credential authority and every "
                  "principal connects with its own credential (kept once chosen)");
  upCmd->add_flag("--tls", up->tls,
                  "auth mode: require TLS with a certificate authority made for the space "
                  "(always on with a --host beyond loopback; kept once chosen)");
  upCmd
      ->add_option("--plane-creds-ttl", up->planeCredsTtl,
                   "auth mode: seconds the planes', the daemon's and the seats' credentials live "
                   "(renewed at half)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{10}, int64_t{30} * 86'400));
  upCmd->add_flag("--json", up->json, "machine-readable output");
  upCmd->callback([up, &result] { result.exitCode = runUp(*up); });

  CLI::App* statusCmd = app.add_subcommand("status", "show the mesh's health");
  addSpace(statusCmd, *status);
  statusCmd->add_option("--server", status->server, "inspect this broker URL instead");
  statusCmd->add_option("--nkey", status->nkeyFile,
                        "file holding the nkey seed --server requires (default: the local "
                        "mesh's secret when it is that broker)");
  statusCmd->add_option("--timeout", status->timeoutSeconds, "seconds to wait for the broker")
      ->capture_default_str()
      ->check(secondsUpTo(kMaxWaitSeconds));
  statusCmd->add_flag("--json", status->json, "machine-readable output");
  statusCmd->callback([status, &result] { result.exitCode = runStatus(*status); });

  CLI::App* downCmd = app.add_subcommand("down", "stop the local mesh that `shoal up` started");
  addSpace(downCmd, *down);
  downCmd->add_flag("--force", down->force, "also remove an unreadable mesh record");
  downCmd->add_flag("--json", down->json, "machine-readable output");
  downCmd->callback([down, &result] { result.exitCode = runDown(*down); });
}

}  // namespace shoal::cli
