#include "daemon/daemon_service.h"

#include <boost/json.hpp>
#include <unistd.h>

#include "base/ids.h"
#include "base/log.h"

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

std::string snapshotJson(const ProfileSnapshot& s) {
  auto profile = encodeSeatProfile(s.profile);
  json::object o;
  o["revision"] = s.revision;
  o["profile"] = profile.isOk() ? json::parse(*profile) : json::value(nullptr);
  return json::serialize(o);
}

}  // namespace

Result<std::unique_ptr<DaemonService>> DaemonService::start(DaemonOptions options) {
  std::unique_ptr<DaemonService> d(new DaemonService(std::move(options)));
  transport::ConnectOptions connect;
  connect.servers = {d->options_.url};
  connect.name = "shoal daemon";
  auto conn = transport::Connection::connect(connect);
  if (!conn.isOk()) {
    return conn.status().withContext("broker " + d->options_.url +
                                     " unreachable (is the mesh up? `shoal status`)");
  }
  d->conn_ = std::move(conn).value();
  SHOAL_ASSIGN_OR_RETURN(auto js, transport::JetStream::create(*d->conn_));
  d->js_.emplace(std::move(js));
  SHOAL_ASSIGN_OR_RETURN(auto store, ProfileStore::open(*d->js_, d->options_.space));
  d->store_.emplace(std::move(store));
  std::string path = d->options_.socketPath;
  if (path.empty()) {
    SHOAL_ASSIGN_OR_RETURN(path, controlSocketPath(d->options_.space));
  }
  if (d->options_.runSeats) {
    auto profiles = d->store_->list();
    if (!profiles.isOk()) return profiles.status().withContext("reading the seat profiles");
    for (const auto& snapshot : *profiles)
      (void)d->startSeat(snapshot.profile);
  }
  DaemonService* self = d.get();
  SHOAL_ASSIGN_OR_RETURN(d->server_,
                         ControlServer::start(path, [self](const ControlRequest& request) {
                           return self->handle(request);
                         }));
  return d;
}

DaemonService::~DaemonService() {
  server_.reset();  // no request runs after this
  seats_.clear();   // each seat leaves the mesh and stops its runtime
}

std::string DaemonService::startSeat(const SeatProfile& profile) {
  const std::string id = profile.principal.dotForm();
  if (!options_.runSeats) return notes_[id] = "this daemon runs no seats (registry only)";
  if (seats_.count(id) != 0 && seats_[id]->runtimeRunning()) return notes_[id] = "";
  seats_.erase(id);
  auto seat = ExecSeat::start(profile, ExecSeatOptions{options_.url, options_.space});
  if (!seat.isOk()) {
    log::warn("daemon: seat {} not started: {}", id, seat.status().toString());
    return notes_[id] = std::string(seat.status().message());
  }
  log::info("daemon: seat {} running {}", id, profile.command.front());
  seats_[id] = std::move(seat).value();
  return notes_[id] = "";
}

std::string DaemonService::seatsJson() {
  auto profiles = store_->list();
  json::array out;
  if (!profiles.isOk()) return json::serialize(out);
  for (const auto& snapshot : *profiles) {
    const std::string id = snapshot.profile.principal.dotForm();
    auto it = seats_.find(id);
    bool running = it != seats_.end() && it->second->runtimeRunning();
    ExecSeatCounters c = it != seats_.end() ? it->second->counters() : ExecSeatCounters{};
    std::string note = notes_.count(id) != 0 ? notes_[id] : "";
    if (it != seats_.end() && !running && note.empty()) note = "the runtime exited";
    out.push_back(json::object{{"id", id},
                               {"name", snapshot.profile.name},
                               {"runtime", std::string(runtimeKindName(snapshot.profile.runtime))},
                               {"running", running},
                               {"admitted", c.admitted},
                               {"surfaced", c.surfaced},
                               {"failed", c.failed},
                               {"receipts", c.receipts},
                               {"note", note}});
  }
  return json::serialize(out);
}

Result<std::string> DaemonService::handle(const ControlRequest& request) {
  SHOAL_ASSIGN_OR_RETURN(json::object args, argsOf(request));
  if (request.op == "status") {
    SHOAL_RETURN_IF_ERROR(onlyKeys(args, {}, request.op));
    json::object o{{"space", options_.space},
                   {"pid", static_cast<int64_t>(::getpid())},
                   {"url", options_.url},
                   {"seats", json::parse(seatsJson())}};
    return json::serialize(o);
  }
  if (request.op == "seat.add") {
    if (args.contains("lifecycleUid")) {
      return invalidArgument("unknown-argument", "the daemon mints a seat's lifecycle uid");
    }
    SHOAL_ASSIGN_OR_RETURN(std::string uid, newLifecycleUid());
    args["lifecycleUid"] = uid;
    SHOAL_ASSIGN_OR_RETURN(SeatProfile profile, decodeSeatProfile(json::serialize(args)));
    SHOAL_ASSIGN_OR_RETURN(ProfileSnapshot created, store_->create(profile));
    log::info("daemon: added seat {} ({}) at revision {}", created.profile.name,
              created.profile.principal.dotForm(), created.revision);
    std::string note = startSeat(created.profile);
    json::object out = json::parse(snapshotJson(created)).as_object();
    out["running"] = note.empty();
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
    return snapshotJson(s);
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
    seats_.erase(id.dotForm());  // stopped before its profile goes
    notes_.erase(id.dotForm());
    SHOAL_RETURN_IF_ERROR(store_->remove(id, revision));
    log::info("daemon: removed seat {} (was at revision {})", id.dotForm(), revision);
    return json::serialize(json::object{{"removed", id.dotForm()}, {"revision", revision}});
  }
  if (request.op == "seat.start" || request.op == "seat.stop") {
    SHOAL_RETURN_IF_ERROR(onlyKeys(args, {"id"}, request.op));
    SHOAL_ASSIGN_OR_RETURN(wire::Principal id, idArg(args));
    SHOAL_ASSIGN_OR_RETURN(ProfileSnapshot s, store_->get(id));
    std::string note;
    if (request.op == "seat.start") {
      note = startSeat(s.profile);
    } else {
      seats_.erase(id.dotForm());
      note = notes_[id.dotForm()] = "stopped by `shoal seat stop`";
    }
    auto it = seats_.find(id.dotForm());
    bool running = it != seats_.end() && it->second->runtimeRunning();
    return json::serialize(
        json::object{{"id", id.dotForm()}, {"running", running}, {"note", note}});
  }
  return invalidArgument("unknown-op",
                         "the daemon has no op `" + request.op +
                             "` (status, seat.add, seat.list, seat.show, seat.start, seat.stop, "
                             "seat.rm)");
}

}  // namespace shoal::daemon
