#include "runtime/opencode/driver.h"

#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/base64.h"
#include "base/file_system.h"
#include "base/ids.h"
#include "base/log.h"
#include "http/client.h"
#include "http/event_stream.h"
#include "runtime/child_driver.h"
#include "runtime/opencode/events.h"

namespace shoal::runtime {
namespace {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::string_view kListening = "server listening on ";
constexpr const char* kConfigContent = "OPENCODE_CONFIG_CONTENT";
constexpr std::string_view kUser = "opencode";  // OpenCode's basic-auth user name
constexpr milliseconds kRequestTimeout{10000};
constexpr milliseconds kConnectTimeout{2000};
constexpr milliseconds kPollSlice{250};
// Before readiness the stream may be opened again; this long in all.
constexpr milliseconds kSetupBudget{20000};
// OpenCode sends a heartbeat every 10 s; this much silence means the stream is gone.
constexpr milliseconds kSilence{35000};
// Model retries (OpenCode retries a 5xx without end) bounded by the daemon.
constexpr int kMaxRetries = 6;
constexpr std::string_view kContextOverflow = "ContextOverflowError";
constexpr std::string_view kAborted = "MessageAbortedError";
// The summarize call answers only once the compaction is over (the seat bounds it anyway).
constexpr milliseconds kSummarizeTimeout{std::chrono::minutes(15)};
constexpr milliseconds kMaxRetrying{120000};

// A free loopback port (bound, read, released: the server binds it right after).
Result<int> freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return unavailable("no-free-port", "cannot open a socket to find a free port");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  if (port == 0) return unavailable("no-free-port", "cannot find a free loopback port");
  return port;
}

wire::PresenceCondition condition(wire::ConditionCode code, std::string source,
                                  std::string message) {
  wire::PresenceCondition c;
  c.code = code;
  c.source = std::move(source);
  c.message = std::move(message);
  return c;
}

// The Runner the driver's current prompt started (seed 004 §3).
struct Runner {
  std::string handoffId;
  std::string messageId;             // our prompt's user message
  std::set<std::string> parents;     // user messages whose assistants answer it
  std::set<std::string> assistants;  // assistants admitted to this Runner
  Clock::time_point admitBy;         // the admission watchdog
  bool admitted = false;             // busy / retry / exact-parent assistant seen
  bool acked = false;                // the exact-parent assistant seen
  bool started = false;              // kTurnStarted reported
  std::string errorCandidate;        // a session.error no positive activity cleared
  std::string assistantError;        // the last answering assistant's error
  // A context overflow under `compaction.auto=false` (seed 004 §3): the processor's idle starts
  // the cleanup drain, the errored assistant update proves the cleanup, the Runner's idle ends
  // the turn — in error, on the same server.
  bool overflowDrain = false;
  bool overflowCleaned = false;
  bool aborting = false;     // interrupt() asked /abort
  bool abortedSeen = false;  // the exact-parent assistant completed with MessageAbortedError
  bool answered = false;     // an admitted assistant completed with a final answer
  int retries = 0;
  Clock::time_point firstRetry;
};

// A summarize the driver asked for (`shoal seat compact`; seed 004 §3, "OpenCode native
// summarize"): complete only when the HTTP call answered `true` AND the stream showed the
// `auto:false` compaction part, its bound summary assistant completed, `session.compacted`,
// and the idle after it. Prompt delivery stays closed until then.
struct Summarize {
  uint64_t seq = 0;
  std::string userId;       // the compaction user message (its compaction part, auto:false)
  std::string assistantId;  // the summary assistant bound to it
  bool started = false;     // kTurnStarted reported
  bool summaryDone = false;
  bool compacted = false;
  bool idleAfterCompacted = false;
  std::optional<bool> http;  // the summarize call answered 200 `true`
  std::string httpDetail;
  int retries = 0;
  Clock::time_point firstRetry;
};

class OpenCodeDriver final : public ChildDriver {
 public:
  OpenCodeDriver(LaunchSpec spec, std::string title, std::string authorization)
      : ChildDriver(std::move(spec), kOpenCodeTraits),
        title_(std::move(title)),
        authorization_(std::move(authorization)) {}
  ~OpenCodeDriver() override {
    stopChild();  // the reader (and with it the event thread) finishes before members go
    std::thread events;
    {
      std::lock_guard<std::mutex> lock(mu_);
      events = std::move(events_);
    }
    if (events.joinable()) events.join();
    if (summarizeThread_.joinable()) summarizeThread_.join();  // its request was cancelled
  }
  using ChildDriver::extraEnv_;
  using ChildDriver::spawn;

  // Native interrupt (seed 004 §3): refused until the Runner took our prompt and its
  // exact-parent assistant exists — an /abort sent earlier can land before the run and be lost
  // (observed on 1.18.33: the prompt then runs to completion). Then `POST /abort`; the turn
  // ends at the first idle after the exact-parent assistant completed with MessageAbortedError
  // (one or two idles come, with or without a session.error, depending on whether the model
  // call had started), or normally if the answer finished first; then the generation retires
  // (OpenCode aborts a run started soon after an abort too; nothing says when that is over).
  Status interrupt() override {
    std::string session, messageId;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!runner_) return failedPrecondition("not-in-a-turn", "no OpenCode run is active");
      if (!runner_->admitted || !runner_->acked) {
        return failedPrecondition("interrupt-not-safe-yet",
                                  "OpenCode has not taken prompt " + runner_->messageId +
                                      " into a run yet; an abort now could be lost — try again");
      }
      session = session_;
      messageId = runner_->messageId;
      runner_->aborting = true;  // before the request: its events may come first
    }
    auto reply = request("POST", "/session/" + session + "/abort");
    Status refused;
    if (!reply.isOk()) {
      refused = reply.status().withContext("POST /abort");
    } else if (reply->status != 200) {
      refused = unavailable(
          "opencode-abort-refused",
          fmt::format("/abort answered HTTP {}: {}", reply->status, reply->body.substr(0, 200)));
    }
    if (!refused.isOk()) {
      std::lock_guard<std::mutex> lock(mu_);
      // The turn ended meanwhile (the abort's events can beat its answer, and the retirement
      // that follows can cut that answer off): it took effect.
      if (!runner_ || runner_->messageId != messageId) return Status::ok();
      runner_->aborting = false;
    }
    return refused;
  }

  // `POST /session/:id/summarize {providerID, modelID, auto:false}` on a thread of its own (the
  // call answers only when the compaction is over); the fence (Summarize) decides its end.
  Status compact() override {
    std::string session, provider, model;
    uint64_t seq = 0;
    std::thread previous;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!ready_ || retired_) {
        return failedPrecondition("seat-not-running", "the OpenCode server is not ready");
      }
      if (runner_) {
        return failedPrecondition("seat-busy", "prompt " + runner_->messageId +
                                                   " has not been answered; compact after it");
      }
      if (summarize_) return failedPrecondition("already-compacting", "a summarize runs");
      if (modelId_.empty() || providerId_.empty()) {
        return failedPrecondition("nothing-to-compact",
                                  "the OpenCode session has not answered a prompt yet, so there "
                                  "is nothing to compact (and no model to summarize with)");
      }
      Summarize f;
      f.seq = seq = ++summarizeSeq_;
      summarize_ = std::move(f);
      session = session_;
      provider = providerId_;
      model = modelId_;
      previous = std::move(summarizeThread_);
    }
    if (previous.joinable()) previous.join();  // its call has answered: the fence saw that
    appendToLog(fmt::format("[shoal] summarize session {} with {}/{}\n", session, provider, model));
    summarizeThread_ = std::thread([this, session, provider, model, seq] {
      auto reply = request("POST", "/session/" + session + "/summarize",
                           openCodeSummarizeBody(provider, model), kSummarizeTimeout);
      std::vector<DriverEvent> out;
      std::string retireWhy;
      {
        std::lock_guard<std::mutex> lock(mu_);
        // Settled already, or the server is going: nothing may follow its exit.
        if (!summarize_ || summarize_->seq != seq || stopping_) return;
        std::string body = reply.isOk() ? reply->body : "";
        while (!body.empty() && std::isspace(static_cast<unsigned char>(body.back())))
          body.pop_back();
        summarize_->http = reply.isOk() && reply->status == 200 && body == "true";
        if (!*summarize_->http) {
          summarize_->httpDetail = reply.isOk()
                                       ? fmt::format("summarize answered HTTP {}: {}",
                                                     reply->status, reply->body.substr(0, 300))
                                       : "summarize failed: " + reply.status().toString();
        }
        retireWhy = settleSummarize(out);
      }
      for (auto& d : out)
        emit(std::move(d));
      if (!retireWhy.empty()) retire(retireWhy);
    });
    return Status::ok();
  }

  std::string sessionId() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return session_;
  }

  void closeInput() override {
    stopEvents();  // the stream ends with the server: not a fault now
    // `opencode serve` does not read stdin: a graceful stop is SIGTERM.
    (void)child_->signalGroup(SIGTERM);
  }

  void kill(std::chrono::milliseconds grace) override {
    stopEvents();
    ChildDriver::kill(grace);
  }

  StdinWrite handoff(const Handoff& handoff) override {
    std::string session;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!ready_ || retired_) {
        return {0, failedPrecondition("runtime-not-ready", "the OpenCode server is not ready")};
      }
      if (summarize_) {
        return {0, failedPrecondition("runtime-compacting",
                                      "the OpenCode session is being summarized; no prompt")};
      }
      if (runner_) {
        return {0, failedPrecondition("runner-unresolved",
                                      "the previous prompt " + runner_->messageId +
                                          " has not been answered; no second prompt")};
      }
      session = session_;
    }
    auto id = mintOpenCodeMessageId();
    if (!id.isOk()) return {0, id.status()};
    {
      // The admission reservation goes in before the mutation: its events may come first.
      std::lock_guard<std::mutex> lock(mu_);
      Runner r;
      r.handoffId = handoff.handoffId;
      r.messageId = *id;
      r.parents.insert(*id);
      r.admitBy = Clock::now() + spec_.admissionWatchdog;
      runner_ = std::move(r);
    }
    appendToLog(fmt::format("[shoal] prompt_async {} for handoff {}\n", *id, handoff.handoffId));
    auto reply = request("POST", "/session/" + session + "/prompt_async",
                         openCodePromptBody(*id, handoff.text));
    const size_t all = handoff.text.size();
    if (!reply.isOk()) {
      if (reply.status().reason() == "http-connect-failed") {
        dropRunner(*id);
        return {0, reply.status()};  // nothing was sent
      }
      return {all, reply.status()};  // it may have been acted on: the reservation stays
    }
    if (reply->status == 204 || reply->status == 200) return {all, Status::ok()};
    const std::string detail =
        fmt::format("prompt_async answered HTTP {}: {}", reply->status, reply->body.substr(0, 300));
    if (reply->status >= 400 && reply->status < 500) {
      dropRunner(*id);
      return {0, failedPrecondition("opencode-refused-prompt", detail)};
    }
    return {all, unavailable("opencode-prompt-failed", detail)};
  }

 private:
  std::string frame(const Handoff&) const override { return {}; }  // handoff() is HTTP

  std::string readOutput(UniqueFd out) override {
    std::string fault =
        readLines(std::move(out), "stdout of opencode serve (pid " + std::to_string(pid()) + ")",
                  [this](const std::string& line) {
                    const size_t at = line.find(kListening);
                    std::lock_guard<std::mutex> lock(mu_);
                    if (at == std::string::npos || eventsStarted_) return std::string();
                    std::string url = line.substr(at + kListening.size());
                    while (!url.empty() && (url.back() == '/' || url.back() == ' '))
                      url.pop_back();
                    baseUrl_ = url;
                    eventsStarted_ = true;
                    events_ = std::thread([this] { eventsMain(); });
                    return std::string();
                  });
    // The server is gone: the event thread ends before kExited is reported, so no event of this
    // generation follows it.
    std::unique_lock<std::mutex> lock(mu_);
    stopping_ = true;
    if (stream_) stream_->close();
    eventsDone_.wait(lock, [this] { return !eventsStarted_ || eventsExited_; });
    if (!fault.empty()) return fault;
    return retireReason_;
  }

  Result<http::HttpReply> request(const std::string& method, const std::string& path,
                                  std::string body = "", milliseconds timeout = kRequestTimeout) {
    std::string base;
    {
      std::lock_guard<std::mutex> lock(mu_);
      base = baseUrl_;
    }
    http::HttpClientOptions o;
    o.connectTimeout = kConnectTimeout;
    o.responseTimeout = timeout;
    o.cancelled = [this] {
      std::lock_guard<std::mutex> lock(mu_);
      return stopping_;
    };
    SHOAL_ASSIGN_OR_RETURN(auto client, http::HttpClient::forUrl(base + path, o));
    http::HttpCall call;
    call.method = method;
    call.headers.push_back({"Accept", "application/json"});
    call.headers.push_back({"Authorization", authorization_});
    if (!body.empty() || method == "POST") {
      call.headers.push_back({"Content-Type", "application/json"});
      call.body = body.empty() ? "{}" : std::move(body);
    }
    return client.send(call);
  }

  void dropRunner(const std::string& messageId) {
    std::lock_guard<std::mutex> lock(mu_);
    if (runner_ && runner_->messageId == messageId) runner_.reset();
  }

  // Kills the server; kExited will carry `why`. Idempotent (the first reason stays).
  void retire(const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (retired_) return;
      retired_ = true;
      stopping_ = true;
      retireReason_ = "retired: " + why;
    }
    log::warn("opencode serve (pid {}): retiring the generation: {}", pid(), why);
    appendToLog("[shoal] retiring this OpenCode server: " + why + "\n");
    (void)child_->signalGroup(SIGKILL);
  }

  void stopEvents() {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    if (stream_) stream_->close();
  }

  bool stopping() {
    std::lock_guard<std::mutex> lock(mu_);
    return stopping_;
  }

  void eventsMain() {
    run();
    std::lock_guard<std::mutex> lock(mu_);
    eventsExited_ = true;
    eventsDone_.notify_all();
  }

  // Setup (stream, session, kReady), then the event loop until the stream or the server ends.
  void run() {
    std::string base;
    {
      std::lock_guard<std::mutex> lock(mu_);
      base = baseUrl_;
    }
    const auto setupBy = Clock::now() + kSetupBudget;
    std::unique_ptr<http::EventStream> stream;
    std::string lastError;
    while (!stream && !stopping()) {
      http::EventStreamOptions so;
      so.connectTimeout = kConnectTimeout;
      so.headTimeout = milliseconds(5000);
      so.headers = {{"Authorization", authorization_}};
      auto opened = http::EventStream::open(base + "/event", so);
      if (opened.isOk()) {
        // Its first frame (server.connected) proves it live; only then may prompts go out.
        auto first = (*opened)->next(milliseconds(5000));
        if (first.isOk() && first->has_value()) {
          auto e = parseOpenCodeEvent(**first);
          if (e.isOk() && e->kind == OpenCodeEvent::Kind::kConnected) {
            stream = std::move(*opened);
            break;
          }
          lastError = "the first event was not server.connected: " + first->value().substr(0, 200);
        } else {
          lastError = first.isOk() ? "no first event in 5 s" : first.status().toString();
        }
      } else {
        lastError = opened.status().toString();
      }
      if (Clock::now() >= setupBy) {
        return retire("could not open its event stream: " + lastError);
      }
      std::this_thread::sleep_for(milliseconds(200));
    }
    if (!stream) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      stream_ = stream.get();
    }
    struct Detach {
      OpenCodeDriver* d;
      ~Detach() {
        std::lock_guard<std::mutex> lock(d->mu_);
        d->stream_ = nullptr;
      }
    } detach{this};
    if (!openSession()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ready_ = true;
    }
    DriverEvent ready;
    ready.kind = DriverEvent::Kind::kReady;
    emit(std::move(ready));

    auto lastFrame = Clock::now();
    while (!stopping()) {
      auto next = stream->next(kPollSlice);
      if (!next.isOk()) {
        if (stopping()) return;
        return retire("its event stream was lost (" + next.status().toString() +
                      "); the stream has no replay, so this server can no longer prove delivery");
      }
      if (next->has_value()) {
        lastFrame = Clock::now();
        auto e = parseOpenCodeEvent(**next);
        if (!e.isOk()) {
          appendToLog("[shoal] ignored: " + e.status().toString() + "\n");
        } else {
          on(*e);
        }
      } else if (Clock::now() - lastFrame > kSilence) {
        return retire(fmt::format("its event stream was silent for {} s", kSilence.count() / 1000));
      }
      watchdog();
    }
  }

  // The seat's saved session (GET /session/:id) or a new one (POST /session).
  bool openSession() {
    if (!spec_.resumeSession.empty()) {
      auto got = request("GET", "/session/" + spec_.resumeSession);
      if (got.isOk() && got->status == 200) {
        appendToLog("[shoal] session " + spec_.resumeSession + " resumed\n");
        std::lock_guard<std::mutex> lock(mu_);
        session_ = spec_.resumeSession;
        rememberSessionModel(got->body);
        return true;
      }
      if (!got.isOk() || (got->status != 404 && got->status != 410)) {
        retire("could not check the saved session " + spec_.resumeSession + ": " +
               (got.isOk() ? fmt::format("HTTP {} {}", got->status, got->body.substr(0, 200))
                           : got.status().toString()));
        return false;
      }
      // Seed 004 §2: HTTP 404/410 is OpenCode's typed "no such session"; one fresh session.
      const std::string detail = fmt::format(
          "provider_session_fresh_fallback: opencode answered HTTP {} for session {}; starting "
          "a fresh session (attempt 1)",
          got->status, spec_.resumeSession);
      DriverEvent e;
      e.kind = DriverEvent::Kind::kCondition;
      e.detail = detail;
      e.condition =
          condition(wire::ConditionCode::kRetrying, "provider_session_fresh_fallback", detail);
      emit(std::move(e));
    }
    json::object body{{"title", title_}};
    auto made = request("POST", "/session", json::serialize(body));
    std::string id;
    if (made.isOk() && made->status == 200) {
      boost::system::error_code ec;
      json::value v = json::parse(made->body, ec);
      if (!ec && v.is_object()) {
        if (const auto* s = v.as_object().if_contains("id"); s != nullptr && s->is_string()) {
          id = std::string(s->as_string());
        }
      }
    }
    if (id.rfind("ses", 0) != 0) {
      retire("could not create a session: " +
             (made.isOk() ? fmt::format("HTTP {} {}", made->status, made->body.substr(0, 200))
                          : made.status().toString()));
      return false;
    }
    appendToLog("[shoal] session " + id + " created\n");
    std::lock_guard<std::mutex> lock(mu_);
    session_ = id;
    return true;
  }

  // `model:{id, providerID}` of a GET /session/:id answer (set once a prompt ran).
  void rememberSessionModel(const std::string& body) {
    boost::system::error_code ec;
    json::value v = json::parse(body, ec);
    if (ec || !v.is_object()) return;
    const auto* model = v.as_object().if_contains("model");
    if (model == nullptr || !model->is_object()) return;
    const auto* id = model->as_object().if_contains("id");
    const auto* provider = model->as_object().if_contains("providerID");
    if (id == nullptr || !id->is_string() || provider == nullptr || !provider->is_string()) return;
    modelId_ = std::string(id->as_string());
    providerId_ = std::string(provider->as_string());
  }

  void watchdog() {
    std::string why;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!runner_ || runner_->admitted || Clock::now() < runner_->admitBy) return;
      why = fmt::format("no run took prompt {} within {} s (no busy, retry or answering assistant)",
                        runner_->messageId, spec_.admissionWatchdog.count() / 1000);
    }
    retire(why);
  }

  // One event of the stream. Events are gathered under the lock and reported after it.
  void on(const OpenCodeEvent& e) {
    using K = OpenCodeEvent::Kind;
    std::vector<DriverEvent> out;
    std::string retireWhy;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!e.sessionId.empty() && e.sessionId != session_) return;  // another (child) session
      if (e.kind == K::kMessage && !e.providerId.empty() && !e.modelId.empty()) {
        providerId_ = e.providerId;  // the model the session runs (summarize needs it)
        modelId_ = e.modelId;
      }
      // OpenCode sends the deprecated session.idle right after every idle status: one idle.
      const bool echo = e.kind == K::kIdle && idleEcho_;
      if (e.kind != K::kHeartbeat) idleEcho_ = e.kind == K::kStatus && e.status == "idle";
      if (echo) {
        // the idle status just handled
      } else if (summarize_) {
        retireWhy = onSummarize(e, out);
      } else {
        retireWhy = onRunner(e, out);
      }
    }
    for (auto& d : out)
      emit(std::move(d));
    if (!retireWhy.empty()) retire(retireWhy);
  }

  std::string onRunner(const OpenCodeEvent& e, std::vector<DriverEvent>& out) {
    using K = OpenCodeEvent::Kind;
    std::string retireWhy;
    switch (e.kind) {
      case K::kStatus:
        if (e.status == "idle") {
          retireWhy = idle(out);
        } else {
          retireWhy = active(e, out);
        }
        break;
      case K::kIdle:
        retireWhy = idle(out);
        break;
      case K::kMessage:
        message(e, out);
        break;
      case K::kPart:
        part(e, out);
        break;
      case K::kError: {
        const std::string text =
            e.errorName + (e.errorMessage.empty() ? "" : ": " + e.errorMessage);
        // The abort's own cleanup, which can come after the next prompt went out (seen on
        // 1.18.33): drained until a fresh run is admitted.
        if (abortDrain_ && (!runner_ || !runner_->admitted)) break;
        if (!runner_) {
          retireWhy = "it reported an error after the turn was over (" + text + ")";
          break;
        }
        runner_->errorCandidate = text;
        DriverEvent c;
        c.kind = DriverEvent::Kind::kCondition;
        c.detail = "opencode reported " + text + " (final only if it survives to idle)";
        c.condition = condition(wire::ConditionCode::kRetrying, "session.error", c.detail);
        out.push_back(std::move(c));
        break;
      }
      case K::kCompacted:
        if (runner_ && runner_->admitted) out.push_back(work());
        break;
      case K::kDisposed:
        retireWhy = "it disposed its instance";
        break;
      case K::kConnected:
      case K::kHeartbeat:
      case K::kOther:
        break;
    }
    return retireWhy;
  }

  // An event while a summarize runs: only its own frames count (the compaction user, the
  // summary assistant bound to it, the session's status); any error, an idle before
  // `session.compacted`, or endless model retries fail it and retire the generation.
  std::string onSummarize(const OpenCodeEvent& e, std::vector<DriverEvent>& out) {
    using K = OpenCodeEvent::Kind;
    Summarize& f = *summarize_;
    auto begin = [&] {
      if (f.started) return;
      f.started = true;
      DriverEvent s;
      s.kind = DriverEvent::Kind::kTurnStarted;
      out.push_back(std::move(s));
    };
    switch (e.kind) {
      case K::kStatus:
      case K::kIdle:
        if (e.kind == K::kIdle || e.status == "idle") {
          if (f.compacted) {
            f.idleAfterCompacted = true;
          } else if (f.started) {
            return failSummarize("it went idle without session.compacted", out);
          }
          break;
        }
        begin();
        if (e.status == "retry") {
          if (f.retries++ == 0) f.firstRetry = Clock::now();
          if (f.retries >= kMaxRetries || Clock::now() - f.firstRetry >= kMaxRetrying) {
            return failSummarize(
                fmt::format("runtime-retry-bounded: opencode retried the summary {} times (last: "
                            "{})",
                            f.retries, e.errorMessage),
                out);
          }
        }
        break;
      case K::kMessage:
        if (e.role != "assistant" || !e.summary || f.userId.empty() || e.parentId != f.userId) {
          break;  // the compaction user's own echo, or not this summarize's
        }
        f.assistantId = e.messageId;
        begin();
        if (!e.errorName.empty()) {
          return failSummarize("its summary failed: " + e.errorName +
                                   (e.errorMessage.empty() ? "" : ": " + e.errorMessage),
                               out);
        }
        if (e.completed) f.summaryDone = true;
        out.push_back(work());
        break;
      case K::kPart:
        if (e.partType == "compaction" && !e.compactionAuto && f.userId.empty()) {
          f.userId = e.messageId;
        } else if (!f.assistantId.empty() && e.messageId == f.assistantId) {
          out.push_back(work());  // summary text stays internal: activity only
        }
        break;
      case K::kError:
        return failSummarize(
            "it reported " + e.errorName + (e.errorMessage.empty() ? "" : ": " + e.errorMessage),
            out);
      case K::kCompacted:
        f.compacted = true;
        break;
      case K::kDisposed:
        return failSummarize("it disposed its instance", out);
      case K::kConnected:
      case K::kHeartbeat:
      case K::kOther:
        break;
    }
    return settleSummarize(out);
  }

  // The fence's end: complete (one turn end) or failed (the generation retires). "" while open.
  std::string settleSummarize(std::vector<DriverEvent>& out) {
    if (!summarize_) return "";
    const Summarize& f = *summarize_;
    if (f.http && !*f.http) return failSummarize(f.httpDetail, out);
    if (!f.http || !f.summaryDone || !f.compacted || !f.idleAfterCompacted) return "";
    DriverEvent end;
    end.kind = DriverEvent::Kind::kTurnEnded;
    out.push_back(std::move(end));
    summarize_.reset();
    return "";
  }

  std::string failSummarize(const std::string& why, std::vector<DriverEvent>& out) {
    DriverEvent end;
    end.kind = DriverEvent::Kind::kTurnEnded;
    end.isError = true;
    end.detail = "context_compaction_failed: " + why;
    end.condition =
        condition(wire::ConditionCode::kFailed, "context_compaction_failed", end.detail);
    out.push_back(std::move(end));
    summarize_.reset();
    // A failed or aborted summarize can leave OpenCode compacting instead of answering the
    // next prompt (observed on 1.18.33): a fresh server takes the session on.
    return "its summarize did not complete (" + why + ")";
  }

  static DriverEvent work() {
    DriverEvent w;
    w.kind = DriverEvent::Kind::kWork;
    return w;
  }

  // Admission proof: the Runner took our prompt.
  void admit(std::vector<DriverEvent>& out) {
    runner_->admitted = true;
    abortDrain_ = false;  // a fresh run: the last abort's cleanup is over
    if (runner_->started) return;
    runner_->started = true;
    DriverEvent s;
    s.kind = DriverEvent::Kind::kTurnStarted;
    out.push_back(std::move(s));
  }

  std::string active(const OpenCodeEvent& e, std::vector<DriverEvent>& out) {
    if (!runner_) return "";  // a Runner we did not start (or background work): not ours
    admit(out);
    if (e.status != "retry") return "";
    if (runner_->retries++ == 0) runner_->firstRetry = Clock::now();
    const std::string text = fmt::format("opencode is retrying the model (attempt {}): {}",
                                         e.retryAttempt, e.errorMessage);
    DriverEvent c;
    c.kind = DriverEvent::Kind::kCondition;
    c.detail = text;
    c.condition = condition(wire::ConditionCode::kRetrying, "session.status", text);
    out.push_back(std::move(c));
    if (runner_->retries < kMaxRetries && Clock::now() - runner_->firstRetry < kMaxRetrying) {
      return "";
    }
    // OpenCode would retry forever: the turn fails here and the server is replaced.
    const std::string why = fmt::format(
        "runtime-retry-bounded: opencode retried the model {} times over {} s (last: {})",
        runner_->retries,
        std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - runner_->firstRetry)
            .count(),
        e.errorMessage);
    DriverEvent end;
    end.kind = DriverEvent::Kind::kTurnEnded;
    end.isError = true;
    end.detail = why;
    end.condition = condition(wire::ConditionCode::kFailed, "runtime-retry-bounded", why);
    out.push_back(std::move(end));
    runner_.reset();
    return why;
  }

  static bool isOverflow(const std::string& error) { return error.rfind(kContextOverflow, 0) == 0; }

  std::string idle(std::vector<DriverEvent>& out) {
    if (!runner_ || !runner_->admitted) return "";  // before admission: proves nothing
    if (runner_->aborting && !(runner_->answered && runner_->assistantError.empty())) {
      // The abort's idles: the first one may come before the aborted assistant (the
      // processor's); only an idle after it ends the turn. Prompting earlier can get the next
      // run aborted too (seen on 1.18.33).
      if (!runner_->abortedSeen) return "";
      DriverEvent end;
      end.kind = DriverEvent::Kind::kTurnEnded;
      end.isError = true;
      end.detail = runner_->assistantError;
      out.push_back(std::move(end));
      runner_.reset();
      abortDrain_ = true;
      // OpenCode 1.18.33 also aborts a run started soon after an abort (its cancellation
      // outlives the idles), and nothing it publishes says when that is over: the seed's
      // "strict interruption" — a fresh server takes the session on.
      return "interrupted: OpenCode aborts runs started right after an abort, so a fresh "
             "server takes the next prompt";
    }
    if (runner_->acked &&
        (isOverflow(runner_->errorCandidate) || isOverflow(runner_->assistantError))) {
      if (!runner_->overflowDrain) {
        runner_->overflowDrain = true;  // the processor's idle: cleanup follows
        return "";
      }
      if (runner_->overflowCleaned) {
        // The Runner's idle after the proven cleanup: the turn ends in error, the server and
        // its session stay (a summarize can free the context).
        DriverEvent end;
        end.kind = DriverEvent::Kind::kTurnEnded;
        end.isError = true;
        end.detail = "context_overflow: " + runner_->assistantError +
                     " (OpenCode's automatic compaction is off: `shoal seat compact` "
                     "summarizes the session)";
        end.condition = condition(wire::ConditionCode::kFailed, "context_overflow", end.detail);
        out.push_back(std::move(end));
        runner_.reset();
        return "";
      }
      // A second idle without the errored assistant: nothing proved the cleanup.
    }
    if (!runner_->acked) {
      std::string why = "its run went idle without an answer to prompt " + runner_->messageId;
      if (!runner_->errorCandidate.empty()) why += " (" + runner_->errorCandidate + ")";
      runner_.reset();
      return why;
    }
    std::string error = runner_->assistantError;
    if (error.empty()) error = runner_->errorCandidate;
    DriverEvent end;
    end.kind = DriverEvent::Kind::kTurnEnded;
    end.isError = !error.empty();
    end.detail = error;
    if (end.isError) {
      end.condition = condition(wire::ConditionCode::kFailed, "opencode", error);
    }
    out.push_back(std::move(end));
    runner_.reset();
    // An error that survived to idle: OpenCode may still publish its outer error after this
    // idle, so the next prompt gets a fresh server.
    return error.empty() ? "" : "its turn ended with an error (" + error + ")";
  }

  void message(const OpenCodeEvent& e, std::vector<DriverEvent>& out) {
    if (!runner_ || e.role != "assistant") return;        // a user row is persistence evidence only
    if (runner_->parents.count(e.parentId) == 0) return;  // stale or another Runner's
    runner_->assistants.insert(e.messageId);
    admit(out);
    if (!runner_->acked) {
      runner_->acked = true;
      DriverEvent ack;
      ack.kind = DriverEvent::Kind::kAck;
      ack.handoffId = runner_->handoffId;
      out.push_back(std::move(ack));
    }
    if (!e.errorName.empty()) {
      runner_->assistantError = (e.summary ? "context_compaction_failed: " : "") + e.errorName +
                                (e.errorMessage.empty() ? "" : ": " + e.errorMessage);
      if (runner_->overflowDrain && e.completed && isOverflow(runner_->assistantError)) {
        runner_->overflowCleaned = true;
      }
      if (runner_->aborting && e.completed && e.errorName == kAborted) {
        runner_->abortedSeen = true;
      }
    } else {
      runner_->errorCandidate.clear();  // correlated positive activity
      if (e.completed && e.finish != "tool-calls" && e.finish != "unknown") {
        runner_->assistantError.clear();
        runner_->answered = true;
      }
    }
    out.push_back(work());
  }

  void part(const OpenCodeEvent& e, std::vector<DriverEvent>& out) {
    if (!runner_) return;
    if (e.partType == "compaction" && e.compactionAuto && runner_->admitted) {
      // An automatic compaction of the admitted Runner: its summary answers our prompt.
      runner_->parents.insert(e.messageId);
      return;
    }
    if (e.pruned || runner_->assistants.count(e.messageId) == 0) return;  // stale frames
    runner_->errorCandidate.clear();
    out.push_back(work());
  }

  const std::string title_;
  const std::string authorization_;  // basic auth with this generation's password
  mutable std::mutex mu_;
  std::condition_variable eventsDone_;
  std::thread events_;
  bool eventsStarted_ = false;
  bool eventsExited_ = false;
  bool stopping_ = false;
  bool ready_ = false;
  bool retired_ = false;
  std::string retireReason_;
  std::string baseUrl_;
  std::string session_;
  http::EventStream* stream_ = nullptr;  // while run() holds it
  std::optional<Runner> runner_;
  bool idleEcho_ = false;    // the last event was an idle status: a session.idle repeats it
  bool abortDrain_ = false;  // an interrupted run's cleanup may still come
  std::optional<Summarize> summarize_;
  uint64_t summarizeSeq_ = 0;
  std::thread summarizeThread_;  // the summarize call (gate thread starts it, destructor joins)
  std::string providerId_;       // the session's model, for summarize
  std::string modelId_;
};

// The OPENCODE_CONFIG_CONTENT the server gets: the user's (when the profile passes that
// variable) with `mcp.shoal` set to the seat's endpoint. That variable outranks OPENCODE_CONFIG
// and the project's opencode.json, and OpenCode deep-merges `mcp` across them, so the user's
// other servers stay and no project file can replace the seat's.
Result<std::string> seatConfigContent(const LaunchSpec& spec) {
  json::object config;
  const char* user = std::getenv(kConfigContent);
  const bool passed = std::find(spec.envAllowList.begin(), spec.envAllowList.end(),
                                kConfigContent) != spec.envAllowList.end();
  if (passed && user != nullptr && *user != '\0') {
    boost::system::error_code ec;
    json::value v = json::parse(user, ec);
    if (ec || !v.is_object()) {
      return invalidArgument(
          "bad-opencode-config",
          fmt::format("{} (passed through the seat's env) is not a JSON object", kConfigContent));
    }
    config = std::move(v.as_object());
  }
  json::object headers{{"Authorization", "Bearer " + spec.mcp->bearerToken}};
  // oauth:false: a refused token is reported at once instead of walking OAuth discovery.
  json::object shoal{{"type", "remote"},
                     {"url", spec.mcp->url},
                     {"headers", std::move(headers)},
                     {"oauth", false},
                     {"enabled", true}};
  json::value& mcp = config["mcp"];
  if (!mcp.is_object()) mcp = json::object();
  mcp.as_object()["shoal"] = std::move(shoal);
  return json::serialize(config);
}

}  // namespace

std::vector<std::string> openCodeArgv(const LaunchSpec& spec, int port) {
  std::vector<std::string> argv = spec.command;
  if (argv.empty()) argv = {"opencode", "serve"};
  argv.insert(argv.end(), {"--port", std::to_string(port), "--hostname", "127.0.0.1"});
  return argv;
}

Result<std::unique_ptr<RuntimeDriver>> launchOpenCodeDriver(LaunchSpec spec) {
  std::string config;
  if (spec.mcp) {
    SHOAL_ASSIGN_OR_RETURN(config, seatConfigContent(spec));
  }
  SHOAL_ASSIGN_OR_RETURN(const int port, freeLoopbackPort());
  // Without a password the server is open to anything on loopback (its /config would show the
  // seat's token): one per generation, sent as basic auth on every request.
  SHOAL_ASSIGN_OR_RETURN(const std::string password, newHexToken(16));
  auto argv = openCodeArgv(spec, port);
  std::string title = "Shoal seat " + spec.seatId;
  auto driver = std::make_unique<OpenCodeDriver>(
      std::move(spec), std::move(title),
      "Basic " + base64Encode(std::string(kUser) + ":" + password));
  driver->extraEnv_.emplace_back("OPENCODE_SERVER_PASSWORD", password);
  driver->extraEnv_.emplace_back("OPENCODE_SERVER_USERNAME", std::string(kUser));
  if (!config.empty()) driver->extraEnv_.emplace_back(kConfigContent, config);
  // A daemon-run server must not replace itself under the seat.
  driver->extraEnv_.emplace_back("OPENCODE_DISABLE_AUTOUPDATE", "1");
  SHOAL_RETURN_IF_ERROR(driver->spawn(std::move(argv)));
  return std::unique_ptr<RuntimeDriver>(std::move(driver));
}

}  // namespace shoal::runtime
