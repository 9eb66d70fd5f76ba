// The OpenCode driver's private declaration, shared by its parts (driver.h is the public one):
//   server.cc  the server process, HTTP requests, the event stream loop, the session, launch
//   runner.cc  the Runner machine: admission, activity, idle, messages and parts, the watchdog
//   fences.cc  the fences that close a turn on request: native interrupt and summarize
// Not an API: include it only from src/runtime/opencode/.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "http/client.h"
#include "http/event_stream.h"
#include "runtime/child_driver.h"
#include "runtime/opencode/driver.h"
#include "runtime/opencode/events.h"

namespace shoal::runtime::opencode_detail {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

inline constexpr std::string_view kListening = "server listening on ";
inline constexpr const char* kConfigContent = "OPENCODE_CONFIG_CONTENT";
inline constexpr std::string_view kUser = "opencode";  // OpenCode's basic-auth user name
inline constexpr milliseconds kRequestTimeout{10000};
inline constexpr milliseconds kConnectTimeout{2000};
inline constexpr milliseconds kPollSlice{250};
// Before readiness the stream may be opened again; this long in all.
inline constexpr milliseconds kSetupBudget{20000};
// OpenCode sends a heartbeat every 10 s; this much silence means the stream is gone.
inline constexpr milliseconds kSilence{35000};
// Model retries (OpenCode retries a 5xx without end) bounded by the daemon.
inline constexpr int kMaxRetries = 6;
inline constexpr std::string_view kContextOverflow = "ContextOverflowError";
inline constexpr std::string_view kAborted = "MessageAbortedError";
// The summarize call answers only once the compaction is over (the seat bounds it anyway).
inline constexpr milliseconds kSummarizeTimeout{std::chrono::minutes(15)};
inline constexpr milliseconds kMaxRetrying{120000};

inline wire::PresenceCondition condition(wire::ConditionCode code, std::string source,
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
  Status interrupt() override;

  // `POST /session/:id/summarize {providerID, modelID, auto:false}` on a thread of its own (the
  // call answers only when the compaction is over); the fence (Summarize) decides its end.
  Status compact() override;

  std::string sessionId() const override;

  void closeInput() override;

  void kill(std::chrono::milliseconds grace) override;

  StdinWrite handoff(const Handoff& handoff) override;

 private:
  std::string frame(const Handoff&) const override { return {}; }  // handoff() is HTTP

  std::string readOutput(UniqueFd out) override;

  Result<http::HttpReply> request(const std::string& method, const std::string& path,
                                  std::string body = "", milliseconds timeout = kRequestTimeout);

  void dropRunner(const std::string& messageId);

  // Kills the server; kExited will carry `why`. Idempotent (the first reason stays).
  void retire(const std::string& why);

  void stopEvents();

  bool stopping();

  void eventsMain();

  // Setup (stream, session, kReady), then the event loop until the stream or the server ends.
  void run();

  // The seat's saved session (GET /session/:id) or a new one (POST /session).
  bool openSession();

  // `model:{id, providerID}` of a GET /session/:id answer (set once a prompt ran).
  void rememberSessionModel(const std::string& body);

  void watchdog();

  // One event of the stream. Events are gathered under the lock and reported after it.
  void on(const OpenCodeEvent& e);

  std::string onRunner(const OpenCodeEvent& e, std::vector<DriverEvent>& out);

  // An event while a summarize runs: only its own frames count (the compaction user, the
  // summary assistant bound to it, the session's status); any error, an idle before
  // `session.compacted`, or endless model retries fail it and retire the generation.
  std::string onSummarize(const OpenCodeEvent& e, std::vector<DriverEvent>& out);

  // The fence's end: complete (one turn end) or failed (the generation retires). "" while open.
  std::string settleSummarize(std::vector<DriverEvent>& out);

  std::string failSummarize(const std::string& why, std::vector<DriverEvent>& out);

  static DriverEvent work();

  // Admission proof: the Runner took our prompt.
  void admit(std::vector<DriverEvent>& out);

  std::string active(const OpenCodeEvent& e, std::vector<DriverEvent>& out);

  static bool isOverflow(const std::string& error) { return error.rfind(kContextOverflow, 0) == 0; }

  std::string idle(std::vector<DriverEvent>& out);

  void message(const OpenCodeEvent& e, std::vector<DriverEvent>& out);

  void part(const OpenCodeEvent& e, std::vector<DriverEvent>& out);

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

}  // namespace shoal::runtime::opencode_detail
