// stream_json: the Claude Code CLI's headless stream-json protocol, as spoken by programs that
// stand in for `claude -p --input-format stream-json --output-format stream-json --verbose`
// (as the real CLI was seen speaking it; docs/daemon.md, Runtimes). Two programs use it: the
// scripted demo agent `shoal-demo-agent` (demo/demo_agent.cc) and the test fake `fake_claude`
// (tests/fakes/fake_claude.cc). It holds only the protocol: argv, stdin lines, stdout lines.
// What a turn answers, and when, is the program's business.
//
// The pieces:
//   - parseClaudeArgs: the real CLI's flags (`-p`, `--input-format X`, `--session-id UUID`, …),
//     both `--flag value` and `--flag=value`; checkHeadless: the combinations the real CLI
//     refuses, and the session id it would use.
//   - parseInputLine: one stdin line classified (user message, control request, other, blank,
//     malformed).
//   - StdinLines: a reader thread splitting stdin into lines, so that writing stdout never waits
//     on reading.
//   - StreamJsonOut: the stdout lines (`system/init`, the user replay, `assistant`, `result`,
//     `control_response`, …), each written whole with write(2) and so flushed at once.
//
// Thread safety: StdinLines::next and StreamJsonOut's methods may be called from any thread
// (StreamJsonOut serialises its lines); the free functions are pure, except newUuid (reads
// getrandom) and isoTimestampNow (reads the clock).
// Lifetime: StdinLines' reader thread runs until stdin ends (it holds its own share of the
// queue, so the object may go away first). A StreamJsonOut must outlive its callers.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

namespace shoal::demo {

// --- argv ---------------------------------------------------------------------------------

// The real CLI's flags that matter to a stand-in. Flags not listed here are accepted and
// ignored (see parseClaudeArgs).
struct ClaudeArgs {
  bool print = false;                     // -p, --print
  std::string inputFormat = "text";       // --input-format text|stream-json
  std::string outputFormat = "text";      // --output-format text|json|stream-json
  bool verbose = false;                   // --verbose
  bool replayUserMessages = false;        // --replay-user-messages
  std::string sessionId;                  // --session-id UUID
  std::string resume;                     // --resume X, -r X
  bool forkSession = false;               // --fork-session
  bool continueSession = false;           // --continue, -c
  std::vector<std::string> mcpConfigs;    // --mcp-config X [Y …]
  bool strictMcpConfig = false;           // --strict-mcp-config
  std::vector<std::string> allowedTools;  // --allowedTools X [Y …]
  std::string model;                      // --model X
  std::string permissionMode;             // --permission-mode X
  std::string debugFile;                  // --debug-file X
};

struct ParsedArgs {
  ClaudeArgs args;
  std::string error;               // non-empty: print it and exit 1, as the real CLI does
  std::vector<std::string> notes;  // ignored arguments, one note each (for stderr)
};

// Parses `argv` (without argv[0]). Value flags take the next argument or `=value`; the list
// flags (`--mcp-config`, `--allowedTools`, `--disallowedTools`, `--add-dir`, `--betas`) take
// every following argument up to the next one starting with '-'. Other real flags
// (`--include-partial-messages`, `--max-turns N`, `--append-system-prompt X`, …) are
// accepted and ignored; an unknown `--flag` and a stray positional argument are ignored with
// a note.
ParsedArgs parseClaudeArgs(const std::vector<std::string>& argv);

// What the real CLI refuses (an error text, or "" when fine): no `-p`; `--input-format
// stream-json` without `--output-format stream-json`; stream-json output under `-p` without
// `--verbose`; `--replay-user-messages` without stream-json both ways; a `--session-id` that
// is not a UUID. A stand-in also refuses `--input-format` other than stream-json (it has no
// one-shot prompt mode).
std::string checkHeadless(const ClaudeArgs& args);

// The session id the process uses: `--session-id`; else `--resume X` (a fresh one with
// `--fork-session`); else a fresh v4 UUID.
std::string sessionIdFor(const ClaudeArgs& args);

// `mcp_servers` for system/init: the server names in every `--mcp-config` (a JSON text or a
// file holding one, shaped `{"mcpServers":{name:{…}}}`), each reported "connected". An
// unreadable or malformed config is an error text (the real CLI exits 1 on it).
struct McpServers {
  std::vector<std::string> names;
  std::string error;
};
McpServers mcpServersFrom(const std::vector<std::string>& configs);

// --- small helpers ------------------------------------------------------------------------

// A random (v4) UUID, lower-case hex. Aborts the process if the OS has no entropy.
std::string newUuid();
// 8-4-4-4-12 hex digits (any case, any version).
bool isUuid(std::string_view text);
// `n` random lower-case hex digits.
std::string randomHex(size_t n);
// The current UTC time as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
std::string isoTimestampNow();
// At most `maxChars` UTF-8 characters of `text` (never splits a character).
std::string utf8Prefix(std::string_view text, size_t maxChars);

// --- stdin --------------------------------------------------------------------------------

// One stdin line, classified.
struct InputLine {
  enum class Kind {
    kBlank,           // empty or whitespace only: ignored
    kUser,            // {"type":"user","message":{…},…}
    kControlRequest,  // {"type":"control_request","request_id":…,"request":{"subtype":…}}
    kOther,           // valid JSON object of another type (control_response, keep_alive, …)
    kMalformed,       // not a JSON object, or a user/control line missing its parts
  };
  Kind kind = Kind::kBlank;
  // kUser:
  boost::json::value message;       // the `message` object, exactly as sent
  std::optional<std::string> uuid;  // the client's `uuid`, when it is a string
  std::string content;              // `message.content` as text (text blocks joined with "\n")
  // kControlRequest:
  boost::json::value requestId;  // echoed as sent (string or number)
  std::string subtype;           // request.subtype
  boost::json::object request;
  // kOther:
  std::string type;
  // kMalformed:
  std::string error;
};
InputLine parseInputLine(std::string_view line);

// `message.content` as text: a string as is; an array's text blocks joined with "\n".
std::string contentText(const boost::json::value& message);

// Reads a file descriptor on its own thread and hands out its lines (without the line feed; a
// trailing '\r' is kept). A partial last line at end of input is a line too.
class StdinLines {
 public:
  struct Event {
    bool eof = false;  // true: input ended (no more events after this one)
    std::string line;
  };

  // Starts the reader on `fd` (normally 0).
  explicit StdinLines(int fd = 0);

  // The next event; nullopt if `deadline` passes first (no deadline: waits as long as it
  // takes). The eof event comes once; later calls wait out their deadline (or forever).
  std::optional<Event> next(std::optional<std::chrono::steady_clock::time_point> deadline);

 private:
  struct Queue;
  std::shared_ptr<Queue> queue_;  // shared with the reader thread, which may outlive *this
};

// --- stdout -------------------------------------------------------------------------------

// What system/init reports and every line carries.
struct SessionInfo {
  std::string sessionId;
  std::string cwd;
  std::string model;
  std::string permissionMode = "default";
  std::string version;  // claude_code_version
  std::vector<std::string> tools;
  std::vector<std::string> mcpServers;
  std::string messageIdPrefix = "msg_fake_";  // assistant message.id = prefix + 24 hex digits
};

// The end of one turn.
struct TurnResult {
  std::string subtype = "success";  // success | error_during_execution | …
  bool isError = false;
  int numTurns = 1;
  std::string result;  // the last assistant text ("" for error subtypes)
  std::optional<int> apiErrorStatus;
  std::vector<std::string> errors;  // error subtypes only
  bool interrupted = false;         // stop_reason null instead of "end_turn"
  int64_t durationMs = 0;
};

class StreamJsonOut {
 public:
  // Lines go to `fd` (normally 1). When a write fails (e.g. the reader closed the pipe; the
  // program should ignore SIGPIPE), `onBroken` runs under the output lock (it must not use
  // this object) and the process then exits with code 1.
  StreamJsonOut(int fd, SessionInfo info, std::function<void()> onBroken);

  const SessionInfo& info() const { return info_; }

  // {"type":"system","subtype":"init",…}
  void init();
  // The replay of a user line: the same message, `isReplay:true`, `uuid`, `timestamp`.
  void replay(const boost::json::value& message, const std::string& uuid,
              const std::string& timestamp);
  // An assistant text line; returns its uuid. `error` sets `assistant.error`.
  std::string assistant(const std::string& text, const std::string& error = "");
  // The user line the real CLI writes after an interrupt: "[Request interrupted by user]".
  void interruptedByUser();
  // {"type":"result",…}; returns its uuid.
  std::string result(const TurnResult& turn);
  // {"type":"control_response","response":{"subtype":"success","request_id":…[,"response":…]}}
  void controlSuccess(const boost::json::value& requestId,
                      std::optional<boost::json::object> response = std::nullopt);
  // {"type":"control_response","response":{"subtype":"error","request_id":…,"error":…}}
  void controlError(const boost::json::value& requestId, const std::string& error);
  // Any other line (session_id is added when missing).
  void line(boost::json::object object);

  // Takes the output lock for good (no line is cut in half), runs `last`, then _exit. If a
  // line is stuck in a write (nobody reads stdout) it waits at most 200 ms for the lock.
  [[noreturn]] void exitProcess(int code, const std::function<void()>& last);

 private:
  void write(const boost::json::object& object);

  const int fd_;
  const SessionInfo info_;
  const std::function<void()> onBroken_;
  std::timed_mutex mu_;  // guards the fd: one whole line at a time
};

}  // namespace shoal::demo
