// `shoal inbox`, `shoal read <id>`, `shoal reply <id> <text>`: the person at the CLI reads and
// answers their own mail. The person is `local.<login>` (mesh/operator_identity.h); what was
// sent to them is read from the space's DM stream without consuming anything (mesh/mailbox.h),
// so messages that arrived before the first look are there too. The first look asks the
// manager to provision their DM durable, as for any principal; `inbox --follow` binds it and
// shows what arrives. Read marks are kept on this machine (peer_state.h).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include "base/clock.h"
#include "cli/command.h"
#include "cli/mail_view.h"
#include "cli/mesh_target.h"
#include "cli/output.h"
#include "cli/peer_state.h"
#include "cli/signal_wait.h"
#include "mesh/mailbox.h"
#include "mesh/operator_identity.h"
#include "mesh/provision_client.h"

namespace shoal::cli {
namespace {

namespace json = boost::json;

struct InboxArgs {
  MeshTargetArgs target;
  bool all = false;
  bool unreadOnly = false;
  bool follow = false;
  size_t limit = 20;
  std::string id;
  std::vector<std::string> words;
  bool json = false;
};

// The person's mailbox on the target's space: an observer endpoint (its connection, JetStream
// and roster) and the reader identity. In auth mode the endpoint runs under the person's mail
// reader credential (mailboxGrants), and `sending` — opened only for a reply — under the agent
// profile minted for that answer; in open mode one endpoint does both.
struct Mail {
  MeshTarget target;
  MeshTarget agentTarget;  // the person's agent profile: it binds the DM durable and receipts
  std::unique_ptr<mesh::Endpoint> endpoint;
  mesh::MailboxReader reader;
  std::string name;  // "<login>@<host>"
  std::unique_ptr<mesh::Endpoint> sending;

  mesh::Endpoint& sender() { return sending ? *sending : *endpoint; }
};

Result<Mail> openMail(const MeshTargetArgs& args, std::string_view what) {
  Mail mail;
  SHOAL_ASSIGN_OR_RETURN(mail.target, resolveMeshTarget(args));
  mail.agentTarget = mail.target;
  SHOAL_RETURN_IF_ERROR(usePrivilege(args, mail.target, supervisor::Privilege::kMailbox, what));
  SHOAL_ASSIGN_OR_RETURN(mail.endpoint, openObserver(mail.target, std::string(what)));
  mesh::OperatorIdentity me = mesh::localOperator();
  mail.name = me.displayName;
  mail.reader.space = mail.target.space;
  mail.reader.me = mail.target.caller;
  SHOAL_ASSIGN_OR_RETURN(mail.reader.lifecycleUid,
                         peerLifecycleUid(mail.target.space, mail.target.caller));
  return mail;
}

// Binds the person's DM durable and shows each DM as it arrives (one NDJSON object per DM
// with --json), until Ctrl-C. DMs up to `listedUpTo` were in the listing already.
int followInbox(const Mail& mail, uint64_t listedUpTo) {
  const std::string what = "shoal inbox --follow";
  auto lock = lockPeerDurable(mail.reader.space, mail.reader.me,
                              fmt::format("pid {} (shoal inbox --follow)", ::getpid()));
  if (!lock.isOk()) return printFailure(what, lock.status());
  mesh::EndpointOptions options;
  options.servers = {mail.agentTarget.url};
  options.nkeySeedFile = mail.agentTarget.nkeySeedFile;
  options.credentialsFile = mail.agentTarget.credentialsFile;
  options.inboxPrefix = mail.agentTarget.inboxPrefix;
  options.tlsCaFile = mail.agentTarget.caFile;
  options.space = mail.reader.space;
  options.principal = mail.reader.me;
  options.displayName = mail.name;
  options.lifecycleUid = mail.reader.lifecycleUid;
  options.presence = false;
  options.connectionName = "shoal inbox --follow";
  const wire::Principal me = mail.reader.me;
  options.onDelivery = [me, listedUpTo](const mesh::Delivery& d) {
    if (d.kind != wire::DeliveryKind::kDm || d.streamSeq <= listedUpTo) {
      return mesh::HandlerVerdict::kAccepted;  // listed already
    }
    MailView view{d.message, d.kind, d.streamSeq, Clock::real().wallMs()};
    if (jsonOutput()) {
      json::object event = mailJson(view, true);
      event["event"] = "message";
      printJson(event);
    } else {
      std::printf("  %s\n", mailLine(view, true, me).c_str());
      std::fflush(stdout);
    }
    return mesh::HandlerVerdict::kAccepted;
  };
  options.onWarning = [](const Status&) {};
  auto endpoint = mesh::Endpoint::open(std::move(options));
  if (!endpoint.isOk()) {
    return printFailure(what,
                        supervisor::explainConnectFailure(mail.agentTarget, endpoint.status()));
  }
  printNote("following: new messages appear below (Ctrl-C stops)");
  std::fflush(stdout);
  while (!waitForStopSignal(std::chrono::milliseconds(1000))) {
  }
  (void)(*endpoint)->close();
  return 0;
}

int runInbox(const InboxArgs& args) {
  const std::string what = "shoal inbox";
  if (args.follow) blockStopSignals();
  auto mail = openMail(args.target, what);
  if (!mail.isOk()) return printFailure(what, mail.status());
  auto provisioned =
      mesh::requestProvision(mail->endpoint->connection(), mail->reader.space, mail->reader.me,
                             mail->reader.lifecycleUid, {}, args.target.timeout());
  if (!provisioned.isOk()) {
    printNote(
        fmt::format("your DM durable is not provisioned ({}); the list is read from the "
                    "stream all the same",
                    provisioned.status().message()));
  }
  auto turn = takeMailReaderTurn(mail->reader.space, mail->reader.me, args.target.timeout());
  if (!turn.isOk()) return printFailure(what, turn.status());
  auto page = mesh::readInbox(mail->endpoint->jetStream(), mail->reader, args.all ? 0 : args.limit);
  turn->reset();  // the reader is done with: `--follow` reads the DM durable instead
  if (!page.isOk()) return printFailure(what, page.status());
  auto marks = ReadMarks::load(mail->reader.space, mail->reader.me);
  if (!marks.isOk()) return printFailure(what, marks.status());

  size_t unread = 0;
  json::array items;
  std::vector<std::string> lines;
  for (const auto& e : page->entries) {
    const bool isUnread = !marks->has(e.delivery.message.id);
    unread += isUnread ? 1 : 0;
    if (args.unreadOnly && !isUnread) continue;
    items.push_back(mailJson(MailView::of(e), isUnread));
    lines.push_back(mailLine(MailView::of(e), isUnread, mail->reader.me));
  }
  if (jsonOutput()) {
    printResult(json::object{{"principal", mail->reader.me.dotForm()},
                             {"messages", std::move(items)},
                             {"unread", unread},
                             {"skipped", page->skipped}});
  } else {
    const size_t n = page->entries.size();
    printOk(fmt::format("inbox of {} ({}): {} message{}, {} unread{}", mail->reader.me.dotForm(),
                        mail->name, n, n == 1 ? "" : "s", unread,
                        args.all || n < args.limit ? "" : " (the newest; --all shows every one)"));
    for (const auto& line : lines)
      printDetail(line);
    if (n > 0) printDetail("`shoal read ID` shows one whole · `shoal reply ID TEXT` answers it");
  }
  if (!args.follow) return 0;
  return followInbox(*mail, page->watermark);
}

Status markRead(const mesh::MailboxReader& reader, const std::string& id) {
  SHOAL_ASSIGN_OR_RETURN(ReadMarks marks, ReadMarks::load(reader.space, reader.me));
  marks.add(id);
  return marks.save();
}

int runRead(const InboxArgs& args) {
  const std::string what = "shoal read";
  auto mail = openMail(args.target, what);
  if (!mail.isOk()) return printFailure(what, mail.status());
  auto turn = takeMailReaderTurn(mail->reader.space, mail->reader.me, args.target.timeout());
  if (!turn.isOk()) return printFailure(what, turn.status());
  auto found = mesh::findMessage(mail->endpoint->jetStream(), mail->reader, args.id);
  turn->reset();
  if (!found.isOk()) return printFailure(what, found.status());
  const bool wasUnread = [&] {
    auto marks = ReadMarks::load(mail->reader.space, mail->reader.me);
    return !marks.isOk() || !marks->has(found->delivery.message.id);
  }();
  Status marked = markRead(mail->reader, found->delivery.message.id);
  if (!marked.isOk()) printNote("could not keep the read mark: " + std::string(marked.message()));
  if (jsonOutput()) {
    printResult(json::object{{"message", mailJson(MailView::of(*found), wasUnread)}});
    return 0;
  }
  printWhole(*found);
  return 0;
}

int runReply(const InboxArgs& args) {
  const std::string what = "shoal reply";
  auto mail = openMail(args.target, what);
  if (!mail.isOk()) return printFailure(what, mail.status());
  auto turn = takeMailReaderTurn(mail->reader.space, mail->reader.me, args.target.timeout());
  if (!turn.isOk()) return printFailure(what, turn.status());
  auto found = mesh::findMessage(mail->endpoint->jetStream(), mail->reader, args.id);
  turn->reset();
  if (!found.isOk()) return printFailure(what, found.status());
  const wire::CotalMessage& original = found->delivery.message;
  if (mail->target.mode == "auth") {
    // The answer goes out under the person's agent profile, minted to post to that channel.
    MeshTargetArgs sendArgs = args.target;
    if (found->delivery.kind == wire::DeliveryKind::kChannel) {
      sendArgs.postChannels = {original.routing.target};
    }
    auto sendTarget = resolveMeshTarget(sendArgs);
    if (!sendTarget.isOk()) return printFailure(what, sendTarget.status());
    auto sending = openObserver(*sendTarget, what);
    if (!sending.isOk()) return printFailure(what, sending.status());
    mail->sending = std::move(sending).value();
    mail->agentTarget = std::move(sendTarget).value();  // keeps its credential file
  }
  std::string text;
  for (const auto& w : args.words)
    text += (text.empty() ? "" : " ") + w;
  mesh::Endpoint& me = mail->sender();
  Result<mesh::SendReceipt> sent = invalidArgument("unanswerable", "");
  std::string to;
  switch (found->delivery.kind) {
    case wire::DeliveryKind::kDm:
      // A DM back to its sender; answering one of your own continues that conversation.
      to = original.from.id == mail->reader.me.dotForm() ? original.routing.target
                                                         : original.from.id;
      sent = me.sendDirect(to, text, original.id);
      break;
    case wire::DeliveryKind::kChannel:
      to = "#" + original.routing.target;
      sent = me.post(original.routing.target, text, {}, original.id);
      break;
    case wire::DeliveryKind::kAnycast:
      sent = invalidArgument("unanswerable",
                             "role-addressed work is answered by the seat that took it");
      break;
  }
  if (!sent.isOk()) return printFailure(what + ": not sent", sent.status());
  (void)markRead(mail->reader, original.id);
  if (jsonOutput()) {
    printResult(json::object{{"id", sent->stored.messageId},
                             {"stream", sent->stored.stream},
                             {"seq", sent->stored.seq},
                             {"to", to},
                             {"replyTo", original.id}});
    return 0;
  }
  printOk(fmt::format("replied to …{} ({}): stored seq {} in {} (id {})", shortId(original.id), to,
                      sent->stored.seq, sent->stored.stream, sent->stored.messageId));
  if (!sent->note.empty()) printDetail(sent->note);
  return 0;
}

}  // namespace

void registerInboxCommands(CLI::App& app, CommandResult& result) {
  auto inbox = std::make_shared<InboxArgs>();
  CLI::App* i = app.add_subcommand("inbox", "what was sent to you (local.<login>), newest last");
  i->add_flag("--all", inbox->all, "every message, not only the newest --limit");
  i->add_option("--limit", inbox->limit, "how many of the newest to show")->capture_default_str();
  i->add_flag("--unread", inbox->unreadOnly, "only the unread ones");
  i->add_flag("--follow,-f", inbox->follow, "keep showing new messages as they arrive");
  addMeshTargetOptions(i, inbox->target, "the manager's provisioning");
  i->add_flag("--json", inbox->json, "machine-readable output (--follow: one object per line)");
  i->callback([inbox, &result] { result.exitCode = runInbox(*inbox); });

  auto read = std::make_shared<InboxArgs>();
  CLI::App* r = app.add_subcommand("read", "show one message whole (and mark it read)");
  r->add_option("id", read->id, "its id, or its last 8 characters as `inbox` shows them")
      ->required();
  addMeshTargetOptions(r, read->target, "the broker");
  r->add_flag("--json", read->json, "machine-readable output");
  r->callback([read, &result] { result.exitCode = runRead(*read); });

  auto reply = std::make_shared<InboxArgs>();
  CLI::App* p = app.add_subcommand(
      "reply", "answer a message: a DM back to its sender, a post on its channel");
  p->add_option("id", reply->id, "its id, or its last 8 characters")->required();
  p->add_option("text", reply->words, "the answer")->required();
  addMeshTargetOptions(p, reply->target, "the roster");
  p->add_flag("--json", reply->json, "machine-readable receipt");
  p->callback([reply, &result] { result.exitCode = runReply(*reply); });
}

}  // namespace shoal::cli
