#include "daemon/seat.h"

#include <csignal>
#include <set>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_system.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/process_info.h"
#include "daemon/channel_rejoin.h"
#include "daemon/presentation.h"
#include "daemon/seat/seat_impl.h"
#include "daemon/seat_tools.h"
#include "wire/inbox_receipt.h"
#include "wire/names.h"

namespace shoal::daemon {

// ---------------------------------------------------------------------------------------------
// Opening and admission (any thread)

Seat::Impl::~Impl() {
  stop();
  if (gate_.joinable()) gate_.join();
  // Wake events publish on the endpoint's connection: nothing may use them once it closes, and
  // they go before it (a seat whose open failed half-way never ran the stop that does this).
  if (mcp_) mcp_->stop();
  if (endpoint_) (void)endpoint_->close();
  wake_.reset();
}

Status Seat::Impl::open() {
  FileSystem& fs = FileSystem::posix();
  SHOAL_RETURN_IF_ERROR(prepareSeatFiles(fs, profile_.cwd));
  if (Status excluded = excludeFromGit(profile_.cwd); !excluded.isOk()) {
    log::warn("seat {}: could not add .shoal/ to git's info/exclude: {}",
              profile_.principal.dotForm(), excluded.toString());
  }
  journal::OpenOptions jo;
  jo.holder =
      fmt::format("pid {} (shoal daemon, seat {})", ::getpid(), profile_.principal.dotForm());
  SHOAL_ASSIGN_OR_RETURN(
      journal_, journal::OwnershipJournal::open(fs, Clock::real(), seatFilesDir(profile_.cwd), jo));

  {
    auto view = journal_->view();
    if (auto it = view.sections.find(kProcessSection); it != view.sections.end()) {
      endLeftoverRuntime(it->second.valueJson);
    }
    if (auto it = view.sections.find(kSessionSection); it != view.sections.end()) {
      boost::system::error_code ec;
      auto v = boost::json::parse(it->second.valueJson, ec);
      if (!ec && v.is_object() && v.as_object().contains("id") && v.at("id").is_string())
        savedSession_ = std::string(v.at("id").as_string());
      if (!ec && v.is_object() && v.as_object().contains("fingerprint") &&
          v.at("fingerprint").is_string()) {
        savedFingerprint_ = std::string(v.at("fingerprint").as_string());
      }
    }
    if (auto it = view.sections.find(kChannelModesSection); it != view.sections.end()) {
      boost::system::error_code ec;
      auto v = boost::json::parse(it->second.valueJson, ec);
      if (!ec && v.is_object()) {
        MutexLock lock(modesMu_);
        for (const auto& [channel, mode] : v.as_object()) {
          if (mode.is_string()) channelModes_[std::string(channel)] = std::string(mode.as_string());
        }
      }
    }
    if (auto it = view.sections.find(kSeatHistorySection); it != view.sections.end()) {
      // Counters and generations continue across daemon lives (seat_history.h).
      auto history = SeatHistory::fromJson(it->second.valueJson);
      if (history.isOk()) {
        generation_ = savedGeneration_ = history->generation;
        MutexLock lock(mu_);
        snap_.counters = savedCounters_ = history->counters;
        previousLife_ = std::move(history).value();
      } else {
        log::warn("seat {}: {}; counting from 0", profile_.principal.dotForm(),
                  history.status().toString());
      }
    }
    if (auto it = view.sections.find(kDmAdmittedSection); it != view.sections.end()) {
      auto admitted = AdmittedSeqs::fromJson(it->second.valueJson);
      if (!admitted.isOk()) return admitted.status().withContext("seat " + profile_.cwd);
      MutexLock lock(admitMu_);
      admittedDms_ = std::move(admitted).value();
    }
  }
  // Whatever a previous daemon left inflight may or may not have been read by its runtime.
  // Raw stdin and Claude cannot be asked: it ends failed, never replayed. A Codex handoff with
  // its thread recorded waits for the first generation's thread/read (reconciliation), and so
  // does a Codex inbox receipt: the page it went out on is in the thread's tool items if Codex
  // received it (seed 004 §2.1, last paragraph).
  std::vector<Handed> leftover;
  for (const auto& record : journal_->view().live) {
    if (!journal::isInflight(record.state)) continue;
    const std::string& receipt = record.runtime.receipt;
    const auto slash = receipt.rfind('/');
    const bool inboxReceipt =
        wire::inboxReceiptMarkers(receipt) == std::vector<std::string>{receipt};
    if (profile_.runtime == RuntimeKind::kCodex && !record.runtime.sessionId.empty() &&
        (slash != std::string::npos || inboxReceipt)) {
      reconciling_.push_back(Reconciling{Handed{record.id, record.token, record.target, {}, {}, 0},
                                         inboxReceipt ? receipt : receipt.substr(0, slash),
                                         record.runtime.sessionId, inboxReceipt});
      continue;
    }
    leftover.push_back(Handed{record.id, record.token, record.target, {}, {}, 0});
  }
  if (!reconciling_.empty()) {
    log::info(
        "seat {}: {} deliveries were inflight when the previous daemon ended; the runtime's "
        "thread will say whether it read them",
        profile_.principal.dotForm(), reconciling_.size());
  }

  // One broker connection per seat: the endpoint's. It opens bound but not yet fetching, so
  // wake events, owed receipts and the backlog marks are ready before the first admission.
  SHOAL_ASSIGN_OR_RETURN(endpoint_, mesh::Endpoint::open(endpointOptions()));
  transport::JetStream& js = endpoint_->jetStream();
  wake_ = std::make_unique<WakeEvents>(js, options_.space, profile_);
  replayReceipts();
  if (previousLife_) {
    WakeEvent restarted{"daemon-restarted", generation_, previousLifeText(*previousLife_), {}, {}};
    (void)wake_->publish(restarted, wallMs());
  }
  lifeStartedAtMs_ = wallMs();
  saveHistory(false, true);  // this life runs the seat now: `clean` until it stops it
  if (!leftover.empty()) {
    log::warn(
        "seat {}: {} deliveries were inflight when the previous daemon ended; they fail "
        "(no-read-reconciliation)",
        profile_.principal.dotForm(), leftover.size());
    settleFailed(std::move(leftover),
                 "no-read-reconciliation: the daemon restarted while the runtime held it; the "
                 "runtime cannot say whether it read it");
  }

  // What is already stored is backlog: only messages stored after this point are current
  // events that may wake a sleeping seat.
  SHOAL_ASSIGN_OR_RETURN(std::string dm, wire::streamName(wire::Stream::kDm, options_.space));
  SHOAL_ASSIGN_OR_RETURN(std::string task, wire::streamName(wire::Stream::kTask, options_.space));
  // In auth mode an agent's grants do not reach DM_<space>'s info (it would tell who DMs
  // whom), nor TASK_<space>'s without a role: the seat's own DM durable says it there
  // (backlog_mark.h).
  const bool ownCredential = !options_.credentialsFile.empty();
  if (!ownCredential) {
    if (auto info = js.streamInfo(dm); info.isOk())
      dmBacklog_.setStreamSequence(info->state.lastSeq);
  } else if (auto durable = wire::dmDurable(profile_.principal, profile_.lifecycleUid);
             durable.isOk()) {
    if (auto info = js.consumerInfo(dm, *durable); info.isOk())
      dmBacklog_.setFromDurable(info->delivered.streamSeq, info->numPending);
  }
  if (!ownCredential || profile_.role) {
    if (auto info = js.streamInfo(task); info.isOk())
      taskBacklog_.setStreamSequence(info->state.lastSeq);
  }

  endpoint_->startReceiving();
  rejoinChannels();
  SHOAL_RETURN_IF_ERROR(startMcp());
  // Admissions queued while the endpoint opened wait for the gate; its first command runs or
  // sleeps the seat as the profile says. A failed launch is not a failed open: the seat stays
  // on the mesh, admitting, and its note and the wake stream say why the runtime is not up.
  gate_ = std::thread([this] { gateMain(); });
  (void)command(mode_ == SeatMode::kRunning ? GateEvent::Kind::kWake : GateEvent::Kind::kSleep,
                std::nullopt, true);
  return Status::ok();
}

mesh::EndpointOptions Seat::Impl::endpointOptions() {
  mesh::EndpointOptions eo;
  eo.servers = {options_.url};
  eo.nkeySeedFile = options_.nkeySeedFile;
  eo.credentialsFile = options_.credentialsFile;
  eo.inboxPrefix = options_.inboxPrefix;
  eo.tlsCaFile = options_.tlsCaFile;
  eo.space = options_.space;
  eo.principal = profile_.principal;
  eo.displayName = profile_.name;
  eo.role = profile_.role;
  if (profile_.role) eo.serviceRoles = {*profile_.role};
  eo.lifecycleUid = profile_.lifecycleUid;
  eo.connectionName = "shoal seat " + profile_.principal.dotForm();
  eo.onDelivery = [this](const mesh::Delivery& d) { return admit(d); };
  eo.onDeliveries = [this](const std::vector<mesh::Delivery>& ds) { return admitBatch(ds); };
  eo.onWarning = [this](const Status& s) {
    if (auto held = refusalLog_.admit(s.reason())) {
      log::warn("seat {}: {}{}", profile_.principal.dotForm(), s.toString(),
                log::heldBackSuffix(*held));
    }
  };
  eo.onRefused = [this](const mesh::RefusedDelivery& r) { refusedByParser(r); };
  eo.historyYieldsToLaterCopies = true;  // the journal dedups; see replacedHistorical()
  eo.deferReceiving = true;  // open() starts it once wake events and backlog marks are ready
  return eo;
}

void Seat::Impl::rejoinChannels() {
  std::set<std::string> held;
  const auto view = journal_->view();
  if (auto it = view.sections.find(kDurableChannelsSection); it != view.sections.end()) {
    auto parsed = parseDurableChannels(it->second.valueJson);
    if (parsed.isOk()) held = std::move(parsed).value();
    if (!parsed.isOk())
      log::warn("seat {}: {}", profile_.principal.dotForm(), parsed.status().toString());
  }
  const std::string who = profile_.principal.dotForm();
  std::set<std::string> now = joinSeatChannels(*endpoint_, profile_.channels, held, who);
  now.merge(endDroppedMemberships(*endpoint_, profile_.channels, held, who));
  if (now == held) return;
  auto saved = journal_->setSection(journal::SetSection{std::string(kDurableChannelsSection),
                                                        durableChannelsJson(now), std::nullopt});
  if (!saved.isOk())
    log::warn("seat {}: remembering its channels: {}", who, saved.status().toString());
}

void Seat::Impl::endLeftoverRuntime(const std::string& sectionJson) {
  // A daemon that was killed leaves its runtime running (it leads its own process group); a
  // runtime that hangs would never go. It is ended here, but only when the pid still runs the
  // program the record names — a reused pid is never touched.
  boost::system::error_code ec;
  auto v = boost::json::parse(sectionJson, ec);
  if (ec || !v.is_object() || !v.as_object().contains("pid") || !v.at("pid").is_number()) return;
  const auto pid = static_cast<pid_t>(v.at("pid").to_number<int64_t>());
  const std::string program = v.as_object().contains("program") && v.at("program").is_string()
                                  ? std::string(v.at("program").as_string())
                                  : std::string();
  if (pid <= 1 || program.empty()) return;
  auto argv = processCommandLine(pid);
  if (!argv.isOk() || argv->empty() || (*argv)[0] != program) return;
  log::warn("seat {}: ending runtime pid {} ({}) left by a previous daemon",
            profile_.principal.dotForm(), pid, program);
  ::kill(-pid, SIGKILL);
}

Status Seat::Impl::startMcp() {
  SHOAL_ASSIGN_OR_RETURN(std::string token, newHexToken(32));
  SeatToolContext tools;
  tools.endpoint = endpoint_.get();
  tools.profile = profile_;
  tools.space = options_.space;
  tools.queued = [this] { return journal_->stats().queued; };
  tools.inbox = [this](size_t limit) { return inboxPage(limit); };
  tools.replyFrontier = [this](const std::string& key) { return replyFrontier(key); };
  tools.replied = [this](const std::string& key, uint64_t seen, const std::string& replyId) {
    replied(key, seen, replyId);
  };
  tools.setChannelMode = [this](const std::string& channel, const std::string& mode) {
    return setChannelMode(channel, mode);
  };
  tools.setAttention = [this](wire::Attention a) { setAttention(a); };
  tools.attention = [this] { return attention_.load(); };
  tools.channelModes = [this] {
    MutexLock lock(modesMu_);
    return channelModes_;
  };
  mcp::ServerOptions mo;
  mo.bearerToken = token;
  mo.sendBufferBytes = options_.mcpSendBufferBytes;
  mo.name = "shoal";
  mo.version = "seat " + profile_.principal.dotForm();
  mo.instructions = instructions_ =
      "The shoal mesh: you are " + profile_.name + " (" + profile_.principal.dotForm() +
      "). Messages from peers arrive as delivery blocks; answer them with shoal_dm "
      "or shoal_send. Text you write without a tool reaches nobody.";
  SHOAL_ASSIGN_OR_RETURN(mcp_, mcp::Server::start(mo, seatTools(std::move(tools))));
  // The client config, readable only by the owner: the token is the seat's identity.
  boost::json::object server{
      {"type", "http"},
      {"url", mcp_->url()},
      {"headers", boost::json::object{{"Authorization", "Bearer " + token}}}};
  boost::json::object config{{"mcpServers", boost::json::object{{"shoal", std::move(server)}}}};
  // <cwd>/.shoal is 0700 (open()), so the file is never readable by others, even briefly.
  mcpConfigPath_ = seatFilesDir(profile_.cwd) + "/mcp.json";
  SHOAL_RETURN_IF_ERROR(writeFileAtomically(FileSystem::posix(), mcpConfigPath_,
                                            boost::json::serialize(config) + "\n"));
  ::chmod(mcpConfigPath_.c_str(), 0600);
  mcpAccess_ = runtime::McpAccess{mcp_->url(), token, mcpConfigPath_};
  return Status::ok();
}

bool Seat::Impl::waitStopped(TimePoint deadline) {
  std::shared_ptr<Completion> done;
  {
    MutexLock lock(mu_);
    done = stopDone_;
  }
  return done == nullptr || done->wait(deadline);
}

bool Seat::Impl::isMention(const mesh::Delivery& d) const {
  const std::string self = profile_.principal.dotForm();
  for (const auto& m : d.message.mentions) {
    if (m == self || m == profile_.principal.actor) return true;
  }
  return false;
}

std::string Seat::Impl::channelMode(const std::string& channel) const {
  MutexLock lock(modesMu_);
  auto it = channelModes_.find(channel);
  return it == channelModes_.end() ? "normal" : it->second;
}

Status Seat::Impl::setChannelMode(const std::string& channel, const std::string& mode) {
  if (mode != "normal" && mode != "quiet" && mode != "muted") {
    return invalidArgument("bad-channel-mode", "mode is normal, quiet or muted");
  }
  MutexLock lock(modesMu_);
  std::map<std::string, std::string> next = channelModes_;
  if (mode == "normal") {
    next.erase(channel);
  } else {
    next[channel] = mode;
  }
  boost::json::object value;
  for (const auto& [c, m] : next)
    value[c] = m;
  SHOAL_RETURN_IF_ERROR(
      journal_
          ->setSection(journal::SetSection{std::string(kChannelModesSection),
                                           boost::json::serialize(value), std::nullopt})
          .status());
  channelModes_ = std::move(next);
  std::optional<wire::ChannelMode> advisoryMode = wire::parseChannelMode(mode);
  presence([channel, advisoryMode](mesh::PresencePublisher& p) {
    p.setChannelMode(channel, advisoryMode);
  });
  // Advisory, for the roster: what reaches this seat without a DM.
  std::string advisory;
  for (const auto& [c, m] : channelModes_)
    advisory +=
        (advisory.empty() ? "" : ", ") + std::string(m == "muted" ? "muted #" : "quiet #") + c;
  log::info("seat {}: #{} is now {}{}", profile_.principal.dotForm(), channel, mode,
            advisory.empty() ? "" : " (" + advisory + ")");
  return Status::ok();
}

void Seat::Impl::setAttention(wire::Attention attention) {
  attention_ = attention;
  presence([attention](mesh::PresencePublisher& p) {
    p.setAttention(attention == wire::Attention::kOpen ? std::nullopt
                                                       : std::optional<wire::Attention>(attention));
  });
  log::info("seat {}: attention {}", profile_.principal.dotForm(), wire::attentionName(attention));
  // Leaving focus or dnd may release ambient posts: the gate looks again.
  GateEvent e;
  e.kind = GateEvent::Kind::kAdmitted;  // no id: a dispatch pass
  post(std::move(e));
}

void Seat::Impl::post(GateEvent event) {
  {
    MutexLock lock(mu_);
    if (!closed_) {
      events_.push_back(std::move(event));
      cv_.notifyAll();
      return;
    }
  }
  if (event.direct) {
    // Admitted for a runtime the stopped gate will never hand it to: no byte of it was written.
    lane_.release(event.direct->id);
    if (auto record = journal_->find(event.direct->id);
        record && record->state == journal::OwnerState::kDispatching &&
        record->runtime.receipt == event.direct->handoffId + "/0") {
      journal::Transaction back;
      back.add(journal::Requeue{record->id, record->token, "the seat stopped before handing it"});
      (void)journal_->commit(std::move(back));
    }
  }
  if (event.done) {
    event.done->finish(event.kind == GateEvent::Kind::kStop
                           ? Status::ok()
                           : failedPrecondition("seat-stopped", "the seat has stopped"));
  }
}

void Seat::Impl::count(uint64_t SeatCounters::*field, uint64_t n) {
  MutexLock lock(mu_);
  snap_.counters.*field += n;
}

void Seat::Impl::note(std::string text) {
  MutexLock lock(mu_);
  snap_.note = std::move(text);
}

Status Seat::Impl::command(GateEvent::Kind kind, std::optional<TimePoint> deadline, bool wait) {
  GateEvent e;
  e.kind = kind;
  e.deadline = deadline;
  e.done = std::make_shared<Completion>();
  if (kind == GateEvent::Kind::kStop) {
    MutexLock lock(mu_);
    if (stopDone_ == nullptr) stopDone_ = e.done;
    e.done = stopDone_;  // one stop: every caller waits for the same completion
  }
  auto done = e.done;
  if (!gate_.joinable()) {
    // Never opened far enough to run a gate: nothing to stop.
    done->finish(kind == GateEvent::Kind::kStop
                     ? Status::ok()
                     : failedPrecondition("seat-not-open", "the seat did not open"));
    if (kind == GateEvent::Kind::kStop && endpoint_) (void)endpoint_->close();
    return done->status();
  }
  post(std::move(e));
  if (!wait) return Status::ok();
  done->wait(std::nullopt);
  return done->status();
}

SeatSnapshot Seat::Impl::snapshot() const {
  SeatSnapshot out;
  {
    MutexLock lock(mu_);
    out = snap_;
  }
  out.awaitingReply = ledger_.size();
  out.inboxLeases = leases_.size();
  if (wake_) out.receiptsOwed = wake_->owedCount();
  {
    MutexLock lock(modesMu_);
    out.channelModes = channelModes_;
  }
  if (journal_) {
    const journal::JournalStats stats = journal_->stats();
    out.queued = stats.queued;
    out.inflight = stats.inflight;
    out.resumeSafe = journal_->resumeSafety().safe;
    if (Status poison = journal_->poisonStatus(); !poison.isOk()) {
      out.journalPoisoned = poison.toString();
      out.journalPoisonedSinceMs = poisonedSince();
    }
  }
  return out;
}

int64_t Seat::Impl::poisonedSince() const {
  int64_t since = poisonedSinceMs_.load();
  if (since != 0) return since;
  const int64_t now = wallMs();
  return poisonedSinceMs_.compare_exchange_strong(since, now) ? now : since;
}

void Seat::Impl::journalPoisoned(const Status& why) {
  const bool first = poisonedSinceMs_.load() == 0;
  const int64_t since = poisonedSince();
  if (!first) return;
  Status cause = journal_->poisonStatus();
  const std::string text = fmt::format(
      "journal poisoned ({}) since {}: {}; free space where the seat keeps it ({}), and the daemon "
      "reopens the seat by itself (or `shoal seat stop` then `shoal seat start`)",
      cause.reason() == "disk-full" || why.message().find("disk-full") != std::string_view::npos
          ? "disk full"
          : "a failed write",
      formatTimestamp(static_cast<double>(since)), cause.isOk() ? why.toString() : cause.toString(),
      seatFilesDir(profile_.cwd));
  log::error("seat {}: {}", profile_.principal.dotForm(), text);
  note(text);
  wire::PresenceCondition c;
  c.code = wire::ConditionCode::kFailed;
  c.source = "journal-poisoned";
  c.message = text;
  presence([c](mesh::PresencePublisher& p) {
    (void)p.setStatus(wire::PresenceStatus::kWaiting);
    p.setCondition(c);
  });
}

void Seat::Impl::event(WakeEvent e) {
  Status published = wake_->publish(e, wallMs());
  if (!published.isOk()) {
    log::warn("seat {}: lifecycle event {} not stored: {}", profile_.principal.dotForm(), e.kind,
              published.toString());
  }
}

void Seat::Impl::presence(std::function<void(mesh::PresencePublisher&)> change) {
  if (endpoint_ != nullptr && !stopped_) endpoint_->updatePresence(std::move(change));
}

void Seat::Impl::publishState() {
  std::string state;
  if (stopped_) {
    state = "stopped";
  } else if (retiring_ != Retiring::kNone) {
    state = "retiring";
  } else if (driver_ != nullptr) {
    state = compacting_                     ? "compacting"
            : handoff_                      ? "busy"
            : !accepting_ && readyDeadline_ ? "starting"  // its readiness handshake runs
                                            : "running";
  } else if (parked_) {
    state = "parked";
  } else if (restartAt_) {
    state = "restarting";
  } else if (!shouldRun()) {
    state = "sleeping";
  } else {
    state = "starting";
  }
  MutexLock lock(mu_);
  snap_.state = state;
  snap_.processRunning = driver_ != nullptr;
  snap_.generation = generation_;
  snap_.pid = driver_ != nullptr ? driver_->pid() : 0;
  snap_.session = resumesSessions() ? savedSession_ : "";
}

// ---------------------------------------------------------------------------------------------
// Seat

Seat::Seat(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Seat::~Seat() = default;

Result<std::unique_ptr<Seat>> Seat::open(const SeatProfile& profile, SeatOptions options) {
  SHOAL_RETURN_IF_ERROR(validateSeatProfile(profile));
  auto impl = std::make_unique<Impl>(profile, std::move(options));
  Status opened = impl->open();
  if (!opened.isOk()) {
    impl->stop();
    return opened;
  }
  return std::unique_ptr<Seat>(new Seat(std::move(impl)));
}

Status Seat::wake() {
  return impl_->command(GateEvent::Kind::kWake, std::nullopt, true);
}
Status Seat::sleep() {
  return impl_->command(GateEvent::Kind::kSleep, std::nullopt, true);
}
Status Seat::compact() {
  return impl_->command(GateEvent::Kind::kCompact, std::nullopt, true);
}
Status Seat::interrupt() {
  return impl_->command(GateEvent::Kind::kInterrupt, std::nullopt, true);
}
void Seat::stop() {
  impl_->stop();
}
void Seat::requestStop(std::chrono::steady_clock::time_point deadline) {
  impl_->requestStop(deadline);
}
bool Seat::waitStopped(std::chrono::steady_clock::time_point deadline) {
  return impl_->waitStopped(deadline);
}
const SeatProfile& Seat::profile() const {
  return impl_->profile_;
}
std::string Seat::runtimeLogPath() const {
  return impl_->runtimeLogPath();
}
std::string Seat::mcpConfigPath() const {
  return impl_->mcpConfigPath();
}
SeatSnapshot Seat::snapshot() const {
  return impl_->snapshot();
}

}  // namespace shoal::daemon
