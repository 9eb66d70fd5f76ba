// `shoal seat forget SEAT`: the space admin removes the records of a seat whose machine is gone
// (revoked with `shoal creds revoke`, or wiped), which only that machine's daemon could remove
// otherwise (daemon/profile_store.h forgetSeatRecords). In auth mode it runs on the authority's
// machine under the seat keeper's credential (planes/grants.h seatKeeperGrants); a joined
// machine is refused `needs-authority-machine`. A seat this machine keeps is `shoal seat rm`'s.
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/mesh_target.h"
#include "cli/output.h"
#include "cli/seat_id.h"
#include "daemon/profile_store.h"
#include "supervisor/auth_mode.h"
#include "supervisor/mesh_paths.h"
#include "wire/principal.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct ForgetArgs {
  MeshTargetArgs target;
  std::string seat;
  bool json = false;
};

Result<std::vector<std::string>> forget(const ForgetArgs& args, std::string* id) {
  const std::string what = "shoal seat forget";
  SHOAL_ASSIGN_OR_RETURN(MeshTarget target, resolveMeshTarget(args.target));
  SHOAL_RETURN_IF_ERROR(
      usePrivilege(args.target, target, supervisor::Privilege::kSeatRecords, what));
  SHOAL_ASSIGN_OR_RETURN(auto paths, supervisor::MeshPaths::resolve(args.target.space));
  SHOAL_ASSIGN_OR_RETURN(std::string machine, supervisor::thisMachineName(paths));
  *id = seatId(args.seat, seatOwnerOf(args.target));
  SHOAL_ASSIGN_OR_RETURN(wire::Principal seat, wire::parsePrincipal(*id));
  SHOAL_ASSIGN_OR_RETURN(auto endpoint, openObserver(target, what));
  return daemon::forgetSeatRecords(endpoint->jetStream(), target.space, seat, machine);
}

int runForget(const ForgetArgs& args) {
  std::string id;
  auto removed = forget(args, &id);
  if (!removed.isOk()) return printFailure("shoal seat forget", removed.status());
  if (args.json) {
    json::array keys;
    for (const auto& k : *removed)
      keys.push_back(json::value(k));
    printResult(json::object{{"id", id}, {"removedRecords", std::move(keys)}});
    return 0;
  }
  printOk(fmt::format("forgot seat {}: removed {} record(s)", id, removed->size()));
  for (const auto& k : *removed)
    printDetail(k);
  printDetail("a daemon that still runs it closes it; add it again with `shoal seat add`");
  return 0;
}

}  // namespace

void addSeatForgetCommand(CLI::App* seat, CommandResult& result) {
  auto args = std::make_shared<ForgetArgs>();
  CLI::App* f = seat->add_subcommand(
      "forget", "remove a seat of a machine that is gone (the space admin; auth: its machine)");
  f->add_option("seat", args->seat, "the seat's id or name")->required();
  addMeshTargetOptions(f, args->target, "the broker");
  f->add_flag("--json", args->json, "machine-readable output");
  f->callback([args, &result] { result.exitCode = runForget(*args); });
}

}  // namespace shoal::cli
