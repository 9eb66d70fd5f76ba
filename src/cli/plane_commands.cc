#include "cli/plane_commands.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
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

int runServe(const PlaneCommandArgs& args) {
  // Stop signals are taken synchronously; block them before nats.c starts any thread.
  const sigset_t signals = stopSignals();
  ::pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto target = resolveServer(args);
  if (!target.isOk()) return printFailure("shoal serve", target.status());
  const std::string* url = &target->url;
  auto relay = std::make_shared<EventRelay>();
  transport::ConnectOptions options;
  target->applyTo(options);
  options.name = "shoal serve " + args.space;
  options.sendAsap = true;  // responders: answers leave at once
  options.onEvent = [relay](const transport::ConnectionEvent& e) {
    std::lock_guard lock(relay->mu);
    if (relay->plane != nullptr) relay->plane->onConnectionEvent(e);
    if (relay->delivery != nullptr) relay->delivery->onConnectionEvent(e);
  };
  const bool runManager = args.planes == "all" || args.planes == "manager";
  const bool runDelivery = args.planes == "all" || args.planes == "delivery";
  if (!runManager && !runDelivery) {
    printFailure("shoal serve", invalidArgument("bad-planes",
                                                "--planes is all, manager or "
                                                "delivery, not '" +
                                                    args.planes + "'"));
    return kUsageExitCode;
  }
  auto conn = transport::Connection::connect(options);
  if (!conn.isOk()) {
    return printFailure("shoal serve", supervisor::explainConnectFailure(*target, conn.status()));
  }
  auto js = transport::JetStream::create(**conn);
  if (!js.isOk()) return printFailure("shoal serve", js.status());
  auto report = planes::ensureSpace(*js, args.space);
  if (!report.isOk()) return printFailure("shoal serve: provisioning the space", report.status());
  printSpaceReport(*report);

  std::unique_ptr<planes::ManagerPlane> manager;
  if (runManager) {
    auto plane = planes::ManagerPlane::start(**conn, *js, args.space);
    if (!plane.isOk()) return printFailure("shoal serve: starting the manager", plane.status());
    manager = std::move(*plane);
    std::lock_guard lock(relay->mu);
    relay->plane = manager.get();
  }
  if (manager) {
    printOk(fmt::format("manager serving space {} on {} (liveness instance {}); stop with Ctrl-C",
                        args.space, *url, manager->livenessInstance()));
    std::fflush(stdout);
  }
  std::unique_ptr<planes::DeliveryPlane> delivery;
  if (runDelivery) {
    auto plane = startDelivery(**conn, *js, args, signals);
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
  printNote(
      "open mode: owner `local`, no per-principal identity; only the mesh secret's holder "
      "connects");
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
      auto probed = mesh::probeLiveness(*conn, args.space, mesh::localOperator().principal,
                                        args.plane, timeout);
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
