// `shoal endpoints`: the space's roster as the presence view sees it.
#include <cmath>
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/clock.h"
#include "base/file_system.h"
#include "cli/command.h"
#include "cli/mesh_target.h"
#include "cli/message_text.h"
#include "cli/output.h"
#include "mesh/roster_read.h"
#include "transport/connection.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct EndpointsArgs {
  MeshTargetArgs target;
  bool json = false;
};

std::string describeRow(const mesh::RosterRow& row, bool viewCurrent, int64_t nowMs) {
  const wire::Presence& p = row.presence;
  std::string state = viewCurrent ? std::string(wire::presenceStatusName(p.status))
                                  : "mesh unknown (last known " +
                                        std::string(wire::presenceStatusName(p.status)) + ")";
  if (p.condition) {
    std::string since = formatAge(p.condition->since, nowMs);
    state += fmt::format(" ({}{})", wire::conditionCodeName(p.condition->code),
                         since.empty() ? "" : " for " + since);
  }
  std::string line = fmt::format("{:<20} {:<36} {}", printablePeerText(p.card.name), row.id, state);
  if (p.activity) {
    line += " · " + printablePeerText(*p.activity);
    std::string set = formatAge(p.activitySince, nowMs);
    if (!set.empty()) line += " (set " + set + " ago)";
  }
  if (std::string a = formatAge(p.activeAt, nowMs); !a.empty()) line += " · active " + a + " ago";
  if (std::string u = formatAge(p.statusSince, nowMs); !u.empty()) line += " · unchanged for " + u;
  if (p.card.role) line += " · role " + *p.card.role;
  return line;
}

// Presence stamps are epoch ms; the contract writes them as integers.
json::value optionalNumber(std::optional<double> v) {
  return stampJson(v);
}

json::object rowJson(const mesh::RosterRow& row) {
  const wire::Presence& p = row.presence;
  json::object o;
  o["id"] = row.id;
  o["name"] = p.card.name;
  o["role"] = p.card.role ? json::value(*p.card.role) : json::value(nullptr);
  o["status"] = std::string(wire::presenceStatusName(p.status));
  o["offlineCause"] = std::string(mesh::offlineCauseName(row.offlineCause));
  o["activity"] = p.activity ? json::value(*p.activity) : json::value(nullptr);
  if (p.condition) {
    o["condition"] = {{"code", std::string(wire::conditionCodeName(p.condition->code))},
                      {"since", optionalNumber(p.condition->since)},
                      {"message", p.condition->message ? json::value(*p.condition->message)
                                                       : json::value(nullptr)}};
  } else {
    o["condition"] = nullptr;
  }
  o["ts"] = stampJson(p.ts);
  o["activeAt"] = optionalNumber(p.activeAt);
  o["statusSince"] = optionalNumber(p.statusSince);
  o["activitySince"] = optionalNumber(p.activitySince);
  o["lifecycleUid"] = p.lifecycleUid ? json::value(*p.lifecycleUid) : json::value(nullptr);
  return o;
}

int runEndpoints(const EndpointsArgs& args) {
  auto target = resolveMeshTarget(args.target);
  if (!target.isOk()) return printFailure("shoal endpoints", target.status());
  const auto timeout = args.target.timeout();
  auto conn = openConnection(*target, "shoal endpoints", timeout);
  if (!conn.isOk()) return printFailure("shoal endpoints", conn.status());
  auto snap = mesh::readRosterOnce(**conn, target->space, timeout);
  if (!snap.isOk()) return printFailure("shoal endpoints", snap.status());

  const mesh::PresenceViewInfo& view = snap->view;
  const int64_t nowMs = Clock::real().wallMs();
  if (args.json) {
    json::object out;
    out["space"] = target->space;
    json::object v;
    v["state"] = std::string(mesh::viewStateName(view.state));
    v["fresh"] = view.fresh;
    v["silentSinceMs"] =
        view.silentSinceMs ? json::value(*view.silentSinceMs) : json::value(nullptr);
    v["condition"] = view.condition.isOk() ? json::value(nullptr)
                                           : json::value(std::string(view.condition.message()));
    out["view"] = std::move(v);
    json::array rows;
    for (const auto& row : snap->rows)
      rows.push_back(rowJson(row));
    out["endpoints"] = std::move(rows);
    printResult(out);
    return 0;
  }
  if (!view.fresh) {
    printNote(
        fmt::format("presence view is {}: {} — rows below are last-known, and a missing "
                    "name is not proof of absence",
                    mesh::viewStateName(view.state), view.condition.message()));
  }
  if (snap->rows.empty()) {
    printOk(fmt::format("no endpoints in space `{}`{}", target->space,
                        view.fresh ? "" : " (as far as this view knows)"));
    return 0;
  }
  for (const auto& row : snap->rows)
    printDetail(describeRow(row, view.fresh, nowMs));
  return 0;
}

}  // namespace

void registerEndpointsCommands(CLI::App& app, CommandResult& result) {
  auto args = std::make_shared<EndpointsArgs>();
  CLI::App* cmd = app.add_subcommand("endpoints", "list the space's peers and their presence");
  addMeshTargetOptions(cmd, args->target, "the roster");
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->callback([args, &result] { result.exitCode = runEndpoints(*args); });
}

}  // namespace shoal::cli
