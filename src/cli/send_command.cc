// `shoal send dm|msg|ask`: one message from the person at the CLI, with a receipt of facts.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/mesh_target.h"
#include "cli/output.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct SendArgs {
  MeshTargetArgs target;
  std::string to;  // dm: name or id; msg: channel; ask: role
  std::vector<std::string> words;
  std::vector<std::string> mentions;
  bool json = false;
};

std::string joinWords(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& w : words)
    text += (text.empty() ? "" : " ") + w;
  return text;
}

void printReceipt(const mesh::Endpoint& from, const mesh::SendReceipt& r, bool asJson) {
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
    std::printf("%s\n", json::serialize(out).c_str());
    return;
  }
  printOk(fmt::format("stored seq {} in {}{} (id {}); {}", r.stored.seq, r.stored.stream,
                      r.stored.duplicate ? " (duplicate of an earlier publish)" : "",
                      r.stored.messageId, r.note));
}

int runSend(const SendArgs& args, wire::DeliveryKind kind) {
  const std::string what =
      fmt::format("shoal send {}", kind == wire::DeliveryKind::kDm        ? "dm"
                                   : kind == wire::DeliveryKind::kChannel ? "msg"
                                                                          : "ask");
  auto target = resolveMeshTarget(args.target);
  if (!target.isOk()) return printFailure(what, target.status());
  auto endpoint = openObserver(*target, "shoal send");
  if (!endpoint.isOk()) return printFailure(what, endpoint.status());
  mesh::Endpoint& me = **endpoint;
  // Names are resolved by a current view; wait for it (a timeout is reported by the lookup).
  (void)me.waitForRoster(args.target.timeout());

  const std::string text = joinWords(args.words);
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
  printReceipt(me, *receipt, args.json);
  return 0;
}

void addSend(CLI::App* send, CommandResult& result, const std::string& name,
             const std::string& help, const std::string& targetName, const std::string& targetHelp,
             wire::DeliveryKind kind) {
  auto args = std::make_shared<SendArgs>();
  CLI::App* cmd = send->add_subcommand(name, help);
  cmd->add_option(targetName, args->to, targetHelp)->required();
  cmd->add_option("text", args->words, "the message text")->required();
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
