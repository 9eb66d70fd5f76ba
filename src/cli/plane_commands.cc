#include "cli/plane_commands.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include "base/file_system.h"
#include "base/log.h"
#include "cli/command.h"
#include "cli/option_checks.h"
#include "cli/output.h"
#include "mesh/liveness_probe.h"
#include "mesh/operator_identity.h"
#include "planes/delivery_plane.h"
#include "planes/manager_plane.h"
#include "planes/space_provisioner.h"
#include "supervisor/broker_target.h"
#include "supervisor/mesh_paths.h"
#include "transport/connection.h"
#include "transport/creds_file.h"
#include "transport/jetstream.h"
#include "wire/principal.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

constexpr int kUsageExitCode = 2;

// The broker to use (supervisor/broker_target.h).
Result<supervisor::BrokerTarget> resolveServer(const PlaneCommandArgs& args) {
  SHOAL_ASSIGN_OR_RETURN(auto paths, supervisor::MeshPaths::resolve(args.space));
  return supervisor::resolveBrokerTarget(paths, args.server, args.nkeyFile);
}

void printSpaceReport(const planes::SpaceReport& report) {
  auto created = report.namesIn(planes::ResourceState::kCreated);
  auto present = report.namesIn(planes::ResourceState::kAlreadyPresent);
  if (created.empty()) {
    printOk(fmt::format("space {}: already provisioned, nothing changed", report.space));
  } else {
    std::string tail = present.empty() ? "" : fmt::format(" ({} already present)", present.size());
    printOk(fmt::format("space {}: created {}{}", report.space, fmt::join(created, ", "), tail));
  }
  for (const auto& r : report.resources) {
    if (r.state != planes::ResourceState::kDrifted) continue;
    printNote(fmt::format("{} {} differs from Shoal's config; left as is: {}",
                          planes::resourceKindName(r.kind), r.name, fmt::join(r.drift, "; ")));
  }
}

// Forwards connection events to the plane while it exists (events can arrive before it is
// made and after it is gone).
struct EventRelay {
  std::mutex mu;
  planes::ManagerPlane* plane = nullptr;      // guarded by mu; not owned
  planes::DeliveryPlane* delivery = nullptr;  // guarded by mu; not owned
};

// SIGUSR1 is the delivery plane telling the main thread it lost its lease.
sigset_t stopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR1);
  return set;
}

// A stop signal already pending (taken without blocking)?
bool stopPending(const sigset_t& signals) {
  timespec zero{0, 0};
  return ::sigtimedwait(&signals, nullptr, &zero) > 0;
}

// Starts the delivery plane, waiting up to `wait` for a lease another plane holds.
Result<std::unique_ptr<planes::DeliveryPlane>> startDelivery(transport::Connection& conn,
                                                             transport::JetStream& js,
                                                             const PlaneCommandArgs& args,
                                                             const sigset_t& signals) {
  planes::DeliveryPlaneOptions o;
  o.space = args.space;
  o.holder = mesh::localOperator().principal.dotForm() + "-delivery";
  o.ackWait = std::chrono::milliseconds(static_cast<int64_t>(args.redeliverySeconds * 1000));
  o.onLost = [](const Status&) { ::kill(::getpid(), SIGUSR1); };
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(static_cast<int64_t>(args.leaseWaitSeconds * 1000));
  bool said = false;
  for (;;) {
    auto plane = planes::DeliveryPlane::start(conn, js, o);
    if (plane.isOk() || plane.status().reason() != "lease-held" ||
        std::chrono::steady_clock::now() >= deadline) {
      return plane;
    }
    if (!said) {
      printNote(fmt::format("{}; waiting up to {:.0f} s", plane.status().message(),
                            args.leaseWaitSeconds));
      std::fflush(stdout);
      said = true;
    }
    if (stopPending(signals)) return cancelled("stopped", "stopped while waiting for the lease");
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  }
}

}  // namespace

namespace {

// One connection of `shoal serve`: the broker target's, or, under a plane credential, that
// credential with the reply inbox its grants allow (transport/creds_file.h) and no mesh secret.
Result<std::unique_ptr<transport::Connection>> connectServe(
    const supervisor::BrokerTarget& target, const std::string& credsFile, const std::string& name,
    transport::ConnectionEventHandler onEvent) {
  transport::ConnectOptions options;
  target.applyTo(options);
  options.name = name;
  options.sendAsap = true;  // responders: answers leave at once
  options.onEvent = std::move(onEvent);
  if (!credsFile.empty()) {
    auto creds = transport::readCredsFile(FileSystem::posix(), credsFile);
    if (!creds.isOk()) return creds.status();
    options.nkeySeedFile.clear();
    options.credentialsFile = credsFile;
    options.inboxPrefix = creds->inboxPrefix;
    // The broker closes the connection when its credential expires; nats.c reads the renewed
    // file at the reconnect, so make that one prompt (the backoff still grows to its max).
    options.reconnectWait = std::chrono::milliseconds(250);
  }
  auto conn = transport::Connection::connect(options);
  if (!conn.isOk()) {
    Status failure = supervisor::explainConnectFailure(target, conn.status());
    return credsFile.empty() ? failure : failure.withContext("under the credential " + credsFile);
  }
  return conn;
}

// Which connection each plane uses: one shared (open mode), or each its own credential's.
struct ServeConnections {
  std::unique_ptr<transport::Connection> manager;   // also the delivery plane's when shared
  std::unique_ptr<transport::Connection> delivery;  // only under --delivery-creds
  transport::Connection* forManager() const { return manager.get(); }
  transport::Connection* forDelivery() const { return delivery ? delivery.get() : manager.get(); }
};

Result<ServeConnections> connectPlanes(const supervisor::BrokerTarget& target,
                                       const PlaneCommandArgs& args, bool runManager,
                                       bool runDelivery, const std::shared_ptr<EventRelay>& relay) {
  auto relayTo = [relay](bool toManager, bool toDelivery) {
    return [relay, toManager, toDelivery](const transport::ConnectionEvent& e) {
      std::lock_guard lock(relay->mu);
      if (toManager && relay->plane != nullptr) relay->plane->onConnectionEvent(e);
      if (toDelivery && relay->delivery != nullptr) relay->delivery->onConnectionEvent(e);
    };
  };
  const bool ownCredentials = !args.managerCreds.empty() || !args.deliveryCreds.empty();
  ServeConnections out;
  if (!ownCredentials) {
    SHOAL_ASSIGN_OR_RETURN(
        out.manager, connectServe(target, "", "shoal serve " + args.space, relayTo(true, true)));
    return out;
  }
  if (runManager) {
    SHOAL_ASSIGN_OR_RETURN(
        out.manager, connectServe(target, args.managerCreds,
                                  "shoal serve " + args.space + " manager", relayTo(true, false)));
  }
  if (runDelivery) {
    SHOAL_ASSIGN_OR_RETURN(out.delivery, connectServe(target, args.deliveryCreds,
                                                      "shoal serve " + args.space + " delivery",
                                                      relayTo(false, true)));
  }
  return out;
}

// Under plane credentials, each plane that runs needs its own (kInvalidArgument otherwise).
Status checkPlaneCredentials(const PlaneCommandArgs& args, bool runManager, bool runDelivery) {
  if (args.managerCreds.empty() && args.deliveryCreds.empty()) return Status::ok();
  if (runManager && args.managerCreds.empty()) {
    return invalidArgument("plane-creds-missing",
                           "--delivery-creds was given but not --manager-creds: under "
                           "credentials each plane connects with its own (or run "
                           "`--planes delivery`)");
  }
  if (runDelivery && args.deliveryCreds.empty()) {
    return invalidArgument("plane-creds-missing",
                           "--manager-creds was given but not --delivery-creds: under "
                           "credentials each plane connects with its own (or run "
                           "`--planes manager`)");
  }
  return Status::ok();
}

// The authority `shoal up --auth` made: opened, never created here (a typo in the path must
// not mint a second authority no broker trusts).
Result<planes::CredentialAuthority> openServeAuthority(const PlaneCommandArgs& args) {
  FileSystem& fs = FileSystem::posix();
  if (!fs.exists(args.authorityDir + "/signing.seed")) {
    return failedPrecondition("no-authority", "no credential authority in " + args.authorityDir +
                                                  " (`shoal up --auth` makes one)");
  }
  if (args.seatCredsTtlSeconds < 5) {
    return invalidArgument("bad-ttl", "--seat-creds-ttl is at least 5 seconds");
  }
  return planes::CredentialAuthority::openOrCreate(fs, args.authorityDir, args.space,
                                                   Clock::real());
}

}  // namespace

int runServe(const PlaneCommandArgs& args) {
  // Stop signals are taken synchronously; block them before nats.c starts any thread.
  const sigset_t signals = stopSignals();
  ::pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const bool runManager = args.planes == "all" || args.planes == "manager";
  const bool runDelivery = args.planes == "all" || args.planes == "delivery";
  if (!runManager && !runDelivery) {
    printFailure("shoal serve", invalidArgument("bad-planes",
                                                "--planes is all, manager or "
                                                "delivery, not '" +
                                                    args.planes + "'"));
    return kUsageExitCode;
  }
  if (Status st = checkPlaneCredentials(args, runManager, runDelivery); !st.isOk()) {
    printFailure("shoal serve", st);
    return kUsageExitCode;
  }
  auto target = resolveServer(args);
  if (!target.isOk()) return printFailure("shoal serve", target.status());
  auto relay = std::make_shared<EventRelay>();
  auto conns = connectPlanes(*target, args, runManager, runDelivery, relay);
  if (!conns.isOk()) return printFailure("shoal serve", conns.status());
  const bool ownCredentials = conns->delivery != nullptr || !args.managerCreds.empty();

  std::optional<transport::JetStream> managerJs;
  if (conns->forManager() != nullptr) {
    auto js = transport::JetStream::create(*conns->forManager());
    if (!js.isOk()) return printFailure("shoal serve", js.status());
    managerJs.emplace(std::move(js).value());
    auto report = planes::ensureSpace(*managerJs, args.space);
    if (!report.isOk()) return printFailure("shoal serve: provisioning the space", report.status());
    printSpaceReport(*report);
  } else {
    printNote("the delivery plane's credential cannot provision; the space's manager does");
  }

  std::optional<planes::CredentialAuthority> authority;
  std::optional<planes::CredentialIssuer> issuer;
  if (runManager && !args.authorityDir.empty()) {
    auto opened = openServeAuthority(args);
    if (!opened.isOk()) return printFailure("shoal serve", opened.status());
    authority.emplace(std::move(opened).value());
    issuer = planes::CredentialIssuer{
        &*authority, std::chrono::seconds(static_cast<int64_t>(args.seatCredsTtlSeconds))};
  }
  std::unique_ptr<planes::ManagerPlane> manager;
  if (runManager) {
    auto plane = planes::ManagerPlane::start(*conns->forManager(), *managerJs, args.space, issuer);
    if (!plane.isOk()) return printFailure("shoal serve: starting the manager", plane.status());
    manager = std::move(*plane);
    std::lock_guard lock(relay->mu);
    relay->plane = manager.get();
  }
  if (manager) {
    printOk(fmt::format("manager serving space {} on {} (liveness instance {}); stop with Ctrl-C",
                        args.space, target->url, manager->livenessInstance()));
    std::fflush(stdout);
  }
  std::optional<transport::JetStream> deliveryJs;
  std::unique_ptr<planes::DeliveryPlane> delivery;
  if (runDelivery) {
    auto js = transport::JetStream::create(*conns->forDelivery());
    if (!js.isOk()) return printFailure("shoal serve", js.status());
    deliveryJs.emplace(std::move(js).value());
    auto plane = startDelivery(*conns->forDelivery(), *deliveryJs, args, signals);
    if (!plane.isOk()) {
      std::lock_guard lock(relay->mu);
      relay->plane = nullptr;
      return printFailure("shoal serve: the delivery plane", plane.status());
    }
    delivery = std::move(*plane);
    std::lock_guard lock(relay->mu);
    relay->delivery = delivery.get();
    printOk(fmt::format("delivery plane serving space {} (lease held, incarnation {})", args.space,
                        delivery->incarnation().substr(0, 8)));
  }
  if (ownCredentials) {
    printNote("auth mode: each plane holds only its own credential's grants");
  } else {
    printNote(
        "open mode: owner `local`, no per-principal identity; only the mesh secret's holder "
        "connects");
  }
  std::fflush(stdout);

  int sig = 0;
  while (::sigwait(&signals, &sig) != 0) {
  }
  const bool lost = sig == SIGUSR1;
  log::info("serve {}: {}, stopping", args.space, lost ? "the delivery lease was lost" : "signal");
  {
    std::lock_guard lock(relay->mu);
    relay->plane = nullptr;
    relay->delivery = nullptr;
  }
  if (delivery) {
    if (Status st = delivery->stop(); !st.isOk()) {
      printNote("the delivery lease was not released (it expires in 30 s): " + st.toString());
    }
    delivery.reset();
  }
  manager.reset();
  if (lost) {
    printFailure("shoal serve", aborted("lease-lost",
                                        "the delivery plane lost its lease to another plane and "
                                        "stopped"));
    return 1;
  }
  printOk(fmt::format("planes for space {} stopped", args.space));
  return 0;
}

int runProbe(const PlaneCommandArgs& args) {
  if (!wire::parsePlane(args.plane)) {
    printFailure("shoal probe", invalidArgument("bad-plane", "'" + args.plane +
                                                                 "' is not a plane; probe "
                                                                 "manager or delivery"));
    return kUsageExitCode;
  }
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(args.timeoutSeconds * 1000));
  mesh::LivenessVerdict verdict;
  verdict.plane = *wire::parsePlane(args.plane);
  auto target = resolveServer(args);
  std::unique_ptr<transport::Connection> conn;
  if (!target.isOk()) {
    verdict.evidence = mesh::LivenessEvidence::kRefused;
    verdict.detail = target.status().toString();
  } else {
    transport::ConnectOptions options;
    target->applyTo(options);
    options.name = "shoal probe";
    options.allowReconnect = false;
    options.connectTimeout = timeout;
    auto connected = transport::Connection::connect(options);
    if (!connected.isOk()) {
      verdict.evidence = mesh::LivenessEvidence::kRefused;
      verdict.detail = supervisor::explainConnectFailure(*target, connected.status()).toString();
    } else {
      conn = std::move(connected).value();
      auto probed = mesh::probeLiveness(*conn, args.space, target->caller, args.plane, timeout);
      if (!probed.isOk()) return printFailure("shoal probe", probed.status());
      verdict = std::move(probed).value();
    }
  }

  const bool bound = verdict.responder == wire::Responder::kBound;
  const std::string plane(wire::planeName(verdict.plane));
  const std::string responder(wire::responderName(verdict.responder));
  if (args.json) {
    json::object out;
    out["space"] = args.space;
    out["plane"] = plane;
    out["responder"] = responder;
    out["instance"] = verdict.instance ? json::value(*verdict.instance) : json::value(nullptr);
    out["evidence"] = std::string(mesh::livenessEvidenceName(verdict.evidence));
    out["detail"] = verdict.detail;
    printResult(out);
    return bound ? 0 : 1;
  }
  if (bound) {
    printOk(fmt::format("{}: bound (instance {})", plane, verdict.instance.value_or("-")));
    return 0;
  }
  printNote(fmt::format("{}: {} ({})", plane, responder, verdict.detail));
  if (verdict.evidence == mesh::LivenessEvidence::kNoResponders) {
    printDetail(verdict.plane == wire::Plane::kManager
                    ? "start it with `shoal serve` (or `shoal up`)"
                    : "Shoal has no delivery plane yet, so nothing answers for it");
  }
  return 1;
}

void registerPlaneCommands(CLI::App& app, CommandResult& result) {
  auto serve = std::make_shared<PlaneCommandArgs>();
  auto probe = std::make_shared<PlaneCommandArgs>();

  CLI::App* serveCmd = app.add_subcommand(
      "serve",
      "run the space's planes in this terminal: the manager (provisioning, liveness) and the "
      "delivery plane (durable channel backstop)");
  serveCmd->add_option("--planes", serve->planes, "which planes: all, manager or delivery")
      ->capture_default_str();
  serveCmd
      ->add_option("--lease-wait", serve->leaseWaitSeconds,
                   "seconds to wait for a delivery lease another plane holds (0: refuse)")
      ->capture_default_str()
      ->check(secondsOrZeroUpTo(kMaxWaitSeconds));
  serveCmd
      ->add_option("--redelivery", serve->redeliverySeconds,
                   "seconds an unacknowledged post or copy waits before the delivery plane "
                   "takes it again (set when its consumers are first created)")
      ->capture_default_str()
      ->check(secondsUpTo(kMaxWaitSeconds));
  serveCmd->add_option("--space", serve->space, "space name")->capture_default_str();
  serveCmd->add_option("--server", serve->server, "broker URL (default: the local mesh's)");
  serveCmd->add_option("--nkey", serve->nkeyFile,
                       "file holding the nkey seed the broker requires (default: the local "
                       "mesh's secret)");
  serveCmd->add_option("--manager-creds", serve->managerCreds,
                       "the manager plane's own .creds file (auth mode; each plane then "
                       "connects under its own credential)");
  serveCmd->add_option("--delivery-creds", serve->deliveryCreds,
                       "the delivery plane's own .creds file (auth mode)");
  serveCmd->add_option("--authority", serve->authorityDir,
                       "the space's credential authority directory (auth mode): the manager "
                       "then mints seats' credentials for their daemons");
  serveCmd->add_option("--seat-creds-ttl", serve->seatCredsTtlSeconds,
                       "seconds a seat's credential lasts (default 86400; renewed at half)");
  serveCmd->callback([serve, &result] { result.exitCode = runServe(*serve); });

  CLI::App* probeCmd =
      app.add_subcommand("probe", "ask whether a plane (manager or delivery) is serving");
  probeCmd->add_option("plane", probe->plane, "manager or delivery")->required();
  probeCmd->add_option("--space", probe->space, "space name")->capture_default_str();
  probeCmd->add_option("--server", probe->server, "broker URL (default: the local mesh's)");
  probeCmd->add_option("--nkey", probe->nkeyFile,
                       "file holding the nkey seed the broker requires (default: the local "
                       "mesh's secret)");
  probeCmd->add_option("--timeout", probe->timeoutSeconds, "seconds to wait for an answer")
      ->capture_default_str()
      ->check(secondsUpTo(kMaxWaitSeconds));
  probeCmd->add_flag("--json", probe->json, "machine-readable output");
  probeCmd->callback([probe, &result] { result.exitCode = runProbe(*probe); });
}

}  // namespace shoal::cli
