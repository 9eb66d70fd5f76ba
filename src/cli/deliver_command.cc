// `shoal deliver pending [<name>]`: without a peer, the delivery plane's fan-out jobs (pending,
// leased, delivered, retry, failed, suppressed, with attempts and last error); with one, the
// state of the peer's DM durable and of its durable channel copies (DLV), as the broker holds
// them.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/clock.h"
#include "cli/command.h"
#include "cli/mesh_target.h"
#include "cli/output.h"
#include "cli/peer_state.h"
#include "mesh/delivery_rail.h"
#include "wire/names.h"
#include "wire/subject.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct PendingArgs {
  MeshTargetArgs target;
  std::string peer;
  std::string uid;
  bool json = false;
  bool all = false;
};

struct Oldest {
  uint64_t seq = 0;
  int64_t storedMs = 0;
};

uint64_t u64(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return 0;
  if (v->is_uint64()) return v->get_uint64();
  if (v->is_int64() && v->get_int64() >= 0) return static_cast<uint64_t>(v->get_int64());
  return 0;
}

// The delivery plane's job table, over its rail.
int runJobs(const PendingArgs& args, mesh::Endpoint& me, const MeshTarget& target) {
  const std::string what = "shoal deliver pending";
  auto data = mesh::requestDeliveryJobs(me.connection(), target.space, me.principal(),
                                        me.lifecycleUid(), args.target.timeout());
  if (!data.isOk()) return printFailure(what, data.status());
  boost::system::error_code ec;
  json::value v = json::parse(*data, ec);
  if (args.json) {
    if (ec)
      return printFailure(what, internalError("bad-plane-reply", "the plane's jobs are not JSON"));
    printResult(std::move(v));
    return 0;
  }
  if (ec || !v.is_object()) return printFailure(what, internalError("bad-reply", *data));
  const json::object& o = v.as_object();
  const json::object empty;
  const json::object& pending =
      o.contains("pending") && o.at("pending").is_object() ? o.at("pending").as_object() : empty;
  const json::object& totals =
      o.contains("totals") && o.at("totals").is_object() ? o.at("totals").as_object() : empty;
  const json::object& reader =
      o.contains("reader") && o.at("reader").is_object() ? o.at("reader").as_object() : empty;
  auto text = [&](std::string_view key) {
    const json::value* s = o.if_contains(key);
    return s != nullptr && s->is_string() ? std::string(s->as_string()) : std::string();
  };
  printOk(fmt::format("delivery plane of space {} — holder {} (incarnation {}), {} membership(s)",
                      target.space, text("holder"), text("incarnation").substr(0, 8),
                      u64(o, "memberships")));
  printDetail(fmt::format(
      "fan-out: pending {} · leased {} · delivered {} · suppressed {} · retry {} · failed {}",
      u64(pending, "fanout"), u64(pending, "fanoutUnacked"), u64(totals, "delivered"),
      u64(totals, "suppressed"), u64(totals, "retry"), u64(totals, "failed")));
  printDetail(fmt::format(
      "reader:  pending {} · leased {} · handed over {} · suppressed {} · deferred {} · failed {}",
      u64(pending, "reader"), u64(pending, "readerUnacked"), u64(reader, "handedOver"),
      u64(reader, "suppressed"), u64(reader, "deferred"), u64(reader, "failed")));
  size_t shown = 0;
  if (const json::value* jobs = o.if_contains("jobs"); jobs != nullptr && jobs->is_array()) {
    for (const auto& j : jobs->as_array()) {
      if (!j.is_object()) continue;
      const json::object& job = j.as_object();
      const std::string state(job.at("state").as_string());
      if (!args.all && (state == "delivered" || state == "suppressed")) continue;
      const std::string error(job.at("lastError").as_string());
      printDetail(fmt::format(
          "{} #{} {} {} · attempts {} · copies {}{}", std::string(job.at("key").as_string()),
          std::string(job.at("channel").as_string()), std::string(job.at("messageId").as_string()),
          state, u64(job, "attempts"), u64(job, "copies"), error.empty() ? "" : " · " + error));
      ++shown;
    }
  }
  if (shown == 0) printDetail(args.all ? "no jobs recorded yet" : "no job is waiting or failed");
  return 0;
}

int runPending(const PendingArgs& args) {
  const std::string what = "shoal deliver pending";
  auto target = resolveMeshTarget(args.target);
  if (!target.isOk()) return printFailure(what, target.status());
  if (!args.peer.empty()) {
    // Auth mode: another principal's durables are the admin profile's to read.
    if (Status st = usePrivilege(args.target, *target, supervisor::Privilege::kAdminReads, what);
        !st.isOk()) {
      return printFailure(what, st);
    }
  }
  auto endpoint = openObserver(*target, "shoal deliver");
  if (!endpoint.isOk()) return printFailure(what, endpoint.status());
  mesh::Endpoint& me = **endpoint;
  if (args.peer.empty()) return runJobs(args, me, *target);
  (void)me.waitForRoster(args.target.timeout());

  // Who: an id needs no roster row (then --uid is needed); a name must resolve.
  wire::Principal principal;
  std::string name;
  std::string uid = args.uid;
  if (auto asId = wire::parsePrincipal(args.peer); asId.isOk()) {
    principal = *asId;
    auto row = me.findPeer(args.peer);
    if (row.isOk()) {
      name = row->presence.card.name;
      if (uid.empty() && row->presence.lifecycleUid) uid = *row->presence.lifecycleUid;
    }
  } else {
    auto row = me.findPeer(args.peer);
    if (!row.isOk()) return printFailure(what, row.status());
    principal = *wire::parsePrincipal(row->id);
    name = row->presence.card.name;
    if (uid.empty() && row->presence.lifecycleUid) uid = *row->presence.lifecycleUid;
  }
  // The person at the CLI keeps their lifecycle on this machine (`shoal inbox`, `shoal join`).
  if (uid.empty()) uid = knownPeerLifecycleUid(target->space, principal);
  if (uid.empty()) {
    return printFailure(
        what, failedPrecondition("no-lifecycle-uid",
                                 fmt::format("{}'s presence names no lifecycle, so its DM durable "
                                             "is unknown; pass --uid <lifecycle uid>",
                                             principal.dotForm())));
  }
  auto durable = wire::dmDurable(principal, uid);
  if (!durable.isOk()) return printFailure(what, durable.status());
  auto stream = wire::streamName(wire::Stream::kDm, target->space);
  if (!stream.isOk()) return printFailure(what, stream.status());
  auto info = me.jetStream().consumerInfo(*stream, *durable);
  if (!info.isOk()) {
    if (info.status().code() == StatusCode::kNotFound) {
      return printFailure(
          what, notFound("durable-missing", fmt::format("{} has no DM durable {} on {} (that "
                                                        "lifecycle never connected, or it was "
                                                        "removed)",
                                                        principal.dotForm(), *durable, *stream)));
    }
    return printFailure(what, info.status());
  }
  std::optional<Oldest> oldest;
  if (info->numPending + static_cast<uint64_t>(info->numAckPending) > 0) {
    auto filter = wire::dmFilter(target->space, principal);
    if (filter.isOk()) {
      auto m = me.jetStream().findMessage(*stream, info->ackFloor.streamSeq + 1, *filter);
      if (m.isOk()) oldest = Oldest{m->seq, m->timeMs};
    }
  }
  const int64_t nowMs = Clock::real().wallMs();
  // The lifecycle's durable channel copies (absent on a space without a delivery plane yet).
  std::optional<transport::ConsumerInfo> dlv;
  auto dlvName = wire::dlvDurable(principal, uid);
  auto dlvStream = wire::streamName(wire::Stream::kDlv, target->space);
  if (dlvName.isOk() && dlvStream.isOk()) {
    if (auto d = me.jetStream().consumerInfo(*dlvStream, *dlvName); d.isOk()) dlv = *d;
  }

  if (args.json) {
    json::object out;
    out["durable"] = *durable;
    out["stream"] = *stream;
    out["principal"] = principal.dotForm();
    out["name"] = name.empty() ? json::value(nullptr) : json::value(name);
    out["lifecycleUid"] = uid;
    out["pending"] = info->numPending;
    out["ackPending"] = info->numAckPending;
    out["redelivered"] = info->numRedelivered;
    out["waitingPulls"] = info->numWaiting;
    out["ackFloor"] = {{"streamSeq", info->ackFloor.streamSeq},
                       {"consumerSeq", info->ackFloor.consumerSeq}};
    out["delivered"] = {{"streamSeq", info->delivered.streamSeq},
                        {"consumerSeq", info->delivered.consumerSeq}};
    if (oldest) {
      out["oldestPending"] = {{"seq", oldest->seq},
                              {"storedMs", oldest->storedMs},
                              {"ageMs", std::max<int64_t>(0, nowMs - oldest->storedMs)}};
    } else {
      out["oldestPending"] = nullptr;
    }
    if (dlv) {
      out["channelCopies"] = {{"durable", *dlvName},
                              {"stream", *dlvStream},
                              {"pending", dlv->numPending},
                              {"ackPending", dlv->numAckPending},
                              {"redelivered", dlv->numRedelivered}};
    } else {
      out["channelCopies"] = nullptr;
    }
    printResult(out);
    return 0;
  }
  printOk(fmt::format("{} on {} — {}{} lifecycle {}", *durable, *stream,
                      name.empty() ? "" : name + " ", principal.dotForm(), uid));
  std::string line = fmt::format(
      "pending {} · ack-pending {} · redelivered {} · ack floor seq {} · delivered seq {}",
      info->numPending, info->numAckPending, info->numRedelivered, info->ackFloor.streamSeq,
      info->delivered.streamSeq);
  if (oldest) {
    line += fmt::format(" · oldest unacked seq {} stored {} ago", oldest->seq,
                        formatAge(static_cast<double>(oldest->storedMs), nowMs));
  } else {
    line += " · nothing outstanding";
  }
  printDetail(line);
  if (dlv) {
    printDetail(
        fmt::format("durable channel copies ({}): pending {} · ack-pending {} · "
                    "redelivered {}",
                    *dlvName, dlv->numPending, dlv->numAckPending, dlv->numRedelivered));
  }
  return 0;
}

}  // namespace

void registerDeliverCommands(CLI::App& app, CommandResult& result) {
  CLI::App* deliver = app.add_subcommand("deliver", "inspect delivery state");
  deliver->require_subcommand(1);
  auto args = std::make_shared<PendingArgs>();
  CLI::App* pending = deliver->add_subcommand(
      "pending",
      "without a peer: the delivery plane's fan-out jobs; with one: the peer's DM durable and "
      "durable channel copies (pending, ack-pending, redelivered, ack floor, oldest age)");
  pending->add_option("peer", args->peer, "a peer name from `shoal endpoints`, or an id");
  pending->add_flag("--all", args->all, "jobs: list delivered and suppressed jobs too");
  pending->add_option("--uid", args->uid,
                      "the lifecycle uid (default: the one the peer's presence names)");
  addMeshTargetOptions(pending, args->target, "the roster");
  pending->add_flag("--json", args->json, "machine-readable output");
  pending->callback([args, &result] { result.exitCode = runPending(*args); });
}

}  // namespace shoal::cli
