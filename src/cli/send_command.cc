// `shoal send dm|msg|ask`: one message from the person at the CLI, with a receipt of facts.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/clock.h"
#include "cli/command.h"
#include "cli/mail_view.h"
#include "cli/mesh_target.h"
#include "cli/message_text.h"
#include "cli/output.h"
#include "cli/peer_state.h"
#include "mesh/mailbox.h"
#include "wire/seat_receipt.h"
#include "wire/subject.h"
#include "wire/wake_record.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct SendArgs {
  MeshTargetArgs target;
  std::string to;  // dm: name or id; msg: channel; ask: role
  std::vector<std::string> words;
  std::vector<std::string> mentions;
  std::string wait;  // dm: "surfaced[=SECONDS]" or "replied[=SECONDS]"
  bool json = false;
};

// Exit code of a DM that was stored but not seen surfaced (or answered) within --wait, or that
// the seat failed (docs/cli.md).
constexpr int kExitNotConfirmed = 4;
// --wait replied: the turn ended without a visible reply.
constexpr int kExitNoVisibleReply = 5;
constexpr double kDefaultWaitSeconds = 30;
// How long a failed receipt waits for surfaced evidence right behind it (an upgrade).
constexpr std::chrono::milliseconds kUpgradeGrace{2000};
constexpr double kDefaultReplyWaitSeconds = 300;

struct WaitFor {
  bool replied = false;  // surfaced, then the wake result
  double seconds = kDefaultWaitSeconds;
};

// How a directed delivery's wake ended (a wire/wake_record.h `wake-result`).
struct WakeOutcome {
  std::string result;  // replied | completed_without_visible_reply | failed
  std::string replyId;
  std::string reason;
  int64_t atMs = 0;
};

// One terminal receipt from the recipient's seat: surfaced, or failed with a reason.
struct SeatReceipt {
  bool surfaced = false;
  int64_t atMs = 0;
  std::string reason;    // failed only
  std::string evidence;  // surfaced only: runtime-ack, stdin-read, inbox-page, …
  // surfaced only: the seat reported it failed first (this reason), then proved it surfaced
  // (seed 004: surfaced evidence upgrades a failed tombstone).
  std::string failedFirst;
};

// What is known of one message after `newer` follows `older`: a surfaced receipt is never
// undone by a failure, and a surfaced one upgrades a failure (which it then names).
SeatReceipt merge(const SeatReceipt& older, SeatReceipt newer) {
  if (older.surfaced) return older;
  if (newer.surfaced && older.failedFirst.empty()) newer.failedFirst = older.reason;
  return newer;
}

// How a receipt's evidence kind reads in a sentence.
std::string evidenceWords(const std::string& kind) {
  if (kind == "runtime-ack") return "the runtime acknowledged it";
  if (kind == "stdin-read") return "the program read it from its stdin";
  if (kind == "stdin-write") return "written to the program's stdin";
  if (kind == "inbox-page") return "an inbox page holding it was written";
  if (kind == "reconciled") return "found in the runtime's thread";
  return "";
}

// A receipt (wire/seat_receipt.h), keyed by the message id.
std::optional<std::pair<std::string, SeatReceipt>> parseReceipt(std::string_view body) {
  auto decoded = wire::decodeSeatReceipt(body);
  if (!decoded.isOk()) return std::nullopt;
  SeatReceipt r;
  r.surfaced = decoded->outcome == wire::SeatReceipt::Outcome::kSurfaced;
  r.atMs = decoded->atMs;
  r.evidence = decoded->evidence;
  r.reason = decoded->reason;
  return std::make_pair(decoded->id, r);
}

// Wake results: the latest one for a message is what is known.
WakeOutcome merge(const WakeOutcome&, WakeOutcome newer) {
  return newer;
}

// A `wake-result` record of the recipient's seat (wire/wake_record.h), keyed by its message.
std::optional<std::pair<std::string, WakeOutcome>> parseWakeResult(std::string_view body) {
  auto r = wire::decodeWakeRecord(body);
  if (!r.isOk() || r->kind != wire::kWakeResultKind) return std::nullopt;
  return std::make_pair(r->message, WakeOutcome{r->result, r->replyId, r->reason, r->atMs});
}

// The JSON records published on one subject, parsed and kept by message id, from a core
// subscription taken BEFORE the send so that a fast one cannot be missed.
template <typename T>
class SubjectWatch {
 public:
  using Parse = std::optional<std::pair<std::string, T>> (*)(std::string_view body);
  explicit SubjectWatch(Parse parse) : parse_(parse) {}

  Status start(transport::Connection& conn, const std::string& subject) {
    auto sub = conn.subscribe(subject, [this](transport::Message m) {
      auto parsed = parse_(m.data);
      if (!parsed) return;
      std::lock_guard lock(mu_);
      auto [it, fresh] = seen_.try_emplace(parsed->first, parsed->second);
      if (!fresh) it->second = merge(it->second, std::move(parsed->second));
      cv_.notify_all();
    });
    if (!sub.isOk()) return sub.status();
    sub_.emplace(std::move(sub).value());
    return conn.flush(std::chrono::seconds(2));
  }
  // The record of `id` once one satisfies `enough` (any, by default), else what is known of it
  // (or nullopt) after `timeout`.
  std::optional<T> waitFor(const std::string& id, std::chrono::milliseconds timeout,
                           bool (*enough)(const T&) = nullptr) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, timeout, [&] {
      auto it = seen_.find(id);
      return it != seen_.end() && (enough == nullptr || enough(it->second));
    });
    auto it = seen_.find(id);
    return it == seen_.end() ? std::nullopt : std::optional<T>(it->second);
  }

 private:
  const Parse parse_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, T> seen_;  // guarded by mu_
  std::optional<transport::Subscription> sub_;
};

Result<WaitFor> parseWait(const std::string& wait) {
  if (wait == "surfaced") return WaitFor{false, kDefaultWaitSeconds};
  if (wait == "replied") return WaitFor{true, kDefaultReplyWaitSeconds};
  for (const bool replied : {false, true}) {
    const std::string prefix = replied ? "replied=" : "surfaced=";
    if (wait.rfind(prefix, 0) != 0) continue;
    char* end = nullptr;
    double seconds = std::strtod(wait.c_str() + prefix.size(), &end);
    if (end != nullptr && *end == '\0' && seconds > 0 && seconds <= 3600)
      return WaitFor{replied, seconds};
  }
  return invalidArgument("bad-wait",
                         "--wait takes `surfaced[=SECONDS]` or `replied[=SECONDS]` (1–3600)");
}

std::string joinWords(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& w : words)
    text += (text.empty() ? "" : " ") + w;
  return text;
}

void printReceipt(const mesh::Endpoint& from, const mesh::SendReceipt& r, bool asJson,
                  const std::optional<SeatReceipt>& seat, int64_t sentAtMs,
                  const std::optional<WakeOutcome>& outcome = std::nullopt,
                  const std::optional<mesh::StoredEntry>& reply = std::nullopt) {
  std::optional<int64_t> surfacedAt;
  if (seat && seat->surfaced) surfacedAt = seat->atMs;
  if (asJson) {
    json::object out;
    out["id"] = r.stored.messageId;
    out["kind"] = std::string(wire::deliveryKindName(r.kind));
    out["stream"] = r.stored.stream;
    out["seq"] = r.stored.seq;
    out["duplicate"] = r.stored.duplicate;
    out["subject"] = r.stored.subject;
    out["from"] = from.id();
    switch (r.kind) {
      case wire::DeliveryKind::kDm:
        out["to"] = r.target;
        out["recipientStatusAtSend"] =
            r.recipientStatus ? json::value(*r.recipientStatus) : json::value(nullptr);
        break;
      case wire::DeliveryKind::kChannel: {
        out["channel"] = r.target;
        json::array ids;
        for (const auto& id : r.mentionIds)
          ids.push_back(json::value(id));
        out["mentions"] = std::move(ids);
        break;
      }
      case wire::DeliveryKind::kAnycast:
        out["role"] = r.target;
        break;
    }
    out["note"] = r.note;
    if (sentAtMs != 0) {
      out["surfacedAt"] = surfacedAt ? json::value(*surfacedAt) : json::value(nullptr);
      out["surfacedAfterMs"] =
          surfacedAt ? json::value(*surfacedAt - sentAtMs) : json::value(nullptr);
      if (seat && seat->surfaced && !seat->evidence.empty()) out["evidence"] = seat->evidence;
      if (seat && !seat->failedFirst.empty()) out["failedFirst"] = seat->failedFirst;
      if (seat && !seat->surfaced) {
        out["failedAt"] = seat->atMs;
        out["failReason"] = seat->reason;
      }
    }
    if (outcome) {
      out["wakeResult"] = outcome->result;
      if (!outcome->replyId.empty()) out["replyId"] = outcome->replyId;
      if (!outcome->reason.empty()) out["wakeReason"] = outcome->reason;
    }
    if (reply) out["reply"] = mailJson(MailView::of(*reply), false);
    printResult(out);
    return;
  }
  printOk(fmt::format("stored seq {} in {}{} (id {}); {}", r.stored.seq, r.stored.stream,
                      r.stored.duplicate ? " (duplicate of an earlier publish)" : "",
                      r.stored.messageId, r.note));
  if (surfacedAt) {
    const std::string how = evidenceWords(seat->evidence);
    printOk(fmt::format("surfaced at {} (+{} ms after the send{})", formatClock(*surfacedAt),
                        *surfacedAt - sentAtMs, how.empty() ? "" : "; " + how));
    if (!seat->failedFirst.empty()) {
      printNote("the seat first reported it failed (" + seat->failedFirst +
                "), then proved it surfaced: surfaced stands");
    }
  }
  if (outcome && outcome->result == "replied") {
    printOk(fmt::format("replied at {} (+{} ms; reply {})", formatClock(outcome->atMs),
                        outcome->atMs - sentAtMs, outcome->replyId));
    if (reply) {
      printDetail(senderLabel(reply->delivery.message) + ": " +
                  messageText(reply->delivery.message));
    }
  } else if (outcome && outcome->result == "completed_without_visible_reply") {
    printNote(fmt::format("the turn ended at {} without a visible reply to you",
                          formatClock(outcome->atMs)));
  }
}

int runSend(const SendArgs& args, wire::DeliveryKind kind) {
  const std::string what =
      fmt::format("shoal send {}", kind == wire::DeliveryKind::kDm        ? "dm"
                                   : kind == wire::DeliveryKind::kChannel ? "msg"
                                                                          : "ask");
  MeshTargetArgs targetArgs = args.target;
  if (kind == wire::DeliveryKind::kChannel) targetArgs.postChannels = {args.to};
  auto target = resolveMeshTarget(targetArgs);
  if (!target.isOk()) return printFailure(what, target.status());
  auto endpoint = openObserver(*target, "shoal send");
  if (!endpoint.isOk()) return printFailure(what, endpoint.status());
  mesh::Endpoint& me = **endpoint;
  // Names are resolved by a current view; wait for it (a timeout is reported by the lookup).
  (void)me.waitForRoster(args.target.timeout());

  const std::string text = joinWords(args.words);
  // --wait surfaced: watch the recipient's receipts to us before sending.
  std::optional<double> waitSeconds;
  bool waitReplied = false;
  SubjectWatch<SeatReceipt> receipts(&parseReceipt);
  SubjectWatch<WakeOutcome> wakeResults(&parseWakeResult);
  if (!args.wait.empty()) {
    auto waitFor = parseWait(args.wait);
    if (!waitFor.isOk()) return printFailure(what, waitFor.status());
    waitSeconds = waitFor->seconds;
    waitReplied = waitFor->replied;
    wire::Principal to;
    if (auto id = wire::parsePrincipal(args.to); id.isOk()) {
      to = *id;
    } else {
      auto row = me.findPeer(args.to);
      if (!row.isOk()) return printFailure(what + ": not sent", row.status());
      to = *wire::parsePrincipal(row->id);
    }
    auto subject = wire::rcptSubject(target->space, me.principal(), to);
    if (!subject.isOk()) return printFailure(what, subject.status());
    Status watching = receipts.start(me.connection(), *subject);
    if (!watching.isOk()) return printFailure(what + ": not sent", watching);
    if (waitReplied) {
      auto wake = wire::wakeSubject(target->space, to);
      if (!wake.isOk()) return printFailure(what, wake.status());
      Status watchingWake = wakeResults.start(me.connection(), *wake);
      if (!watchingWake.isOk()) return printFailure(what + ": not sent", watchingWake);
    }
  }
  const int64_t sentAtMs = Clock::real().wallMs();
  Result<mesh::SendReceipt> receipt = invalidArgument("bad-kind", "unknown send kind");
  switch (kind) {
    case wire::DeliveryKind::kDm:
      receipt = me.sendDirect(args.to, text);
      break;
    case wire::DeliveryKind::kChannel:
      receipt = me.post(args.to, text, args.mentions);
      break;
    case wire::DeliveryKind::kAnycast:
      receipt = me.ask(args.to, text);
      break;
  }
  if (!receipt.isOk()) return printFailure(what + ": not sent", receipt.status());
  if (!waitSeconds) {
    printReceipt(me, *receipt, args.json, std::nullopt, 0);
    return 0;
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(*waitSeconds * 1000));
  auto left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::max(
        deadline - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration::zero()));
  };
  auto seat = receipts.waitFor(receipt->stored.messageId, left());
  if (seat && !seat->surfaced) {
    // A failure may still be upgraded by surfaced evidence (an inbox page, a reconciled read)
    // arriving right behind it: give it a moment, never past --wait.
    seat = receipts.waitFor(receipt->stored.messageId, std::min(left(), kUpgradeGrace),
                            [](const SeatReceipt& r) { return r.surfaced; });
  }
  std::optional<WakeOutcome> outcome;
  if (waitReplied && seat && seat->surfaced)
    outcome = wakeResults.waitFor(receipt->stored.messageId, left());
  // The answer itself, when the agent replied: it is stored by the time its wake result is.
  std::optional<mesh::StoredEntry> reply;
  if (outcome && outcome->result == "replied" && !outcome->replyId.empty()) {
    auto uid = peerLifecycleUid(target->space, me.principal());
    auto turn = takeMailReaderTurn(target->space, me.principal(), args.target.timeout());
    if (uid.isOk() && turn.isOk()) {
      mesh::MailboxReader reader{target->space, me.principal(), *uid};
      auto found = mesh::findMessage(me.jetStream(), reader, outcome->replyId);
      if (found.isOk()) reply = std::move(found).value();
    }
  }
  printReceipt(me, *receipt, args.json, seat, sentAtMs, outcome, reply);
  if (seat && seat->surfaced && !waitReplied) return 0;
  if (seat && seat->surfaced) {
    if (outcome && outcome->result == "replied") return 0;
    if (!args.json) {
      if (!outcome) {
        printNote(
            fmt::format("surfaced, but no wake result within {}s: the agent may still be "
                        "working on it (`shoal ps` shows its wake results; an exec seat has no "
                        "turns and reports none)",
                        *waitSeconds));
      } else if (outcome->result == "failed") {
        printNote(
            fmt::format("the turn failed at {}: {}", formatClock(outcome->atMs), outcome->reason));
      }
    }
    if (outcome && outcome->result == "completed_without_visible_reply") return kExitNoVisibleReply;
    return kExitNotConfirmed;
  }
  if (seat && !args.json) {
    printNote(fmt::format("{}'s seat reported it failed at {} (+{} ms): {}", receipt->target,
                          formatClock(seat->atMs), seat->atMs - sentAtMs, seat->reason));
  } else if (!args.json) {
    printNote(
        fmt::format("not seen surfaced within {}s: the DM is stored (seq {}) and waits for "
                    "{}; see `shoal deliver pending {}`",
                    *waitSeconds, receipt->stored.seq, receipt->target, receipt->target));
    // What the recipient itself says is wrong (a poisoned journal, a parked runtime, a rate
    // limit) is the likely reason.
    if (auto row = me.findPeer(receipt->target);
        row.isOk() && row->presence.condition && row->presence.condition->message) {
      printDetail(fmt::format("{} reports: {}", receipt->target,
                              printablePeerText(*row->presence.condition->message)));
    }
  }
  return kExitNotConfirmed;
}

void addSend(CLI::App* send, CommandResult& result, const std::string& name,
             const std::string& help, const std::string& targetName, const std::string& targetHelp,
             wire::DeliveryKind kind) {
  auto args = std::make_shared<SendArgs>();
  CLI::App* cmd = send->add_subcommand(name, help);
  cmd->add_option(targetName, args->to, targetHelp)->required();
  cmd->add_option("text", args->words, "the message text")->required();
  if (kind == wire::DeliveryKind::kDm) {
    cmd->add_option("--wait", args->wait,
                    "`surfaced[=SECONDS]`: wait (default 30 s) until the recipient's seat "
                    "reports the DM surfaced; exit 4 if not seen in time. `replied[=SECONDS]`: "
                    "then until its agent answered visibly (default 300 s); exit 5 when its "
                    "turn ended without a reply");
  }
  if (kind == wire::DeliveryKind::kChannel) {
    cmd->add_option("--mention", args->mentions,
                    "a peer name or id to @mention (repeatable); an unknown one aborts the send");
  }
  addMeshTargetOptions(cmd, args->target, "the roster");
  cmd->add_flag("--json", args->json, "machine-readable receipt");
  cmd->callback([args, &result, kind] { result.exitCode = runSend(*args, kind); });
}

}  // namespace

void registerSendCommands(CLI::App& app, CommandResult& result) {
  CLI::App* send = app.add_subcommand("send", "send a DM, a channel post or role-addressed work");
  send->require_subcommand(1);
  addSend(send, result, "dm", "send a direct message to a peer (by name or id)", "to",
          "recipient: a peer name from `shoal endpoints`, or an id like local.alice",
          wire::DeliveryKind::kDm);
  addSend(send, result, "msg", "post to a channel (everyone joined to it sees it)", "channel",
          "a concrete channel, e.g. team.backend", wire::DeliveryKind::kChannel);
  addSend(send, result, "ask", "send work to a role (exactly one holder of the role takes it)",
          "role", "the role, e.g. reviewer", wire::DeliveryKind::kAnycast);
}

}  // namespace shoal::cli
