// `shoal seat events [SEAT]`: the lifecycle events seats published to the space's wake stream
// (wire/wake_record.h) — runtime started / exited unexpectedly / start failed, wake failed,
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
#include "cli/message_text.h"
#include "cli/output.h"
#include "cli/seat_id.h"
#include "wire/names.h"
#include "wire/principal.h"
#include "wire/subject.h"
#include "wire/wake_record.h"

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

// One event as a line; every text field is the seat's (and so maybe a runtime's) bytes.
std::string eventLine(const wire::WakeRecord& e) {
  std::string who = e.seatName.empty() ? "?" : printablePeerText(e.seatName);
  std::string line =
      fmt::format("{}  {:<18} {:<20}", clockTime(e.atMs), who, printablePeerText(e.kind));
  if (e.generation > 0) line += fmt::format(" gen {}", e.generation);
  if (!e.messages.empty()) line += fmt::format(" · {} message(s)", e.messages.size());
  if (!e.result.empty()) {
    // A wake-result: how a directed delivery's visible reply ended.
    line += fmt::format(" · {} {} ({})", printablePeerText(e.result), printablePeerText(e.message),
                        printablePeerText(e.target));
    if (!e.replyId.empty()) line += " by " + printablePeerText(e.replyId);
    if (!e.reason.empty()) line += " · " + printablePeerText(e.reason);
  }
  if (!e.exit.empty()) line += " · " + printablePeerText(e.exit);
  if (!e.detail.empty()) line += " · " + printablePeerText(e.detail);
  return line;
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

  // Each event as published (--json prints it as is) and as read (wire/wake_record.h).
  std::deque<std::pair<json::object, wire::WakeRecord>> events;
  uint64_t last = info->state.lastSeq;
  uint64_t seq = last > kScanWindow ? last - kScanWindow + 1 : 1;
  while (seq <= last) {
    auto m = js.findMessage(*stream, seq, *filter);
    if (!m.isOk()) {
      if (m.status().code() == StatusCode::kNotFound) break;
      return printFailure(what, m.status());
    }
    seq = m->seq + 1;
    auto record = wire::decodeWakeRecord(m->data);
    if (!record.isOk()) continue;  // not an event this CLI can read
    boost::system::error_code ec;
    json::value v = json::parse(m->data, ec);
    if (ec || !v.is_object()) continue;
    events.emplace_back(std::move(v.as_object()), std::move(record).value());
    if (events.size() > args.limit) events.pop_front();
  }

  if (args.json) {
    json::array out;
    for (auto& e : events)
      out.push_back(std::move(e.first));
    printResult(out, "events");
    return 0;
  }
  if (events.empty()) {
    printOk(seat ? "no lifecycle events for " + seat->dotForm() : "no lifecycle events yet");
    return 0;
  }
  for (const auto& e : events)
    printDetail(eventLine(e.second));
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
