// `shoal seat events [SEAT]`: the lifecycle events seats published to the space's wake stream
// (daemon/wake_events.h) — runtime started / exited unexpectedly / start failed, wake failed,
// turn completed, and each directed delivery's wake result (replied,
// completed_without_visible_reply, failed) — newest last. Read-only: it reads WAKE_<space> by
// subject and consumes nothing, so it works whether or not a daemon runs.
#include <cstdio>
#include <ctime>
#include <deque>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/mesh_target.h"
#include "cli/output.h"
#include "cli/seat_id.h"
#include "wire/names.h"
#include "wire/principal.h"
#include "wire/subject.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct EventsArgs {
  MeshTargetArgs target;
  std::string seat;  // id or name; empty: every seat
  size_t limit = 20;
  bool json = false;
};

// How far back the scan starts: the newest this many messages of the stream.
constexpr uint64_t kScanWindow = 20000;

std::string clockTime(int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  return fmt::format("{:02}-{:02} {:02}:{:02}:{:02}.{:03}", tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec, ms % 1000);
}

std::string field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

int runEvents(const EventsArgs& args) {
  const std::string what = "shoal seat events";
  auto target = resolveMeshTarget(args.target);
  if (!target.isOk()) return printFailure(what, target.status());
  if (Status st = usePrivilege(args.target, *target, supervisor::Privilege::kAdminReads, what);
      !st.isOk()) {
    return printFailure(what, st);
  }
  auto endpoint = openObserver(*target, "shoal seat events");
  if (!endpoint.isOk()) return printFailure(what, endpoint.status());
  std::optional<wire::Principal> seat;
  if (!args.seat.empty()) {
    auto id = wire::parsePrincipal(seatId(args.seat, seatOwnerOf(args.target)));
    if (!id.isOk()) return printFailure(what, id.status());
    seat = *id;
  }
  auto filter = wire::wakeFilter(target->space, seat);
  if (!filter.isOk()) return printFailure(what, filter.status());
  auto stream = wire::streamName(wire::Stream::kWake, target->space);
  if (!stream.isOk()) return printFailure(what, stream.status());
  transport::JetStream& js = (*endpoint)->jetStream();
  auto info = js.streamInfo(*stream);
  if (!info.isOk()) return printFailure(what, info.status().withContext("reading " + *stream));

  std::deque<json::object> events;
  uint64_t last = info->state.lastSeq;
  uint64_t seq = last > kScanWindow ? last - kScanWindow + 1 : 1;
  while (seq <= last) {
    auto m = js.findMessage(*stream, seq, *filter);
    if (!m.isOk()) {
      if (m.status().code() == StatusCode::kNotFound) break;
      return printFailure(what, m.status());
    }
    seq = m->seq + 1;
    boost::system::error_code ec;
    json::value v = json::parse(m->data, ec);
    if (ec || !v.is_object()) continue;  // not an event this CLI can read
    events.push_back(std::move(v.as_object()));
    if (events.size() > args.limit) events.pop_front();
  }

  if (args.json) {
    json::array out;
    for (auto& e : events)
      out.push_back(std::move(e));
    printResult(out, "events");
    return 0;
  }
  if (events.empty()) {
    printOk(seat ? "no lifecycle events for " + seat->dotForm() : "no lifecycle events yet");
    return 0;
  }
  for (const auto& e : events) {
    const json::object* s = e.if_contains("seat") != nullptr && e.at("seat").is_object()
                                ? &e.at("seat").as_object()
                                : nullptr;
    std::string who = s != nullptr ? field(*s, "name") : "?";
    int64_t at = e.if_contains("at") != nullptr && e.at("at").is_number()
                     ? e.at("at").to_number<int64_t>()
                     : 0;
    std::string line = fmt::format("{}  {:<18} {:<20}", clockTime(at), who, field(e, "kind"));
    if (const auto* gen = e.if_contains("generation"); gen != nullptr && gen->is_number())
      line += fmt::format(" gen {}", gen->to_number<int64_t>());
    if (const auto* ids = e.if_contains("messages"); ids != nullptr && ids->is_array())
      line += fmt::format(" · {} message(s)", ids->as_array().size());
    if (std::string result = field(e, "result"); !result.empty()) {
      // A wake-result: how a directed delivery's visible reply ended.
      line += fmt::format(" · {} {} ({})", result, field(e, "message"), field(e, "target"));
      if (std::string reply = field(e, "replyId"); !reply.empty()) line += " by " + reply;
      if (std::string reason = field(e, "reason"); !reason.empty()) line += " · " + reason;
    }
    if (std::string exit = field(e, "exit"); !exit.empty()) line += " · " + exit;
    if (std::string detail = field(e, "detail"); !detail.empty()) line += " · " + detail;
    printDetail(line);
  }
  return 0;
}

}  // namespace

void addSeatEventsCommand(CLI::App* seat, CommandResult& result) {
  auto args = std::make_shared<EventsArgs>();
  CLI::App* e = seat->add_subcommand(
      "events", "seats' lifecycle events: runtime started/exited/failed, wakes, turns");
  e->add_option("seat", args->seat, "one seat's id or name (default: every seat)");
  e->add_option("--limit", args->limit, "show at most this many, newest last")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  addMeshTargetOptions(e, args->target, "the broker");
  e->add_flag("--json", args->json, "machine-readable output (an array of the events)");
  e->callback([args, &result] { result.exitCode = runEvents(*args); });
}

}  // namespace shoal::cli
