// fake_codex: a test fake of `codex app-server` on stdio (JSON-RPC, v2 API), faithful to
// the app-server's documented protocol and to what the real 0.171.0 binary was seen doing
// (tests/fakes/README.md). The seat daemon's tests run it where a profile would run
// `codex app-server`:
//
//   fake_codex app-server [--listen stdio://] [-c key=value …] [fake switches]
//
// Real arguments accepted: the `app-server` subcommand, `--listen stdio://` (any other
// transport is refused: message on stderr, exit 1) and `-c`/`--config key=value` (ignored).
// `--flag=value` works too. An unknown `--flag` or positional argument is ignored with a note
// on stderr.
//
// Fake switches:
//   --state PATH     the "rollout store": a JSON file {"version":1,"threads":{id:{id,cwd,model,
//                    preview,createdAt,updatedAt,turns:[…]}}} rewritten (tmp + rename) after
//                    every finished turn, so a restarted fake can `thread/resume` and
//                    `thread/read` threads an earlier process ran. A thread with no finished
//                    turn is never written (as 0.151+ does). Without --state nothing persists.
//   --no-client-id   old Codex: `clientUserMessageId` is accepted but never echoed; userMessage
//                    items (notifications and thread/read) carry no `clientId` member at all.
//   --read-active    `thread/read` of a loaded thread always reports it active (a read racing a
//                    turn: its history cannot prove anything absent yet).
//   --compact-ms MS  how long a compaction turn works between item/started and item/completed
//                    contextCompaction (default 50, as the real one takes 50-80 ms).
//   --compact-fail   every compaction fails like a model HTTP 500: after item/started
//                    contextCompaction, thread/status/changed systemError, `error` {error:{
//                    message,codexErrorInfo:"internalServerError",additionalDetails:null},
//                    willRetry:false,threadId,turnId}, turn/completed status "failed" with that
//                    error. No item/completed, no idle; the turn is recorded with no items and
//                    thread/read reports systemError until the thread's next turn starts.
//   --compact-hang   a compaction turn never completes until turn/interrupt (or stdin EOF).
//   --compact-duplicate  the turn/completed of a compaction turn that ends by itself
//                    (completed, or failed under --compact-fail) is sent twice, line for line.
//   --fake-log PATH  append one JSON object per line to PATH (each line is ONE write() on an
//                    O_APPEND descriptor, so concurrent fakes never interleave):
//                      {"event":"start","pid":N,"cwd":D,"argv":[…]}
//                      {"event":"request","pid":N,"id":<as sent>,"method":M}
//                      {"event":"input","pid":N,"via":"turn/start"|"turn/steer","threadId":T,
//                       "turnId":U,"clientId":<as sent, or null>,"text":X}
//                      {"event":"turn","pid":N,"threadId":T,"turnId":U,"status":S,"inputs":K
//                       [,"kind":"compact"]}
//                      {"event":"exit","pid":N,"code":C}        (argv refusals add "error")
//                    `input` is logged for every user message accepted into a turn (turn/start,
//                    turn/start while busy, turn/steer); `turn` when a turn ends (status
//                    completed | interrupted | failed; `inputs` counts its user messages;
//                    "kind":"compact" only for a compaction turn).
//
// Content markers (substrings of a user message's text):
//   FAKE_HANG                the turn never answers until turn/interrupt (or stdin EOF); input
//                            is still read. Also works in a steer.
//   FAKE_SLOW_<ms>           (starting input) the agent message comes <ms> after turn/started,
//                            so a steer can land mid-turn. A steer does not move that time.
//   FAKE_DELAY_STARTED_<ms>  (starting input) thread/status/changed active, turn/started and
//                            the rest come <ms> after the turn/start response. A steer or
//                            turn/start in between joins the turn.
//   FAKE_ERROR_RETRY         an `error` notification with willRetry:true (codexErrorInfo
//                            responseStreamDisconnected) before the agent message; the turn
//                            then completes normally.
//   FAKE_ERROR_FATAL         instead of the agent message: `error` {error:{message,
//                            codexErrorInfo:"internalServerError",additionalDetails:null},
//                            willRetry:false,threadId,turnId}, then idle and turn/completed
//                            status "failed" carrying the same error.
//   FAKE_EARLY_IDLE_<ms>     at answer time: thread/status/changed idle first, then the agent
//                            message and turn/completed <ms> later, the turn still active and
//                            steerable in between (the compaction race of seed 004 §1.2).
//   FAKE_CRASH_UNREAD        (starting input) exit 3 right after the turn/start response: the
//                            input never becomes a userMessage item and nothing is persisted.
//   FAKE_CRASH               exit 3 right after that message's userMessage item/completed
//                            (after turn/started): no agent message, no turn/completed.
//   FAKE_MCP_CALL            an mcpToolCall item (server "fake", tool "echo") started and
//                            completed before the agent message; the process's first one is
//                            preceded by mcpServer/startupStatus/updated starting, ready.
//   FAKE_OVERLOAD            turn/start is refused with -32001 "Server overloaded; retry later."
//                            and nothing is accepted.
// Markers other than the two timing ones act wherever they appear among a turn's inputs.
//
// Protocol: stdin and stdout carry one JSON object per line with no "jsonrpc" member (one is
// tolerated on input); every stdout line is written whole with one lock held; logs and notes
// go to stderr. Request ids are echoed as sent. Before `initialize` every request gets -32600
// "Not initialized"; a second `initialize` gets -32600 "Already initialized". The
// `initialized` notification is accepted, other notifications and client responses are
// ignored, a line that is not a JSON object is noted on stderr and skipped. Methods:
// initialize, thread/start, thread/resume, thread/read, thread/loaded/list,
// thread/compact/start, turn/start, turn/steer, turn/interrupt; others get -32601. Missing or
// mistyped params get -32602. Notifications named in initialize's
// capabilities.optOutNotificationMethods (exact match) are never sent.
//
// A turn (one active per thread): the turn/start response {turn:{id,status:"inProgress",
// items:[],error:null}}, then thread/status/changed active, turn/started, item/started and
// item/completed userMessage {type,id,clientId,content:[{type:"text",text,text_elements}]},
// [error willRetry] [mcpToolCall items], item/started agentMessage (text ""),
// item/agentMessage/delta (16-character chunks), item/completed agentMessage {text:
// "fake-reply-N: <first 200 characters of each input, joined with \n>"} (N counts the
// process's answers from 1), thread/status/changed idle, turn/completed {threadId,turn:{id,
// status:"completed",items:[],error:null}}. A steer's userMessage items come right after its
// response (or at turn/started if it landed before); one agent message answers all inputs.
// The --fake-log `input` line is written before the response, the `turn` line and the
// --state file before turn/completed.
// turn/start while a turn is active is accepted like a steer (same turn id), as 0.171 does.
// turn/interrupt: {} then idle and turn/completed "interrupted" (no idle if the turn never
// went active). Errors (-32600): turn/start, turn/steer or turn/interrupt on a thread not
// loaded in this process "thread not found: <id>"; thread/resume of an id never persisted
// "no rollout found for thread id <id>"; thread/read of an id neither loaded nor persisted
// "thread not loaded: <id>"; steer or interrupt without an active turn "no active turn to
// steer" / "no active turn to interrupt", with another id "expected active turn id `X` but
// found `Y`".
//
// thread/compact/start {threadId}, as 0.171 was seen doing: a thread not loaded gets "thread
// not found: <id>"; one with an active turn gets -32600 "a turn is already running" (not
// observed on the real one). Otherwise the response {} at once, then a compaction turn with a
// new turn id C: thread/status/changed active, turn/started {turn:{id:C,status:"inProgress",
// items:[],error:null}}, item/started {item:{type:"contextCompaction",id}}, --compact-ms later
// item/completed of that item, thread/status/changed idle and, 20 ms later (the real "early
// idle", so a client can see the race), turn/completed {turn:{id:C,status:"completed",items:[],
// error:null}}. No agent message and no user input, but the summary the model wrote uses up
// one reply number (the next answer is fake-reply-N+1, as with the real one and
// fake_model.py). The turn is recorded (thread/read, --state) with the contextCompaction item
// as its only item. Until turn/completed (the idle gap included), turn/steer with any
// expectedTurnId gets -32600 "cannot steer a compact turn" with data {message,codexErrorInfo:
// {activeTurnNotSteerable:{turnKind:"compact"}},additionalDetails:null,misalignment:null}, and
// turn/start gets -32603 "failed to submit turn input: ActiveTurnNotSteerable { turn_kind:
// Compact }"; both inputs are dropped (no `input` log line). turn/interrupt with C ends it as
// "interrupted" (idle first unless already sent).
//
// stdin EOF: exit 0 at once, even mid-turn. SIGTERM: log the exit, exit 143. A failed stdout
// write (reader gone): log the exit, exit 1.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>
#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include "stream_json.h"

namespace {

namespace json = boost::json;
using shoal::demo::StdinLines;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kVersion = "0.171.0-fake";
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;
constexpr int kOverloaded = -32001;
constexpr int kMaxMarkerMs = 600'000;
constexpr int kCompactIdleGapMs = 20;  // a compaction's idle → turn/completed

struct Options {
  std::string logPath;
  std::string statePath;
  bool noClientId = false;
  bool readActive = false;
  int compactMs = 50;
  bool compactFail = false;
  bool compactHang = false;
  bool compactDuplicate = false;
};

// The fake switches that take no value, and the option each one sets.
constexpr std::pair<std::string_view, bool Options::*> kFlags[] = {
    {"--no-client-id", &Options::noClientId},
    {"--read-active", &Options::readActive},
    {"--compact-fail", &Options::compactFail},
    {"--compact-hang", &Options::compactHang},
    {"--compact-duplicate", &Options::compactDuplicate},
};

struct ParsedArgs {
  Options options;
  std::string error;
  std::vector<std::string> notes;
};

ParsedArgs parseArgs(int argc, char** argv) {
  ParsedArgs out;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.empty() || arg[0] != '-') {
      if (arg != "app-server") out.notes.push_back("ignoring argument '" + arg + "'");
      continue;
    }
    std::optional<std::string> value;
    if (size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    }
    auto takeValue = [&]() -> bool {
      if (!value) {
        if (i + 1 >= argc) {
          out.error = "fake_codex: " + arg + " needs a value";
          return false;
        }
        value = argv[++i];
      }
      return true;
    };
    if (arg == "--state" || arg == "--fake-log" || arg == "--listen" || arg == "-c" ||
        arg == "--config" || arg == "--compact-ms") {
      if (!takeValue()) return out;
      if (arg == "--state") out.options.statePath = *value;
      if (arg == "--fake-log") out.options.logPath = *value;
      if (arg == "--listen" && *value != "stdio://") {
        out.error = "fake_codex: only --listen stdio:// is supported, got '" + *value + "'";
        return out;
      }
      if (arg == "--compact-ms") {
        const std::string_view text = *value;
        int ms = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
        if (ec != std::errc() || end != text.data() + text.size() || ms < 0 || ms > kMaxMarkerMs) {
          out.error =
              "fake_codex: --compact-ms needs 0 to 600000 milliseconds, got '" + *value + "'";
          return out;
        }
        out.options.compactMs = ms;
      }
    } else if (auto flag = std::find_if(std::begin(kFlags), std::end(kFlags),
                                        [&arg](const auto& f) { return f.first == arg; });
               flag != std::end(kFlags)) {
      if (value) {
        out.error = "fake_codex: " + arg + " takes no value";
        return out;
      }
      out.options.*(flag->second) = true;
    } else {
      out.notes.push_back("ignoring unknown flag " + arg);
    }
  }
  return out;
}

// The --fake-log file: one JSON object per line, each written with one write().
class EventLog {
 public:
  explicit EventLog(const std::string& path) : pid_(::getpid()) {
    if (path.empty()) return;
    fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fmt::print(stderr, "fake_codex: cannot open --fake-log {}\n", path);
  }
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  void write(std::string_view event, json::object fields) const {
    if (fd_ < 0) return;
    json::object line{{"event", event}, {"pid", pid_}};
    for (auto& field : fields) {
      line[field.key()] = std::move(field.value());
    }
    std::string text = json::serialize(line) + "\n";
    // One write() on an O_APPEND descriptor: the line lands whole, after every other line.
    ssize_t n = ::write(fd_, text.data(), text.size());
    static_cast<void>(n);
  }

 private:
  const pid_t pid_;
  int fd_ = -1;
};

// stdout: one JSON object per line, each written whole under the lock.
class RpcOut {
 public:
  // When a write fails, `onBroken` runs under the lock and the process exits 1.
  RpcOut(int fd, std::function<void()> onBroken) : fd_(fd), onBroken_(std::move(onBroken)) {}

  void send(const json::object& message) {
    std::string text = json::serialize(message) + "\n";
    std::lock_guard lock(mu_);
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (onBroken_) onBroken_();
        std::_Exit(1);
      }
      done += static_cast<size_t>(n);
    }
  }

  // Takes the lock for good (no line is cut in half; a write stuck on a full pipe is waited
  // for at most 200 ms), runs `last`, then _exit.
  [[noreturn]] void exitProcess(int code, const std::function<void()>& last) {
    static_cast<void>(mu_.try_lock_for(std::chrono::milliseconds(200)));
    if (last) last();
    ::_exit(code);
  }

 private:
  const int fd_;
  const std::function<void()> onBroken_;
  std::timed_mutex mu_;  // guards the fd: one whole line at a time
};

// --- markers ------------------------------------------------------------------------------

bool has(std::string_view text, std::string_view marker) {
  return text.find(marker) != std::string_view::npos;
}

// The milliseconds written right after `marker` (FAKE_SLOW_250 → 250); nullopt when absent.
std::optional<int> msAfter(std::string_view text, std::string_view marker) {
  size_t at = text.find(marker);
  if (at == std::string_view::npos) return std::nullopt;
  size_t i = at + marker.size();
  long ms = 0;
  bool digits = false;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9' && ms <= kMaxMarkerMs) {
    ms = ms * 10 + (text[i++] - '0');
    digits = true;
  }
  if (!digits) return std::nullopt;
  return static_cast<int>(std::min<long>(ms, kMaxMarkerMs));
}

// --- threads and turns --------------------------------------------------------------------

int64_t epochMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string currentDirectory() {
  std::vector<char> buf(4096);
  if (::getcwd(buf.data(), buf.size()) == nullptr) return "";
  return buf.data();
}

// One user message accepted into a turn.
struct UserInput {
  std::string itemId;
  std::optional<std::string> clientId;  // as sent
  json::array content;                  // as echoed in the userMessage item
  std::string text;                     // the text parts joined with "\n"
};

struct ActiveTurn {
  std::string id;
  bool compact = false;          // a thread/compact/start turn: no inputs, not steerable
  std::string compactionItemId;  // its contextCompaction item
  bool endStatusSent = false;    // compaction: idle (or systemError) is out before the end
  std::vector<UserInput> inputs;
  size_t shown = 0;      // inputs whose userMessage items are out
  bool running = false;  // turn/started is out (false during FAKE_DELAY_STARTED)
  bool hang = false;
  bool earlyIdleSent = false;  // FAKE_EARLY_IDLE_<ms>
  int slowMs = 0;
  // Not running: when to start; running: when to answer; nullopt while hanging.
  std::optional<Clock::time_point> deadline;
  json::array items;  // completed items, for thread/read
};

struct Thread {
  std::string id;
  std::string cwd;
  std::string model = "fake-model";
  std::string preview;
  int64_t createdAt = 0;
  int64_t updatedAt = 0;
  json::array turns;  // finished: {id,status,items,error}
  std::optional<ActiveTurn> active;
  bool systemError = false;  // a compaction failed; cleared when the next turn starts
};

json::object persistedThread(const Thread& t) {
  return {{"id", t.id},
          {"cwd", t.cwd},
          {"model", t.model},
          {"preview", t.preview},
          {"createdAt", t.createdAt},
          {"updatedAt", t.updatedAt},
          {"turns", t.turns}};
}

std::string stringOr(const json::object& o, std::string_view key, std::string fallback = "") {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : fallback;
}

int64_t intOr(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_int64() ? v->as_int64() : 0;
}

Thread threadFromPersisted(const std::string& id, const json::object& o) {
  Thread t;
  t.id = id;
  t.cwd = stringOr(o, "cwd");
  t.model = stringOr(o, "model", "fake-model");
  t.preview = stringOr(o, "preview");
  t.createdAt = intOr(o, "createdAt");
  t.updatedAt = intOr(o, "updatedAt");
  if (const json::value* turns = o.if_contains("turns"); turns != nullptr && turns->is_array()) {
    t.turns = turns->as_array();
  }
  return t;
}

// The --state file. Read fresh at every use, rewritten whole (tmp + rename) at every save, so
// two processes sharing it one after the other see each other's threads.
class StateFile {
 public:
  explicit StateFile(std::string path) : path_(std::move(path)) {}

  // The persisted thread `id`, if any.
  std::optional<json::object> find(const std::string& id) const {
    json::object threads = load();
    const json::value* t = threads.if_contains(id);
    if (t == nullptr || !t->is_object()) return std::nullopt;
    return t->as_object();
  }

  void save(const Thread& thread) const {
    if (path_.empty()) return;
    json::object threads = load();
    threads[thread.id] = persistedThread(thread);
    json::object file{{"version", 1}, {"threads", std::move(threads)}};
    std::string tmp = fmt::format("{}.tmp.{}", path_, ::getpid());
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << json::serialize(file) << "\n";
      if (!out.flush()) {
        fmt::print(stderr, "fake_codex: cannot write --state {}\n", tmp);
        return;
      }
    }
    if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
      fmt::print(stderr, "fake_codex: cannot rename {} to {}\n", tmp, path_);
    }
  }

 private:
  json::object load() const {
    if (path_.empty()) return {};
    std::ifstream in(path_);
    if (!in) return {};
    std::stringstream ss;
    ss << in.rdbuf();
    boost::system::error_code ec;
    json::value v = json::parse(ss.str(), ec);
    const json::value* threads =
        !ec && v.is_object() ? v.as_object().if_contains("threads") : nullptr;
    if (threads == nullptr || !threads->is_object()) {
      fmt::print(stderr, "fake_codex: --state {} is not a state file; ignoring it\n", path_);
      return {};
    }
    return threads->as_object();
  }

  const std::string path_;
};

// A JSON-RPC error to send back.
struct RpcError {
  int code;
  std::string message;
};

// `params[key]` as a string, or an invalid-params error.
std::optional<std::string> requiredString(const json::object& params, std::string_view key,
                                          std::optional<RpcError>& error) {
  const json::value* v = params.if_contains(key);
  if (v != nullptr && v->is_string()) return std::string(v->as_string());
  error = RpcError{kInvalidParams, fmt::format("Invalid request: missing field `{}`", key)};
  return std::nullopt;
}

// The `input` array of turn/start or turn/steer, or an invalid-params error.
std::optional<UserInput> parseInput(const json::object& params, std::optional<RpcError>& error) {
  const json::value* input = params.if_contains("input");
  if (input == nullptr || !input->is_array()) {
    error = RpcError{kInvalidParams, "Invalid request: missing field `input`"};
    return std::nullopt;
  }
  UserInput out;
  out.itemId = shoal::demo::newUuid();
  if (const json::value* c = params.if_contains("clientUserMessageId"); c && c->is_string()) {
    out.clientId = std::string(c->as_string());
  }
  for (const json::value& part : input->as_array()) {
    const json::object* o = part.if_object();
    if (o == nullptr || stringOr(*o, "type").empty()) {
      error = RpcError{kInvalidParams, "Invalid request: input items need a `type`"};
      return std::nullopt;
    }
    if (stringOr(*o, "type") != "text") {
      out.content.push_back(*o);
      continue;
    }
    std::string text = stringOr(*o, "text");
    json::value elements = json::array{};
    if (const json::value* e = o->if_contains("text_elements"); e && e->is_array()) elements = *e;
    out.content.push_back(
        json::object{{"type", "text"}, {"text", text}, {"text_elements", elements}});
    if (!out.text.empty()) out.text += "\n";
    out.text += text;
  }
  return out;
}

json::object turnJson(const std::string& id, std::string_view status, json::value error,
                      json::array items = {}) {
  return {{"id", id}, {"status", status}, {"items", std::move(items)}, {"error", std::move(error)}};
}

json::object activeStatus() {
  return {{"type", "active"}, {"activeFlags", json::array{}}};
}
json::object idleStatus() {
  return {{"type", "idle"}};
}
json::object systemErrorStatus() {
  return {{"type", "systemError"}};
}

// The error a model HTTP 500 gives a turn (FAKE_ERROR_FATAL, --compact-fail).
json::object internalServerError() {
  return {{"message",
           "We\u2019re currently experiencing high demand, which may cause temporary errors."},
          {"codexErrorInfo", "internalServerError"},
          {"additionalDetails", nullptr}};
}

class FakeCodex {
 public:
  FakeCodex(const Options& options, RpcOut& out, const EventLog& log)
      : options_(options), out_(out), log_(log), state_(options.statePath) {}

  [[noreturn]] void run(StdinLines& in) {
    for (;;) {
      if (Thread* due = dueThread()) {
        advance(*due);
        continue;
      }
      auto event = in.next(earliestDeadline());
      if (!event) continue;  // a deadline passed: act on it at the top
      if (event->eof) exit(0);
      onLine(event->line);
    }
  }

  [[noreturn]] void exit(int code) {
    out_.exitProcess(code, [this, code] { log_.write("exit", {{"code", code}}); });
  }

 private:
  // --- the loop ---------------------------------------------------------------------------

  Thread* dueThread() {
    const Clock::time_point now = Clock::now();
    for (auto& [id, t] : loaded_) {
      if (t.active && t.active->deadline && *t.active->deadline <= now) return &t;
    }
    return nullptr;
  }

  std::optional<Clock::time_point> earliestDeadline() const {
    std::optional<Clock::time_point> earliest;
    for (const auto& [id, t] : loaded_) {
      if (!t.active || !t.active->deadline) continue;
      if (!earliest || *t.active->deadline < *earliest) earliest = t.active->deadline;
    }
    return earliest;
  }

  void advance(Thread& t) {
    if (!t.active->running) {
      startRunning(t);
    } else if (t.active->compact) {
      compactionDue(t);
    } else {
      answer(t);
    }
  }

  void onLine(const std::string& line) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) return;
    boost::system::error_code ec;
    json::value v = json::parse(line, ec);
    if (ec || !v.is_object()) {
      fmt::print(stderr, "fake_codex: skipping a line that is not a JSON object: {}\n",
                 shoal::demo::utf8Prefix(line, 200));
      return;
    }
    json::object& message = v.as_object();
    const json::value* id = message.if_contains("id");
    const json::value* method = message.if_contains("method");
    if (method == nullptr || !method->is_string()) {
      if (id != nullptr && !message.contains("result") && !message.contains("error")) {
        sendError(*id, RpcError{kInvalidRequest, "Invalid request: missing field `method`"});
      }
      return;  // a client response: this fake never asks anything
    }
    const std::string name(method->as_string());
    if (id == nullptr) {
      if (name != "initialized") fmt::print(stderr, "fake_codex: ignoring notification {}\n", name);
      return;
    }
    json::object params;
    if (const json::value* p = message.if_contains("params"); p != nullptr && p->is_object()) {
      params = p->as_object();
    }
    log_.write("request", {{"id", *id}, {"method", name}});
    onRequest(*id, name, params);
  }

  void onRequest(const json::value& id, const std::string& method, const json::object& params) {
    if (method == "initialize") {
      if (initialized_) return sendError(id, {kInvalidRequest, "Already initialized"});
      return initialize(id, params);
    }
    if (!initialized_) return sendError(id, {kInvalidRequest, "Not initialized"});
    if (method == "thread/start") return threadStart(id, params);
    if (method == "thread/resume") return threadResume(id, params);
    if (method == "thread/read") return threadRead(id, params);
    if (method == "thread/loaded/list") return loadedList(id);
    if (method == "thread/compact/start") return compactStart(id, params);
    if (method == "turn/start") return turnStart(id, params);
    if (method == "turn/steer") return turnSteer(id, params);
    if (method == "turn/interrupt") return turnInterrupt(id, params);
    sendError(id, {kMethodNotFound, "Method not found: " + method});
  }

  // --- output -----------------------------------------------------------------------------

  void respond(const json::value& id, json::object result) {
    out_.send(json::object{{"id", id}, {"result", std::move(result)}});
  }

  void sendError(const json::value& id, const RpcError& error) {
    out_.send(json::object{
        {"id", id}, {"error", json::object{{"code", error.code}, {"message", error.message}}}});
  }

  void sendError(const json::value& id, const RpcError& error, json::object data) {
    out_.send(json::object{{"id", id},
                           {"error", json::object{{"code", error.code},
                                                  {"message", error.message},
                                                  {"data", std::move(data)}}}});
  }

  void notify(std::string_view method, json::object params) {
    if (optOut_.contains(std::string(method))) return;
    out_.send(json::object{{"method", method}, {"params", std::move(params)}});
  }

  void statusChanged(const Thread& t, json::object status) {
    notify("thread/status/changed", {{"threadId", t.id}, {"status", std::move(status)}});
  }

  void itemStarted(const Thread& t, const json::object& item) {
    notify("item/started", {{"item", item}, {"threadId", t.id}, {"turnId", t.active->id}});
  }

  void itemCompleted(Thread& t, const json::object& item) {
    notify("item/completed", {{"item", item},
                              {"threadId", t.id},
                              {"turnId", t.active->id},
                              {"completedAtMs", epochMs()}});
    t.active->items.push_back(item);
  }

  // --- handshake and threads ---------------------------------------------------------------

  void initialize(const json::value& id, const json::object& params) {
    std::string name = "codex_app_server_client";
    std::string version = "0.0.0";
    if (const json::value* info = params.if_contains("clientInfo"); info && info->is_object()) {
      name = stringOr(info->as_object(), "name", name);
      version = stringOr(info->as_object(), "version", version);
    }
    if (const json::value* caps = params.if_contains("capabilities"); caps && caps->is_object()) {
      const json::value* list = caps->as_object().if_contains("optOutNotificationMethods");
      if (list != nullptr && list->is_array()) {
        for (const json::value& m : list->as_array()) {
          if (m.is_string()) optOut_.insert(std::string(m.as_string()));
        }
      }
    }
    std::string home;
    if (const char* env = std::getenv("CODEX_HOME"); env != nullptr && *env != '\0') {
      home = env;
    } else if (const char* h = std::getenv("HOME"); h != nullptr) {
      home = std::string(h) + "/.codex";
    }
    initialized_ = true;
    respond(id, {{"userAgent",
                  fmt::format("{}/{} (fake; linux) ({}; {})", name, kVersion, name, version)},
                 {"codexHome", home},
                 {"platformFamily", "unix"},
                 {"platformOs", "linux"}});
  }

  json::object threadJson(const Thread& t, json::object status, bool withTurns) const {
    json::array turns;
    if (withTurns) {
      turns = t.turns;
      if (t.active) {
        turns.push_back(turnJson(t.active->id, "inProgress", nullptr, t.active->items));
      }
    }
    return {{"id", t.id},
            {"preview", t.preview},
            {"ephemeral", false},
            {"modelProvider", "fake"},
            {"createdAt", t.createdAt},
            {"updatedAt", t.updatedAt},
            {"status", std::move(status)},
            {"path", nullptr},
            {"cwd", t.cwd},
            {"cliVersion", kVersion},
            {"source", "vscode"},
            {"gitInfo", nullptr},
            {"name", nullptr},
            {"turns", std::move(turns)}};
  }

  static json::object statusOf(const Thread& t) {
    if (t.active && t.active->running && !t.active->endStatusSent) return activeStatus();
    return t.systemError ? systemErrorStatus() : idleStatus();
  }

  // The result of thread/start and thread/resume.
  json::object threadResult(const Thread& t, bool withTurns) const {
    return {{"thread", threadJson(t, statusOf(t), withTurns)},
            {"model", t.model},
            {"modelProvider", "fake"},
            {"cwd", t.cwd},
            {"approvalPolicy", "never"},
            {"sandbox", json::object{{"type", "readOnly"}, {"networkAccess", false}}},
            {"reasoningEffort", nullptr}};
  }

  void threadStart(const json::value& id, const json::object& params) {
    Thread t;
    t.id = shoal::demo::newUuid();
    t.cwd = stringOr(params, "cwd", currentDirectory());
    t.model = stringOr(params, "model", "fake-model");
    t.createdAt = t.updatedAt = epochMs() / 1000;
    Thread& loaded = loaded_.emplace(t.id, std::move(t)).first->second;
    respond(id, threadResult(loaded, false));
    notify("thread/started", {{"thread", threadJson(loaded, idleStatus(), false)}});
  }

  void threadResume(const json::value& id, const json::object& params) {
    std::optional<RpcError> error;
    std::optional<std::string> threadId = requiredString(params, "threadId", error);
    if (!threadId) return sendError(id, *error);
    if (auto it = loaded_.find(*threadId); it != loaded_.end()) {
      return respond(id, threadResult(it->second, true));
    }
    std::optional<json::object> persisted = state_.find(*threadId);
    if (!persisted) {
      return sendError(id, {kInvalidRequest, "no rollout found for thread id " + *threadId});
    }
    Thread& t =
        loaded_.emplace(*threadId, threadFromPersisted(*threadId, *persisted)).first->second;
    respond(id, threadResult(t, true));
  }

  void threadRead(const json::value& id, const json::object& params) {
    std::optional<RpcError> error;
    std::optional<std::string> threadId = requiredString(params, "threadId", error);
    if (!threadId) return sendError(id, *error);
    bool withTurns = false;
    if (const json::value* v = params.if_contains("includeTurns"); v && v->is_bool()) {
      withTurns = v->as_bool();
    }
    if (auto it = loaded_.find(*threadId); it != loaded_.end()) {
      json::object status = options_.readActive ? activeStatus() : statusOf(it->second);
      return respond(id, {{"thread", threadJson(it->second, status, withTurns)}});
    }
    if (std::optional<json::object> persisted = state_.find(*threadId)) {
      Thread t = threadFromPersisted(*threadId, *persisted);
      return respond(id, {{"thread", threadJson(t, {{"type", "notLoaded"}}, withTurns)}});
    }
    sendError(id, {kInvalidRequest, "thread not loaded: " + *threadId});
  }

  void loadedList(const json::value& id) {
    json::array ids;
    for (const auto& [threadId, t] : loaded_) {
      ids.emplace_back(threadId);
    }
    respond(id, {{"data", std::move(ids)}, {"nextCursor", nullptr}});
  }

  // The loaded thread `params.threadId`, or an error.
  Thread* loadedThread(const json::object& params, std::optional<RpcError>& error) {
    std::optional<std::string> threadId = requiredString(params, "threadId", error);
    if (!threadId) return nullptr;
    auto it = loaded_.find(*threadId);
    if (it == loaded_.end()) {
      error = RpcError{kInvalidRequest, "thread not found: " + *threadId};
      return nullptr;
    }
    return &it->second;
  }

  // --- turns ------------------------------------------------------------------------------

  void turnStart(const json::value& id, const json::object& params) {
    std::optional<RpcError> error;
    Thread* t = loadedThread(params, error);
    std::optional<UserInput> input;
    if (t != nullptr) input = parseInput(params, error);
    if (!input) return sendError(id, *error);
    if (has(input->text, "FAKE_OVERLOAD")) {
      return sendError(id, {kOverloaded, "Server overloaded; retry later."});
    }
    if (t->active && t->active->compact) {  // 0.171: refused, the input dropped
      return sendError(
          id, {kInternalError,
               "failed to submit turn input: ActiveTurnNotSteerable { turn_kind: Compact }"});
    }
    if (t->active) {  // 0.171: accepted like a steer, same turn id
      accept(*t, std::move(*input), "turn/start");
      respond(id, {{"turn", turnJson(t->active->id, "inProgress", nullptr)}});
      if (t->active->running) showInputs(*t);
      return;
    }
    const std::string text = input->text;
    t->active.emplace();
    ActiveTurn& turn = *t->active;
    turn.id = shoal::demo::newUuid();
    turn.slowMs = msAfter(text, "FAKE_SLOW_").value_or(0);
    turn.hang = has(text, "FAKE_HANG");
    accept(*t, std::move(*input), "turn/start");
    respond(id, {{"turn", turnJson(turn.id, "inProgress", nullptr)}});
    if (has(text, "FAKE_CRASH_UNREAD")) exit(3);  // taken, never read: nothing persisted
    if (std::optional<int> delay = msAfter(text, "FAKE_DELAY_STARTED_")) {
      turn.deadline = Clock::now() + std::chrono::milliseconds(*delay);
    } else {
      startRunning(*t);
    }
  }

  void turnSteer(const json::value& id, const json::object& params) {
    std::optional<RpcError> error;
    Thread* t = loadedThread(params, error);
    std::optional<std::string> expected;
    if (t != nullptr) expected = requiredString(params, "expectedTurnId", error);
    std::optional<UserInput> input;
    if (expected) input = parseInput(params, error);
    if (!input) return sendError(id, *error);
    if (t->active && t->active->compact) {  // 0.171: whatever the expected id; input dropped
      const std::string message = "cannot steer a compact turn";
      return sendError(id, {kInvalidRequest, message},
                       {{"message", message},
                        {"codexErrorInfo", json::object{{"activeTurnNotSteerable",
                                                         json::object{{"turnKind", "compact"}}}}},
                        {"additionalDetails", nullptr},
                        {"misalignment", nullptr}});
    }
    if (!t->active) return sendError(id, {kInvalidRequest, "no active turn to steer"});
    if (*expected != t->active->id) return sendError(id, wrongTurn(*expected, t->active->id));
    accept(*t, std::move(*input), "turn/steer");
    respond(id, {{"turnId", t->active->id}});
    if (t->active->running) showInputs(*t);
  }

  void turnInterrupt(const json::value& id, const json::object& params) {
    std::optional<RpcError> error;
    Thread* t = loadedThread(params, error);
    std::optional<std::string> turnId;
    if (t != nullptr) turnId = requiredString(params, "turnId", error);
    if (!turnId) return sendError(id, *error);
    if (!t->active) return sendError(id, {kInvalidRequest, "no active turn to interrupt"});
    if (*turnId != t->active->id) return sendError(id, wrongTurn(*turnId, t->active->id));
    respond(id, {});
    finishTurn(*t, "interrupted", nullptr);
  }

  static RpcError wrongTurn(const std::string& expected, const std::string& found) {
    return {kInvalidRequest,
            fmt::format("expected active turn id `{}` but found `{}`", expected, found)};
  }

  // Adds an accepted user message to the active turn (logged before the response goes out);
  // the caller shows its items once the response is out, if the turn runs.
  void accept(Thread& t, UserInput input, std::string_view via) {
    json::value clientId = nullptr;
    if (input.clientId) clientId = *input.clientId;
    log_.write("input", {{"via", via},
                         {"threadId", t.id},
                         {"turnId", t.active->id},
                         {"clientId", clientId},
                         {"text", input.text}});
    if (t.preview.empty()) t.preview = shoal::demo::utf8Prefix(input.text, 200);
    t.active->inputs.push_back(std::move(input));
  }

  // thread/compact/start: the response, then a compaction turn that runs at once.
  void compactStart(const json::value& id, const json::object& params) {
    std::optional<RpcError> error;
    Thread* t = loadedThread(params, error);
    if (t == nullptr) return sendError(id, *error);
    if (t->active) return sendError(id, {kInvalidRequest, "a turn is already running"});
    respond(id, {});
    t->active.emplace();
    ActiveTurn& turn = *t->active;
    turn.id = shoal::demo::newUuid();
    turn.compact = true;
    turn.compactionItemId = shoal::demo::newUuid();
    turn.slowMs = options_.compactMs;
    turn.hang = options_.compactHang;
    startRunning(*t);
    itemStarted(*t, compactionItem(turn));
  }

  static json::object compactionItem(const ActiveTurn& turn) {
    return {{"type", "contextCompaction"}, {"id", turn.compactionItemId}};
  }

  // A compaction's time came: with --compact-fail it fails (systemError, no idle); otherwise
  // its item completes and the thread goes idle, and the turn completes kCompactIdleGapMs later.
  void compactionDue(Thread& t) {
    ActiveTurn& turn = *t.active;
    turn.deadline.reset();
    if (turn.endStatusSent) return finishTurn(t, "completed", nullptr);
    turn.endStatusSent = true;
    if (options_.compactFail) {
      t.systemError = true;
      statusChanged(t, systemErrorStatus());
      json::object error = internalServerError();
      notify("error",
             {{"error", error}, {"willRetry", false}, {"threadId", t.id}, {"turnId", turn.id}});
      return finishTurn(t, "failed", error);
    }
    ++replies_;  // the model's summary, never shown
    itemCompleted(t, compactionItem(turn));
    statusChanged(t, idleStatus());
    turn.deadline = Clock::now() + std::chrono::milliseconds(kCompactIdleGapMs);
  }

  void startRunning(Thread& t) {
    ActiveTurn& turn = *t.active;
    t.systemError = false;
    turn.running = true;
    turn.deadline.reset();
    if (!turn.hang) turn.deadline = Clock::now() + std::chrono::milliseconds(turn.slowMs);
    statusChanged(t, activeStatus());
    notify("turn/started",
           {{"threadId", t.id}, {"turn", turnJson(turn.id, "inProgress", nullptr)}});
    if (!mcpStarted_ && anyInputHas(turn, "FAKE_MCP_CALL")) {
      mcpStarted_ = true;
      for (std::string_view status : {"starting", "ready"}) {
        notify("mcpServer/startupStatus/updated",
               {{"name", "fake"}, {"status", status}, {"error", nullptr}});
      }
    }
    showInputs(t);
  }

  // The userMessage items of the inputs not shown yet; FAKE_CRASH and FAKE_HANG act here.
  void showInputs(Thread& t) {
    ActiveTurn& turn = *t.active;
    while (turn.shown < turn.inputs.size()) {
      const UserInput& input = turn.inputs[turn.shown++];
      json::object item{{"type", "userMessage"}, {"id", input.itemId}};
      if (!options_.noClientId) {
        item["clientId"] = input.clientId ? json::value(*input.clientId) : json::value(nullptr);
      }
      item["content"] = input.content;
      itemStarted(t, item);
      itemCompleted(t, item);
      if (has(input.text, "FAKE_CRASH")) exit(3);
      if (has(input.text, "FAKE_HANG")) {
        turn.hang = true;
        turn.deadline.reset();
      }
    }
  }

  static bool anyInputHas(const ActiveTurn& turn, std::string_view marker) {
    for (const UserInput& input : turn.inputs) {
      if (has(input.text, marker)) return true;
    }
    return false;
  }

  // The answer time came: the scripted errors and tool call, one agent message, the end.
  void answer(Thread& t) {
    ActiveTurn& turn = *t.active;
    turn.deadline.reset();
    if (!turn.earlyIdleSent) {
      for (const UserInput& input : turn.inputs) {
        std::optional<int> gap = msAfter(input.text, "FAKE_EARLY_IDLE_");
        if (!gap) continue;
        // The compaction race: idle now, the turn (still steerable) completes <ms> later.
        turn.earlyIdleSent = true;
        statusChanged(t, idleStatus());
        turn.deadline = Clock::now() + std::chrono::milliseconds(*gap);
        return;
      }
    }
    if (anyInputHas(turn, "FAKE_ERROR_FATAL")) {
      json::object error = internalServerError();
      notify("error",
             {{"error", error}, {"willRetry", false}, {"threadId", t.id}, {"turnId", turn.id}});
      return finishTurn(t, "failed", error);
    }
    if (anyInputHas(turn, "FAKE_ERROR_RETRY")) {
      json::object info{{"responseStreamDisconnected", json::object{{"httpStatusCode", nullptr}}}};
      notify("error", {{"error", json::object{{"message", "Reconnecting... 1/5"},
                                              {"codexErrorInfo", std::move(info)},
                                              {"additionalDetails", "fake transient error"}}},
                       {"willRetry", true},
                       {"threadId", t.id},
                       {"turnId", turn.id}});
    }
    if (anyInputHas(turn, "FAKE_MCP_CALL")) mcpCall(t);
    agentMessage(t);
    finishTurn(t, "completed", nullptr);
  }

  void mcpCall(Thread& t) {
    const std::string text = shoal::demo::utf8Prefix(t.active->inputs.front().text, 200);
    json::object item{{"type", "mcpToolCall"},  {"id", "call_fake_" + shoal::demo::randomHex(24)},
                      {"server", "fake"},       {"tool", "echo"},
                      {"status", "inProgress"}, {"arguments", json::object{{"text", text}}},
                      {"result", nullptr},      {"error", nullptr},
                      {"durationMs", nullptr}};
    itemStarted(t, item);
    item["status"] = "completed";
    item["result"] = json::object{
        {"content", json::array{json::object{{"type", "text"}, {"text", "echo:" + text}}}},
        {"structuredContent", nullptr},
        {"_meta", nullptr}};
    item["durationMs"] = 1;
    itemCompleted(t, item);
  }

  void agentMessage(Thread& t) {
    ActiveTurn& turn = *t.active;
    std::string answered;
    for (const UserInput& input : turn.inputs) {
      if (!answered.empty()) answered += "\n";
      answered += shoal::demo::utf8Prefix(input.text, 200);
    }
    const std::string text = fmt::format("fake-reply-{}: {}", ++replies_, answered);
    json::object item{
        {"type", "agentMessage"}, {"id", "msg_fake_" + shoal::demo::randomHex(10)}, {"text", ""}};
    itemStarted(t, item);
    std::string_view rest = text;
    while (!rest.empty()) {
      std::string chunk = shoal::demo::utf8Prefix(rest, 16);
      rest.remove_prefix(chunk.size());
      notify("item/agentMessage/delta",
             {{"threadId", t.id}, {"turnId", turn.id}, {"itemId", item["id"]}, {"delta", chunk}});
    }
    item["text"] = text;
    itemCompleted(t, item);
  }

  // The turn ends with `status`: the state file and the log first (so whoever saw
  // turn/completed finds both up to date), then idle (if it went active and a compaction has
  // not sent its end status yet) and turn/completed (twice for --compact-duplicate).
  void finishTurn(Thread& t, std::string_view status, json::value error) {
    ActiveTurn turn = std::move(*t.active);
    t.active.reset();
    t.turns.push_back(turnJson(turn.id, status, error, std::move(turn.items)));
    t.updatedAt = epochMs() / 1000;
    state_.save(t);
    json::object logged{{"threadId", t.id},
                        {"turnId", turn.id},
                        {"status", status},
                        {"inputs", turn.inputs.size()}};
    if (turn.compact) logged["kind"] = "compact";
    log_.write("turn", std::move(logged));
    if (turn.running && !turn.endStatusSent) statusChanged(t, idleStatus());
    json::object completed{{"threadId", t.id}, {"turn", turnJson(turn.id, status, error)}};
    notify("turn/completed", completed);
    if (turn.compact && options_.compactDuplicate && status != "interrupted") {
      notify("turn/completed", std::move(completed));
    }
  }

  const Options options_;
  RpcOut& out_;
  const EventLog& log_;
  const StateFile state_;

  bool initialized_ = false;
  std::set<std::string> optOut_;
  std::map<std::string, Thread> loaded_;  // threads loaded in this process, by id
  int replies_ = 0;
  bool mcpStarted_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  ParsedArgs parsed = parseArgs(argc, argv);
  const EventLog log(parsed.options.logPath);
  if (!parsed.error.empty()) {
    fmt::print(stderr, "{}\n", parsed.error);
    log.write("exit", {{"code", 1}, {"error", parsed.error}});
    return 1;
  }
  for (const std::string& note : parsed.notes) {
    fmt::print(stderr, "fake_codex: {}\n", note);
  }
  json::array argvJson;
  for (int i = 1; i < argc; ++i) {
    argvJson.emplace_back(argv[i]);
  }
  log.write("start", {{"cwd", currentDirectory()}, {"argv", std::move(argvJson)}});

  // SIGTERM is taken by a thread of its own (blocked everywhere else, so every thread created
  // below inherits the mask); a closed stdout is a write error, not a signal.
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, nullptr);

  RpcOut out(1, [&log] { log.write("exit", {{"code", 1}}); });
  FakeCodex fake(parsed.options, out, log);
  std::thread([&fake, term] {
    int sig = 0;
    while (sigwait(&term, &sig) != 0 || sig != SIGTERM) {
    }
    fake.exit(143);
  }).detach();

  StdinLines in(0);
  fake.run(in);
}
