// `shoal ps`: the seats the daemon runs, as processes — state, runtime pid and generation, turns,
// what waits for them — and each seat's latest wake results (did the agent answer visibly?).
// Read-only; it asks the running daemon (`status` on its control socket).
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/mesh_target.h"
#include "cli/output.h"
#include "daemon/control_socket.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct PsArgs {
  MeshTargetArgs target;
  size_t results = 5;
  bool json = false;
};

std::string str(const json::object& o, const char* key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

int64_t num(const json::object& o, const char* key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_number() ? v->to_number<int64_t>() : 0;
}

std::string clockTime(int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

// "  surfaced 14 (10 runtime-ack · 4 stdin-read) · 3 receipts owed": what proved each surfaced
// record, and the receipts the broker has not stored yet; "" when there is neither.
std::string surfacedLine(const json::object& seat) {
  std::string kinds;
  if (const json::value* by = seat.if_contains("surfacedBy"); by != nullptr && by->is_object()) {
    for (const auto& [kind, n] : by->as_object()) {
      if (!n.is_number() || n.to_number<int64_t>() == 0) continue;
      kinds += fmt::format("{}{} {}", kinds.empty() ? "" : " · ", n.to_number<int64_t>(),
                           std::string_view(kind));
    }
  }
  const int64_t surfaced = num(seat, "surfaced");
  const int64_t owed = num(seat, "receiptsOwed");
  std::string line;
  if (surfaced > 0) {
    line = fmt::format("  surfaced {}", surfaced);
    if (!kinds.empty()) line += " (" + kinds + ")";
  }
  if (owed > 0) {
    line += fmt::format("{}{} receipt{} owed (the broker has not stored {} yet)",
                        line.empty() ? "  " : " · ", owed, owed == 1 ? "" : "s",
                        owed == 1 ? "it" : "them");
  }
  return line;
}

int runPs(const PsArgs& args) {
  const std::string what = "shoal ps";
  auto path = daemon::controlSocketPath(args.target.space);
  if (!path.isOk()) return printFailure(what, path.status());
  auto reply =
      daemon::controlRequest(*path, daemon::ControlRequest{"status", "{}"}, args.target.timeout());
  if (!reply.isOk()) return printFailure(what, reply.status());
  boost::system::error_code ec;
  json::value status = json::parse(*reply, ec);
  if (ec || !status.is_object() || !status.as_object().contains("seats")) {
    return printFailure(what,
                        internalError("bad-control-reply", "the daemon's status is not JSON"));
  }
  const json::array& seats = status.at("seats").as_array();
  if (args.json) {
    printResult(seats, "seats");
    return 0;
  }
  if (seats.empty()) {
    printOk("no seats (`shoal seat add NAME --runtime claude` adds one)");
    return 0;
  }
  std::printf("%-20s %-8s %-10s %7s %4s %6s %6s %8s %8s %8s %8s %7s\n", "SEAT", "RUNTIME", "STATE",
              "PID", "GEN", "TURNS", "QUEUED", "INFLIGHT", "AWAITING", "REPLIED", "NO-REPLY",
              "FAILED");
  for (const auto& v : seats) {
    const json::object& s = v.as_object();
    std::string pid = num(s, "pid") > 0 ? std::to_string(num(s, "pid")) : "-";
    std::printf(
        "%-20s %-8s %-10s %7s %4lld %6lld %6lld %8lld %8lld %8lld %8lld %7lld\n",
        str(s, "name").c_str(), str(s, "runtime").c_str(), str(s, "state").c_str(), pid.c_str(),
        static_cast<long long>(num(s, "generation")), static_cast<long long>(num(s, "turns")),
        static_cast<long long>(num(s, "queued")), static_cast<long long>(num(s, "inflight")),
        static_cast<long long>(num(s, "awaitingReply")), static_cast<long long>(num(s, "replied")),
        static_cast<long long>(num(s, "noVisibleReply")),
        static_cast<long long>(num(s, "failed") + num(s, "replyFailed")));
    if (std::string proof = surfacedLine(s); !proof.empty()) std::printf("%s\n", proof.c_str());
    const json::value* recent = s.if_contains("recentResults");
    if (recent == nullptr || !recent->is_array()) continue;
    const json::array& rows = recent->as_array();
    const size_t from = rows.size() > args.results ? rows.size() - args.results : 0;
    for (size_t i = from; i < rows.size(); ++i) {
      const json::object& r = rows[i].as_object();
      std::string line = fmt::format("  {}  {:<32} {} from {}", clockTime(num(r, "at")),
                                     str(r, "result"), str(r, "message"), str(r, "target"));
      if (std::string by = str(r, "replyId"); !by.empty()) line += " · reply " + by;
      if (std::string reason = str(r, "reason"); !reason.empty()) line += " · " + reason;
      std::printf("%s\n", line.c_str());
    }
  }
  return 0;
}

}  // namespace

void registerPsCommand(CLI::App& app, CommandResult& result) {
  auto args = std::make_shared<PsArgs>();
  CLI::App* ps = app.add_subcommand(
      "ps",
      "the daemon's seats: state, runtime pid, turns, queues, what proved each surfaced "
      "delivery, receipts owed, and their latest wake results (replied / "
      "completed_without_visible_reply / failed)");
  ps->add_option("--results", args->results, "wake results shown per seat, newest last")
      ->capture_default_str()
      ->check(CLI::Range(0, 20));
  addMeshTargetOptions(ps, args->target, "the daemon's reply");
  ps->add_flag("--json", args->json, "machine-readable output (the daemon's seat rows)");
  ps->callback([args, &result] { result.exitCode = runPs(*args); });
}

}  // namespace shoal::cli
