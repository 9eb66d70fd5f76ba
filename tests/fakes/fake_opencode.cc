// fake_opencode: a test fake of `opencode serve`, the OpenCode HTTP server, faithful to
// the server's documented API and to what the real 1.18.33 binary was seen doing
// (tests/fakes/README.md). It plays both OpenCode and its model: replies are scripted, no
// LLM is called. The seat daemon's tests run it where a profile would run `opencode serve`:
//
//   fake_opencode [serve] [--port P] [--hostname H] [fake switches]
//
// Flags come in any order, before or after `serve`; `--flag=value` works too. Real flags:
//   --port P         0 or absent: an ephemeral port.
//   --hostname H     only loopback is served: 127.0.0.1 or localhost (both bind 127.0.0.1);
//                    any other value is refused (message on stderr, exit 2).
//   --cors X, --log-level X, --mdns, --print-logs: accepted and ignored. Another `--flag` or
//   positional argument is ignored with a note on stderr.
// Only once the listening socket is bound does stdout get its one line, flushed:
//   opencode server listening on http://127.0.0.1:<port>
// (the real binary's line; the driver waits for it). Notes go to stderr. A bad value (a port
// out of range, a negative delay) or a failed bind: message on stderr, exit 2 / 1.
//
// Fake switches:
//   --state PATH         a JSON file {"version":1,"sessions":{id:{"info":Session,"messages":
//                        [{"info","parts"},…]}}} read at start and rewritten whole (tmp +
//                        rename) after every change to a session or message, so a restarted
//                        fake serves GET /session/:id and the message lists of an earlier
//                        process. Statuses, queues and runners are not persisted: every
//                        loaded session is idle. Without --state nothing persists.
//   --fake-log PATH      append one JSON object per line (each ONE write() on an O_APPEND
//                        descriptor, so concurrent fakes never interleave):
//                          {"event":"start","pid":N,"argv":[…]}
//                          {"event":"request","pid":N,"method":M,"path":P,"status":S}
//                                (every HTTP request, query stripped; before the response)
//                          {"event":"input","pid":N,"sessionId":S,"messageId":M,"text":X}
//                                (every user message accepted by prompt_async or message,
//                                before the 204 / the blocking wait; "reused":true added for
//                                a messageID that already existed, see below)
//                          {"event":"summarize","pid":N,"sessionId":S,"messageId":U,
//                           "providerID":P,"modelID":M,"auto":B}
//                                (every POST /summarize past its 400/404, U its compaction
//                                user message)
//                          {"event":"turn","pid":N,"sessionId":S,"userMessageId":U,
//                           "assistantId":A|null,"finish":F|null,"error":<name>|null}
//                                (when an answer ends, before its final events go out; a
//                                summary's too, U its compaction user message)
//                          {"event":"exit","pid":N,"code":C}
//   --listen-delay-ms N  sleep N ms before binding (and so before the stdout line).
//   --turn-ms N          default 30: the delay between `busy` and the assistant's text (also
//                        between the steps of the scripted sequences below).
//   --heartbeat-ms N     default 10000: the period of `server.heartbeat` on each /event stream.
//   --summarize-ms N     default 30: the delay between a summary assistant's creation and its
//                        text (or its --summarize-fail error).
//   How every POST /summarize's summary request goes (one of them; the last one given wins):
//   --summarize-fail     it fails like a model's HTTP 400: after busy and the summary assistant
//                        A, session.error {sessionID,error:{name:"APIError",data:{message:
//                        "Bad Request",statusCode:400,isRetryable:false}}}, session.status idle
//                        + session.idle, message.updated A with that error and time.completed
//                        (no finish, no parts), then (the loop's end) idle + session.idle again.
//                        No session.compacted; the call still answers 200 true.
//   --summarize-no-compacted  the success sequence without session.compacted (200 true).
//   --summarize-retry    after busy and A, session.status {type:"retry",attempt:n,message:
//                        "fake forced error 500",next:<epoch ms>} every 200 ms until /abort
//                        (the call stays pending until then, then 200 true).
//   --summarize-hang     after busy and A nothing more until /abort (the call pending).
//
// Content markers (substrings of the user message's text parts, joined with "\n"):
//   FAKE_SLOW_<ms>       the assistant's text comes <ms> after busy instead of --turn-ms.
//   FAKE_HANG            busy and the assistant created, then nothing until /abort.
//   FAKE_CRASH           exit 3 right after the assistant's first message.updated (the open
//                        /event streams get it first, waited for at most 500 ms); never
//                        completed.
//   FAKE_ERROR_FATAL     after the wait: session.error {sessionID,error:{name:"APIError",data:
//                        {message:"fake forced error 400",statusCode:400,isRetryable:false}}},
//                        the assistant completed with that error (no finish), then idle.
//   FAKE_OVERFLOW        a context overflow under `compaction.auto=false`, as 1.18.33 does it:
//                        after the wait session.error {name:"ContextOverflowError",data:
//                        {message,responseBody}}, the processor's idle (session.status idle +
//                        session.idle), the assistant completed with finish "error" and that
//                        error, then the Runner's idle — two idles.
//   FAKE_ERROR_RECOVER   right after busy a session.error {name:"UnknownError",data:{message:
//                        "fake transient error"}}, then the normal answer.
//   FAKE_RETRY_FOREVER   after the assistant is created, session.status {type:"retry",attempt:n,
//                        message:"fake forced error 500",next:<epoch ms>} every 200 ms, forever,
//                        until /abort (the real 5xx trap); /session/status shows the retry.
//   FAKE_RETRY_ONCE      after the wait, one retry status (attempt 1), --turn-ms later busy
//                        again, then the normal answer.
//   FAKE_TOOLS           a first assistant step: step-start, a tool part (tool "echo_echo",
//                        state pending → running → completed, output "echo:<text>"),
//                        step-finish, the assistant completed with finish "tool-calls"; then a
//                        SECOND assistant with the same parentID that answers with finish "stop".
//   FAKE_NO_ASSISTANT    busy, --turn-ms later session.error {name:"UnknownError",data:{message:
//                        "fake runner failure"}}, then idle + session.idle: no assistant at all.
//   FAKE_IDLE_EARLY      session.status idle + session.idle BEFORE busy (an idle seen before
//                        the Runner's admission), then the normal answer.
//   FAKE_SILENT          the 204 and the user message's events, then nothing at all: no busy
//                        (/session/status stays empty), no answer. /abort still ends it (true,
//                        session.error MessageAbortedError, idle), and prompts queued behind it
//                        wait until then.
//   FAKE_DROP_SSE        every open /event stream is closed (abruptly, no last chunk) right after
//                        the assistant's first message.updated; the answer still completes, as
//                        the message list shows.
//   FAKE_PRUNE           100 ms after the session goes idle: a message.part.updated for the
//                        newest tool part of an EARLIER answer of that session, with
//                        state.time.compacted set (a background compaction.prune frame), also
//                        stored. No earlier tool part: nothing is sent (note on stderr).
//   FAKE_AUTO_COMPACT    after busy, an automatic compaction INSTEAD of the answer: a new user
//                        message (parts [{type:"compaction",auto:true}]) with its events, an
//                        assistant {summary:true, mode and agent "compaction", parentID = that
//                        compaction user} answering "fake-summary-N: <text>" with finish "stop",
//                        then session.compacted {sessionID}, then idle. The prompting user
//                        message gets no assistant of its own; its `turn` log line (and the
//                        reply of a blocking /message) names the summary assistant.
//
// HTTP/1.1 on 127.0.0.1, a thread per connection; keep-alive unless the client sends
// `Connection: close` (or speaks HTTP/1.0). Request bodies need Content-Length (a chunked one
// gets 411). JSON replies carry Content-Length. Every route may carry `?directory=…` (ignored).
//   POST /session {title?,parentID?} (empty body allowed) → 200 Session {id:"ses_…",version,
//        projectID,directory,title,time:{created,updated}}; session.created and
//        session.updated {info}.
//   GET  /session → [Session…];  GET /session/:id → Session, or 404 {"name":"NotFoundError",
//        "data":{"message":"Session not found: <id>"}}.
//   GET  /session/status → {} plus only busy or retry sessions {id: status}.
//   GET  /session/:id/message[?limit=N] → [{info,parts},…] in id order (the last N);
//   GET  /session/:id/message/:mid → {info,parts}, or 404 "Message not found: <mid>".
//   POST /session/:id/prompt_async PromptInput {messageID?, parts:[{type:"text",text}…],
//        noReply?, …others ignored} → 204 at once. 400 {"name":"BadRequest","data":{"message":
//        …}} for malformed JSON, a body that is not an object, missing or bad parts, and a
//        messageID that is not a string starting with "msg" ("Expected a string starting with
//        \"msg\", got <json>"); 404 for an unknown session. A caller messageID is the user
//        message's id verbatim, else one is minted. noReply:true stores it and runs nothing.
//        A messageID that already exists (in any session: the real bug seen on 1.18.33): 204,
//        the new parts appended to the OLD message where it lives, no event, nothing runs;
//        logged as input with "reused":true.
//        While the session is busy the user message is stored and emitted at once and answered
//        after the current one (its own assistant), with no idle in between.
//   POST /session/:id/message → same input; blocks until that message is answered, then 200
//        the (last) assistant {info,parts} (with noReply: the user message); 500 {"name":
//        "UnknownError",…} when it ended with no assistant (FAKE_NO_ASSISTANT, FAKE_SILENT
//        aborted, or dropped from the queue by an abort) or the messageID was reused.
//   POST /session/:id/abort → true, or false when nothing runs. It ends the current answer:
//        session.error {sessionID,error:{name:"MessageAbortedError",data:{message:"Aborted"}}},
//        (with an assistant: session.status idle + session.idle, the processor's) the
//        assistant (if any) message.updated with that error and time.completed,
//        session.status idle, session.idle. Prompts queued behind it are dropped (stored,
//        never answered). Aborting a summary (as real): no session.error, the summary
//        assistant completed with no error and no finish, idle; waiting summarize calls
//        answer 200 true.
//   POST /session/:id/summarize {providerID,modelID,auto?} → see "A summarize" below. 400
//        {"name":"BadRequest","data":{"message":"Missing key\n  at [\"providerID\"]","kind":
//        "Payload"}} for a missing (or non-string) providerID / modelID (or a non-boolean
//        auto); malformed JSON or a non-object as for prompt_async; 404 for an unknown
//        session.
//   GET  /event → SSE (Transfer-Encoding: chunked, text/event-stream): `data: {"type":
//        "server.connected","properties":{}}` first, then every event as one `data: <json>\n\n`
//        and `server.heartbeat` every --heartbeat-ms. Broadcast to every subscriber; no replay
//        for a late or reconnecting one.
//   GET  /doc → {"openapi":"3.1.0","info":…,"paths":{…}} naming the routes above.
//   Anything else → 404 NotFoundError.
//
// One prompt's events (the real 1.18.33 order), all {"type","properties"}: message.updated
// (user info {id,sessionID,role:"user",time:{created},agent:"build",model:{providerID:"fake",
// modelID:"fake-model"}}), message.part.updated (its text part {id,sessionID,messageID,type:
// "text",text}), session.status busy, message.updated (assistant {id,sessionID,role:"assistant",
// parentID,time:{created},modelID,providerID,mode,agent,path,cost,tokens}, no finish),
// message.part.updated step-start, text "", message.part.delta {sessionID,messageID,partID,
// field:"text",delta} (16-character chunks), text full, step-finish, message.updated assistant
// with finish:"stop" and time.completed (twice, as real), session.status busy, then the next
// queued prompt or session.status idle and session.idle. The reply is "fake-reply-N: <text>"
// (N counts the process's replies from 1). Ids follow opencode's id.ts: prefix "_" + 12 hex
// digits of (epoch ms * 4096 + a per-ms counter, low 6 bytes) + 14 random base62 characters,
// ascending within the process; prefixes ses, msg, prt. The fake has one model: providerID
// "fake", modelID "fake-model" (every user message's model, every assistant's ids).
//
// A summarize (the real 1.18.33, probed offline): at once message.updated user U (a minted id,
// no parentID, agent "build", model {providerID,modelID} as sent) and message.part.updated
// {type:"compaction",auto (default false),messageID:U}; U is queued like a prompt (behind a
// running answer, if any). Its turn: session.status busy, message.updated assistant A
// {parentID:U,summary:true,mode:"compaction",agent:"compaction",providerID,modelID} (no
// time.completed), busy again, --summarize-ms later step-start, text "" + deltas + text
// "fake-summary-N: summary of <messages before U> messages", step-finish, message.updated A
// with finish:"stop" and time.completed (twice), session.compacted {sessionID}, busy. Then
// prompts queued meanwhile (prompt_async stays 204 and queues) are answered, with no idle in
// between. When the queue is empty the call answers 200 `true` and only ~20 ms later come
// session.status idle and session.idle (the real client sees the HTTP reply first). U and A
// stay in the message list. A providerID/modelID other than the fake's: 500 {"name":
// "UnknownError","data":{"message":"Unexpected server error. Check server logs for details.",
// "ref":"err_…"}} at once, and still U + its part, busy, session.error {sessionID,error:{name:
// "UnknownError",data:{message:"Model not found: <p>/<m>."}}}, idle, session.idle; no
// assistant, U stays. Not modelled: the real follow-up session.updated / session.diff / U
// updated with summary {diffs:[]}, and the trap of a prompt swallowed after a failed
// compaction.
//
// SIGTERM: log the exit, exit 143 at once.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <boost/json.hpp>
#include <fcntl.h>
#include <fmt/core.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fake_opencode_args.h"
#include "loopback_http.h"
#include "stream_json.h"

namespace {

namespace json = boost::json;
using namespace shoal::fakes;  // loopback_http.h, fake_opencode_args.h
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::string_view kVersion = "1.18.33-fake";
constexpr int kRetryEveryMs = 200;
constexpr int kPruneAfterMs = 100;
constexpr int kSummarizeIdleLagMs = 20;
constexpr milliseconds kCrashFlush{500};
// The one model the fake has: every user message's model and every assistant's ids.
constexpr std::string_view kProviderId = "fake";
constexpr std::string_view kModelId = "fake-model";

// The --fake-log file: one JSON object per line, each written with one write().
class EventLog {
 public:
  explicit EventLog(const std::string& path) : pid_(::getpid()) {
    if (path.empty()) return;
    fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fmt::print(stderr, "fake_opencode: cannot open --fake-log {}\n", path);
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

// --- small helpers ------------------------------------------------------------------------

int64_t epochMs() {
  return std::chrono::duration_cast<milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string currentDirectory() {
  std::vector<char> buf(4096);
  if (::getcwd(buf.data(), buf.size()) == nullptr) return "";
  return buf.data();
}

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

std::string stringOr(const json::object& o, std::string_view key, std::string fallback = "") {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::move(fallback);
}

// opencode's ascending ids (packages/opencode/src/id/id.ts): prefix "_" + 12 hex digits of the
// low 6 bytes of (epoch ms * 4096 + per-ms counter) + 14 random base62 characters. Strictly
// ascending within the process even if the clock steps back.
class IdMint {
 public:
  std::string next(std::string_view prefix) {
    static constexpr std::string_view kBase62 =
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    std::lock_guard lock(mu_);
    const int64_t ms = epochMs();
    if (ms != lastMs_) {
      lastMs_ = ms;
      counter_ = 0;
    }
    ++counter_;
    uint64_t value = (static_cast<uint64_t>(ms) * 0x1000 + counter_) & 0xFFFF'FFFF'FFFFULL;
    if (value <= last_) value = last_ + 1;
    last_ = value;
    std::string id = fmt::format("{}_{:012x}", prefix, value);
    std::uniform_int_distribution<size_t> pick(0, kBase62.size() - 1);
    for (int i = 0; i < 14; ++i) {
      id += kBase62[pick(random_)];
    }
    return id;
  }

 private:
  std::mutex mu_;
  int64_t lastMs_ = 0;                              // guarded by mu_
  uint64_t counter_ = 0;                            // guarded by mu_
  uint64_t last_ = 0;                               // guarded by mu_
  std::mt19937_64 random_{std::random_device{}()};  // guarded by mu_
};

// --- replies ------------------------------------------------------------------------------

HttpResponse jsonReply(int status, const json::value& body) {
  return {status, json::serialize(body)};
}

// The named-error body OpenCode answers with: {"name":N,"data":{"message":M}}.
HttpResponse namedError(int status, std::string_view name, const std::string& message) {
  return jsonReply(status, json::object{{"name", name}, {"data", {{"message", message}}}});
}

// --- sessions and the event stream --------------------------------------------------------

// One GET /event stream. Shared by the broadcaster's list and the connection thread that
// writes it; whichever lets go last frees it (hence shared_ptr).
struct Subscriber {
  std::mutex mu;
  std::condition_variable cv;  // queue grew, or a write finished
  // SSE frames to write; nullopt: close the stream there (FAKE_DROP_SSE). Guarded by mu.
  std::deque<std::optional<std::string>> queue;
  bool writing = false;  // a frame is being written (guarded by mu)
  bool dead = false;     // closed, or a write failed (guarded by mu)
};

struct Message {
  json::object info;
  std::vector<json::object> parts;  // in creation order
};

json::object messageJson(const Message& m) {
  json::array parts;
  for (const json::object& p : m.parts) {
    parts.push_back(p);
  }
  return {{"info", m.info}, {"parts", std::move(parts)}};
}

struct Session {
  json::object info;
  std::map<std::string, Message> messages;  // by id, so in id order
  // Not persisted:
  json::object status{{"type", "idle"}};  // idle | busy | retry{attempt,message,next}
  bool running = false;                   // a runner thread owns the session's answers
  uint64_t generation = 0;                // bumped by abort: older runners stop
  std::deque<std::string> queue;          // user message ids waiting for an answer
  std::optional<std::string> currentUser;
  std::optional<std::string> currentAssistant;
  // User message id → the assistant that ended its answer (nullopt: ended without one).
  std::map<std::string, std::optional<std::string>> answered;
  // The compaction user message of each waiting POST /summarize → its loop has ended.
  std::map<std::string, bool> summaries;
};

// A compaction user message (parts [{type:"compaction",auto}]): POST /summarize's or
// FAKE_AUTO_COMPACT's.
bool isCompaction(const Message& m) {
  return !m.parts.empty() && stringOr(m.parts.front(), "type") == "compaction";
}

// A parsed PromptInput.
struct PromptInput {
  std::optional<std::string> messageId;
  json::array parts;  // as sent
  std::string text;   // the text parts joined with "\n"
  bool noReply = false;
};

// The PromptInput in `body`, or the 400 to answer.
std::optional<HttpResponse> parsePrompt(const std::string& body, PromptInput& out) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec) return namedError(400, "BadRequest", "Malformed JSON in request body");
  if (!v.is_object()) {
    return namedError(400, "BadRequest", "Expected an object, got " + json::serialize(v));
  }
  const json::object& o = v.as_object();
  if (const json::value* id = o.if_contains("messageID")) {
    if (!id->is_string() || !id->as_string().starts_with("msg")) {
      return namedError(400, "BadRequest",
                        "Expected a string starting with \"msg\", got " + json::serialize(*id));
    }
    out.messageId = std::string(id->as_string());
  }
  const json::value* parts = o.if_contains("parts");
  if (parts == nullptr || !parts->is_array()) {
    return namedError(400, "BadRequest",
                      "Expected an array at [\"parts\"], got " +
                          (parts == nullptr ? std::string("undefined") : json::serialize(*parts)));
  }
  for (const json::value& part : parts->as_array()) {
    const json::object* p = part.if_object();
    if (p == nullptr || stringOr(*p, "type").empty()) {
      return namedError(400, "BadRequest",
                        "Expected a part with a string \"type\", got " + json::serialize(part));
    }
    if (stringOr(*p, "type") == "text") {
      if (!out.text.empty()) out.text += "\n";
      out.text += stringOr(*p, "text");
    }
    out.parts.push_back(*p);
  }
  if (const json::value* n = o.if_contains("noReply"); n != nullptr && n->is_bool()) {
    out.noReply = n->as_bool();
  }
  return std::nullopt;
}

// A parsed POST /session/:id/summarize body.
struct SummarizeInput {
  std::string providerId;
  std::string modelId;
  bool autoCompact = false;
};

// The summarize body in `body`, or the 400 to answer (the real one's Payload errors).
std::optional<HttpResponse> parseSummarize(const std::string& body, SummarizeInput& out) {
  auto payload = [](const std::string& message) {
    return jsonReply(400, json::object{{"name", "BadRequest"},
                                       {"data", {{"message", message}, {"kind", "Payload"}}}});
  };
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec) return namedError(400, "BadRequest", "Malformed JSON in request body");
  if (!v.is_object()) {
    return namedError(400, "BadRequest", "Expected an object, got " + json::serialize(v));
  }
  const json::object& o = v.as_object();
  for (std::string_view key : {"providerID", "modelID"}) {
    const json::value* field = o.if_contains(key);
    const std::string at = fmt::format("\n  at [\"{}\"]", key);
    if (field == nullptr) return payload("Missing key" + at);
    if (!field->is_string()) {
      return payload("Expected string, got " + json::serialize(*field) + at);
    }
    (key == "providerID" ? out.providerId : out.modelId) = std::string(field->as_string());
  }
  if (const json::value* a = o.if_contains("auto")) {
    if (!a->is_bool()) {
      return payload("Expected boolean, got " + json::serialize(*a) + "\n  at [\"auto\"]");
    }
    out.autoCompact = a->as_bool();
  }
  return std::nullopt;
}

json::object zeroTokens() {
  return {{"input", 0},
          {"output", 0},
          {"reasoning", 0},
          {"cache", json::object{{"read", 0}, {"write", 0}}}};
}

json::object errorJson(std::string_view name, json::object data) {
  return {{"name", name}, {"data", std::move(data)}};
}

class FakeOpenCode {
 public:
  FakeOpenCode(const Options& options, const EventLog& log)
      : options_(options), log_(log), directory_(currentDirectory()) {
    load();
  }

  // Serves one accepted connection until it closes; runs on the connection's own thread.
  void serveConnection(int fd) {
    RequestReader reader(fd);
    for (;;) {
      HttpRequest request;
      int badStatus = 400;
      RequestReader::Outcome outcome = reader.next(request, badStatus);
      if (outcome == RequestReader::Outcome::kClosed) break;
      if (outcome == RequestReader::Outcome::kBad) {
        log_.write("request",
                   {{"method", request.method}, {"path", request.path}, {"status", badStatus}});
        writeResponse(fd, namedError(badStatus, "BadRequest", "Malformed HTTP request"), false);
        break;
      }
      if (request.method == "GET" && request.path == "/event") {
        serveEvents(fd, request);
        break;
      }
      HttpResponse response = handle(request);
      log_.write("request",
                 {{"method", request.method}, {"path", request.path}, {"status", response.status}});
      if (!writeResponse(fd, response, request.keepAlive) || !request.keepAlive) break;
    }
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
  }

  [[noreturn]] void exit(int code) const {
    log_.write("exit", {{"code", code}});
    ::_exit(code);
  }

 private:
  // --- routes ------------------------------------------------------------------------------

  HttpResponse handle(const HttpRequest& r) {
    const std::vector<std::string> seg = splitPath(r.path);
    const bool get = r.method == "GET";
    const bool post = r.method == "POST";
    if (seg.size() == 1 && seg[0] == "doc" && get) return doc();
    if (seg.empty() || seg[0] != "session") return notFound(r);
    if (seg.size() == 1 && post) return createSession(r.body);
    if (seg.size() == 1 && get) return listSessions();
    if (seg.size() == 2 && get) return seg[1] == "status" ? statuses() : getSession(seg[1]);
    if (seg.size() == 3 && seg[2] == "message" && get) return listMessages(seg[1], r);
    if (seg.size() == 3 && seg[2] == "message" && post) return promptSync(seg[1], r.body);
    if (seg.size() == 3 && seg[2] == "prompt_async" && post) return promptAsync(seg[1], r.body);
    if (seg.size() == 3 && seg[2] == "abort" && post) return abort(seg[1]);
    if (seg.size() == 3 && seg[2] == "summarize" && post) return summarize(seg[1], r.body);
    if (seg.size() == 4 && seg[2] == "message" && get) return getMessage(seg[1], seg[3]);
    return notFound(r);
  }

  static HttpResponse notFound(const HttpRequest& r) {
    return namedError(404, "NotFoundError", "Not found: " + r.method + " " + r.path);
  }

  static HttpResponse sessionNotFound(const std::string& id) {
    return namedError(404, "NotFoundError", "Session not found: " + id);
  }

  static HttpResponse doc() {
    json::object paths;
    for (std::string_view p :
         {"/doc", "/event", "/session", "/session/status", "/session/{sessionID}",
          "/session/{sessionID}/message", "/session/{sessionID}/message/{messageID}",
          "/session/{sessionID}/prompt_async", "/session/{sessionID}/abort",
          "/session/{sessionID}/summarize"}) {
      paths[p] = json::object{};
    }
    return jsonReply(200, json::object{{"openapi", "3.1.0"},
                                       {"info", {{"title", "opencode"}, {"version", kVersion}}},
                                       {"paths", std::move(paths)}});
  }

  HttpResponse createSession(const std::string& body) {
    json::object input;
    if (body.find_first_not_of(" \t\r\n") != std::string::npos) {
      boost::system::error_code ec;
      json::value v = json::parse(body, ec);
      if (ec) return namedError(400, "BadRequest", "Malformed JSON in request body");
      if (!v.is_object()) {
        return namedError(400, "BadRequest", "Expected an object, got " + json::serialize(v));
      }
      input = v.as_object();
    }
    const int64_t now = epochMs();
    const std::string id = ids_.next("ses");
    json::object info{
        {"id", id},
        {"version", kVersion},
        {"projectID", "global"},
        {"directory", directory_},
        {"title", stringOr(input, "title", "New session - " + shoal::demo::isoTimestampNow())},
        {"time", {{"created", now}, {"updated", now}}}};
    if (std::string parent = stringOr(input, "parentID"); !parent.empty()) {
      info["parentID"] = parent;
    }
    std::lock_guard lock(mu_);
    sessions_[id].info = info;
    save();
    emit("session.created", {{"info", info}});
    emit("session.updated", {{"info", info}});
    return jsonReply(200, info);
  }

  HttpResponse listSessions() {
    std::lock_guard lock(mu_);
    json::array out;
    for (const auto& [id, s] : sessions_) {
      out.push_back(s.info);
    }
    return jsonReply(200, out);
  }

  HttpResponse getSession(const std::string& id) {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return sessionNotFound(id);
    return jsonReply(200, it->second.info);
  }

  HttpResponse statuses() {
    std::lock_guard lock(mu_);
    json::object out;
    for (const auto& [id, s] : sessions_) {
      if (stringOr(s.status, "type") != "idle") out[id] = s.status;
    }
    return jsonReply(200, out);
  }

  HttpResponse listMessages(const std::string& id, const HttpRequest& r) {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return sessionNotFound(id);
    size_t skip = 0;
    const auto& messages = it->second.messages;
    if (std::optional<int> limit = parseInt(r.param("limit"), 0, 1'000'000)) {
      const auto keep = static_cast<size_t>(*limit);
      skip = messages.size() > keep ? messages.size() - keep : 0;
    }
    json::array out;
    for (const auto& [mid, m] : messages) {
      if (skip > 0) {
        --skip;
        continue;
      }
      out.push_back(messageJson(m));
    }
    return jsonReply(200, out);
  }

  HttpResponse getMessage(const std::string& id, const std::string& messageId) {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return sessionNotFound(id);
    auto m = it->second.messages.find(messageId);
    if (m == it->second.messages.end()) {
      return namedError(404, "NotFoundError", "Message not found: " + messageId);
    }
    return jsonReply(200, messageJson(m->second));
  }

  HttpResponse promptAsync(const std::string& id, const std::string& body) {
    PromptInput input;
    if (auto bad = parsePrompt(body, input)) return *bad;
    std::lock_guard lock(mu_);
    std::optional<HttpResponse> refused;
    accept(id, input, refused);
    return refused ? *refused : HttpResponse{204, ""};
  }

  HttpResponse promptSync(const std::string& id, const std::string& body) {
    PromptInput input;
    if (auto bad = parsePrompt(body, input)) return *bad;
    std::unique_lock lock(mu_);
    std::optional<HttpResponse> refused;
    std::optional<std::string> userId = accept(id, input, refused);
    if (refused) return *refused;
    Session& s = sessions_.at(id);
    if (!userId) {  // a reused id: nothing runs
      return namedError(500, "UnknownError", "message " + *input.messageId + " already exists");
    }
    if (input.noReply) return jsonReply(200, messageJson(s.messages.at(*userId)));
    changed_.wait(lock, [&] { return s.answered.contains(*userId); });
    const std::optional<std::string>& assistant = s.answered.at(*userId);
    if (!assistant) {
      return namedError(500, "UnknownError", "no assistant message answered " + *userId);
    }
    return jsonReply(200, messageJson(s.messages.at(*assistant)));
  }

  HttpResponse abort(const std::string& id) {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return sessionNotFound(id);
    Session& s = it->second;
    if (!s.running) return jsonReply(200, false);
    ++s.generation;  // the runner, waiting, stops when it wakes
    s.running = false;
    // An aborted summary (real, §6 of the summarize probe): no session.error, the summary
    // assistant completed with no error and no finish.
    const bool summary = s.currentUser && isCompaction(s.messages.at(*s.currentUser));
    json::value error = nullptr;
    if (!summary) {
      // As 1.18.33 with the model call in flight: the error, the processor's idle, then the
      // aborted assistant and the Runner's idle.
      error = errorJson("MessageAbortedError", {{"message", "Aborted"}});
      emit("session.error", {{"sessionID", id}, {"error", error}});
      if (s.currentAssistant) setStatus(s, "idle");
    }
    if (s.currentUser) {
      finishAnswer(s, *s.currentUser, s.currentAssistant, nullptr, error);
    }
    for (const std::string& dropped : s.queue) {
      s.answered[dropped] = std::nullopt;
    }
    s.queue.clear();
    releaseSummaries(s);
    changed_.notify_all();
    setStatus(s, "idle");
    return jsonReply(200, true);
  }

  // The compaction user message and its part at once, queued like a prompt; a model other
  // than the fake's → 500 at once (the runner still plays the failure). Otherwise the reply
  // waits for the session's loop to end: after session.compacted and any prompt queued
  // behind, before the final idle; or for an abort.
  HttpResponse summarize(const std::string& id, const std::string& body) {
    SummarizeInput input;
    if (auto bad = parseSummarize(body, input)) return *bad;
    std::unique_lock lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return sessionNotFound(id);
    Session& s = it->second;
    const std::string userId =
        compactionUser(s, input.autoCompact, input.providerId, input.modelId);
    log_.write("summarize", {{"sessionId", id},
                             {"messageId", userId},
                             {"providerID", input.providerId},
                             {"modelID", input.modelId},
                             {"auto", input.autoCompact}});
    const bool known = input.providerId == kProviderId && input.modelId == kModelId;
    if (known) s.summaries[userId] = false;
    enqueue(s, userId);
    if (!known) {
      return jsonReply(
          500,
          json::object{{"name", "UnknownError"},
                       {"data",
                        {{"message", "Unexpected server error. Check server logs for details."},
                         {"ref", "err_" + shoal::demo::randomHex(8)}}}});
    }
    changed_.wait(lock, [&] { return s.summaries.at(userId); });
    s.summaries.erase(userId);
    return jsonReply(200, true);
  }

  // --- accepting a prompt (REQUIRES mu_) ----------------------------------------------------

  // Stores and emits the user message of `input` and queues it for an answer (starting a
  // runner if none runs). Returns its id; nullopt with `refused` set (404), or nullopt alone
  // for a reused messageID (appended where the old message lives; nothing runs).
  std::optional<std::string> accept(const std::string& sessionId, const PromptInput& input,
                                    std::optional<HttpResponse>& refused) {
    auto it = sessions_.find(sessionId);
    if (it == sessions_.end()) {
      refused = sessionNotFound(sessionId);
      return std::nullopt;
    }
    Session& s = it->second;
    if (input.messageId) {
      if (auto owner = messageSession_.find(*input.messageId); owner != messageSession_.end()) {
        // The real bug (seen on 1.18.33): the parts land on the old message.
        Message& old = sessions_.at(owner->second).messages.at(*input.messageId);
        for (const json::value& part : input.parts) {
          old.parts.push_back(newPart(owner->second, *input.messageId, part.as_object()));
        }
        log_.write("input", {{"sessionId", sessionId},
                             {"messageId", *input.messageId},
                             {"text", input.text},
                             {"reused", true}});
        save();
        return std::nullopt;
      }
    }
    const std::string id = input.messageId ? *input.messageId : ids_.next("msg");
    Message m;
    m.info = {{"id", id},         {"sessionID", sessionId},
              {"role", "user"},   {"time", {{"created", epochMs()}}},
              {"agent", "build"}, {"model", {{"providerID", kProviderId}, {"modelID", kModelId}}}};
    for (const json::value& part : input.parts) {
      m.parts.push_back(newPart(sessionId, id, part.as_object()));
    }
    log_.write("input", {{"sessionId", sessionId}, {"messageId", id}, {"text", input.text}});
    if (json::value* time = s.info.if_contains("time"); time != nullptr && time->is_object()) {
      time->as_object()["updated"] = epochMs();
    }
    s.messages[id] = m;
    messageSession_[id] = sessionId;
    save();
    emit("message.updated", {{"info", m.info}});
    for (const json::object& part : m.parts) {
      emit("message.part.updated", {{"part", part}});
    }
    if (!input.noReply) enqueue(s, id);
    return id;
  }

  // Queues user message `userId` for an answer, starting a runner if none runs.
  void enqueue(Session& s, const std::string& userId) {
    s.queue.push_back(userId);
    if (!s.running) {
      s.running = true;
      std::thread([this, sessionId = stringOr(s.info, "id"), gen = s.generation] {
        run(sessionId, gen);
      }).detach();
    }
  }

  // Stores and emits a compaction user message (parts [{type:"compaction",auto}]) asking for
  // `providerId`/`modelId`; returns its id.
  std::string compactionUser(Session& s, bool autoCompact, std::string_view providerId,
                             std::string_view modelId) {
    const std::string sessionId = stringOr(s.info, "id");
    const std::string id = ids_.next("msg");
    Message m;
    m.info = {{"id", id},         {"sessionID", sessionId},
              {"role", "user"},   {"time", {{"created", epochMs()}}},
              {"agent", "build"}, {"model", {{"providerID", providerId}, {"modelID", modelId}}}};
    m.parts.push_back(
        newPart(sessionId, id, json::object{{"type", "compaction"}, {"auto", autoCompact}}));
    s.messages[id] = m;
    messageSession_[id] = sessionId;
    save();
    emit("message.updated", {{"info", m.info}});
    emit("message.part.updated", {{"part", m.parts.front()}});
    return id;
  }

  // Marks every waiting summarize call's loop ended and wakes them; true if there was one.
  bool releaseSummaries(Session& s) {
    bool any = false;
    for (auto& [userId, ended] : s.summaries) {
      any = any || !ended;
      ended = true;
    }
    if (any) changed_.notify_all();
    return any;
  }

  // A stored part: `part` as sent with a fresh id and the message's ids.
  json::object newPart(const std::string& sessionId, const std::string& messageId,
                       const json::object& part) {
    json::object out = part;
    out["id"] = ids_.next("prt");
    out["sessionID"] = sessionId;
    out["messageID"] = messageId;
    return out;
  }

  // --- the runner: one thread per busy period of a session ---------------------------------

  void run(const std::string& sessionId, uint64_t gen) {
    std::unique_lock lock(mu_);
    Session& s = sessions_.at(sessionId);
    std::optional<std::pair<std::string, std::string>> prune;  // message id, part id
    while (s.generation == gen) {
      if (s.queue.empty()) {
        if (releaseSummaries(s)) {  // their replies go out first, the idle lags behind
          if (!wait(lock, s, gen, kSummarizeIdleLagMs)) return;
          continue;  // a prompt may have come meanwhile
        }
        s.running = false;
        setStatus(s, "idle");
        break;
      }
      const std::string userId = s.queue.front();
      s.queue.pop_front();
      s.currentUser = userId;
      s.currentAssistant.reset();
      const Message& user = s.messages.at(userId);
      const std::string text = textOf(user);
      const bool ok = isCompaction(user) ? summaryAnswer(lock, s, gen, userId)
                                         : answer(lock, s, gen, userId, text);
      if (!ok) return;  // aborted: abort() ended it
      if (has(text, "FAKE_PRUNE")) prune = olderToolPart(s, userId);
    }
    if (!prune) return;
    lock.unlock();
    std::this_thread::sleep_for(milliseconds(kPruneAfterMs));
    lock.lock();
    compactPart(s, prune->first, prune->second);
  }

  static std::string textOf(const Message& m) {
    std::string text;
    for (const json::object& p : m.parts) {
      if (stringOr(p, "type") != "text") continue;
      if (!text.empty()) text += "\n";
      text += stringOr(p, "text");
    }
    return text;
  }

  // Waits `ms` with mu_ released; false when an abort came (the answer must stop).
  bool wait(std::unique_lock<std::mutex>& lock, const Session& s, uint64_t gen, int ms) {
    return !changed_.wait_for(lock, milliseconds(ms), [&] { return s.generation != gen; });
  }

  // Waits for an abort; always false.
  bool waitForAbort(std::unique_lock<std::mutex>& lock, const Session& s, uint64_t gen) {
    changed_.wait(lock, [&] { return s.generation != gen; });
    return false;
  }

  // One user message's answer, as scripted by its markers. False when an abort ended it.
  bool answer(std::unique_lock<std::mutex>& lock, Session& s, uint64_t gen,
              const std::string& userId, const std::string& text) {
    const std::string sessionId = stringOr(s.info, "id");
    if (has(text, "FAKE_SILENT")) return waitForAbort(lock, s, gen);
    if (has(text, "FAKE_IDLE_EARLY")) setStatus(s, "idle");
    setStatus(s, "busy");
    if (has(text, "FAKE_NO_ASSISTANT")) {
      if (!wait(lock, s, gen, options_.turnMs)) return false;
      json::object error = errorJson("UnknownError", {{"message", "fake runner failure"}});
      emit("session.error", {{"sessionID", sessionId}, {"error", error}});
      finishAnswer(s, userId, std::nullopt, nullptr, error);
      return true;
    }
    if (has(text, "FAKE_ERROR_RECOVER")) {
      emit("session.error",
           {{"sessionID", sessionId},
            {"error", errorJson("UnknownError", {{"message", "fake transient error"}})}});
    }
    if (has(text, "FAKE_AUTO_COMPACT")) return compaction(lock, s, gen, userId, text);

    std::string assistant = newAssistant(s, userId);
    if (has(text, "FAKE_DROP_SSE")) dropSubscribers();
    if (has(text, "FAKE_CRASH")) {
      flushSubscribers(Clock::now() + kCrashFlush);
      exit(3);
    }
    if (has(text, "FAKE_HANG")) return waitForAbort(lock, s, gen);
    if (has(text, "FAKE_RETRY_FOREVER")) {
      for (int attempt = 1;; ++attempt) {
        setRetry(s, attempt, kRetryEveryMs);
        if (!wait(lock, s, gen, kRetryEveryMs)) return false;
      }
    }
    if (!wait(lock, s, gen, msAfter(text, "FAKE_SLOW_").value_or(options_.turnMs))) return false;
    if (has(text, "FAKE_RETRY_ONCE")) {
      setRetry(s, 1, options_.turnMs);
      if (!wait(lock, s, gen, options_.turnMs)) return false;
      setStatus(s, "busy");
    }
    if (has(text, "FAKE_ERROR_FATAL")) {
      json::object error = errorJson(
          "APIError",
          {{"message", "fake forced error 400"}, {"statusCode", 400}, {"isRetryable", false}});
      emit("session.error", {{"sessionID", sessionId}, {"error", error}});
      finishAnswer(s, userId, assistant, nullptr, error);
      return true;
    }
    if (has(text, "FAKE_OVERFLOW")) {
      json::object error = errorJson(
          "ContextOverflowError",
          {{"message",
            "This model's maximum context length is 1000 tokens. However, your messages resulted "
            "in 5000 tokens."},
           {"responseBody", R"({"error":{"code":"context_length_exceeded"}})"}});
      emit("session.error", {{"sessionID", sessionId}, {"error", error}});
      setStatus(s, "idle");  // the processor halts; the Runner's idle follows the cleanup
      finishAnswer(s, userId, assistant, "error", error);
      return true;
    }
    if (has(text, "FAKE_TOOLS")) {
      toolStep(s, assistant, text);
      completeAssistant(s, assistant, "tool-calls", nullptr);
      emitMessage(s, assistant);
      assistant = newAssistant(s, userId);
      if (!wait(lock, s, gen, options_.turnMs)) return false;
    }
    textStep(s, assistant, fmt::format("fake-reply-{}: {}", ++replies_, text));
    finishAnswer(s, userId, assistant, "stop", nullptr);
    setStatus(s, "busy");
    return true;
  }

  // FAKE_AUTO_COMPACT: a compaction user message, a summary assistant answering it,
  // session.compacted.
  bool compaction(std::unique_lock<std::mutex>& lock, Session& s, uint64_t gen,
                  const std::string& userId, const std::string& text) {
    const std::string sessionId = stringOr(s.info, "id");
    const std::string compactId = compactionUser(s, true, kProviderId, kModelId);
    const std::string summary = newAssistant(s, compactId, true);
    if (!wait(lock, s, gen, options_.turnMs)) return false;
    textStep(s, summary, fmt::format("fake-summary-{}: {}", ++replies_, text));
    finishAnswer(s, userId, summary, "stop", nullptr);
    emit("session.compacted", {{"sessionID", sessionId}});
    return true;
  }

  // A POST /summarize's compaction user message `userId`: busy, then the summary assistant
  // (summary:true, mode and agent "compaction") shaped by --summarize-*, or for a model the
  // fake has not, session.error "Model not found" and no assistant. False when an abort ended
  // it.
  bool summaryAnswer(std::unique_lock<std::mutex>& lock, Session& s, uint64_t gen,
                     const std::string& userId) {
    const std::string sessionId = stringOr(s.info, "id");
    const json::object& model = s.messages.at(userId).info.at("model").as_object();
    const std::string providerId = stringOr(model, "providerID");
    const std::string modelId = stringOr(model, "modelID");
    setStatus(s, "busy");
    if (providerId != kProviderId || modelId != kModelId) {
      json::object error =
          errorJson("UnknownError",
                    {{"message", fmt::format("Model not found: {}/{}.", providerId, modelId)}});
      emit("session.error", {{"sessionID", sessionId}, {"error", error}});
      finishAnswer(s, userId, std::nullopt, nullptr, error);
      return true;
    }
    const auto earlier = std::distance(s.messages.begin(), s.messages.find(userId));
    const std::string assistant = newAssistant(s, userId, true);
    setStatus(s, "busy");
    const SummarizeMode mode = options_.summarize;
    if (mode == SummarizeMode::kHang) return waitForAbort(lock, s, gen);
    if (mode == SummarizeMode::kRetry) {
      for (int attempt = 1;; ++attempt) {
        setRetry(s, attempt, kRetryEveryMs);
        if (!wait(lock, s, gen, kRetryEveryMs)) return false;
      }
    }
    if (!wait(lock, s, gen, options_.summarizeMs)) return false;
    if (mode == SummarizeMode::kFail) {  // the real order: error, idle, the assistant, idle
      json::object error = errorJson(
          "APIError", {{"message", "Bad Request"}, {"statusCode", 400}, {"isRetryable", false}});
      emit("session.error", {{"sessionID", sessionId}, {"error", error}});
      setStatus(s, "idle");
      finishAnswer(s, userId, assistant, nullptr, error);
      return true;
    }
    textStep(s, assistant,
             fmt::format("fake-summary-{}: summary of {} messages", ++replies_, earlier));
    finishAnswer(s, userId, assistant, "stop", nullptr);
    if (mode != SummarizeMode::kNoCompacted) {
      emit("session.compacted", {{"sessionID", sessionId}});
    }
    setStatus(s, "busy");
    return true;
  }

  // Creates and emits an assistant message answering `parentId`; it becomes the current one.
  std::string newAssistant(Session& s, const std::string& parentId, bool summary = false) {
    const std::string sessionId = stringOr(s.info, "id");
    std::string id = ids_.next("msg");
    Message m;
    m.info = {{"id", id},
              {"sessionID", sessionId},
              {"role", "assistant"},
              {"parentID", parentId},
              {"time", {{"created", epochMs()}}},
              {"modelID", kModelId},
              {"providerID", kProviderId},
              {"mode", summary ? "compaction" : "build"},
              {"agent", summary ? "compaction" : "build"},
              {"path", {{"cwd", directory_}, {"root", directory_}}},
              {"cost", 0},
              {"tokens", zeroTokens()}};
    if (summary) m.info["summary"] = true;
    s.messages[id] = m;
    messageSession_[id] = sessionId;
    s.currentAssistant = id;
    save();
    emitMessage(s, id);
    return id;
  }

  // Stores `part` (replacing the one with its id) and emits message.part.updated.
  void putPart(Session& s, const std::string& messageId, const json::object& part) {
    std::vector<json::object>& parts = s.messages.at(messageId).parts;
    auto same = std::find_if(parts.begin(), parts.end(),
                             [&](const json::object& p) { return p.at("id") == part.at("id"); });
    if (same == parts.end()) {
      parts.push_back(part);
    } else {
      *same = part;
    }
    emit("message.part.updated", {{"part", part}});
  }

  json::object partHead(const Session& s, const std::string& messageId, std::string_view type) {
    return {{"id", ids_.next("prt")},
            {"sessionID", s.info.at("id")},
            {"messageID", messageId},
            {"type", type}};
  }

  json::object stepFinish(const Session& s, const std::string& messageId, std::string_view reason) {
    json::object part = partHead(s, messageId, "step-finish");
    part["reason"] = reason;
    part["cost"] = 0;
    part["tokens"] = zeroTokens();
    return part;
  }

  // step-start, the text part (empty, its deltas, full), step-finish "stop".
  void textStep(Session& s, const std::string& messageId, const std::string& reply) {
    putPart(s, messageId, partHead(s, messageId, "step-start"));
    json::object text = partHead(s, messageId, "text");
    text["text"] = "";
    text["time"] = {{"start", epochMs()}};
    putPart(s, messageId, text);
    std::string_view rest = reply;
    while (!rest.empty()) {
      std::string chunk = shoal::demo::utf8Prefix(rest, 16);
      rest.remove_prefix(chunk.size());
      emit("message.part.delta", {{"sessionID", s.info.at("id")},
                                  {"messageID", messageId},
                                  {"partID", text.at("id")},
                                  {"field", "text"},
                                  {"delta", chunk}});
    }
    text["text"] = reply;
    text["time"].as_object()["end"] = epochMs();
    putPart(s, messageId, text);
    putPart(s, messageId, stepFinish(s, messageId, "stop"));
  }

  // FAKE_TOOLS: step-start, the echo_echo tool part pending → running → completed, step-finish.
  void toolStep(Session& s, const std::string& messageId, const std::string& text) {
    putPart(s, messageId, partHead(s, messageId, "step-start"));
    json::object tool = partHead(s, messageId, "tool");
    tool["callID"] = "call_fake_" + shoal::demo::randomHex(24);
    tool["tool"] = "echo_echo";
    tool["state"] = {{"status", "pending"}, {"input", json::object{}}, {"raw", ""}};
    putPart(s, messageId, tool);
    const int64_t start = epochMs();
    const json::object input{{"text", shoal::demo::utf8Prefix(text, 200)}};
    tool["state"] = {{"status", "running"}, {"input", input}, {"time", {{"start", start}}}};
    putPart(s, messageId, tool);
    tool["state"] = {{"status", "completed"},
                     {"input", input},
                     {"output", "echo:" + shoal::demo::utf8Prefix(text, 200)},
                     {"title", ""},
                     {"metadata", json::object{}},
                     {"time", {{"start", start}, {"end", epochMs()}}}};
    putPart(s, messageId, tool);
    putPart(s, messageId, stepFinish(s, messageId, "tool-calls"));
  }

  // Sets the assistant's end: time.completed, finish (a string or null: none) and error.
  void completeAssistant(Session& s, const std::string& messageId, const json::value& finish,
                         const json::value& error) {
    json::object& info = s.messages.at(messageId).info;
    info["time"].as_object()["completed"] = epochMs();
    if (!finish.is_null()) {
      info["finish"] = finish;
      info["tokens"].as_object()["input"] = 10;
      info["tokens"].as_object()["output"] = 10;
    }
    if (!error.is_null()) info["error"] = error;
  }

  void emitMessage(const Session& s, const std::string& messageId) {
    emit("message.updated", {{"info", s.messages.at(messageId).info}});
  }

  // Ends the answer to `userId`: the assistant (if any) completed, the state saved and the
  // `turn` logged, blocked /message callers woken, then the assistant's message.updated
  // (twice for a finished answer, as the real server does).
  void finishAnswer(Session& s, std::string userId, std::optional<std::string> assistant,
                    json::value finish, json::value error) {
    if (assistant) completeAssistant(s, *assistant, finish, error);
    save();
    json::value assistantId = nullptr;
    if (assistant) assistantId = *assistant;
    json::value errorName = nullptr;
    if (error.is_object()) errorName = error.as_object().at("name");
    log_.write("turn", {{"sessionId", s.info.at("id")},
                        {"userMessageId", userId},
                        {"assistantId", assistantId},
                        {"finish", finish},
                        {"error", errorName}});
    s.answered[userId] = assistant;
    s.currentUser.reset();
    s.currentAssistant.reset();
    changed_.notify_all();
    if (!assistant) return;
    emitMessage(s, *assistant);
    if (!finish.is_null()) emitMessage(s, *assistant);
  }

  // session.status {type}; idle also sends session.idle.
  void setStatus(Session& s, std::string_view type) {
    s.status = {{"type", type}};
    emit("session.status", {{"sessionID", s.info.at("id")}, {"status", s.status}});
    if (type == "idle") emit("session.idle", {{"sessionID", s.info.at("id")}});
  }

  void setRetry(Session& s, int attempt, int nextMs) {
    s.status = {{"type", "retry"},
                {"attempt", attempt},
                {"message", "fake forced error 500"},
                {"next", epochMs() + nextMs}};
    emit("session.status", {{"sessionID", s.info.at("id")}, {"status", s.status}});
  }

  // FAKE_PRUNE: the newest tool part of an assistant not answering `userId`.
  static std::optional<std::pair<std::string, std::string>> olderToolPart(
      const Session& s, const std::string& userId) {
    for (auto m = s.messages.rbegin(); m != s.messages.rend(); ++m) {
      if (stringOr(m->second.info, "role") != "assistant") continue;
      if (stringOr(m->second.info, "parentID") == userId) continue;
      for (auto p = m->second.parts.rbegin(); p != m->second.parts.rend(); ++p) {
        if (stringOr(*p, "type") == "tool") return std::pair{m->first, stringOr(*p, "id")};
      }
    }
    fmt::print(stderr, "fake_opencode: FAKE_PRUNE found no earlier tool part to prune\n");
    return std::nullopt;
  }

  void compactPart(Session& s, const std::string& messageId, const std::string& partId) {
    for (json::object& part : s.messages.at(messageId).parts) {
      if (stringOr(part, "id") != partId) continue;
      json::object& state = part["state"].as_object();
      if (!state["time"].is_object()) state["time"] = json::object{};
      state["time"].as_object()["compacted"] = epochMs();
      save();
      emit("message.part.updated", {{"part", part}});
      return;
    }
  }

  // --- the event stream ---------------------------------------------------------------------

  static std::string frame(std::string_view type, json::object properties) {
    return "data: " +
           json::serialize(json::object{{"type", type}, {"properties", std::move(properties)}}) +
           "\n\n";
  }

  static bool writeChunk(int fd, const std::string& data) {
    return sendAll(fd, fmt::format("{:x}\r\n", data.size())) && sendAll(fd, data) &&
           sendAll(fd, "\r\n");
  }

  // Queues one event on every live stream (REQUIRES mu_, so every stream sees one order).
  void emit(std::string_view type, json::object properties) {
    const std::string data = frame(type, std::move(properties));
    std::vector<std::shared_ptr<Subscriber>> live;
    for (const std::shared_ptr<Subscriber>& sub : subscribers_) {
      std::lock_guard lock(sub->mu);
      if (sub->dead) continue;
      sub->queue.emplace_back(data);
      sub->cv.notify_all();
      live.push_back(sub);
    }
    subscribers_ = std::move(live);
  }

  // FAKE_DROP_SSE: every stream closes after what it has queued (REQUIRES mu_).
  void dropSubscribers() {
    for (const std::shared_ptr<Subscriber>& sub : subscribers_) {
      std::lock_guard lock(sub->mu);
      sub->queue.emplace_back(std::nullopt);
      sub->cv.notify_all();
    }
    subscribers_.clear();
  }

  // Waits (until `deadline`) for every stream to have written what it has queued.
  void flushSubscribers(Clock::time_point deadline) {
    for (const std::shared_ptr<Subscriber>& sub : subscribers_) {
      std::unique_lock lock(sub->mu);
      sub->cv.wait_until(lock, deadline,
                         [&] { return sub->dead || (sub->queue.empty() && !sub->writing); });
    }
  }

  void serveEvents(int fd, const HttpRequest& request) {
    auto sub = std::make_shared<Subscriber>();
    {
      std::lock_guard lock(mu_);
      sub->queue.emplace_back(frame("server.connected", {}));
      subscribers_.push_back(sub);
      log_.write("request", {{"method", request.method}, {"path", request.path}, {"status", 200}});
    }
    bool ok = sendAll(fd,
                      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                      "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n"
                      "Connection: keep-alive\r\n\r\n");
    const milliseconds heartbeat(options_.heartbeatMs);
    std::unique_lock lock(sub->mu);
    while (ok) {
      if (!sub->cv.wait_for(lock, heartbeat, [&] { return !sub->queue.empty(); })) {
        sub->queue.emplace_back(frame("server.heartbeat", {}));
      }
      std::optional<std::string> next = std::move(sub->queue.front());
      sub->queue.pop_front();
      if (!next) break;  // dropped: closed abruptly, no last chunk
      sub->writing = true;
      lock.unlock();
      ok = writeChunk(fd, *next);
      lock.lock();
      sub->writing = false;
      sub->cv.notify_all();
    }
    sub->dead = true;
    sub->queue.clear();
    sub->cv.notify_all();
  }

  // --- the state file (REQUIRES mu_) --------------------------------------------------------

  void load() {
    if (options_.statePath.empty()) return;
    std::ifstream in(options_.statePath);
    if (!in) return;
    std::stringstream ss;
    ss << in.rdbuf();
    boost::system::error_code ec;
    json::value v = json::parse(ss.str(), ec);
    const json::value* sessions =
        !ec && v.is_object() ? v.as_object().if_contains("sessions") : nullptr;
    if (sessions == nullptr || !sessions->is_object()) {
      fmt::print(stderr, "fake_opencode: --state {} is not a state file; ignoring it\n",
                 options_.statePath);
      return;
    }
    for (const auto& [id, stored] : sessions->as_object()) {
      const json::object* o = stored.if_object();
      if (o == nullptr || !o->contains("info") || !o->at("info").is_object()) continue;
      Session& s = sessions_[std::string(id)];
      s.info = o->at("info").as_object();
      const json::value* messages = o->if_contains("messages");
      if (messages == nullptr || !messages->is_array()) continue;
      for (const json::value& stored_message : messages->as_array()) {
        const json::object* mo = stored_message.if_object();
        if (mo == nullptr || !mo->contains("info") || !mo->at("info").is_object()) continue;
        Message m;
        m.info = mo->at("info").as_object();
        if (const json::value* parts = mo->if_contains("parts"); parts && parts->is_array()) {
          for (const json::value& p : parts->as_array()) {
            if (p.is_object()) m.parts.push_back(p.as_object());
          }
        }
        const std::string mid = stringOr(m.info, "id");
        messageSession_[mid] = std::string(id);
        s.messages[mid] = std::move(m);
      }
    }
  }

  void save() const {
    if (options_.statePath.empty()) return;
    json::object sessions;
    for (const auto& [id, s] : sessions_) {
      json::array messages;
      for (const auto& [mid, m] : s.messages) {
        messages.push_back(messageJson(m));
      }
      sessions[id] = json::object{{"info", s.info}, {"messages", std::move(messages)}};
    }
    json::object file{{"version", 1}, {"sessions", std::move(sessions)}};
    std::string tmp = fmt::format("{}.tmp.{}", options_.statePath, ::getpid());
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << json::serialize(file) << "\n";
      if (!out.flush()) {
        fmt::print(stderr, "fake_opencode: cannot write --state {}\n", tmp);
        return;
      }
    }
    if (std::rename(tmp.c_str(), options_.statePath.c_str()) != 0) {
      fmt::print(stderr, "fake_opencode: cannot rename {} to {}\n", tmp, options_.statePath);
    }
  }

  // Constant after construction.
  const Options options_;
  const EventLog& log_;
  const std::string directory_;
  IdMint ids_;  // has its own lock

  std::mutex mu_;                            // guards everything below
  std::condition_variable changed_;          // an answer ended, or an abort bumped a generation
  std::map<std::string, Session> sessions_;  // by id; never erased
  std::map<std::string, std::string> messageSession_;     // message id → its session id
  std::vector<std::shared_ptr<Subscriber>> subscribers_;  // live /event streams
  int replies_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  ParsedArgs parsed = parseArgs(argc, argv);
  const EventLog log(parsed.options.logPath);
  if (!parsed.error.empty()) {
    fmt::print(stderr, "{}\n", parsed.error);
    log.write("exit", {{"code", 2}, {"error", parsed.error}});
    return 2;
  }
  for (const std::string& note : parsed.notes) {
    fmt::print(stderr, "fake_opencode: {}\n", note);
  }
  json::array argvJson;
  for (int i = 1; i < argc; ++i) {
    argvJson.emplace_back(argv[i]);
  }
  log.write("start", {{"argv", std::move(argvJson)}});

  // SIGTERM is taken by a thread of its own (blocked everywhere else, so every thread created
  // below inherits the mask); a closed peer is a send error, not a signal.
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, nullptr);
  std::thread([&log, term] {
    int sig = 0;
    while (sigwait(&term, &sig) != 0 || sig != SIGTERM) {
    }
    log.write("exit", {{"code", 143}});
    ::_exit(143);
  }).detach();

  FakeOpenCode fake(parsed.options, log);
  if (parsed.options.listenDelayMs > 0) {
    std::this_thread::sleep_for(milliseconds(parsed.options.listenDelayMs));
  }
  int port = 0;
  int listener = listenOn(parsed.options.port, port);
  if (listener < 0) {
    std::string error = fmt::format("fake_opencode: cannot listen on 127.0.0.1:{}: {}",
                                    parsed.options.port, std::generic_category().message(errno));
    fmt::print(stderr, "{}\n", error);
    log.write("exit", {{"code", 1}, {"error", error}});
    ::_exit(1);
  }
  fmt::print("opencode server listening on http://127.0.0.1:{}\n", port);
  std::fflush(stdout);

  for (;;) {
    int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno != EINTR) std::this_thread::sleep_for(milliseconds(10));  // EMFILE and kin
      continue;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::thread([&fake, fd] { fake.serveConnection(fd); }).detach();
  }
}
