// `shoal join --name X`: an interactive human peer — presence, DMs, channels and role work from
// a terminal (or from a script on stdin).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/ids.h"
#include "cli/command.h"
#include "cli/mesh_target.h"
#include "cli/message_text.h"
#include "cli/output.h"
#include "cli/peer_state.h"
#include "cli/signal_wait.h"
#include "supervisor/auth_mode.h"
#include "supervisor/mesh_paths.h"
#include "wire/token.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct JoinArgs {
  MeshTargetArgs target;
  std::string name;
  std::string id;  // owner.actor; default local.<name> (auth mode: <your owner>.<name>)
  std::string role;
  std::vector<std::string> channels;
  bool replay = false;
  bool noReplay = false;
  bool keepRunning = false;
  int64_t credsTtlSeconds = supervisor::kPeerCredentialLifetime.count() * 3600;
  bool json = false;
};

json::object joinEvent(const mesh::JoinReport& r) {
  return json::object{{"event", "joined-channel"},        {"channel", r.channel},
                      {"class", r.deliveryClass},         {"durable", r.durable},
                      {"generation", r.generation},       {"replayed", r.replayed},
                      {"alreadyJoined", r.alreadyJoined}, {"backstop", r.backstop}};
}

// `✓ joined #ops (durable, member generation 1; 3 earlier post(s) replayed)`, or the backstop
// problem in words (never silent).
std::string joinLine(const mesh::JoinReport& r) {
  if (r.alreadyJoined) return "· already joined #" + r.channel;
  std::string what = r.deliveryClass.empty() ? "live pattern" : r.deliveryClass;
  if (r.durable) what += fmt::format(", member generation {}", r.generation);
  if (r.replay) what += fmt::format("; {} earlier post(s) replayed", r.replayed);
  std::string line = fmt::format("✓ joined #{} ({})", r.channel, what);
  if (!r.backstop.empty()) line += "\n! #" + r.channel + ": " + r.backstop;
  return line;
}

constexpr std::string_view kHelp =
    "commands: /dm <to> <text> · /msg <channel> <text> (or #channel text) · /ask <role> <text> "
    "· /join <channel> · /leave <channel> · /who · /status idle|waiting|working · /help · "
    "/quit; a name with spaces goes in quotes (/dm \"Demo Ada\" hi); plain text posts to the "
    "first joined channel";

// Output from the endpoint's threads and the input loop, one flushed line at a time: the human
// line, or with --json the event object (NDJSON: `event` names it; a refusal is the contract's
// {"ok":false,"error":…}).
class Console {
 public:
  void say(const std::string& line, json::object event) {
    std::lock_guard lock(mu_);
    if (jsonOutput()) {
      printJson(event);
      return;
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
  void note(const std::string& text) { say("! " + text, {{"event", "note"}, {"text", text}}); }
  void refused(const std::string& what, const Status& status) {
    say("✗ " + what + ": " + std::string(status.message()) + " (" + std::string(status.reason()) +
            ")",
        {{"ok", false}, {"event", "refused"}, {"error", errorObject(status)}});
  }

 private:
  std::mutex mu_;
};

// This peer's lifecycle uid, kept per space and name so a restarted `join` is the same
// lifecycle (and binds the same DM durable: DMs sent while it was away arrive). The lock
// file keeps two `join`s of one name from sharing that durable.
struct Lifecycle {
  std::string uid;
  std::unique_ptr<FileLock> lock;
};

Result<Lifecycle> lifecycleFor(const std::string& space, const wire::Principal& p) {
  Lifecycle out;
  SHOAL_ASSIGN_OR_RETURN(out.lock,
                         lockPeerDurable(space, p, fmt::format("pid {} (shoal join)", ::getpid())));
  SHOAL_ASSIGN_OR_RETURN(out.uid, peerLifecycleUid(space, p));
  return out;
}

std::string restOf(std::istringstream& in) {
  std::string rest;
  std::getline(in, rest);
  size_t start = rest.find_first_not_of(' ');
  return start == std::string::npos ? "" : rest.substr(start);
}

// The next word of `in`: a bare word, or a "double" / 'single' quoted one that may hold spaces
// (`/dm "Demo Ada" hi`). Empty when nothing is left.
std::string nextWord(std::istringstream& in) {
  in >> std::ws;
  int quote = in.peek();
  if (quote != '"' && quote != '\'') {
    std::string word;
    in >> word;
    return word;
  }
  in.get();
  std::string word;
  std::getline(in, word, static_cast<char>(quote));
  return word;
}

// Auth mode: the peer's own credential (supervisor::peerCredential), renewed past half its
// life with the connId its connection keeps; the connection reads the renewed file when the
// broker ends the old credential's at expiry. A failed renewal is retried at a tenth of the
// lifetime.
class PeerCredential {
 public:
  PeerCredential(supervisor::MeshPaths paths, wire::Principal principal, std::string uid,
                 std::vector<std::string> channels, std::string role, std::chrono::seconds lifetime)
      : paths_(std::move(paths)),
        principal_(std::move(principal)),
        uid_(std::move(uid)),
        channels_(std::move(channels)),
        role_(role.empty() ? std::nullopt : std::optional<std::string>(std::move(role))),
        lifetime_(lifetime) {}

  const supervisor::CliCredential& held() const { return held_; }

  // The first credential (a fresh connId) or a renewal (the held one's).
  Status mint() {
    supervisor::PeerRenewal renewal{lifetime_, std::string()};
    if (!held_.inboxPrefix.empty()) renewal.connId = held_.inboxPrefix.substr(kInbox.size());
    auto minted = supervisor::peerCredential(paths_, principal_, uid_, channels_, role_, renewal);
    const int64_t now = Clock::real().wallMs() / 1000;
    if (!minted.isOk()) {
      renewAt_ = now + std::max<int64_t>(lifetime_.count() / 10, 1);
      return minted.status();
    }
    held_ = std::move(minted).value();
    renewAt_ = held_.expiresAt - lifetime_.count() / 2;
    return Status::ok();
  }

  // nullopt before the renewal is due; the renewal's outcome once it was tried.
  std::optional<Status> renewIfDue() {
    if (Clock::real().wallMs() / 1000 < renewAt_) return std::nullopt;
    return mint();
  }

 private:
  static constexpr std::string_view kInbox = "_INBOX_";
  supervisor::MeshPaths paths_;
  wire::Principal principal_;
  std::string uid_;
  std::vector<std::string> channels_;
  std::optional<std::string> role_;
  std::chrono::seconds lifetime_;
  supervisor::CliCredential held_;
  int64_t renewAt_ = 0;
};

void reportRenewal(Console& console, const Status& renewed, const PeerCredential& credential) {
  if (!renewed.isOk()) {
    console.note("renewing this peer's credential failed (retrying): " + renewed.toString());
    return;
  }
  const int64_t expires = credential.held().expiresAt;
  console.say(fmt::format("· credential renewed, valid {} more s",
                          std::max<int64_t>(expires - Clock::real().wallMs() / 1000, 0)),
              {{"event", "credential-renewed"}, {"expiresAt", expires}});
}

// A /join the broker refused: in auth mode the peer's credential reads only the channels it
// was minted for (`--channel` at start), and a live connection cannot take a wider one
// (nats.c closes, rather than reconnects, a connection whose credential is revoked), so the
// remedy is a new `shoal join` naming the channel.
Status explainJoinRefusal(const Status& refused, const std::string& channel,
                          const std::vector<std::string>* minted, const std::string& name) {
  if (minted == nullptr || refused.reason() != "join-refused") return refused;
  std::string flags;
  for (const auto& c : *minted)
    flags += " --channel " + c;
  return permissionDenied(
      "join-refused",
      fmt::format("{}; in auth mode this peer's credential reads only the channels it was "
                  "started with ({}), so leave (/quit) and run `shoal join --name {}{} --channel "
                  "{}`",
                  refused.message(), minted->empty() ? "none" : flags.substr(1), name, flags,
                  channel));
}

// Runs one input line; false when the peer should leave. `minted`: in auth mode, the channels
// the peer's credential was minted for (null in open mode).
bool runLine(mesh::Endpoint& me, Console& console, const std::string& line,
             const std::vector<std::string>* minted, const std::string& name) {
  if (line.empty()) return true;
  auto report = [&](const Result<mesh::SendReceipt>& r) {
    if (r.isOk()) {
      console.say(
          fmt::format("✓ stored seq {} in {}; {}", r->stored.seq, r->stored.stream, r->note),
          {{"event", "sent"},
           {"id", r->stored.messageId},
           {"stream", r->stored.stream},
           {"seq", r->stored.seq},
           {"to", r->target},
           {"note", r->note}});
    } else {
      console.refused("not sent", r.status());
    }
  };
  if (line[0] == '#') {
    std::istringstream in(line.substr(1));
    std::string channel = nextWord(in);
    report(me.post(channel, restOf(in)));
    return true;
  }
  if (line[0] != '/') {
    auto joined = me.channels();
    if (joined.empty()) {
      console.refused(
          "not sent",
          failedPrecondition("not-joined", "join a channel first (/join <channel>), or use /dm"));
      return true;
    }
    report(me.post(joined.front(), line));
    return true;
  }
  std::istringstream in(line);
  std::string command;
  in >> command;
  if (command == "/quit" || command == "/exit") return false;
  if (command == "/help" || command == "/?") {
    console.say(std::string(kHelp), {{"event", "help"}, {"text", kHelp}});
  } else if (command == "/dm" || command == "/msg" || command == "/ask") {
    std::string to = nextWord(in);
    std::string text = restOf(in);
    if (to.empty() || text.empty()) {
      console.refused("usage", invalidArgument("usage", command + " <target> <text>"));
    } else if (command == "/dm") {
      report(me.sendDirect(to, text));
    } else if (command == "/msg") {
      report(me.post(to, text));
    } else {
      report(me.ask(to, text));
    }
  } else if (command == "/join") {
    std::string channel = nextWord(in);
    auto joined = me.join(channel);
    if (joined.isOk()) {
      console.say(joinLine(*joined), joinEvent(*joined));
    } else {
      console.refused("not joined", explainJoinRefusal(joined.status(), channel, minted, name));
    }
  } else if (command == "/leave") {
    std::string channel = nextWord(in);
    Status left = me.leave(channel);
    if (left.isOk()) {
      console.say("✓ left #" + channel, {{"event", "left-channel"}, {"channel", channel}});
    } else {
      console.refused("not left", left);
    }
  } else if (command == "/who") {
    auto roster = me.roster();
    if (!roster.view.fresh) console.note(std::string(roster.view.condition.message()));
    for (const auto& row : roster.rows) {
      const std::string status(wire::presenceStatusName(row.presence.status));
      console.say(
          fmt::format("  {} ({}) {}", printablePeerText(row.presence.card.name), row.id, status),
          {{"event", "peer"},
           {"id", row.id},
           {"name", row.presence.card.name},
           {"status", status}});
    }
  } else if (command == "/status") {
    std::string word = nextWord(in);
    auto status = wire::parsePresenceStatus(word);
    Status set = status ? me.setStatus(*status)
                        : invalidArgument("bad-status", "use idle, waiting or working");
    if (set.isOk()) {
      console.say("✓ status " + word, {{"event", "status"}, {"status", word}});
    } else {
      console.refused("status not set", set);
    }
  } else {
    console.refused("unknown command",
                    invalidArgument("unknown-command", "`" + command + "`; " + std::string(kHelp)));
  }
  return true;
}

int runJoin(const JoinArgs& args) {
  const std::string what = "shoal join";
  blockStopSignals();
  auto target = resolveMeshTarget(args.target);
  if (!target.isOk()) return printFailure(what, target.status());

  wire::Principal principal;
  if (!args.id.empty()) {
    auto parsed = wire::parsePrincipal(args.id);
    if (!parsed.isOk()) return printFailure(what, parsed.status());
    principal = *parsed;
  } else {
    principal = wire::Principal{target->mode == "auth" ? target->caller.owner : "local", args.name};
    Status valid = wire::validatePrincipal(principal);
    if (!valid.isOk()) {
      return printFailure(what, valid.withContext("--name " + args.name +
                                                  " is not an actor token; pass --id "
                                                  "<owner>.<token> and keep --name for display"));
    }
  }
  auto lifecycle = lifecycleFor(target->space, principal);
  if (!lifecycle.isOk()) return printFailure(what, lifecycle.status());
  // Auth mode: the peer connects under a credential of its own principal and channels.
  std::optional<PeerCredential> credential;
  if (target->mode == "auth") {
    auto paths = supervisor::MeshPaths::resolve(target->space);
    if (!paths.isOk()) return printFailure(what, paths.status());
    credential.emplace(*paths, principal, lifecycle->uid, args.channels, args.role,
                       std::chrono::seconds(args.credsTtlSeconds));
    if (Status minted = credential->mint(); !minted.isOk()) return printFailure(what, minted);
  }

  auto console = std::make_shared<Console>();
  mesh::EndpointOptions options;
  options.servers = {target->url};
  options.nkeySeedFile = target->nkeySeedFile;
  options.tlsCaFile = target->caFile;
  if (credential) {
    options.credentialsFile = credential->held().credsFile;
    options.inboxPrefix = credential->held().inboxPrefix;
  }
  options.space = target->space;
  options.principal = principal;
  options.displayName = args.name;
  options.cardKind = wire::EndpointKind::kEndpoint;
  options.lifecycleUid = lifecycle->uid;
  if (!args.role.empty()) {
    options.role = args.role;
    options.serviceRoles = {args.role};
  }
  options.connectionName = "shoal join " + args.name;
  options.provisionTimeout = args.target.timeout();
  options.onDelivery = [console](const mesh::Delivery& d) {
    console->say(trafficLine(d.kind, d.message, d.historical),
                 {{"event", "message"},
                  {"kind", std::string(wire::deliveryKindName(d.kind))},
                  {"id", d.message.id},
                  {"from", json::object{{"id", d.message.from.id}, {"name", d.message.from.name}}},
                  {"to", d.message.routing.target},
                  {"text", messageText(d.message)},
                  {"historical", d.historical}});
    return mesh::HandlerVerdict::kAccepted;
  };
  options.onWarning = [console](const Status& s) { console->note(s.toString()); };
  options.onRoster = [console, self = principal.dotForm()](
                         const mesh::RosterEvent& event,
                         const std::optional<mesh::RosterRow>& row) {
    using Kind = mesh::RosterEvent::Kind;
    if (!row || row->id == self) return;
    if (event.kind != Kind::kJoined && event.kind != Kind::kOffline) return;
    const bool here = event.kind == Kind::kJoined && row->online();
    console->say(fmt::format("· {} ({}) {}", printablePeerText(row->presence.card.name), row->id,
                             here ? "is here" : "went offline"),
                 {{"event", here ? "peer-here" : "peer-offline"},
                  {"id", row->id},
                  {"name", row->presence.card.name}});
  };
  auto endpoint = mesh::Endpoint::open(std::move(options));
  if (!endpoint.isOk()) return printFailure(what, endpoint.status());
  mesh::Endpoint& me = **endpoint;
  // Names typed at once must resolve: start from a current roster (or say why not).
  auto roster = me.waitForRoster(args.target.timeout());
  if (!roster.isOk()) console->note(roster.status().toString());
  for (const auto& channel : args.channels) {
    mesh::JoinOptions join;
    if (args.replay) join.replay = true;
    if (args.noReplay) join.replay = false;
    auto joined = me.join(channel, join);
    if (joined.isOk()) {
      console->say(joinLine(*joined), joinEvent(*joined));
    } else {
      console->refused("not joined", joined.status());
    }
  }
  console->say(fmt::format("✓ joined space {} as {} ({}), lifecycle {}{}", target->space, args.name,
                           me.id(), me.lifecycleUid(),
                           args.role.empty() ? "" : ", taking work for role " + args.role),
               {{"event", "joined"},
                {"space", target->space},
                {"id", me.id()},
                {"name", args.name},
                {"lifecycleUid", me.lifecycleUid()},
                {"role", args.role}});
  if (!jsonOutput()) console->say(std::string(kHelp), {});

  const std::vector<std::string>* minted = credential ? &args.channels : nullptr;
  // Input: stdin lines until EOF or /quit; a signal ends it at any time.
  std::string buffer;
  bool inputOpen = true;
  bool leave = false;
  while (!leave) {
    if (waitForStopSignal(std::chrono::milliseconds(0))) break;
    if (credential) {
      if (auto renewed = credential->renewIfDue()) reportRenewal(*console, *renewed, *credential);
    }
    if (!inputOpen) {
      if (!args.keepRunning) break;
      if (waitForStopSignal(std::chrono::milliseconds(500))) break;
      continue;
    }
    pollfd fd{STDIN_FILENO, POLLIN, 0};
    int ready = ::poll(&fd, 1, 200);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    char chunk[4096];
    ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
    if (n <= 0) {
      inputOpen = false;
      if (!buffer.empty()) leave = !runLine(me, *console, buffer, minted, args.name);
      buffer.clear();
      continue;
    }
    buffer.append(chunk, static_cast<size_t>(n));
    size_t newline;
    while (!leave && (newline = buffer.find('\n')) != std::string::npos) {
      std::string line = buffer.substr(0, newline);
      buffer.erase(0, newline + 1);
      leave = !runLine(me, *console, line, minted, args.name);
    }
  }
  Status left = me.close();
  console->say(left.isOk() ? "✓ left the space (presence now offline)"
                           : "! left, but the final presence write failed: " + left.toString(),
               {{"event", "left"}, {"presenceWritten", left.isOk()}});
  return 0;
}

}  // namespace

void registerJoinCommands(CLI::App& app, CommandResult& result) {
  auto args = std::make_shared<JoinArgs>();
  CLI::App* cmd = app.add_subcommand(
      "join", "join the space as an interactive peer (presence, DMs, channels, role work)");
  cmd->add_option("--name", args->name, "your display name (also the actor token by default)")
      ->required();
  cmd->add_option(
      "--id", args->id,
      "your principal id owner.actor (default: local.<name>; auth mode: <your owner>.<name>)");
  cmd->add_option("--role", args->role, "take anycast work addressed to this role");
  cmd->add_option("--channel", args->channels, "join this channel at start (repeatable)");
  cmd->add_flag("--replay", args->replay,
                "replay each channel's stored posts on join (default: the channel's registry "
                "`replay`, on unless set off)");
  cmd->add_flag("--no-replay", args->noReplay, "never replay history on join");
  cmd->add_flag("--keep-running", args->keepRunning,
                "stay joined after stdin closes, until SIGINT / SIGTERM (scripted peers)");
  cmd->add_option("--creds-ttl", args->credsTtlSeconds,
                  "auth mode: seconds this peer's credential lives; it is renewed past half")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{10}, int64_t{30} * 24 * 3600));
  addMeshTargetOptions(cmd, args->target, "the manager's provisioning");
  cmd->add_flag("--json", args->json, "one JSON event per line (NDJSON)");
  cmd->callback([args, &result] { result.exitCode = runJoin(*args); });
}

}  // namespace shoal::cli
