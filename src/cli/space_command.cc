// `shoal space init`: a space in auth mode on a NATS server Shoal does not run (issue 19 item
// 1; docs/multi-machine.md, An existing NATS deployment).
//
//   shoal space init [--space S] [--resolver-dir DIR] [--server URL] [--json]
//       makes (or opens) the space's credential authority on this machine, prints the server
//       configuration that trusts it (operator, system account, full resolver with the
//       space's account preloaded, max_control_line), mints the two planes' credentials for
//       `shoal serve`, and with --server pushes the account's current claims to a server
//       already configured so (its revocations included).
//
// Thread safety: CLI thread only.
#include <memory>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/output.h"
#include "supervisor/auth_mode.h"
#include "supervisor/mesh_paths.h"
#include "wire/plane.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct SpaceInitArgs {
  std::string space = "main";
  std::string resolverDir = "/var/lib/nats/resolver";
  std::string server;
  bool json = false;
};

// The planes' credentials for `shoal serve --server`, under fresh inboxes.
Result<std::pair<int64_t, int64_t>> mintPlanes(const planes::CredentialAuthority& authority,
                                               const supervisor::MeshPaths& paths) {
  std::pair<int64_t, int64_t> expiry;
  for (wire::Plane plane : {wire::Plane::kManager, wire::Plane::kDelivery}) {
    SHOAL_ASSIGN_OR_RETURN(std::string connId, supervisor::newPlaneConnId(plane));
    SHOAL_ASSIGN_OR_RETURN(int64_t expiresAt,
                           supervisor::mintPlaneCredential(authority, paths, plane, connId,
                                                           supervisor::kPlaneCredentialLifetime));
    (plane == wire::Plane::kManager ? expiry.first : expiry.second) = expiresAt;
  }
  return expiry;
}

int runSpaceInit(const SpaceInitArgs& args) {
  const std::string what = "shoal space init";
  auto paths = supervisor::MeshPaths::resolve(args.space);
  if (!paths.isOk()) return printFailure(what, paths.status());
  if (Status st = supervisor::checkCanEnterAuthMode(*paths); !st.isOk()) {
    return printFailure(what, st);
  }
  auto authority = supervisor::openAuthority(*paths);
  if (!authority.isOk()) return printFailure(what, authority.status());
  auto planes = mintPlanes(*authority, *paths);
  if (!planes.isOk()) return printFailure(what, planes.status());
  const supervisor::AuthPaths auth = supervisor::authPathsOf(*paths);
  const std::string config = authority->serverConfig(args.resolverDir);
  Status pushed = Status::ok();
  if (!args.server.empty()) {
    pushed = supervisor::pushAccountClaims(*authority, *paths, args.server);
  }
  const std::string serve = fmt::format(
      "shoal serve --space {} --server {} --manager-creds {} --delivery-creds {} --authority {}",
      args.space, args.server.empty() ? "URL" : args.server, auth.managerCreds, auth.deliveryCreds,
      auth.authorityDir);
  if (args.json) {
    json::object out{{"space", args.space},
                     {"accountKey", authority->accountKey()},
                     {"serverConfig", config},
                     {"authorityDir", auth.authorityDir},
                     {"managerCreds", auth.managerCreds},
                     {"deliveryCreds", auth.deliveryCreds},
                     {"credsExpireAt", std::min(planes->first, planes->second)},
                     {"serve", serve}};
    if (!args.server.empty()) out["pushed"] = pushed.isOk();
    if (!pushed.isOk()) out["pushError"] = pushed.toString();
    printResult(std::move(out));
    return 0;
  }
  printOk(fmt::format("space {}: its authority is {} (account {})", args.space, auth.authorityDir,
                      authority->accountKey()));
  printDetail(
      "add this to the nats-server configuration (adjust the resolver dir), then restart it:");
  std::fputs(config.c_str(), stdout);
  printOk(fmt::format("the planes' credentials (24 h; run this again to renew them): {}, {}",
                      auth.managerCreds, auth.deliveryCreds));
  printDetail("then run the planes against it: " + serve);
  if (!args.server.empty()) {
    if (pushed.isOk()) {
      printOk("pushed the account's claims to " + args.server);
    } else {
      printNote("not pushed to " + args.server + ": " + pushed.toString() +
                " (configure the server first; the resolver_preload above carries them)");
    }
  }
  return 0;
}

}  // namespace

void registerSpaceCommands(CLI::App& app, CommandResult& result) {
  CLI::App* space = app.add_subcommand("space", "a space on a NATS server Shoal does not run");
  space->require_subcommand(1);
  auto init = std::make_shared<SpaceInitArgs>();
  CLI::App* i = space->add_subcommand(
      "init", "make the space's authority and print the server configuration that trusts it");
  i->add_option("--space", init->space, "space name")->capture_default_str();
  i->add_option("--resolver-dir", init->resolverDir,
                "the server's account resolver directory, as the printed configuration names it")
      ->capture_default_str();
  i->add_option("--server", init->server,
                "also push the account's claims to this server (configured already)");
  i->add_flag("--json", init->json, "machine-readable output");
  i->callback([init, &result] { result.exitCode = runSpaceInit(*init); });
}

}  // namespace shoal::cli
