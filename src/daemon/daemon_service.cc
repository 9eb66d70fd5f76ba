#include "daemon/daemon_service.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <set>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/ids.h"
#include "base/log.h"
#include "daemon/seat_history.h"
#include "daemon/seat_launch.h"
#include "mesh/credential_rail.h"
#include "transport/creds_file.h"

namespace shoal::daemon {
namespace {

namespace json = boost::json;

Result<json::object> argsOf(const ControlRequest& request) {
  boost::system::error_code ec;
  json::value v = json::parse(request.argsJson, ec);
  if (ec || !v.is_object()) return invalidArgument("bad-control-request", "args is an object");
  return v.as_object();
}

// Refuses any key of `args` outside `allowed`.
Status onlyKeys(const json::object& args, std::initializer_list<std::string_view> allowed,
                std::string_view op) {
  for (const auto& [key, value] : args) {
    bool known = false;
    for (auto a : allowed)
      known = known || key == a;
    if (!known) {
      return invalidArgument("unknown-argument",
                             std::string(op) + " takes no `" + std::string(key) + "`");
    }
  }
  return Status::ok();
}

Result<wire::Principal> idArg(const json::object& args) {
  const json::value* id = args.if_contains("id");
  if (id == nullptr || !id->is_string()) {
    return invalidArgument("missing-id", "name the seat by its id, e.g. local.reviewer");
  }
  return wire::parsePrincipal(std::string(id->as_string()));
}

// An optional array of channel names (seat.channels `add`, `remove`); validated later.
Result<std::vector<std::string>> channelsArg(const json::object& args, std::string_view key) {
  std::vector<std::string> out;
  const json::value* v = args.if_contains(key);
  if (v == nullptr) return out;
  if (!v->is_array()) return invalidArgument("bad-argument", std::string(key) + " is an array");
  for (const auto& c : v->as_array()) {
    if (!c.is_string()) return invalidArgument("bad-argument", std::string(key) + " holds names");
    out.emplace_back(c.as_string());
  }
  return out;
}

std::string snapshotJson(const ProfileSnapshot& s) {
  auto profile = encodeSeatProfile(s.profile);
  json::object o;
  o["revision"] = s.revision;
  o["profile"] = profile.isOk() ? json::parse(*profile) : json::value(nullptr);
  o["seal"] = std::string(sealVerdictName(s.seal));
  if (!s.keptBy.empty()) o["keptBy"] = s.keptBy;  // the machine whose daemon wrote the record
  return json::serialize(o);
}

}  // namespace

Result<std::unique_ptr<DaemonService>> DaemonService::start(DaemonOptions options) {
  std::unique_ptr<DaemonService> d(new DaemonService(std::move(options)));
  transport::ConnectOptions connect;
  connect.servers = {d->options_.url};
  connect.nkeySeedFile = d->options_.nkeySeedFile;
  connect.tlsCaFile = d->options_.tlsCaFile;
  connect.name = "shoal daemon";
  if (!d->options_.credentialsFile.empty()) {
    SHOAL_ASSIGN_OR_RETURN(
        transport::CredsInfo creds,
        transport::readCredsFile(FileSystem::posix(), d->options_.credentialsFile));
    connect.credentialsFile = d->options_.credentialsFile;
    connect.inboxPrefix = creds.inboxPrefix;
  }
  auto conn = transport::Connection::connect(connect);
  if (!conn.isOk() && conn.status().code() == StatusCode::kPermissionDenied &&
      !d->options_.credentialsFile.empty()) {
    return permissionDenied(
        "daemon-credential-refused",
        "the broker " + d->options_.url + " refused this daemon's credential " +
            d->options_.credentialsFile +
            ": it was revoked or has expired. On the space's machine, `shoal up` mints a new one "
            "for its own daemon; a joined machine needs a new `shoal invite` there and `shoal "
            "daemon join` here (" +
            std::string(conn.status().message()) + ")");
  }
  if (!conn.isOk()) {
    return conn.status().withContext("broker " + d->options_.url +
                                     " unreachable (is the mesh up? `shoal status`)");
  }
  d->conn_ = std::move(conn).value();
  if (!d->options_.credentialsFile.empty()) {
    d->seatCreds_ = std::make_unique<SeatCredentials>(
        *d->conn_, d->options_.space, d->options_.identity, d->options_.seatCredsDir);
    if (d->options_.renewsOwnCredential) {
      d->ownCredential_ = std::make_unique<OwnCredential>(
          *d->conn_, d->options_.space, d->options_.identity, d->options_.credentialsFile);
    }
  }
  SHOAL_ASSIGN_OR_RETURN(auto js, transport::JetStream::create(*d->conn_));
  d->js_.emplace(std::move(js));
  SHOAL_ASSIGN_OR_RETURN(ProfileSealer sealer, ProfileSealer::open(d->options_.profileKeyFile));
  if (!d->options_.machine.empty()) {
    SHOAL_ASSIGN_OR_RETURN(d->claim_, MachineClaim::claim(*d->js_, d->options_.space,
                                                          d->options_.machine, sealer.keyId()));
  }
  SHOAL_ASSIGN_OR_RETURN(auto store, ProfileStore::open(*d->js_, d->options_.space,
                                                        std::move(sealer), d->options_.machine));
  d->store_.emplace(std::move(store));
  std::string path = d->options_.socketPath;
  if (path.empty()) {
    SHOAL_ASSIGN_OR_RETURN(path, controlSocketPath(d->options_.space));
  }
  if (d->options_.runSeats) {
    auto profiles = d->tidiedProfiles();
    if (!profiles.isOk()) return profiles.status().withContext("reading the seat profiles");
    for (const auto& snapshot : *profiles)
      (void)d->openSeat(snapshot);
  }
  DaemonService* self = d.get();
  SHOAL_ASSIGN_OR_RETURN(
      d->server_, ControlServer::start(
                      path, [self](const ControlRequest& request) { return self->handle(request); },
                      [self] { self->retryOpens(); }));
  return d;
}

DaemonService::~DaemonService() {
  server_.reset();  // no request runs after this
  seats_.clear();   // each seat leaves the mesh and stops its runtime
  seatCreds_.reset();
  claim_.reset();  // the machine's name is free for its next daemon
}

bool DaemonService::shutdown(std::chrono::milliseconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  server_.reset();
  for (auto& [id, seat] : seats_)
    seat->requestStop(until);  // all started at once: one deadline, not one per seat
  bool all = true;
  for (auto& [id, seat] : seats_) {
    if (seat->waitStopped(until)) continue;
    all = false;
    // Past the deadline nothing waits any more; the runtime's group is ended so it does not
    // outlive the daemon (it leads its own group, so the daemon's exit would not end it).
    int pid = seat->snapshot().pid;
    log::warn(
        "daemon: seat {} did not stop within the shutdown deadline; killing its runtime "
        "(process group {})",
        id, pid);
    if (pid > 0) ::kill(-pid, SIGKILL);
  }
  if (all) seats_.clear();
  return all;
}

namespace {

constexpr std::chrono::milliseconds kFirstRetry{500};
constexpr std::chrono::milliseconds kMaxRetry{30'000};
// How often the profiles are read again for changes made through other daemons.
constexpr std::chrono::milliseconds kRescanInterval{2'000};

// A failure that goes away by itself: the broker or the manager not there yet.
bool transientOpenFailure(const Status& s) {
  switch (s.code()) {
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kAborted:
      return true;
    case StatusCode::kResourceExhausted:  // a full disk: the journal cannot be written yet
      return s.reason() == "disk-full";
    case StatusCode::kDataLoss:  // an I/O error writing the journal back
      return s.reason() == "io-error";
    case StatusCode::kNotFound:
      return s.reason() == "space-not-provisioned";
    default:
      return false;
  }
}

}  // namespace

Status DaemonService::checkSeatCwd(const SeatProfile& profile, bool create) {
  SHOAL_ASSIGN_OR_RETURN(auto seats, store_->list());
  for (const auto& s : seats) {
    if (s.profile.principal == profile.principal) return Status::ok();  // `seat-exists` follows
    if (runsElsewhere(s.profile)) continue;  // another machine's directories
    if (s.profile.cwd == profile.cwd) {
      return failedPrecondition(
          "cwd-in-use", fmt::format("{} is the working directory of seat {} ({}); each "
                                    "seat needs its own (its journal lives in "
                                    "<cwd>/.shoal): pass another --cwd",
                                    profile.cwd, s.profile.name, s.profile.principal.dotForm()));
    }
  }
  struct stat st {};
  if (::stat(profile.cwd.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::ok();
    return invalidArgument("bad-cwd", profile.cwd + " is not a directory");
  }
  if (!create) {
    return invalidArgument("bad-cwd", "no such directory: " + profile.cwd +
                                          " (create it, or pass --create-cwd to have it made)");
  }
  return FileSystem::posix().createDirs(profile.cwd).status();
}

std::string DaemonService::openSeat(const ProfileSnapshot& snapshot) {
  const SeatProfile& profile = snapshot.profile;
  const std::string id = profile.principal.dotForm();
  if (!options_.runSeats) return notes_[id] = "this daemon runs no seats (registry only)";
  seenRevision_[id] = snapshot.revision;
  if (claimLost_) {
    return notes_[id] =
               "this daemon lost its claim on machine " + options_.machine +
               " to another daemon; it runs no seats until the name is free again and retakes it "
               "then by itself";
  }
  if (runsElsewhere(profile)) {
    retries_.erase(id);
    seats_.erase(id);
    return notes_[id] = "runs on machine " + profile.machine + " (elsewhere)";
  }
  if (!snapshot.keptBy.empty() && snapshot.keptBy != options_.machine) {
    // An offer from another machine (`seat move`, `seat add --machine`): written there, it is
    // not this machine's until its owner here takes it.
    retries_.erase(id);
    seats_.erase(id);
    return notes_[id] = "offered by machine " + snapshot.keptBy + ", not run yet: check its " +
                        "command with `shoal seat show " + profile.name +
                        "` and take it with `shoal seat trust " + profile.name + "`";
  }
  if (Status refused = sealRefusal(snapshot.seal, profile.name); !refused.isOk()) {
    log::warn("daemon: seat {} not run: {}", id, refused.toString());
    retries_.erase(id);
    return notes_[id] = std::string(refused.message()) + " (" + std::string(refused.reason()) + ")";
  }
  if (profile.state == DesiredState::kStopped) {
    retries_.erase(id);
    seats_.erase(id);
    return notes_[id] = "stopped (`shoal seat start` runs it)";
  }
  if (auto it = seats_.find(id); it != seats_.end()) {
    Status changed =
        profile.state == DesiredState::kRunning ? it->second->wake() : it->second->sleep();
    if (!changed.isOk()) return notes_[id] = std::string(changed.message());
    return notes_[id] = it->second->snapshot().note;
  }
  auto seat = startSeat(profile);
  if (!seat.isOk()) {
    const Status& failed = seat.status();
    if (!transientOpenFailure(failed)) {
      log::warn("daemon: seat {} not opened: {}", id, failed.toString());
      retries_.erase(id);
      return notes_[id] = std::string(failed.message()) + " (" + std::string(failed.reason()) + ")";
    }
    PendingOpen& pending = retries_[id];
    ++pending.attempts;
    auto delay = std::min(kMaxRetry, kFirstRetry * (1 << std::min(pending.attempts - 1, 10)));
    pending.nextAt = std::chrono::steady_clock::now() + delay;
    pending.last = failed;
    log::warn("daemon: seat {} not opened (attempt {}; retrying in {} ms): {}", id,
              pending.attempts, delay.count(), failed.toString());
    return notes_[id] = "not open yet: " + std::string(failed.message()) + " (" +
                        std::string(failed.reason()) + "); the daemon retries by itself";
  }
  retries_.erase(id);
  log::info("daemon: seat {} open ({})", id, desiredStateName(profile.state));
  seats_[id] = std::move(seat).value();
  return notes_[id] = seats_[id]->snapshot().note;
}

Result<std::unique_ptr<Seat>> DaemonService::startSeat(const SeatProfile& profile) {
  SeatOptions so;
  so.url = options_.url;
  so.nkeySeedFile = options_.nkeySeedFile;
  so.tlsCaFile = options_.tlsCaFile;
  so.space = options_.space;
  so.mode = profile.state == DesiredState::kSleeping ? SeatMode::kSleeping : SeatMode::kRunning;
  if (seatCreds_ != nullptr) {
    auto credential = seatCreds_->issue(profile);
    if (!credential.isOk()) {
      return credential.status().withContext("asking the manager for the seat's credential");
    }
    so.credentialsFile = credential->credsFile;
    so.inboxPrefix = credential->inboxPrefix;
  }
  return Seat::open(profile, so);
}

void DaemonService::healPoisonedSeats() {
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::string> due;
  for (const auto& [id, seat] : seats_) {
    if (seat->snapshot().journalPoisoned.empty()) {
      heals_.erase(id);
      continue;
    }
    PendingOpen& heal = heals_[id];
    if (heal.attempts == 0) {
      heal.attempts = 1;
      heal.nextAt = now + kFirstRetry;  // a moment for the failure to be reported first
    }
    if (heal.nextAt <= now) due.push_back(id);
  }
  for (const std::string& id : due) {
    auto principal = wire::parsePrincipal(id);
    auto snapshot =
        principal.isOk() ? store_->get(*principal) : Result<ProfileSnapshot>(principal.status());
    if (!snapshot.isOk()) continue;
    PendingOpen& heal = heals_[id];
    log::warn("daemon: seat {}: reopening it to recover its poisoned journal (attempt {})", id,
              heal.attempts);
    // Closing ends the runtime; opening re-reads the journal as a daemon restart does, and a
    // disk still full fails the open, which is retried with backoff like any transient one.
    seats_.erase(id);
    (void)openSeat(*snapshot);
    if (auto it = seats_.find(id);
        it != seats_.end() && !it->second->snapshot().journalPoisoned.empty()) {
      ++heal.attempts;
      heal.nextAt = now + std::min(kMaxRetry, kFirstRetry * (1 << std::min(heal.attempts - 1, 10)));
    } else {
      heals_.erase(id);
    }
  }
}

bool DaemonService::runsElsewhere(const SeatProfile& profile) const {
  return !profile.machine.empty() && !options_.machine.empty() &&
         profile.machine != options_.machine;
}

Result<std::vector<ProfileSnapshot>> DaemonService::tidiedProfiles() {
  SHOAL_ASSIGN_OR_RETURN(auto records, store_->records());
  if (tidyRecords(records)) {
    SHOAL_ASSIGN_OR_RETURN(records, store_->records());
  }
  return store_->governing(std::move(records));
}

bool DaemonService::tidyRecords(const std::vector<ProfileSnapshot>& records) {
  const std::string& me = options_.machine;
  if (me.empty()) return false;
  bool changed = false;
  for (const auto& r : records) {
    const bool legacyOfOurs = r.keptBy.empty() && r.seal == SealVerdict::kSealed &&
                              (r.profile.machine.empty() || r.profile.machine == me);
    const bool ownOffer = r.keptBy == me && r.profile.machine != me;
    // Each record is tried once per daemon life: a refused removal (a legacy key the daemon
    // credential may not write in auth mode) is not retried every rescan.
    if ((!legacyOfOurs && !ownOffer) || tidied_.count(r.key + "@" + std::to_string(r.revision))) {
      continue;
    }
    auto held = [&](const std::string& by) {
      return std::any_of(records.begin(), records.end(), [&](const ProfileSnapshot& o) {
        return o.key != r.key && o.profile.principal == r.profile.principal && o.keptBy == by &&
               o.profile.machine == by;
      });
    };
    const std::string id = r.profile.principal.dotForm();
    if (ownOffer && !held(r.profile.machine)) continue;  // not taken yet
    tidied_.insert(r.key + "@" + std::to_string(r.revision));
    if (legacyOfOurs && !held(me)) {
      auto adopted = store_->adopt(r.profile);
      if (!adopted.isOk()) {
        log::warn("daemon: seat {}: its profile stays in the form from before machine prefixes: {}",
                  id, adopted.status().toString());
        continue;
      }
      log::info("daemon: seat {}: profile moved under machine {}'s prefix", id, me);
    }
    changed = true;
    if (Status removed = store_->removeRecord(r); !removed.isOk()) {
      log::warn("daemon: seat {}: record {} not removed: {}", id, r.key, removed.toString());
    } else if (ownOffer) {
      log::info("daemon: seat {} was taken by machine {}; its offer here is removed", id,
                r.profile.machine);
    }
  }
  return changed;
}

void DaemonService::rescanProfiles() {
  const auto now = std::chrono::steady_clock::now();
  if (now < nextRescan_ || !options_.runSeats) return;
  nextRescan_ = now + kRescanInterval;
  auto profiles = tidiedProfiles();
  if (!profiles.isOk()) return;  // the broker is away: the next tick tries again
  std::set<std::string> present;
  for (const auto& snapshot : *profiles) {
    const std::string id = snapshot.profile.principal.dotForm();
    present.insert(id);
    auto seen = seenRevision_.find(id);
    if (seen != seenRevision_.end() && seen->second == snapshot.revision) continue;
    log::info("daemon: seat {} changed elsewhere (revision {})", id, snapshot.revision);
    (void)openSeat(snapshot);
  }
  for (auto it = seats_.begin(); it != seats_.end();) {
    if (present.count(it->first) != 0) {
      ++it;
      continue;
    }
    log::info("daemon: seat {} was removed elsewhere; closing it", it->first);
    notes_.erase(it->first);
    seenRevision_.erase(it->first);
    it = seats_.erase(it);
  }
}

void DaemonService::tendMachineClaim() {
  if (claim_ == nullptr) return;
  const auto now = std::chrono::steady_clock::now();
  if (!claimLost_) {
    Status held = claim_->renewIfDue();
    if (held.code() == StatusCode::kAborted) {
      // Another daemon now answers to this machine's name: running on would run every seat
      // twice. Every seat here stops; the note and the log say why.
      log::error("daemon: {}; stopping every seat until the name is free again", held.toString());
      claimLost_ = true;
      nextRescan_ = now + kRescanInterval;  // the first retake waits one interval
      seats_.clear();
    }
    return;
  }
  if (now < nextRescan_) return;  // retakes run at the rescan's pace
  if (Status retaken = claim_->retake(); !retaken.isOk()) return;
  log::info("daemon: retook its claim on machine {}; reopening its seats", options_.machine);
  claimLost_ = false;
  seenRevision_.clear();  // the rescan below reopens every seat kept here
  nextRescan_ = now;
}

void DaemonService::retryOpens() {
  tendMachineClaim();
  healPoisonedSeats();
  rescanProfiles();
  if (seatCreds_ != nullptr) (void)seatCreds_->renewDue();
  if (ownCredential_ != nullptr) (void)ownCredential_->renewIfDue(Clock::real().wallMs() / 1000);
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::string> due;
  for (const auto& [id, pending] : retries_)
    if (pending.nextAt <= now) due.push_back(id);
  for (const std::string& id : due) {
    auto principal = wire::parsePrincipal(id);
    auto snapshot =
        principal.isOk() ? store_->get(*principal) : Result<ProfileSnapshot>(principal.status());
    if (!snapshot.isOk()) {
      if (snapshot.status().code() == StatusCode::kNotFound)
        retries_.erase(id);  // removed
      else
        retries_[id].nextAt = now + kFirstRetry;  // the store itself is not reachable yet
      continue;
    }
    if (seats_.count(id) != 0) {
      retries_.erase(id);
      continue;
    }
    (void)openSeat(*snapshot);
  }
}

Status DaemonService::changeableHere(const ProfileSnapshot& s, std::string_view remedy) const {
  if (runsElsewhere(s.profile)) {
    return failedPrecondition("seat-elsewhere", "seat " + s.profile.principal.dotForm() +
                                                    " runs on machine " + s.profile.machine + ": " +
                                                    std::string(remedy));
  }
  return sealRefusal(s.seal, s.profile.name);
}

Result<std::string> DaemonService::moveSeat(const wire::Principal& id, const std::string& machine) {
  SHOAL_RETURN_IF_ERROR(mesh::validateMachineName(machine));
  SHOAL_ASSIGN_OR_RETURN(ProfileSnapshot s, store_->get(id));
  const std::string key = id.dotForm();
  SHOAL_RETURN_IF_ERROR(
      changeableHere(s, "move it with that machine's daemon, where its journal is"));
  if (auto it = seats_.find(key); it != seats_.end()) {
    const SeatSnapshot snap = it->second->snapshot();
    const size_t live = snap.queued + snap.inflight + snap.inboxLeases;
    if (live > 0) {
      return failedPrecondition(
          "seat-has-messages", fmt::format("seat {} still owns {} message(s) not yet settled here; "
                                           "wait until `shoal ps` shows none, then move it",
                                           key, live));
    }
  }
  if (s.profile.machine != machine) {
    SeatProfile moved = s.profile;
    moved.machine = machine;
    // Sealed with this daemon's key it would be foreign there: it goes unsealed, for the
    // owner there to vouch for.
    SHOAL_ASSIGN_OR_RETURN(s, machine == options_.machine ? store_->update(moved, s.revision)
                                                          : store_->handOver(moved, s.revision));
    log::info("daemon: seat {} moved to machine {} at revision {}", key, machine, s.revision);
  }
  seenRevision_[key] = s.revision;
  std::string note;
  if (machine == options_.machine) {
    note = openSeat(s);
  } else {
    seats_.erase(key);
    retries_.erase(key);
    note = notes_[key] = "moved to machine " + machine +
                         ": its daemon starts it fresh there once it trusts the profile "
                         "(`shoal seat trust` on " +
                         machine + "); the journal stays here";
  }
  json::object out = json::parse(snapshotJson(s)).as_object();
  out["note"] = note;
  return json::serialize(out);
}

Result<std::string> DaemonService::setChannels(const wire::Principal& id,
                                               const std::vector<std::string>& add,
                                               const std::vector<std::string>& remove) {
  SHOAL_ASSIGN_OR_RETURN(ProfileSnapshot s, store_->get(id));
  const std::string key = id.dotForm();
  SHOAL_RETURN_IF_ERROR(changeableHere(s, "change its channels with that machine's daemon"));
  SeatProfile changed = s.profile;
  std::erase_if(changed.channels, [&](const std::string& c) {
    return std::find(remove.begin(), remove.end(), c) != remove.end();
  });
  for (const auto& c : add)
    if (std::find(changed.channels.begin(), changed.channels.end(), c) == changed.channels.end())
      changed.channels.push_back(c);
  SHOAL_RETURN_IF_ERROR(validateSeatProfile(changed));
  std::string note = "unchanged";
  if (changed.channels != s.profile.channels) {
    auto running = seats_.find(key);
    if (running != seats_.end()) {
      const SeatSnapshot now = running->second->snapshot();
      if (now.state == "busy" || now.state == "compacting" || now.inflight > 0) {
        return failedPrecondition(
            "seat-busy",
            fmt::format("seat {} is {} with {} delivery(ies) in flight; its channels "
                        "change by reopening it, so retry once it is idle (`shoal ps`)",
                        key, now.state, now.inflight));
      }
    }
    SHOAL_ASSIGN_OR_RETURN(s, store_->update(changed, s.revision));
    log::info("daemon: seat {} channels changed at revision {}", key, s.revision);
    seenRevision_[key] = s.revision;
    if (running != seats_.end()) {
      seats_.erase(running);  // reopened under a credential for exactly these channels
      note = "reopened with its channels (its runtime restarted): " + openSeat(s);
    } else {
      note = "its channels apply when it starts";
    }
  }
  json::object out = json::parse(snapshotJson(s)).as_object();
  out["note"] = note;
  return json::serialize(out);
}

Status DaemonService::checkSeatCredentialsOwner(const SeatProfile& profile) const {
  if (seatCreds_ == nullptr || profile.principal.owner == options_.identity.owner) {
    return Status::ok();
  }
  return permissionDenied("not-this-owner", "in auth mode this daemon runs seats of " +
                                                options_.identity.owner + " only; name the seat " +
                                                options_.identity.owner + "." +
                                                profile.principal.actor + " (the default id)");
}

Result<std::string> DaemonService::setState(const wire::Principal& id, DesiredState state) {
  SHOAL_ASSIGN_OR_RETURN(ProfileSnapshot s, store_->get(id));
  // Writing the state would seal the profile: only a profile this daemon sealed is changed
  // here, so no command reaches a runtime without its owner vouching for it (`seat trust`).
  SHOAL_RETURN_IF_ERROR(sealRefusal(s.seal, s.profile.name));
  if (s.profile.state != state) {
    SeatProfile changed = s.profile;
    changed.state = state;
    SHOAL_ASSIGN_OR_RETURN(s, store_->update(changed, s.revision));
  }
  std::string note;
  if (state == DesiredState::kStopped) {
    seats_.erase(id.dotForm());  // a strong stop: the runtime is gone and the seat offline
    note = notes_[id.dotForm()] = "stopped by `shoal seat stop`";
  } else {
    note = openSeat(s);
  }
  json::object out = json::parse(seatJson(s.profile)).as_object();
  out["note"] = note.empty() ? out["note"] : json::value(note);
  return json::serialize(out);
}

std::string DaemonService::seatJson(const SeatProfile& profile) {
  const std::string id = profile.principal.dotForm();
  auto it = seats_.find(id);
  SeatSnapshot snap = it != seats_.end() ? it->second->snapshot() : SeatSnapshot{};
  if (it == seats_.end()) snap.state = "stopped";
  std::string note = !snap.note.empty() ? snap.note : notes_.count(id) != 0 ? notes_[id] : "";
  const SeatCounters& c = snap.counters;
  json::object o{{"id", id},
                 {"name", profile.name},
                 {"runtime", std::string(runtimeKindName(profile.runtime))},
                 {"desired", std::string(desiredStateName(profile.state))},
                 {"state", snap.state},
                 {"running", snap.processRunning},
                 {"pid", snap.pid},
                 {"generation", snap.generation},
                 {"queued", snap.queued},
                 {"inflight", snap.inflight},
                 {"admitted", c.admitted},
                 {"surfaced", c.surfaced},
                 {"failed", c.failed},
                 {"receipts", c.receipts},
                 {"launches", c.launches},
                 {"unexpectedExits", c.unexpectedExits},
                 {"coldStarts", c.coldStarts},
                 {"turns", c.turns},
                 {"inboxClaimed", c.inboxClaimed},
                 {"inboxLeases", snap.inboxLeases},
                 {"awaitingReply", snap.awaitingReply},
                 {"replied", c.replied},
                 {"noVisibleReply", c.noVisibleReply},
                 {"replyFailed", c.replyFailed},
                 {"inboxEvicted", c.inboxEvicted},
                 {"inboxRefused", c.inboxRefused},
                 {"inboxDropped", c.inboxDropped},
                 {"direct", c.direct},
                 {"directRequeued", c.directRequeued},
                 {"receiptsOwed", snap.receiptsOwed},
                 {"note", note}};
  json::object byEvidence;
  for (const auto& [kind, n] : surfacedByEvidence(c))
    byEvidence[kind] = n;
  o["surfacedBy"] = std::move(byEvidence);
  if (!snap.journalPoisoned.empty()) {
    o["journal"] =
        json::object{{"poisoned", snap.journalPoisoned}, {"since", snap.journalPoisonedSinceMs}};
  }
  if (auto r = retries_.find(id); r != retries_.end()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        r->second.nextAt - std::chrono::steady_clock::now());
    o["openFailure"] = json::object{{"reason", std::string(r->second.last.reason())},
                                    {"message", std::string(r->second.last.message())},
                                    {"attempts", r->second.attempts},
                                    {"retryInMs", std::max<int64_t>(0, left.count())}};
  }
  json::array results;
  for (const auto& r : snap.recentResults) {
    json::object row{
        {"message", r.messageId}, {"target", r.target}, {"result", r.result}, {"at", r.atMs}};
    if (!r.replyId.empty()) row["replyId"] = r.replyId;
    if (!r.reason.empty()) row["reason"] = r.reason;
    results.push_back(std::move(row));
  }
  o["recentResults"] = std::move(results);
  json::object modes;
  for (const auto& [channel, mode] : snap.channelModes)
    modes[channel] = mode;
  o["channelModes"] = std::move(modes);
  if (!snap.session.empty()) {
    o["session"] = json::object{{"id", snap.session}, {"resumeSafe", snap.resumeSafe}};
  }
  if (!snap.compaction.state.empty()) {
    json::object row{{"state", snap.compaction.state}, {"startedAt", snap.compaction.startedAtMs}};
    if (snap.compaction.endedAtMs != 0) row["endedAt"] = snap.compaction.endedAtMs;
    if (!snap.compaction.detail.empty()) row["detail"] = snap.compaction.detail;
    o["compaction"] = std::move(row);
  }
  return json::serialize(o);
}

std::string DaemonService::seatsJson() {
  auto profiles = store_->list();
  json::array out;
  if (!profiles.isOk()) return json::serialize(out);
  for (const auto& snapshot : *profiles)
    out.push_back(json::parse(seatJson(snapshot.profile)));
  return json::serialize(out);
}

Result<std::string> DaemonService::handle(const ControlRequest& request) {
  SHOAL_ASSIGN_OR_RETURN(json::object args, argsOf(request));
  if (request.op == "status") {
    SHOAL_RETURN_IF_ERROR(onlyKeys(args, {}, request.op));
    json::object o{{"space", options_.space},
                   {"pid", static_cast<int64_t>(::getpid())},
                   {"url", options_.url},
                   {"machine", options_.machine},
                   {"seats", json::parse(seatsJson())}};
    return json::serialize(o);
  }
  if (request.op == "seat.add") {
    // args: a seat profile without lifecycleUid, plus createCwd (make a missing cwd).
    if (args.contains("lifecycleUid")) {
      return invalidArgument("unknown-argument", "the daemon mints a seat's lifecycle uid");
    }
    SHOAL_ASSIGN_OR_RETURN(std::string uid, newLifecycleUid());
    args["lifecycleUid"] = uid;
    bool createCwd = false;
    if (const json::value* c = args.if_contains("createCwd")) {
      if (!c->is_bool()) return invalidArgument("bad-argument", "createCwd is true or false");
      createCwd = c->as_bool();
      args.erase("createCwd");
    }
    SHOAL_ASSIGN_OR_RETURN(SeatProfile profile, decodeSeatProfile(json::serialize(args)));
    SHOAL_RETURN_IF_ERROR(checkSeatCredentialsOwner(profile));
    if (profile.machine.empty()) profile.machine = options_.machine;
    // A seat that could never start is refused now, not parked later.
    const char* path = std::getenv("PATH");
    SHOAL_RETURN_IF_ERROR(checkRuntimeProgram(profile, path != nullptr ? path : ""));
    SHOAL_RETURN_IF_ERROR(checkSeatCwd(profile, createCwd));
    SHOAL_ASSIGN_OR_RETURN(ProfileSnapshot created, store_->create(profile));
    log::info("daemon: added seat {} ({}) at revision {}", created.profile.name,
              created.profile.principal.dotForm(), created.revision);
    std::string note = openSeat(created);
    json::object out = json::parse(snapshotJson(created)).as_object();
    auto it = seats_.find(created.profile.principal.dotForm());
    out["running"] = it != seats_.end() && it->second->snapshot().processRunning;
    out["note"] = note;
    return json::serialize(out);
  }
  if (request.op == "seat.list") {
    SHOAL_RETURN_IF_ERROR(onlyKeys(args, {}, request.op));
    SHOAL_ASSIGN_OR_RETURN(auto seats, store_->list());
    std::string out = "[";
    for (size_t i = 0; i < seats.size(); ++i) {
      out += (i == 0 ? "" : ",") + snapshotJson(seats[i]);
    }
    return out + "]";
  }
  if (request.op == "seat.show") {
    SHOAL_RETURN_IF_ERROR(onlyKeys(args, {"id"}, request.op));
    SHOAL_ASSIGN_OR_RETURN(wire::Principal id, idArg(args));
    SHOAL_ASSIGN_OR_RETURN(ProfileSnapshot s, store_->get(id));
    json::object out = json::parse(snapshotJson(s)).as_object();
    out["seat"] = json::parse(seatJson(s.profile));
    return json::serialize(out);
  }
  if (request.op == "seat.move") {
    SHOAL_RETURN_IF_ERROR(onlyKeys(args, {"id", "machine"}, request.op));
    SHOAL_ASSIGN_OR_RETURN(wire::Principal id, idArg(args));
    const json::value* machine = args.if_contains("machine");
    if (machine == nullptr || !machine->is_string()) {
      return invalidArgument("missing-machine", "name the machine to move the seat to");
    }
    return moveSeat(id, std::string(machine->as_string()));
  }
  if (request.op == "seat.channels") {
    SHOAL_RETURN_IF_ERROR(onlyKeys(args, {"id", "add", "remove"}, request.op));
    SHOAL_ASSIGN_OR_RETURN(wire::Principal id, idArg(args));
    SHOAL_ASSIGN_OR_RETURN(auto add, channelsArg(args, "add"));
    SHOAL_ASSIGN_OR_RETURN(auto remove, channelsArg(args, "remove"));
    return setChannels(id, add, remove);
  }
  if (request.op == "seat.trust") {
    SHOAL_RETURN_IF_ERROR(onlyKeys(args, {"id"}, request.op));
    SHOAL_ASSIGN_OR_RETURN(wire::Principal id, idArg(args));
    SHOAL_ASSIGN_OR_RETURN(ProfileSnapshot s, store_->get(id));
    if (runsElsewhere(s.profile)) {
      return failedPrecondition("seat-elsewhere", "seat " + id.dotForm() + " runs on machine " +
                                                      s.profile.machine +
                                                      ": trust it there, or move it here first");
    }
    const bool offer = !s.keptBy.empty() && s.keptBy != store_->machine();
    if (!offer && s.seal == SealVerdict::kForeign) return sealRefusal(s.seal, s.profile.name);
    if (s.keptBy != store_->machine()) {
      // An offer to this machine, or a legacy record no other daemon sealed: the owner here
      // takes it, sealed, under this machine's prefix.
      SHOAL_ASSIGN_OR_RETURN(s, store_->adopt(s.profile));
      log::info("daemon: seat {} taken by this machine at revision {} (its command: {} words)",
                id.dotForm(), s.revision, s.profile.command.size());
    } else if (s.seal != SealVerdict::kSealed) {
      SHOAL_ASSIGN_OR_RETURN(s, store_->update(s.profile, s.revision));
      log::info("daemon: seat {} trusted by its owner at revision {} (its command: {} words)",
                id.dotForm(), s.revision, s.profile.command.size());
    }
    std::string note = openSeat(s);
    json::object out = json::parse(snapshotJson(s)).as_object();
    out["note"] = note;
    return json::serialize(out);
  }
  if (request.op == "seat.rm") {
    SHOAL_RETURN_IF_ERROR(onlyKeys(args, {"id", "revision"}, request.op));
    SHOAL_ASSIGN_OR_RETURN(wire::Principal id, idArg(args));
    uint64_t revision = 0;
    if (const json::value* r = args.if_contains("revision"); r != nullptr) {
      if (!r->is_int64() || r->as_int64() <= 0) {
        return invalidArgument("bad-revision", "revision is a positive integer");
      }
      revision = static_cast<uint64_t>(r->as_int64());
    } else {
      SHOAL_ASSIGN_OR_RETURN(ProfileSnapshot current, store_->get(id));
      revision = current.revision;
    }
    // A stale revision is refused before anything stops.
    SHOAL_ASSIGN_OR_RETURN(ProfileSnapshot now, store_->get(id));
    if (now.revision != revision) {
      return aborted("stale-revision", "seat " + id.dotForm() + " is no longer at revision " +
                                           std::to_string(revision) + " (now " +
                                           std::to_string(now.revision) + ")");
    }
    seats_.erase(id.dotForm());  // stopped before its profile goes
    notes_.erase(id.dotForm());
    retries_.erase(id.dotForm());
    SHOAL_RETURN_IF_ERROR(store_->remove(id, revision));
    if (seatCreds_ != nullptr) seatCreds_->forget(id);
    seenRevision_.erase(id.dotForm());
    log::info("daemon: removed seat {} (was at revision {})", id.dotForm(), revision);
    return json::serialize(json::object{{"removed", id.dotForm()}, {"revision", revision}});
  }
  if (request.op == "seat.start" || request.op == "seat.sleep" || request.op == "seat.stop") {
    SHOAL_RETURN_IF_ERROR(onlyKeys(args, {"id"}, request.op));
    SHOAL_ASSIGN_OR_RETURN(wire::Principal id, idArg(args));
    DesiredState state = request.op == "seat.start"   ? DesiredState::kRunning
                         : request.op == "seat.sleep" ? DesiredState::kSleeping
                                                      : DesiredState::kStopped;
    return setState(id, state);
  }
  if (request.op == "seat.interrupt" || request.op == "seat.compact") {
    // Both answer at once (the control socket serves one request at a time; a compaction can
    // take minutes) with the seat's row from just before asking — a quick runtime can end the
    // turn before interrupt() returns; the caller tells the end by `turns` (interrupt) or
    // `compaction` (compact) moving on in seat.show.
    SHOAL_RETURN_IF_ERROR(onlyKeys(args, {"id"}, request.op));
    SHOAL_ASSIGN_OR_RETURN(wire::Principal id, idArg(args));
    SHOAL_ASSIGN_OR_RETURN(ProfileSnapshot s, store_->get(id));
    auto it = seats_.find(id.dotForm());
    if (it == seats_.end()) {
      return failedPrecondition("seat-not-running", "seat " + id.dotForm() +
                                                        " is not running (`shoal seat start " +
                                                        id.dotForm() + "` runs it)");
    }
    if (request.op == "seat.interrupt") {
      std::string asked = seatJson(s.profile);
      SHOAL_RETURN_IF_ERROR(it->second->interrupt());
      return asked;
    }
    SHOAL_RETURN_IF_ERROR(it->second->compact());
    return seatJson(s.profile);  // its `compaction` row: compacting, since when
  }
  if (request.op == "seat.mcp") {
    // Where an open seat's MCP client config is (`shoal mcp --seat`). The seat writes it to
    // <cwd>/.shoal/mcp.json when it opens and serves that endpoint until it stops, asleep or
    // not; a stopped (or never opened) seat has no endpoint.
    SHOAL_RETURN_IF_ERROR(onlyKeys(args, {"id"}, request.op));
    SHOAL_ASSIGN_OR_RETURN(wire::Principal id, idArg(args));
    SHOAL_RETURN_IF_ERROR(store_->get(id).status());  // unknown-seat
    auto it = seats_.find(id.dotForm());
    if (it == seats_.end()) {
      std::string why = notes_.count(id.dotForm()) != 0 ? notes_[id.dotForm()] : "not open";
      return failedPrecondition("seat-not-running",
                                "seat " + id.dotForm() + " serves no MCP endpoint: " + why +
                                    " (`shoal seat start " + id.dotForm() + "` runs it)");
    }
    const std::string config = it->second->mcpConfigPath();
    if (::access(config.c_str(), R_OK) != 0) {
      return failedPrecondition("no-mcp-config", "seat " + id.dotForm() + " is open but " + config +
                                                     " is missing or unreadable");
    }
    return json::serialize(json::object{{"id", id.dotForm()}, {"config", config}});
  }
  return invalidArgument(
      "unknown-op",
      "the daemon has no op `" + request.op +
          "` (status, seat.add, seat.list, seat.show, seat.start, seat.sleep, "
          "seat.stop, seat.rm, seat.move, seat.channels, seat.trust, seat.compact, seat.interrupt, "
          "seat.mcp)");
}

}  // namespace shoal::daemon
