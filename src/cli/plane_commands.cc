#include "cli/plane_commands.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include "base/file_system.h"
#include "base/log.h"
#include "cli/command.h"
#include "cli/output.h"
#include "mesh/liveness_probe.h"
#include "mesh/operator_identity.h"
#include "planes/manager_plane.h"
#include "planes/space_provisioner.h"
#include "supervisor/mesh_paths.h"
#include "supervisor/mesh_record.h"
#include "transport/connection.h"
#include "transport/jetstream.h"
#include "wire/principal.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

constexpr int kUsageExitCode = 2;

// The broker to use: --server, else the space's mesh record, else the default local URL.
Result<std::string> resolveServer(const PlaneCommandArgs& args) {
  SHOAL_ASSIGN_OR_RETURN(auto paths, supervisor::MeshPaths::resolve(args.space));
  return supervisor::meshBrokerUrl(FileSystem::posix(), paths.registryFile, args.server);
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
  planes::ManagerPlane* plane = nullptr;  // guarded by mu; not owned
};

sigset_t stopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

int runServe(const PlaneCommandArgs& args) {
  // Stop signals are taken synchronously; block them before nats.c starts any thread.
  const sigset_t signals = stopSignals();
  ::pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto url = resolveServer(args);
  if (!url.isOk()) return printFailure("shoal serve", url.status());
  auto relay = std::make_shared<EventRelay>();
  transport::ConnectOptions options;
  options.servers = {*url};
  options.name = "shoal serve " + args.space;
  options.sendAsap = true;  // responders: answers leave at once
  options.onEvent = [relay](const transport::ConnectionEvent& e) {
    std::lock_guard lock(relay->mu);
    if (relay->plane != nullptr) relay->plane->onConnectionEvent(e);
  };
  auto conn = transport::Connection::connect(options);
  if (!conn.isOk()) {
    return printFailure(fmt::format("shoal serve: broker {}", *url),
                        conn.status().withContext("start the mesh with `shoal up`, or pass "
                                                  "--server"));
  }
  auto js = transport::JetStream::create(**conn);
  if (!js.isOk()) return printFailure("shoal serve", js.status());
  auto report = planes::ensureSpace(*js, args.space);
  if (!report.isOk()) return printFailure("shoal serve: provisioning the space", report.status());
  printSpaceReport(*report);

  auto plane = planes::ManagerPlane::start(**conn, *js, args.space);
  if (!plane.isOk()) return printFailure("shoal serve: starting the manager", plane.status());
  {
    std::lock_guard lock(relay->mu);
    relay->plane = plane->get();
  }
  printOk(fmt::format("manager serving space {} on {} (liveness instance {}); stop with Ctrl-C",
                      args.space, *url, (*plane)->livenessInstance()));
  printNote("open dev mode: owner `local`, no authentication");
  std::fflush(stdout);

  int sig = 0;
  while (::sigwait(&signals, &sig) != 0) {
  }
  log::info("manager {}: signal {}, stopping", args.space, sig);
  {
    std::lock_guard lock(relay->mu);
    relay->plane = nullptr;
  }
  plane->reset();
  printOk(fmt::format("manager for space {} stopped", args.space));
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
  auto url = resolveServer(args);
  std::unique_ptr<transport::Connection> conn;
  if (!url.isOk()) {
    verdict.evidence = mesh::LivenessEvidence::kRefused;
    verdict.detail = url.status().toString();
  } else {
    transport::ConnectOptions options;
    options.servers = {*url};
    options.name = "shoal probe";
    options.allowReconnect = false;
    options.connectTimeout = timeout;
    auto connected = transport::Connection::connect(options);
    if (!connected.isOk()) {
      verdict.evidence = mesh::LivenessEvidence::kRefused;
      verdict.detail = "broker " + *url + " unreachable: " + connected.status().toString();
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
    std::printf("%s\n", json::serialize(out).c_str());
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
      "serve", "run the space's manager plane in this terminal (provisioning, liveness)");
  serveCmd->add_option("--space", serve->space, "space name")->capture_default_str();
  serveCmd->add_option("--server", serve->server,
                       "broker URL (default: the local mesh's, else nats://127.0.0.1:4222)");
  serveCmd->callback([serve, &result] { result.exitCode = runServe(*serve); });

  CLI::App* probeCmd =
      app.add_subcommand("probe", "ask whether a plane (manager or delivery) is serving");
  probeCmd->add_option("plane", probe->plane, "manager or delivery")->required();
  probeCmd->add_option("--space", probe->space, "space name")->capture_default_str();
  probeCmd->add_option("--server", probe->server,
                       "broker URL (default: the local mesh's, else nats://127.0.0.1:4222)");
  probeCmd->add_option("--timeout", probe->timeoutSeconds, "seconds to wait for an answer")
      ->capture_default_str();
  probeCmd->add_flag("--json", probe->json, "machine-readable output");
  probeCmd->callback([probe, &result] { result.exitCode = runProbe(*probe); });
}

}  // namespace shoal::cli
