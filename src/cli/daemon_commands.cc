// `shoal daemon run|status` and `shoal seat add|list|show|rm`: the seat daemon and its registry.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/file_system.h"
#include "cli/command.h"
#include "cli/mesh_target.h"
#include "cli/option_checks.h"
#include "cli/output.h"
#include "cli/seat_id.h"
#include "cli/seat_rows.h"
#include "cli/signal_wait.h"
#include "daemon/control_socket.h"
#include "daemon/daemon_service.h"
#include "mesh/credential_rail.h"
#include "supervisor/auth_mode.h"
#include "supervisor/mesh_paths.h"
#include "supervisor/space_join.h"
#include "supervisor/user_identity.h"
#include "transport/creds_file.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct DaemonArgs {
  MeshTargetArgs target;
  bool json = false;
  // run, auth mode: the daemon's credential (default: the one `shoal up --auth` mints) and
  // the machine it reports (default: this host's name).
  std::string creds;
  std::string machine;
};

struct SeatArgs {
  MeshTargetArgs target;
  std::string name;
  std::string id;
  std::string runtime = "exec";
  std::vector<std::string> command;
  std::string cwd;
  bool createCwd = false;
  bool ack = false;
  std::string role;
  std::vector<std::string> channels;  // add: joined at start; channels: joined from now on
  std::vector<std::string> leaveChannels;
  std::vector<std::string> env;
  std::string machine;  // add: where it runs (default: this machine); move: where it goes
  int64_t revision = 0;
  double waitSeconds = 600;
  bool noWait = false;
  bool json = false;
};

Result<std::string> socketFor(const MeshTargetArgs& target) {
  return daemon::controlSocketPath(target.space);
}

// `minTimeout`: ops that wait for a seat (start, sleep, stop, rm) take as long as a runtime's
// stop grace and launch; the CLI waits at least that long whatever --timeout says.
constexpr std::chrono::milliseconds kSeatOpTimeout{20000};

Result<json::value> ask(const MeshTargetArgs& target, const std::string& op, json::object args,
                        std::chrono::milliseconds minTimeout = std::chrono::milliseconds(0)) {
  SHOAL_ASSIGN_OR_RETURN(std::string path, socketFor(target));
  daemon::ControlRequest request{op, json::serialize(args)};
  SHOAL_ASSIGN_OR_RETURN(
      std::string result,
      daemon::controlRequest(path, request, std::max(target.timeout(), minTimeout)));
  boost::system::error_code ec;
  json::value v = json::parse(result, ec);
  if (ec) return internalError("bad-control-reply", "the daemon's result is not JSON");
  return v;
}

// A profile's command as one line (" (runtime default)" when empty).
std::string commandText(const json::object& profile) {
  std::string command;
  for (const auto& a : profile.at("command").as_array())
    command += " " + std::string(a.as_string());
  return command.empty() ? std::string(" (runtime default)") : command;
}

std::string describeSeat(const json::object& snapshot) {
  const json::object& p = snapshot.at("profile").as_object();
  std::string line =
      fmt::format("{:<20} {:<28} {}", std::string(p.at("name").as_string()),
                  std::string(p.at("id").as_string()), std::string(p.at("runtime").as_string()));
  if (const auto* role = p.if_contains("role")) {
    line += " · role " + std::string(role->as_string());
  }
  const auto& channels = p.at("channels").as_array();
  if (!channels.empty()) {
    std::string list;
    for (const auto& c : channels)
      list += (list.empty() ? "#" : " #") + std::string(c.as_string());
    line += " · " + list;
  }
  if (const auto* machine = p.if_contains("machine")) {
    line += " · on " + std::string(machine->as_string());
  }
  line += fmt::format(" · rev {}", snapshot.at("revision").as_int64());
  return line;
}

// On the authority's machine a daemon started by hand (`shoal up --auth --no-daemon`, then
// `shoal daemon run`) mints its own credential, as the supervisor does before each start: when
// there is none, or it is past half its life. A valid one is kept, since a running daemon of
// this machine may be reading it (and the machine lock refuses a second daemon anyway).
Status mintOwnDaemonCredentialIfDue(const supervisor::MeshPaths& paths,
                                    const std::string& machine) {
  FileSystem& fs = FileSystem::posix();
  const supervisor::AuthPaths auth = supervisor::authPathsOf(paths);
  if (!fs.exists(auth.authorityDir)) return Status::ok();  // not the authority's machine
  if (fs.exists(auth.daemonCreds)) {
    auto info = transport::readCredsFile(fs, auth.daemonCreds);
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    if (info.isOk() && now < info->issuedAt + (info->expiresAt - info->issuedAt) / 2) {
      return Status::ok();
    }
  }
  SHOAL_ASSIGN_OR_RETURN(supervisor::UserIdentity me,
                         supervisor::ensureUserIdentity(paths.secretsDir));
  SHOAL_ASSIGN_OR_RETURN(planes::CredentialAuthority authority, supervisor::openAuthority(paths));
  SHOAL_ASSIGN_OR_RETURN(std::string connId, supervisor::newDaemonConnId());
  return supervisor::mintDaemonCredential(authority, paths, me.owner, machine, connId,
                                          supervisor::kPlaneCredentialLifetime)
      .status()
      .withContext("minting this machine's daemon credential");
}

// Auth mode: the daemon connects under its own credential and asks the manager for its
// seats' (daemon/seat_credentials.h); it runs the seats of the person running it.
Status applyAuthMode(const DaemonArgs& args, const supervisor::MeshPaths& paths,
                     daemon::DaemonOptions& options) {
  const supervisor::AuthPaths auth = supervisor::authPathsOf(paths);
  auto joined = supervisor::readJoinedSpace(paths);
  options.nkeySeedFile.clear();
  options.credentialsFile = !args.creds.empty() ? args.creds
                            : joined.isOk()     ? joined->daemonCreds
                                                : auth.daemonCreds;
  if (args.creds.empty() && !joined.isOk()) {
    SHOAL_RETURN_IF_ERROR(mintOwnDaemonCredentialIfDue(paths, options.machine));
  }
  if (!FileSystem::posix().exists(options.credentialsFile)) {
    return failedPrecondition("daemon-creds-missing",
                              "no daemon credential at " + options.credentialsFile +
                                  ": `shoal up --auth` mints it on the authority's machine (or "
                                  "pass --creds)");
  }
  if (joined.isOk()) {
    options.identity.owner = joined->owner;  // the owner who invited this machine
    options.renewsOwnCredential = args.creds.empty();
  } else {
    SHOAL_ASSIGN_OR_RETURN(supervisor::UserIdentity me,
                           supervisor::ensureUserIdentity(paths.secretsDir));
    options.identity.owner = me.owner;
    options.renewsOwnCredential = args.creds.empty();  // minted above, renewed by the manager
  }
  options.identity.machine = options.machine;
  options.seatCredsDir = auth.seatCredsDir;
  return Status::ok();
}

int runDaemon(const DaemonArgs& args) {
  const std::string what = "shoal daemon";
  blockStopSignals();
  MeshTargetArgs targetArgs = args.target;
  targetArgs.asDaemon = true;
  auto target = resolveMeshTarget(targetArgs);
  if (!target.isOk()) return printFailure(what, target.status());
  daemon::DaemonOptions options;
  options.space = target->space;
  options.url = target->url;
  options.nkeySeedFile = target->nkeySeedFile;
  options.tlsCaFile = target->caFile;
  auto paths = supervisor::MeshPaths::resolve(target->space);
  if (!paths.isOk()) return printFailure(what, paths.status());
  options.profileKeyFile = paths->profileKeyFile;
  auto joined = supervisor::readJoinedSpace(*paths);
  if (args.machine.empty() && joined.isOk()) {
    options.machine = joined->machine;  // the name this machine joined the space under
  } else if (args.machine.empty()) {
    auto named = supervisor::thisMachineName(*paths);
    if (!named.isOk()) return printFailure(what, named.status());
    options.machine = *named;
  } else {
    options.machine = args.machine;
  }
  if (Status st = mesh::validateMachineName(options.machine); !st.isOk()) {
    return printFailure(what, st);
  }
  if (target->mode == "auth" || !args.creds.empty()) {
    if (Status st = applyAuthMode(args, *paths, options); !st.isOk()) {
      return printFailure(what, st);
    }
  }
  auto service = daemon::DaemonService::start(options);
  if (!service.isOk()) return printFailure(what, service.status());
  printOk(fmt::format("daemon serving space {} on {} (control socket {})", target->space,
                      target->url, (*service)->socketPath()));
  std::fflush(stdout);
  while (!waitForStopSignal(std::chrono::milliseconds(1000))) {
  }
  // One total deadline for every seat's stop, started concurrently (StopForShutdown).
  if (!(*service)->shutdown(std::chrono::milliseconds(5000))) {
    printNote("some seats did not stop within 5 s; their runtimes were killed");
    std::fflush(stdout);
    (void)service->release();  // nothing waits on them again
    std::_Exit(0);
  }
  service->reset();
  printOk("daemon stopped");
  return 0;
}

int runDaemonStatus(const DaemonArgs& args) {
  auto status = ask(args.target, "status", {});
  if (!status.isOk()) return printFailure("shoal daemon status", status.status());
  if (args.json) {
    printResult(*status);
    return 0;
  }
  const json::object& o = status->as_object();
  const json::array& seats = o.at("seats").as_array();
  printOk(fmt::format("daemon pid {} serving space {} on {}, {} seat(s)", o.at("pid").as_int64(),
                      std::string(o.at("space").as_string()), std::string(o.at("url").as_string()),
                      seats.size()));
  for (const auto& v : seats) {
    const json::object& s = v.as_object();
    std::string state(s.at("state").as_string());
    if (s.at("running").as_bool())
      state += fmt::format(" (pid {})", s.at("pid").to_number<int64_t>());
    std::string line = fmt::format("{:<20} {:<28} {} · {}", std::string(s.at("name").as_string()),
                                   std::string(s.at("id").as_string()),
                                   std::string(s.at("runtime").as_string()), state);
    if (s.at("admitted").to_number<int64_t>() > 0 || s.at("queued").to_number<int64_t>() > 0) {
      line +=
          fmt::format(" · admitted {} · queued {} · surfaced {} · failed {}",
                      s.at("admitted").to_number<int64_t>(), s.at("queued").to_number<int64_t>(),
                      s.at("surfaced").to_number<int64_t>(), s.at("failed").to_number<int64_t>());
    }
    std::string note(s.at("note").as_string());
    if (!note.empty()) line += " (" + note + ")";
    printDetail(line);
  }
  printSeatTrouble(seatsNotRunning(seats));
  return 0;
}

int runSeatAdd(const SeatArgs& args) {
  const std::string what = "shoal seat add";
  const std::string id = args.id.empty() ? seatId(args.name, seatOwnerOf(args.target)) : args.id;
  std::string cwd = args.cwd;
  bool createCwd = args.createCwd;
  if (cwd.empty()) {
    auto paths = supervisor::MeshPaths::resolve(args.target.space);
    if (!paths.isOk()) return printFailure(what, paths.status());
    cwd = paths->dataDir + "/seats/" + id;
    createCwd = true;  // the default place is Shoal's own, made on first use
  } else if (cwd.front() != '/') {
    // Relative to where the command runs; the daemon checks that it exists.
    char here[4096];
    if (::getcwd(here, sizeof here) == nullptr) {
      return printFailure(
          what, invalidArgument("bad-cwd", "cannot resolve " + cwd + ": pass an absolute --cwd"));
    }
    cwd = std::string(here) + "/" + cwd;
    if (char* abs = ::realpath(cwd.c_str(), nullptr)) {
      cwd = abs;
      std::free(abs);
    }
  }
  json::object profile;
  profile["name"] = args.name;
  profile["id"] = id;
  profile["runtime"] = args.runtime;
  json::array command;
  for (const auto& a : args.command)
    command.push_back(json::value(a));
  profile["command"] = std::move(command);
  profile["cwd"] = cwd;
  if (createCwd) profile["createCwd"] = true;
  if (args.ack) profile["ack"] = true;
  if (!args.role.empty()) profile["role"] = args.role;
  if (!args.machine.empty()) profile["machine"] = args.machine;
  json::array channels;
  for (const auto& c : args.channels)
    channels.push_back(json::value(c));
  profile["channels"] = std::move(channels);
  json::array env;
  for (const auto& e : args.env)
    env.push_back(json::value(e));
  profile["env"] = std::move(env);
  auto added = ask(args.target, "seat.add", std::move(profile), kSeatOpTimeout);
  if (!added.isOk()) return printFailure(what, added.status());
  if (args.json) {
    printResult(*added);
    return 0;
  }
  printOk("added " + describeSeat(added->as_object()));
  std::string note(added->at("note").as_string());
  if (added->at("running").as_bool()) {
    printDetail("running; its runtime's output goes to <cwd>/.shoal/runtime.log");
  } else {
    printNote("registered but not running: " + note);
  }
  return 0;
}

int runSeatList(const SeatArgs& args) {
  auto seats = ask(args.target, "seat.list", {});
  if (!seats.isOk()) return printFailure("shoal seat list", seats.status());
  if (args.json) {
    printResult(*seats, "seats");
    return 0;
  }
  if (seats->as_array().empty()) printOk("no seats (add one with `shoal seat add`)");
  for (const auto& s : seats->as_array())
    printDetail(describeSeat(s.as_object()));
  return 0;
}

int runSeatShow(const SeatArgs& args) {
  auto seat = ask(args.target, "seat.show", {{"id", seatId(args.name, seatOwnerOf(args.target))}});
  if (!seat.isOk()) return printFailure("shoal seat show", seat.status());
  if (args.json) {
    printResult(*seat);
    return 0;
  }
  printOk(describeSeat(seat->as_object()));
  const json::object& p = seat->at("profile").as_object();
  printDetail("command:" + commandText(p));
  if (const auto* ack = p.if_contains("ack"); ack != nullptr && ack->is_bool() && ack->as_bool())
    printDetail("surfaced on: the program's `ack <id>` on $SHOAL_ACK_FD (shoal-ack)");
  const std::string seal(seat->at("seal").as_string());
  if (seal != "sealed") {
    printNote("profile " + seal +
              ": not sealed by this daemon, so it is never run here (`shoal seat trust` seals it "
              "after you checked the command above)");
  }
  printDetail("cwd: " + std::string(p.at("cwd").as_string()));
  printDetail("lifecycle: " + std::string(p.at("lifecycleUid").as_string()));
  if (const auto* seatRow = seat->as_object().if_contains("seat");
      seatRow != nullptr && seatRow->is_object()) {
    const json::object& row = seatRow->as_object();
    std::string line =
        fmt::format("state: {} (desired {})", std::string(row.at("state").as_string()),
                    std::string(row.at("desired").as_string()));
    if (row.at("running").as_bool())
      line += fmt::format(", runtime pid {}", row.at("pid").to_number<int64_t>());
    if (!row.at("note").as_string().empty())
      line += " — " + std::string(row.at("note").as_string());
    printDetail(line);
    if (const auto* session = row.if_contains("session"); session != nullptr) {
      printDetail(fmt::format(
          "session: {} ({})", std::string(session->at("id").as_string()),
          session->at("resumeSafe").as_bool()
              ? "safe to resume"
              : "unsafe to resume: a turn or delivery is unresolved; a restart reconciles it"));
    }
    if (const auto* c = row.if_contains("compaction"); c != nullptr) {
      std::string text = "last compaction: " + std::string(c->at("state").as_string());
      if (const auto* d = c->as_object().if_contains("detail"); d != nullptr)
        text += " — " + std::string(d->as_string());
      printDetail(text);
    }
  }
  return 0;
}

// seat compact: starts a compaction (the daemon answers at once) and follows seat.show until
// it ended. Exit 0 compacted, 1 refused or failed, 4 still compacting after --wait.
constexpr int kExitStillRunning = 4;  // a compaction or an interrupted turn still runs

int runSeatCompact(const SeatArgs& args) {
  const std::string what = "shoal seat compact";
  const std::string id = seatId(args.name, seatOwnerOf(args.target));
  auto started = ask(args.target, "seat.compact", {{"id", id}}, kSeatOpTimeout);
  if (!started.isOk()) return printFailure(what, started.status());
  const auto compactionOf = [](const json::value& row) -> const json::object* {
    const auto* c = row.as_object().if_contains("compaction");
    return c != nullptr && c->is_object() ? &c->as_object() : nullptr;
  };
  const json::object* c = compactionOf(*started);
  const int64_t startedAt = c != nullptr ? c->at("startedAt").to_number<int64_t>() : 0;
  json::value last = *started;
  if (!args.noWait) {
    if (!args.json) printDetail("compacting " + id + " …");
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(args.waitSeconds * 1000));
    while (true) {
      auto row = ask(args.target, "seat.show", {{"id", id}});
      if (!row.isOk()) return printFailure(what, row.status());
      last = row->at("seat");
      c = compactionOf(last);
      const bool sameRun = c != nullptr && c->at("startedAt").to_number<int64_t>() == startedAt;
      if (!sameRun || c->at("state").as_string() != "compacting") break;
      if (std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }
  if (args.json) {
    printResult(last);
  }
  c = compactionOf(last);
  const std::string state = c != nullptr ? std::string(c->at("state").as_string()) : "unknown";
  const std::string detail =
      c != nullptr && c->contains("detail") ? std::string(c->at("detail").as_string()) : "";
  if (state == "compacted") {
    if (!args.json) {
      printOk(fmt::format(
          "seat {} compacted in {:.1f} s", id,
          static_cast<double>(c->at("endedAt").to_number<int64_t>() - startedAt) / 1000.0));
    }
    return 0;
  }
  if (state == "compacting") {
    if (!args.json) {
      printOk("seat " + id + " is compacting");
      if (!args.noWait) {
        printNote(fmt::format("not ended after {} s; `shoal seat show {}` shows when it does",
                              args.waitSeconds, id));
      }
    }
    return args.noWait ? 0 : kExitStillRunning;
  }
  return printFailure(
      what, failedPrecondition("compaction-failed", "seat " + id + " did not compact: " +
                                                        (detail.empty() ? state : detail)));
}

// seat start | sleep | stop: writes the desired state and waits for the seat to reach it.
int runSeatState(const SeatArgs& args, const std::string& verb) {
  const std::string what = "shoal seat " + verb;
  auto r = ask(args.target, "seat." + verb, {{"id", seatId(args.name, seatOwnerOf(args.target))}},
               kSeatOpTimeout);
  if (!r.isOk()) return printFailure(what, r.status());
  if (args.json) {
    printResult(*r);
    return 0;
  }
  std::string id(r->at("id").as_string());
  std::string note(r->at("note").as_string());
  std::string state(r->at("state").as_string());
  if (verb == "start" && !r->at("running").as_bool()) {
    return printFailure(what, failedPrecondition("seat-not-running",
                                                 id + " did not start (" + state + "): " + note));
  }
  printOk(fmt::format("seat {} {}", id, state));
  if (verb == "sleep") printDetail("it stays on the mesh; a direct message wakes it");
  if (verb == "stop") printDetail("it left the mesh; its direct messages wait in the broker");
  return 0;
}

// seat interrupt: asks the runtime to stop its running turn, then waits (--wait) for that turn
// to end. Exit 0 ended, 1 refused, 4 asked but still running after --wait.
int runSeatInterrupt(const SeatArgs& args) {
  const std::string what = "shoal seat interrupt";
  const std::string id = seatId(args.name, seatOwnerOf(args.target));
  auto asked = ask(args.target, "seat.interrupt", {{"id", id}}, kSeatOpTimeout);
  if (!asked.isOk()) return printFailure(what, asked.status());
  const int64_t turnsBefore = asked->at("turns").to_number<int64_t>();
  json::value last = *asked;
  bool ended = false;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(args.waitSeconds * 1000));
  while (!args.noWait) {
    auto row = ask(args.target, "seat.show", {{"id", id}});
    if (!row.isOk()) return printFailure(what, row.status());
    last = row->at("seat");
    ended = last.at("turns").to_number<int64_t>() > turnsBefore ||
            last.at("generation") != asked->at("generation");
    if (ended || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (args.json) {
    printResult(last);
  } else if (args.noWait) {
    printOk("asked seat " + id + " to stop its turn");
  } else if (ended) {
    printOk("seat " + id + ": the turn was interrupted");
    printDetail("its deliveries' wakes failed `interrupted`; queued messages go out next");
  } else {
    printNote(fmt::format("asked seat {} to stop its turn; it has not ended after {} s", id,
                          args.waitSeconds));
  }
  if (args.noWait || ended) return 0;
  return kExitStillRunning;
}

int runSeatRm(const SeatArgs& args) {
  json::object request{{"id", seatId(args.name, seatOwnerOf(args.target))}};
  if (args.revision > 0) request["revision"] = args.revision;
  auto removed = ask(args.target, "seat.rm", std::move(request), kSeatOpTimeout);
  if (!removed.isOk()) return printFailure("shoal seat rm", removed.status());
  if (jsonOutput()) {
    printResult(*removed);
    return 0;
  }
  printOk("removed seat " + std::string(removed->at("removed").as_string()));
  return 0;
}

// seat trust: the owner vouches for a stored profile the daemon did not seal (written before
// seals, or by someone else); the daemon seals it as it is and opens it.
int runSeatTrust(const SeatArgs& args) {
  const std::string what = "shoal seat trust";
  auto trusted = ask(args.target, "seat.trust",
                     {{"id", seatId(args.name, seatOwnerOf(args.target))}}, kSeatOpTimeout);
  if (!trusted.isOk()) return printFailure(what, trusted.status());
  if (jsonOutput()) {
    printResult(*trusted);
    return 0;
  }
  printOk("trusted " + describeSeat(trusted->as_object()));
  printDetail("command:" + commandText(trusted->at("profile").as_object()));
  std::string note(trusted->at("note").as_string());
  if (!note.empty()) printDetail(note);
  return 0;
}

// seat move: the seat runs on another machine from now on; its journal stays here.
int runSeatMove(const SeatArgs& args) {
  const std::string what = "shoal seat move";
  auto moved = ask(args.target, "seat.move",
                   {{"id", seatId(args.name, seatOwnerOf(args.target))}, {"machine", args.machine}},
                   kSeatOpTimeout);
  if (!moved.isOk()) return printFailure(what, moved.status());
  if (jsonOutput()) {
    printResult(*moved);
    return 0;
  }
  printOk("moved " + describeSeat(moved->as_object()));
  std::string note(moved->at("note").as_string());
  if (!note.empty()) printDetail(note);
  return 0;
}

// `shoal seat channels SEAT [--add C]… [--remove C]…`: without a change, its channels.
int runSeatChannels(const SeatArgs& args) {
  const std::string what = "shoal seat channels";
  const std::string id = seatId(args.name, seatOwnerOf(args.target));
  auto changed = args.channels.empty() && args.leaveChannels.empty()
                     ? ask(args.target, "seat.show", {{"id", id}})
                     : ask(args.target, "seat.channels",
                           {{"id", id},
                            {"add", json::value_from(args.channels)},
                            {"remove", json::value_from(args.leaveChannels)}},
                           kSeatOpTimeout);
  if (!changed.isOk()) return printFailure(what, changed.status());
  if (jsonOutput()) {
    printResult(*changed);
    return 0;
  }
  std::string list;
  for (const auto& c : changed->at("profile").at("channels").as_array())
    list += " #" + std::string(c.as_string());
  printOk(fmt::format("seat {} joins{}", id, list.empty() ? " no channel" : list));
  if (const auto* note = changed->as_object().if_contains("note"); note && note->is_string())
    printDetail(std::string(note->as_string()));
  return 0;
}

}  // namespace

void registerDaemonCommands(CLI::App& app, CommandResult& result) {
  CLI::App* daemon = app.add_subcommand("daemon", "the seat daemon of this machine");
  daemon->require_subcommand(1);
  auto dargs = std::make_shared<DaemonArgs>();
  CLI::App* run = daemon->add_subcommand("run", "run the daemon in the foreground (Ctrl-C stops)");
  addMeshTargetOptions(run, dargs->target, "control replies");
  run->add_option("--creds", dargs->creds,
                  "auth mode: the daemon's .creds (default: the one `shoal up --auth` mints)");
  run->add_option("--machine", dargs->machine,
                  "the machine it runs seats for (default: this host's name)");
  run->callback([dargs, &result] { result.exitCode = runDaemon(*dargs); });
  auto sargs = std::make_shared<DaemonArgs>();
  CLI::App* status = daemon->add_subcommand("status", "is the daemon running, and with what");
  addMeshTargetOptions(status, sargs->target, "the daemon's reply");
  status->add_flag("--json", sargs->json, "machine-readable output");
  status->callback([sargs, &result] { result.exitCode = runDaemonStatus(*sargs); });

  CLI::App* seat = app.add_subcommand("seat", "the seats the daemon runs");
  seat->require_subcommand(1);
  auto add = std::make_shared<SeatArgs>();
  CLI::App* a = seat->add_subcommand("add", "register a seat: a principal and its runtime");
  a->add_option("name", add->name, "the seat's public name")->required();
  a->add_option("command", add->command, "the runtime command (after --), e.g. -- ./agent.sh");
  a->add_option("--runtime", add->runtime, "exec, claude, codex or opencode")
      ->capture_default_str();
  a->add_option("--id", add->id, "its principal id (default local.<name as a token>)");
  a->add_option("--cwd", add->cwd,
                "its working directory, which must exist (default: under the space's data dir)");
  a->add_flag("--create-cwd", add->createCwd, "make --cwd if it does not exist");
  a->add_flag("--ack", add->ack,
              "exec: surface a message only when the program writes `ack <id>` to $SHOAL_ACK_FD "
              "(see shoal-ack)");
  a->add_option("--role", add->role, "take anycast work for this role");
  a->add_option("--machine", add->machine,
                "the machine whose daemon runs it (default: the daemon's own)");
  a->add_option("--channel", add->channels, "join this channel at start (repeatable)");
  a->add_option("--env", add->env, "pass this environment variable through (repeatable)");
  addMeshTargetOptions(a, add->target, "the daemon's reply");
  a->add_flag("--json", add->json, "machine-readable output");
  a->callback([add, &result] { result.exitCode = runSeatAdd(*add); });

  auto list = std::make_shared<SeatArgs>();
  CLI::App* l = seat->add_subcommand("list", "the registered seats");
  addMeshTargetOptions(l, list->target, "the daemon's reply");
  l->add_flag("--json", list->json, "machine-readable output");
  l->callback([list, &result] { result.exitCode = runSeatList(*list); });

  auto show = std::make_shared<SeatArgs>();
  CLI::App* s = seat->add_subcommand("show", "one seat's profile and revision");
  s->add_option("seat", show->name, "its id or name")->required();
  addMeshTargetOptions(s, show->target, "the daemon's reply");
  s->add_flag("--json", show->json, "machine-readable output");
  s->callback([show, &result] { result.exitCode = runSeatShow(*show); });

  const std::pair<const char*, const char*> verbs[] = {
      {"start", "run a seat's runtime (also un-parks one that kept crashing)"},
      {"sleep", "stop a seat's runtime but keep it on the mesh; a direct message wakes it"},
      {"stop", "stop a seat (it leaves the mesh; DMs wait for it)"}};
  for (const auto& [verb, help] : verbs) {
    auto ss = std::make_shared<SeatArgs>();
    CLI::App* c = seat->add_subcommand(verb, help);
    c->add_option("seat", ss->name, "its id or name")->required();
    addMeshTargetOptions(c, ss->target, "the daemon's reply");
    c->add_flag("--json", ss->json, "machine-readable output");
    std::string v = verb;
    c->callback([ss, &result, v] { result.exitCode = runSeatState(*ss, v); });
  }

  // Commands that ask the seat's runtime for something and follow it to its end.
  struct Waited {
    const char* verb;
    const char* help;
    double waitSeconds;
    const char* noWaitHelp;
    int (*run)(const SeatArgs&);
  };
  const Waited waited[] = {
      {"compact", "compact a codex or opencode seat's session context (when it is idle)", 600,
       "return once it started", runSeatCompact},
      {"interrupt", "stop a seat's running turn (claude, codex, opencode); the session stays", 30,
       "return once asked", runSeatInterrupt}};
  for (const Waited& w : waited) {
    auto wa = std::make_shared<SeatArgs>();
    wa->waitSeconds = w.waitSeconds;
    CLI::App* c = seat->add_subcommand(w.verb, w.help);
    c->add_option("seat", wa->name, "its id or name")->required();
    c->add_option("--wait", wa->waitSeconds, "wait this many seconds for its end (exit 4 after)")
        ->capture_default_str()
        ->check(secondsUpTo(kMaxWaitSeconds));
    c->add_flag("--no-wait", wa->noWait, w.noWaitHelp);
    addMeshTargetOptions(c, wa->target, "the daemon's reply");
    c->add_flag("--json", wa->json, "machine-readable output (the seat's row)");
    c->callback([wa, &result, fn = w.run] { result.exitCode = fn(*wa); });
  }

  addSeatEventsCommand(seat, result);
  addSeatForgetCommand(seat, result);

  auto rm = std::make_shared<SeatArgs>();
  CLI::App* r = seat->add_subcommand("rm", "unregister a seat");
  r->add_option("seat", rm->name, "its id or name")->required();
  r->add_option("--revision", rm->revision, "only if the seat is still at this revision");
  addMeshTargetOptions(r, rm->target, "the daemon's reply");
  r->add_flag("--json", rm->json, "machine-readable output");
  r->callback([rm, &result] { result.exitCode = runSeatRm(*rm); });

  auto move = std::make_shared<SeatArgs>();
  CLI::App* mv = seat->add_subcommand(
      "move", "run a seat on another machine from now on (it starts fresh there)");
  mv->add_option("seat", move->name, "its id or name")->required();
  mv->add_option("--to", move->machine, "the machine whose daemon runs it")->required();
  addMeshTargetOptions(mv, move->target, "the daemon's reply");
  mv->add_flag("--json", move->json, "machine-readable output");
  mv->callback([move, &result] { result.exitCode = runSeatMove(*move); });

  auto ch = std::make_shared<SeatArgs>();
  CLI::App* c = seat->add_subcommand(
      "channels", "a seat's channels, or change them (an open seat reopens with them)");
  c->add_option("seat", ch->name, "its id or name")->required();
  c->add_option("--add", ch->channels, "join this channel (repeatable)");
  c->add_option("--remove", ch->leaveChannels, "leave this channel (repeatable)");
  addMeshTargetOptions(c, ch->target, "the daemon's reply");
  c->add_flag("--json", ch->json, "machine-readable output");
  c->callback([ch, &result] { result.exitCode = runSeatChannels(*ch); });

  auto trust = std::make_shared<SeatArgs>();
  CLI::App* t = seat->add_subcommand(
      "trust", "vouch for a seat profile this daemon did not seal, after checking its command");
  t->add_option("seat", trust->name, "its id or name")->required();
  addMeshTargetOptions(t, trust->target, "the daemon's reply");
  t->add_flag("--json", trust->json, "machine-readable output");
  t->callback([trust, &result] { result.exitCode = runSeatTrust(*trust); });
}

}  // namespace shoal::cli
