// `shoal deliver pending <name>`: the state of a peer's DM durable, as the broker holds it.
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
};

struct Oldest {
  uint64_t seq = 0;
  int64_t storedMs = 0;
};

int runPending(const PendingArgs& args) {
  const std::string what = "shoal deliver pending";
  auto target = resolveMeshTarget(args.target);
  if (!target.isOk()) return printFailure(what, target.status());
  auto endpoint = openObserver(*target, "shoal deliver");
  if (!endpoint.isOk()) return printFailure(what, endpoint.status());
  mesh::Endpoint& me = **endpoint;
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
    std::printf("%s\n", json::serialize(out).c_str());
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
  return 0;
}

}  // namespace

void registerDeliverCommands(CLI::App& app, CommandResult& result) {
  CLI::App* deliver = app.add_subcommand("deliver", "inspect delivery state");
  deliver->require_subcommand(1);
  auto args = std::make_shared<PendingArgs>();
  CLI::App* pending = deliver->add_subcommand(
      "pending", "a peer's DM durable: pending, ack-pending, redelivered, ack floor, oldest age");
  pending->add_option("peer", args->peer, "a peer name from `shoal endpoints`, or an id")
      ->required();
  pending->add_option("--uid", args->uid,
                      "the lifecycle uid (default: the one the peer's presence names)");
  addMeshTargetOptions(pending, args->target, "the roster");
  pending->add_flag("--json", args->json, "machine-readable output");
  pending->callback([args, &result] { result.exitCode = runPending(*args); });
}

}  // namespace shoal::cli
