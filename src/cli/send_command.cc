// `shoal send dm <to> <text>`: one DM from the person at the CLI, with a receipt of facts.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "base/clock.h"
#include "base/file_system.h"
#include "cli/command.h"
#include "cli/output.h"
#include "mesh/operator_identity.h"
#include "mesh/outbound.h"
#include "mesh/roster_read.h"
#include "supervisor/mesh_paths.h"
#include "supervisor/mesh_record.h"
#include "transport/connection.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct SendArgs {
  std::string space = "main";
  std::string server;
  std::string to;
  std::vector<std::string> words;
  double timeoutSeconds = 3;
  bool json = false;
};

// Who the DM goes to and what the roster said about them a moment before the publish.
struct Recipient {
  wire::Principal principal;
  std::string statusAtSend;  // empty when there is no verdict
  std::string note;          // the receipt's words about the roster
};

Result<Recipient> resolveRecipient(const std::string& to, const mesh::RosterSnapshot& roster) {
  Recipient r;
  auto asId = wire::parsePrincipal(to);
  const mesh::RosterRow* row = nullptr;
  for (const auto& candidate : roster.rows) {
    if (asId.isOk() && candidate.id == to) row = &candidate;
  }
  if (asId.isOk()) {
    r.principal = *asId;
  } else {
    // A name must be verified by a current view; otherwise refuse with the view's condition.
    if (!roster.view.fresh) return roster.view.condition;
    std::vector<const mesh::RosterRow*> live;
    std::vector<const mesh::RosterRow*> offline;
    for (const auto& candidate : roster.rows) {
      std::string a = candidate.presence.card.name;
      std::string b = to;
      std::transform(a.begin(), a.end(), a.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      std::transform(b.begin(), b.end(), b.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      if (a != b) continue;
      (candidate.online() ? live : offline).push_back(&candidate);
    }
    const auto& pool = !live.empty() ? live : offline;
    if (pool.empty()) {
      return notFound("unknown-peer", "no peer named `" + to +
                                          "` in the roster (see `shoal endpoints`); address "
                                          "an id such as local.alice to send anyway");
    }
    if (pool.size() > 1) {
      std::string ids;
      for (const auto* c : pool)
        ids += (ids.empty() ? "" : ", ") + c->id;
      return invalidArgument("ambiguous-name",
                             "`" + to + "` names more than one peer: " + ids + "; send to an id");
    }
    row = pool.front();
    SHOAL_ASSIGN_OR_RETURN(r.principal, wire::parsePrincipal(row->id));
  }
  if (row != nullptr) {
    r.statusAtSend = std::string(wire::presenceStatusName(row->presence.status));
    r.note = fmt::format("{} ({}) was {} at send", row->presence.card.name, row->id,
                         roster.view.fresh ? r.statusAtSend : "last known " + r.statusAtSend);
  } else if (roster.view.fresh) {
    r.note = "recipient had no roster row at send";
  } else {
    r.note = fmt::format("recipient's status unknown at send (presence view {})",
                         mesh::viewStateName(roster.view.state));
  }
  return r;
}

int runSendDm(const SendArgs& args) {
  std::string text;
  for (const auto& w : args.words)
    text += (text.empty() ? "" : " ") + w;
  auto paths = supervisor::MeshPaths::resolve(args.space);
  if (!paths.isOk()) return printFailure("shoal send dm", paths.status());
  auto url = supervisor::meshBrokerUrl(FileSystem::posix(), paths->registryFile, args.server);
  if (!url.isOk()) return printFailure("shoal send dm", url.status());
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(args.timeoutSeconds * 1000));

  transport::ConnectOptions options;
  options.servers = {*url};
  options.name = "shoal send";
  options.allowReconnect = false;
  options.connectTimeout = timeout;
  auto conn = transport::Connection::connect(options);
  if (!conn.isOk()) return printFailure("shoal send dm", conn.status());
  auto roster = mesh::readRosterOnce(**conn, paths->space, timeout);
  if (!roster.isOk()) return printFailure("shoal send dm", roster.status());
  auto recipient = resolveRecipient(args.to, *roster);
  if (!recipient.isOk()) return printFailure("shoal send dm: not sent", recipient.status());

  auto js = transport::JetStream::create(**conn);
  if (!js.isOk()) return printFailure("shoal send dm", js.status());
  mesh::OperatorIdentity me = mesh::localOperator();
  mesh::Outbound outbound;
  outbound.kind = wire::DeliveryKind::kDm;
  outbound.target = recipient->principal.dotForm();
  outbound.text = text;
  auto receipt = mesh::publishMessage(*js, Clock::real(), paths->space,
                                      mesh::Sender{me.principal, me.displayName, {}}, outbound);
  if (!receipt.isOk()) return printFailure("shoal send dm: not sent", receipt.status());

  if (args.json) {
    json::object out;
    out["id"] = receipt->messageId;
    out["stream"] = receipt->stream;
    out["seq"] = receipt->seq;
    out["duplicate"] = receipt->duplicate;
    out["from"] = me.principal.dotForm();
    out["to"] = recipient->principal.dotForm();
    out["recipientStatusAtSend"] = recipient->statusAtSend.empty()
                                       ? json::value(nullptr)
                                       : json::value(recipient->statusAtSend);
    out["note"] = recipient->note;
    std::printf("%s\n", json::serialize(out).c_str());
    return 0;
  }
  printOk(fmt::format("stored seq {} in {}{} (id {}); {}", receipt->seq, receipt->stream,
                      receipt->duplicate ? " (duplicate of an earlier publish)" : "",
                      receipt->messageId, recipient->note));
  return 0;
}

}  // namespace

void registerSendCommands(CLI::App& app, CommandResult& result) {
  CLI::App* send = app.add_subcommand("send",
                                      "send a message (DM today; channel posts and "
                                      "anycast come with the mesh endpoint)");
  send->require_subcommand(1);
  auto args = std::make_shared<SendArgs>();
  CLI::App* dm = send->add_subcommand("dm", "send a direct message to a peer (by name or id)");
  dm->add_option("to", args->to,
                 "recipient: a peer name from `shoal endpoints`, or an id "
                 "like local.alice")
      ->required();
  dm->add_option("text", args->words, "the message text")->required();
  dm->add_option("--space", args->space, "space name")->capture_default_str();
  dm->add_option("--server", args->server, "broker URL (default: the local mesh)");
  dm->add_option("--timeout", args->timeoutSeconds, "seconds to wait for the roster")
      ->capture_default_str();
  dm->add_flag("--json", args->json, "machine-readable receipt");
  dm->callback([args, &result] { result.exitCode = runSendDm(*args); });
}

}  // namespace shoal::cli
