#include "daemon/exec_seat.h"

#include <boost/json.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file_system.h"
#include "base/log.h"
#include "daemon/presentation.h"
#include "wire/message.h"
#include "wire/subject.h"

namespace shoal::daemon {
namespace {

namespace json = boost::json;

constexpr std::chrono::milliseconds kStdinWriteTimeout{10000};
constexpr std::chrono::milliseconds kStopGrace{3000};

// The journal body of one admitted delivery: three header lines (kind, subject, flags) and the
// message as its compact wire JSON (which holds no raw newline).
std::string encodeBody(const mesh::Delivery& d) {
  auto encoded = wire::encodeMessage(d.message);
  std::string flags;
  flags += d.historical ? 'h' : '-';
  flags += d.numDelivered > 1 ? 'r' : '-';
  return fmt::format("{}\n{}\n{}\n{}", wire::deliveryKindName(d.kind), d.subject, flags,
                     encoded.isOk() ? *encoded : std::string("{}"));
}

struct StoredDelivery {
  wire::DeliveryKind kind = wire::DeliveryKind::kDm;
  bool historical = false;
  bool redelivered = false;
  wire::CotalMessage message;
};

Result<StoredDelivery> decodeBody(const std::string& body) {
  size_t a = body.find('\n');
  size_t b = a == std::string::npos ? a : body.find('\n', a + 1);
  size_t c = b == std::string::npos ? b : body.find('\n', b + 1);
  if (c == std::string::npos) return dataLoss("bad-journal-body", "a stored delivery is damaged");
  StoredDelivery out;
  std::string kind = body.substr(0, a);
  out.kind = kind == "dm"        ? wire::DeliveryKind::kDm
             : kind == "channel" ? wire::DeliveryKind::kChannel
                                 : wire::DeliveryKind::kAnycast;
  std::string flags = body.substr(b + 1, c - b - 1);
  out.historical = flags.size() > 0 && flags[0] == 'h';
  out.redelivered = flags.size() > 1 && flags[1] == 'r';
  SHOAL_ASSIGN_OR_RETURN(out.message, wire::decodeMessage(std::string_view(body).substr(c + 1)));
  return out;
}

}  // namespace

Result<std::unique_ptr<ExecSeat>> ExecSeat::start(const SeatProfile& profile,
                                                  const ExecSeatOptions& options) {
  SHOAL_RETURN_IF_ERROR(validateSeatProfile(profile));
  if (profile.runtime != RuntimeKind::kExec) {
    return failedPrecondition(
        "runtime-not-built",
        fmt::format("seat {} uses the {} runtime; only exec seats run "
                    "today (the other drivers are issue 5 and 8 work)",
                    profile.principal.dotForm(), runtimeKindName(profile.runtime)));
  }
  std::unique_ptr<ExecSeat> seat(new ExecSeat(profile, options));
  Status opened = seat->open();
  if (!opened.isOk()) {
    seat->stop();
    return opened;
  }
  return seat;
}

std::string ExecSeat::runtimeLogPath() const {
  return profile_.cwd + "/.shoal/runtime.log";
}

Status ExecSeat::open() {
  FileSystem& fs = FileSystem::posix();
  SHOAL_RETURN_IF_ERROR(fs.createDirs(profile_.cwd + "/.shoal").status());
  journal::OpenOptions jo;
  jo.holder =
      fmt::format("pid {} (shoal daemon, seat {})", ::getpid(), profile_.principal.dotForm());
  SHOAL_ASSIGN_OR_RETURN(journal_,
                         journal::OwnershipJournal::open(fs, Clock::real(), profile_.cwd, jo));

  // A raw-stdin runtime has no read reconciliation: whatever a previous daemon left inflight
  // may or may not have been read, so it ends `failed`, never replayed.
  for (const auto& record : journal_->view().live) {
    if (!journal::isInflight(record.state)) continue;
    auto failed = journal_->markFailed(
        journal::MarkFailed{record.id, record.token, "no-read-reconciliation"});
    if (!failed.isOk()) return failed.status().withContext("settling " + record.id);
    std::lock_guard lock(countersMu_);
    ++counters_.failed;
  }

  runtime::ChildOptions co;
  co.argv = profile_.command;
  co.cwd = profile_.cwd;
  co.envAllowList = profile_.env;
  co.envAllowList->push_back("PATH");
  co.envAllowList->push_back("HOME");
  co.env = {{"SHOAL_SEAT", profile_.principal.dotForm()}, {"SHOAL_SPACE", options_.space}};
  co.stderrTarget = runtime::StderrTarget::appendTo(runtimeLogPath());
  SHOAL_ASSIGN_OR_RETURN(child_, runtime::ChildProcess::spawn(co));
  runtimeUp_.store(true);
  outputPump_ = std::thread([this] { pumpOutput(); });

  mesh::EndpointOptions eo;
  eo.servers = {options_.url};
  eo.space = options_.space;
  eo.principal = profile_.principal;
  eo.displayName = profile_.name;
  eo.role = profile_.role;
  if (profile_.role) eo.serviceRoles = {*profile_.role};
  eo.lifecycleUid = profile_.lifecycleUid;
  eo.connectionName = "shoal seat " + profile_.principal.dotForm();
  eo.onDelivery = [this](const mesh::Delivery& d) { return admit(d); };
  eo.onWarning = [this](const Status& s) {
    log::warn("seat {}: {}", profile_.principal.dotForm(), s.toString());
  };
  SHOAL_ASSIGN_OR_RETURN(endpoint_, mesh::Endpoint::open(std::move(eo)));
  for (const auto& channel : profile_.channels) {
    auto joined = endpoint_->join(channel);
    if (!joined.isOk()) {
      log::warn("seat {}: joining #{}: {}", profile_.principal.dotForm(), channel,
                joined.status().toString());
    }
  }
  dispatcher_ = std::thread([this] { dispatchLoop(); });
  return Status::ok();
}

ExecSeat::~ExecSeat() {
  stop();
}

void ExecSeat::stop() {
  if (stopping_.exchange(true)) return;
  {
    std::lock_guard lock(mu_);
    pending_ = true;
  }
  wake_.notify_all();
  if (endpoint_) (void)endpoint_->close();  // no admission after this
  if (dispatcher_.joinable()) dispatcher_.join();
  if (child_) {
    child_->closeStdin();
    (void)child_->terminate(kStopGrace);
  }
  if (outputPump_.joinable()) outputPump_.join();
  runtimeUp_.store(false);
}

ExecSeatCounters ExecSeat::counters() const {
  std::lock_guard lock(countersMu_);
  return counters_;
}

mesh::HandlerVerdict ExecSeat::admit(const mesh::Delivery& d) {
  journal::Admit op;
  // An empty id is legal on the wire but never a dedup key: such a copy is owned under its
  // durable stream position instead.
  op.id = !d.message.id.empty() ? d.message.id : fmt::format("seq:{}:{}", d.subject, d.streamSeq);
  op.body = encodeBody(d);
  op.target = d.message.from.id;
  op.wake = std::string(wire::deliveryKindName(d.kind));
  auto admitted = journal_->admit(std::move(op));
  if (!admitted.isOk()) {
    log::warn("seat {}: could not take ownership of {}: {}", profile_.principal.dotForm(),
              d.message.id, admitted.status().toString());
    return mesh::HandlerVerdict::kRetryLater;  // not acked: the broker redelivers it
  }
  if (admitted->disposition == journal::AdmitDisposition::kAdmitted) {
    {
      std::lock_guard lock(countersMu_);
      ++counters_.admitted;
    }
    {
      std::lock_guard lock(mu_);
      pending_ = true;
    }
    wake_.notify_all();
  }
  return mesh::HandlerVerdict::kAccepted;
}

void ExecSeat::dispatchLoop() {
  while (!stopping_.load()) {
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return pending_; });
      pending_ = false;
    }
    if (stopping_.load()) return;
    if (!runtimeUp_.load()) continue;  // queued owners wait, durably, for the next start
    while (!stopping_.load() && dispatchOnce()) {
    }
  }
}

bool ExecSeat::dispatchOnce() {
  std::vector<journal::OwnershipRecord> queued;
  for (auto& record : journal_->view().live) {
    if (record.state == journal::OwnerState::kQueued) queued.push_back(std::move(record));
  }
  if (queued.empty()) return false;

  PresentationInput input;
  std::vector<journal::OwnershipRecord> rendered;
  for (auto& record : queued) {
    auto stored = decodeBody(record.body);
    if (!stored.isOk()) {
      (void)journal_->markFailed(
          journal::MarkFailed{record.id, record.token, std::string(stored.status().reason())});
      continue;
    }
    PresentationItem item = presentationItemFor(stored->kind, stored->message);
    item.historical = stored->historical;
    item.possibleRepeat = stored->redelivered;
    item.deliveryId = record.id;
    input.items.push_back(std::move(item));
    rendered.push_back(std::move(record));
  }
  if (input.items.empty()) return true;
  SeatIdentity self{profile_.principal.dotForm(), profile_.name};
  RenderedBlock block = renderDeliveryBlock(input, self);
  rendered.resize(block.taken);  // the rest stay queued for the next block

  // Ownership moves to inflight(dispatching) before the first byte reaches the runtime.
  journal::Transaction begin;
  for (const auto& record : rendered) {
    begin.add(journal::BeginInflight{record.id, record.token, journal::InflightPhase::kDispatching,
                                     std::nullopt, "writing to the runtime's stdin"});
  }
  auto begun = journal_->commit(std::move(begin));
  if (!begun.isOk()) {
    log::warn("seat {}: could not begin dispatch: {}", profile_.principal.dotForm(),
              begun.status().toString());
    return false;
  }
  std::vector<journal::OwnerToken> tokens;
  for (const auto& r : begun->results)
    tokens.push_back(r.record ? r.record->token : journal::OwnerToken{});

  runtime::StdinWrite wrote = child_->writeStdin(block.text + "\n", kStdinWriteTimeout);
  const int64_t now = Clock::real().wallMs();
  journal::Transaction settle;
  if (wrote.status.isOk()) {
    for (size_t i = 0; i < rendered.size(); ++i) {
      settle.add(
          journal::MarkSurfaced{rendered[i].id, tokens[i], "written to the runtime's stdin"});
    }
  } else if (wrote.bytesWritten == 0) {
    for (size_t i = 0; i < rendered.size(); ++i) {
      settle.add(journal::Requeue{rendered[i].id, tokens[i], "runtime stdin took no byte"});
    }
  } else {
    for (size_t i = 0; i < rendered.size(); ++i) {
      settle.add(journal::MarkFailed{rendered[i].id, tokens[i], "partial-stdin-write"});
    }
  }
  auto settled = journal_->commit(std::move(settle));
  if (!settled.isOk()) {
    log::warn("seat {}: settling a dispatch: {}", profile_.principal.dotForm(),
              settled.status().toString());
    return false;
  }
  if (!wrote.status.isOk()) {
    log::warn("seat {}: runtime {} retired: {} ({} of {} bytes written)",
              profile_.principal.dotForm(), child_->program(), wrote.status.toString(),
              wrote.bytesWritten, block.text.size() + 1);
    runtimeUp_.store(false);
    std::lock_guard lock(countersMu_);
    if (wrote.bytesWritten > 0) counters_.failed += rendered.size();
    return false;
  }
  {
    std::lock_guard lock(countersMu_);
    counters_.surfaced += rendered.size();
  }
  for (const auto& record : rendered)
    publishReceipt(record, now);
  return true;
}

void ExecSeat::publishReceipt(const journal::OwnershipRecord& record, int64_t surfacedAtMs) {
  auto sender = wire::parsePrincipal(record.target);
  if (!sender.isOk()) return;
  auto subject = wire::rcptSubject(options_.space, *sender, profile_.principal);
  if (!subject.isOk()) return;
  json::object body{
      {"id", record.id}, {"recipient", profile_.principal.dotForm()}, {"surfacedAt", surfacedAtMs}};
  transport::PublishOptions po;
  po.msgId = "rcpt-" + record.id;
  auto acked = endpoint_->jetStream().publish(*subject, json::serialize(body), po);
  if (!acked.isOk()) {
    log::warn("seat {}: receipt for {} not stored: {}", profile_.principal.dotForm(), record.id,
              acked.status().toString());
    return;
  }
  std::lock_guard lock(countersMu_);
  ++counters_.receipts;
}

void ExecSeat::pumpOutput() {
  runtime::UniqueFd out = child_->takeStdout();
  int log = ::open(runtimeLogPath().c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  char buf[8192];
  while (out.valid()) {
    ssize_t n = ::read(out.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (log >= 0) (void)!::write(log, buf, static_cast<size_t>(n));
  }
  if (log >= 0) ::close(log);
  runtimeUp_.store(false);
}

}  // namespace shoal::daemon
