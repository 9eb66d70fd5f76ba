// `shoal invite` and `shoal daemon join`: a second machine joins a space in auth mode
// (supervisor/space_join.h; docs/multi-machine.md).
//
//   shoal invite [--machine NAME] [--ttl SECONDS] [--space S] [--json]
//       on the machine holding the space's authority: prints a one-time join link. The link is
//       a secret: it is printed once and nowhere else (not logged, not stored).
//   shoal daemon join LINK [--machine NAME] [--space S] [--json]
//       on the other machine: verifies the broker's CA against the link, exchanges the invite
//       for this machine's daemon credential and stores the context `shoal daemon run` uses.
//       LINK may be `-`: read from stdin, so it need not appear in the shell's history.
//
// Thread safety: CLI thread only.
#include <iostream>
#include <iterator>
#include <memory>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/output.h"
#include "supervisor/mesh_paths.h"
#include "supervisor/mesh_record.h"
#include "supervisor/space_join.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct InviteArgs {
  std::string space = "main";
  std::string machine;
  int64_t ttlSeconds = 3600;
  std::string link;
  double timeoutSeconds = 10;
  bool json = false;
};

std::string spaceFlag(const std::string& space) {
  return space == "main" ? std::string() : " --space " + space;
}

int runInvite(const InviteArgs& args) {
  const std::string what = "shoal invite";
  auto paths = supervisor::MeshPaths::resolve(args.space);
  if (!paths.isOk()) return printFailure(what, paths.status());
  auto record = supervisor::readMeshRecord(FileSystem::posix(), paths->registryFile);
  if (!record.isOk()) {
    return printFailure(
        what, record.status().code() == StatusCode::kNotFound
                  ? failedPrecondition("mesh-not-up", "space " + args.space +
                                                          " is not up here; start it with "
                                                          "`shoal up --auth --host ADDR`")
                  : record.status());
  }
  supervisor::InviteOptions options;
  options.machine = args.machine;
  options.ttl = std::chrono::seconds(args.ttlSeconds);
  auto invite = supervisor::createInvite(*paths, *record, options);
  if (!invite.isOk()) return printFailure(what, invite.status());
  if (args.json) {
    printResult(json::object{{"link", invite->link},
                             {"owner", invite->owner},
                             {"machine", invite->machine},
                             {"expiresAt", invite->expiresAt}});
    return 0;
  }
  printOk(fmt::format("invite for {} of {}, valid {} min, one use:",
                      invite->machine.empty() ? "a machine" : "machine " + invite->machine,
                      invite->owner, args.ttlSeconds / 60));
  std::cout << invite->link << "\n";
  printDetail("on the other machine: shoal daemon join '<link>'" + spaceFlag(args.space) +
              " (or `shoal daemon join -` and paste it)");
  printNote("the link is a secret (it carries a credential): send it privately");
  return 0;
}

int runDaemonJoin(const InviteArgs& args) {
  const std::string what = "shoal daemon join";
  std::string link = args.link;
  if (link == "-") link.assign(std::istreambuf_iterator<char>(std::cin), {});
  auto paths = supervisor::MeshPaths::resolve(args.space);
  if (!paths.isOk()) return printFailure(what, paths.status());
  auto joined = supervisor::joinSpace(
      *paths, link, args.machine,
      std::chrono::milliseconds(static_cast<int64_t>(args.timeoutSeconds * 1000)));
  if (!joined.isOk()) return printFailure(what, joined.status());
  if (args.json) {
    printResult(json::object{{"space", joined->space},
                             {"url", joined->url},
                             {"owner", joined->owner},
                             {"machine", joined->machine},
                             {"expiresAt", joined->expiresAt},
                             {"caFile", joined->caFile},
                             {"credentialsFile", joined->daemonCreds}});
    return 0;
  }
  printOk(fmt::format("joined space {} on {} as machine {} of {} (broker verified by its CA)",
                      joined->space, joined->url, joined->machine, joined->owner));
  printDetail("daemon credential " + joined->daemonCreds);
  printDetail("next: shoal daemon run" + spaceFlag(args.space) +
              " — then add this machine's seats with `shoal seat add`");
  return 0;
}

}  // namespace

void registerInviteCommands(CLI::App& app, CommandResult& result) {
  auto invite = std::make_shared<InviteArgs>();
  CLI::App* i = app.add_subcommand("invite", "a one-time link for another machine to join");
  i->add_option("--space", invite->space, "space name")->capture_default_str();
  i->add_option("--machine", invite->machine,
                "the machine name the joiner gets (default: the joiner names it)");
  i->add_option("--ttl", invite->ttlSeconds, "seconds the link stays valid")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{60}, int64_t{7} * 86'400));
  i->add_flag("--json", invite->json, "machine-readable output");
  i->callback([invite, &result] { result.exitCode = runInvite(*invite); });

  CLI::App* daemon = app.get_subcommand("daemon");
  auto join = std::make_shared<InviteArgs>();
  CLI::App* j = daemon->add_subcommand("join", "join a space on another machine's broker");
  j->add_option("link", join->link, "the cotals:// link `shoal invite` printed (- : stdin)")
      ->required();
  j->add_option("--space", join->space, "space name")->capture_default_str();
  j->add_option("--machine", join->machine,
                "this machine's name, when the invite leaves it open (default: this host's)");
  j->add_option("--timeout", join->timeoutSeconds, "seconds to wait for the broker")
      ->capture_default_str();
  j->add_flag("--json", join->json, "machine-readable output");
  j->callback([join, &result] { result.exitCode = runDaemonJoin(*join); });
}

}  // namespace shoal::cli
