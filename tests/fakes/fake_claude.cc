// fake_claude: a test fake of the Claude Code CLI in headless stream-json mode, faithful to
// the CLI's documented protocol and to what the real 2.1.197 / 2.1.332 binaries were seen doing
// (docs/daemon.md, Runtimes). The seat daemon's tests run it where a profile would run
// `claude`:
//
//   fake_claude -p --input-format stream-json --output-format stream-json --verbose
//               --replay-user-messages [more real flags] [--fake-* switches anywhere]
//
// Real flags accepted (demo/stream_json.h has the parser): -p/--print, --input-format X,
// --output-format X, --verbose, --replay-user-messages, --session-id UUID, --resume X / -r X,
// --fork-session, --continue / -c, --mcp-config X [Y…] (JSON text or file; its servers show in
// system/init as "connected"), --strict-mcp-config, --allowedTools X [Y…], --model X,
// --permission-mode X, --debug-file X, and other real flags that are ignored
// (--include-partial-messages, --max-turns N, --append-system-prompt X, …). `--flag=value`
// works too. An unknown `--flag` is ignored with a note on stderr.
// Refused like the real CLI (message on stderr, exit 1): no -p; --input-format stream-json
// without --output-format stream-json; stream-json output without --verbose;
// --replay-user-messages without stream-json both ways; a --session-id that is not a UUID; a
// missing or malformed --mcp-config. Input formats other than stream-json are refused too.
//
// Fake switches (anywhere in argv; an unknown --fake-* switch is an error, exit 1):
//   --fake-log PATH     append one JSON object per line to PATH (each line is ONE write() on an
//                       O_APPEND descriptor, so concurrent fakes never interleave):
//                         {"event":"start","pid":N,"session_id":S,"cwd":D,"argv":[…]}
//                         {"event":"input","pid":N,"uuid":<client uuid or null>,"content":T}
//                         {"event":"replay","pid":N,"uuid":U,"content":T}
//                         {"event":"control","pid":N,"subtype":X}
//                         {"event":"result","pid":N,"uuid_list":[U…],"client_uuid_list":[…],
//                          "is_error":B,"subtype":X}
//                         {"event":"exit","pid":N,"code":C}      (argv refusals add "error")
//                       `content` is the user message content as text (text blocks joined
//                       with "\n"); `uuid_list` holds the uuids the turn's lines carry on
//                       stdout (the replay uuids), in order.
//   --fake-turn-ms N    the model's "thinking" time per turn before the assistant line
//                       (default 0: the turn is answered before more input is read).
//   --fake-init once|turn   system/init once per process (at the first turn) or at every turn
//                       start (default turn, as the real 2.1.197).
//   --fake-no-uuid      the replay (and the result's uuid_list) carry a FRESH uuid instead of
//                       the client's: "uuid not preserved".
//   --fake-lifecycle    also emit 2.1.332-style {"type":"command_lifecycle","command_uuid":
//                       <client uuid, else the line's uuid>,"state":"queued"|"started"|
//                       "completed","uuid":…,"session_id":…}: queued at once when the line is
//                       read (even mid-turn), started at its turn start (or when folded),
//                       completed after the result.
//   --fake-forget-sessions  `--resume X` is refused as the real CLI refuses an unknown session
//                       ("No conversation found with session ID: X" on stderr, exit 1).
//   --fake-fold         a user line that arrives while a turn runs is folded into that turn
//                       (its replay and an assistant answering it come before the turn's one
//                       result), as the real CLI does during a tool step. Default: it is
//                       queued and gets its own turn later.
//
// Content triggers (substrings of a user line's content, acted on when the line's turn runs):
//   FAKE_API_ERROR   the assistant says "API Error: 500 fake forced error" and the result is
//                    subtype "success", is_error true, api_error_status 500; the process goes on
//                    but exits 1 at stdin EOF.
//   FAKE_CRASH       right after the init and the replay, exit 3: no assistant, no result.
//   FAKE_HANG        after the replay the turn never answers; input is still read (user lines
//                    queue, control requests are answered) and an interrupt ends the turn.
//   FAKE_RATE_LIMIT  a system/api_retry line (429, rate_limit) before the assistant, then a
//                    normal success.
//
// Protocol: stdout carries JSON lines only, each written whole and at once; stdin is read on
// its own thread; blank lines are ignored; a partial last line at EOF is processed; a
// malformed line is reported on stderr and ends the process with exit 1. Turns run one at a
// time: [command_lifecycle started], system/init, the replay {"type":"user","message":<as
// sent>,"isReplay":true,"uuid":…,"timestamp":…} (with --replay-user-messages), after the turn
// time an assistant line "fake-reply-N: <first 200 characters of the content>" (N counts the
// process's answers from 1), then one result. control_request: interrupt → control_response
// success, then a running turn (a hanging one too) ends with the replays not yet emitted, a
// user line "[Request interrupted by user]" and a result "error_during_execution",
// is_error true; initialize → success with a small response; any other subtype →
// control_response "error", "unknown control subtype". Session id: --session-id, else
// --resume's (unless --fork-session), else a fresh v4 UUID. At stdin EOF the queued turns
// finish, then exit 0 (1 if any API error happened); a hanging turn keeps it alive until it
// is killed. SIGTERM: log the exit, exit 143. A failed stdout write (reader gone): log the
// exit, exit 1.
#include <csignal>
#include <cstdlib>
#include <deque>
#include <optional>
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
using shoal::demo::InputLine;
using shoal::demo::StdinLines;
using shoal::demo::StreamJsonOut;
using shoal::demo::TurnResult;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kVersion = "2.1.197-fake";

struct FakeOptions {
  std::string logPath;
  int turnMs = 0;
  bool initOnce = false;
  bool noUuid = false;
  bool lifecycle = false;
  bool fold = false;
  bool forgetSessions = false;
};

// The --fake-* switches taken out of argv; `rest` is left for the Claude flag parser.
struct SplitArgs {
  FakeOptions fake;
  std::vector<std::string> rest;
  std::string error;
};

SplitArgs splitFakeSwitches(int argc, char** argv) {
  SplitArgs out;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--fake-", 0) != 0) {
      out.rest.push_back(arg);
      continue;
    }
    std::optional<std::string> value;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    }
    auto takeValue = [&]() -> bool {
      if (!value) {
        if (i + 1 >= argc) {
          out.error = "fake_claude: " + arg + " needs a value";
          return false;
        }
        value = argv[++i];
      }
      return true;
    };
    if (arg == "--fake-log") {
      if (!takeValue()) return out;
      out.fake.logPath = *value;
    } else if (arg == "--fake-turn-ms") {
      if (!takeValue()) return out;
      char* end = nullptr;
      long ms = std::strtol(value->c_str(), &end, 10);
      if (value->empty() || *end != '\0' || ms < 0 || ms > 86'400'000) {
        out.error = "fake_claude: --fake-turn-ms wants milliseconds, got '" + *value + "'";
        return out;
      }
      out.fake.turnMs = static_cast<int>(ms);
    } else if (arg == "--fake-init") {
      if (!takeValue()) return out;
      if (*value != "once" && *value != "turn") {
        out.error = "fake_claude: --fake-init wants once|turn, got '" + *value + "'";
        return out;
      }
      out.fake.initOnce = *value == "once";
    } else if (arg == "--fake-no-uuid" || arg == "--fake-lifecycle" || arg == "--fake-fold" ||
               arg == "--fake-forget-sessions") {
      if (value) {
        out.error = "fake_claude: " + arg + " takes no value";
        return out;
      }
      if (arg == "--fake-no-uuid") out.fake.noUuid = true;
      if (arg == "--fake-lifecycle") out.fake.lifecycle = true;
      if (arg == "--fake-fold") out.fake.fold = true;
      if (arg == "--fake-forget-sessions") out.fake.forgetSessions = true;
    } else {
      out.error = "fake_claude: unknown switch " + arg;
      return out;
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
    if (fd_ < 0) fmt::print(stderr, "fake_claude: cannot open --fake-log {}\n", path);
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

// One user line on its way through a turn.
struct Segment {
  std::optional<std::string> clientUuid;
  std::string uuid;  // what stdout shows for it: the client's, or fresh with --fake-no-uuid
  json::value message;
  std::string content;
  std::string timestamp;  // when it was read
  bool replayed = false;
};

struct Turn {
  std::vector<Segment> segments;  // [0] started the turn; the rest were folded in
  size_t answered = 0;
  Clock::time_point started;
  std::optional<Clock::time_point> deadline;  // when to answer; nullopt while hanging
  bool apiError = false;
  std::string lastText;
};

bool has(const std::string& content, std::string_view trigger) {
  return content.find(trigger) != std::string::npos;
}

class FakeClaude {
 public:
  FakeClaude(const FakeOptions& fake, bool replay, StreamJsonOut& out, const EventLog& log)
      : fake_(fake), replay_(replay), out_(out), log_(log) {}

  [[noreturn]] void run(StdinLines& in) {
    for (;;) {
      if (turn_ && turn_->deadline && Clock::now() >= *turn_->deadline) {
        answer();
        continue;
      }
      if (eof_ && !turn_ && queued_.empty()) exit(apiErrorSeen_ ? 1 : 0);
      auto event = in.next(turn_ ? turn_->deadline : std::nullopt);
      if (!event) continue;  // the deadline passed: answer at the top
      if (event->eof) {
        eof_ = true;
        continue;
      }
      onLine(event->line);
    }
  }

  [[noreturn]] void exit(int code) {
    out_.exitProcess(code, [this, code] { log_.write("exit", {{"code", code}}); });
  }

 private:
  void onLine(const std::string& line) {
    InputLine input = shoal::demo::parseInputLine(line);
    switch (input.kind) {
      case InputLine::Kind::kBlank:
        return;
      case InputLine::Kind::kMalformed:
        fmt::print(stderr, "fake_claude: {} (line: {})\n", input.error,
                   shoal::demo::utf8Prefix(line, 200));
        exit(1);
      case InputLine::Kind::kUser:
        onUser(input);
        return;
      case InputLine::Kind::kControlRequest:
        onControl(input);
        return;
      case InputLine::Kind::kOther:
        fmt::print(stderr, "fake_claude: ignoring a stdin line of type '{}'\n", input.type);
        return;
    }
  }

  void onUser(InputLine& input) {
    Segment seg;
    seg.clientUuid = input.uuid;
    seg.uuid = input.uuid && !fake_.noUuid ? *input.uuid : shoal::demo::newUuid();
    seg.message = std::move(input.message);
    seg.content = std::move(input.content);
    seg.timestamp = shoal::demo::isoTimestampNow();
    json::value clientUuid = nullptr;
    if (seg.clientUuid) clientUuid = *seg.clientUuid;
    log_.write("input", {{"uuid", clientUuid}, {"content", seg.content}});
    lifecycle(seg, "queued");
    if (turn_ && fake_.fold) {
      lifecycle(seg, "started");
      turn_->segments.push_back(std::move(seg));
      return;
    }
    queued_.push_back(std::move(seg));
    if (!turn_) startNextTurn();
  }

  void onControl(const InputLine& input) {
    log_.write("control", {{"subtype", input.subtype}});
    if (input.subtype == "interrupt") {
      out_.controlSuccess(input.requestId);
      if (turn_) interruptTurn();
    } else if (input.subtype == "initialize") {
      out_.controlSuccess(input.requestId,
                          json::object{{"commands", json::array{}},
                                       {"agents", json::array{}},
                                       {"output_style", "default"},
                                       {"available_output_styles", json::array{"default"}},
                                       {"models", json::array{}},
                                       {"account", json::object{}},
                                       {"pid", ::getpid()}});
    } else {
      out_.controlError(input.requestId, "unknown control subtype");
    }
  }

  void startNextTurn() {
    if (turn_ || queued_.empty()) return;
    turn_.emplace();
    turn_->started = Clock::now();
    turn_->segments.push_back(std::move(queued_.front()));
    queued_.pop_front();
    lifecycle(turn_->segments[0], "started");
    if (!fake_.initOnce || !initSent_) {
      out_.init();
      initSent_ = true;
    }
    if (!replayWithTriggers(turn_->segments[0])) return;  // hanging
    turn_->deadline = turn_->started + std::chrono::milliseconds(fake_.turnMs);
  }

  void emitReplay(Segment& seg) {
    if (replay_) {
      out_.replay(seg.message, seg.uuid, seg.timestamp);
      log_.write("replay", {{"uuid", seg.uuid}, {"content", seg.content}});
    }
    seg.replayed = true;
  }

  // The replay, then FAKE_CRASH (never returns) and FAKE_HANG (returns false: the turn now
  // hangs until an interrupt).
  bool replayWithTriggers(Segment& seg) {
    emitReplay(seg);
    if (has(seg.content, "FAKE_CRASH")) exit(3);
    if (has(seg.content, "FAKE_HANG")) {
      turn_->deadline.reset();
      return false;
    }
    return true;
  }

  // The thinking time is over: answer every segment not answered yet, then the one result.
  void answer() {
    Turn& t = *turn_;
    while (t.answered < t.segments.size()) {
      Segment& seg = t.segments[t.answered];
      if (!seg.replayed && !replayWithTriggers(seg)) return;
      if (has(seg.content, "FAKE_RATE_LIMIT")) {
        out_.line(json::object{{"type", "system"},
                               {"subtype", "api_retry"},
                               {"attempt", 1},
                               {"max_retries", 10},
                               {"retry_delay_ms", 500},
                               {"error_status", 429},
                               {"error", "rate_limit"},
                               {"uuid", shoal::demo::newUuid()}});
      }
      ++replies_;
      if (has(seg.content, "FAKE_API_ERROR")) {
        t.lastText = "API Error: 500 fake forced error";
        out_.assistant(t.lastText, "server_error");
        t.apiError = true;
      } else {
        t.lastText =
            fmt::format("fake-reply-{}: {}", replies_, shoal::demo::utf8Prefix(seg.content, 200));
        out_.assistant(t.lastText);
      }
      ++t.answered;
    }
    TurnResult result;
    result.isError = t.apiError;
    if (t.apiError) result.apiErrorStatus = 500;
    result.numTurns = static_cast<int>(t.segments.size());
    result.result = t.lastText;
    finishTurn(result);
  }

  void interruptTurn() {
    for (Segment& seg : turn_->segments) {
      if (!seg.replayed) emitReplay(seg);
    }
    out_.interruptedByUser();
    TurnResult result;
    result.subtype = "error_during_execution";
    result.isError = true;
    result.numTurns = static_cast<int>(turn_->segments.size()) + 1;
    result.errors = {"Request interrupted by user"};
    result.interrupted = true;
    finishTurn(result);
  }

  void finishTurn(TurnResult& result) {
    Turn& t = *turn_;
    result.durationMs =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t.started).count();
    out_.result(result);
    json::array uuids;
    json::array clientUuids;
    for (const Segment& seg : t.segments) {
      lifecycle(seg, "completed");
      uuids.emplace_back(seg.uuid);
      if (seg.clientUuid) {
        clientUuids.emplace_back(*seg.clientUuid);
      } else {
        clientUuids.emplace_back(nullptr);
      }
    }
    log_.write("result", {{"uuid_list", std::move(uuids)},
                          {"client_uuid_list", std::move(clientUuids)},
                          {"is_error", result.isError},
                          {"subtype", result.subtype}});
    if (t.apiError) apiErrorSeen_ = true;
    turn_.reset();
    startNextTurn();
  }

  void lifecycle(const Segment& seg, std::string_view state) {
    if (!fake_.lifecycle) return;
    out_.line(json::object{{"type", "command_lifecycle"},
                           {"command_uuid", seg.clientUuid ? *seg.clientUuid : seg.uuid},
                           {"state", state},
                           {"uuid", shoal::demo::newUuid()}});
  }

  const FakeOptions fake_;
  const bool replay_;
  StreamJsonOut& out_;
  const EventLog& log_;

  std::deque<Segment> queued_;  // read, waiting for their own turn
  std::optional<Turn> turn_;
  bool eof_ = false;
  bool initSent_ = false;
  bool apiErrorSeen_ = false;
  int replies_ = 0;
};

std::vector<std::string> toolsFor(const shoal::demo::ClaudeArgs& args) {
  std::vector<std::string> tools{"Task", "Bash", "Glob", "Grep", "Read", "Edit", "Write"};
  // MCP tools the caller allowed by name (`mcp__server__tool`, comma or space separated).
  for (const std::string& allowed : args.allowedTools) {
    size_t start = 0;
    while (start < allowed.size()) {
      size_t end = allowed.find_first_of(", ", start);
      if (end == std::string::npos) end = allowed.size();
      std::string tool = allowed.substr(start, end - start);
      if (tool.rfind("mcp__", 0) == 0) tools.push_back(tool);
      start = end + 1;
    }
  }
  return tools;
}

std::string currentDirectory() {
  std::vector<char> buf(4096);
  if (::getcwd(buf.data(), buf.size()) == nullptr) return "";
  return buf.data();
}

}  // namespace

int main(int argc, char** argv) {
  SplitArgs split = splitFakeSwitches(argc, argv);
  if (!split.error.empty()) {
    fmt::print(stderr, "{}\n", split.error);
    return 1;
  }
  const EventLog log(split.fake.logPath);
  auto refuse = [&log](const std::string& error) {
    fmt::print(stderr, "{}\n", error);
    log.write("exit", {{"code", 1}, {"error", error}});
    return 1;
  };

  shoal::demo::ParsedArgs parsed = shoal::demo::parseClaudeArgs(split.rest);
  if (!parsed.error.empty()) return refuse(parsed.error);
  for (const std::string& note : parsed.notes) {
    fmt::print(stderr, "fake_claude: {}\n", note);
  }
  const shoal::demo::ClaudeArgs& args = parsed.args;
  if (std::string error = shoal::demo::checkHeadless(args); !error.empty()) return refuse(error);
  if (split.fake.forgetSessions && !args.resume.empty()) {
    return refuse("No conversation found with session ID: " + args.resume);
  }
  shoal::demo::McpServers mcp = shoal::demo::mcpServersFrom(args.mcpConfigs);
  if (!mcp.error.empty()) return refuse(mcp.error);

  shoal::demo::SessionInfo info;
  info.sessionId = shoal::demo::sessionIdFor(args);
  info.cwd = currentDirectory();
  info.model = args.model.empty() ? "claude-fake" : args.model;
  if (!args.permissionMode.empty()) info.permissionMode = args.permissionMode;
  info.version = std::string(kVersion);
  info.tools = toolsFor(args);
  info.mcpServers = std::move(mcp.names);

  json::array argvJson;
  for (int i = 1; i < argc; ++i) {
    argvJson.emplace_back(argv[i]);
  }
  log.write("start",
            {{"session_id", info.sessionId}, {"cwd", info.cwd}, {"argv", std::move(argvJson)}});

  // SIGTERM is taken by a thread of its own (blocked everywhere else, so every thread created
  // below inherits the mask); a closed stdout is a write error, not a signal.
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, nullptr);

  StreamJsonOut out(1, info, [&log] { log.write("exit", {{"code", 1}}); });
  FakeClaude fake(split.fake, args.replayUserMessages, out, log);
  std::thread([&fake, term] {
    int sig = 0;
    while (sigwait(&term, &sig) != 0 || sig != SIGTERM) {
    }
    fake.exit(143);
  }).detach();

  StdinLines in(0);
  fake.run(in);
}
