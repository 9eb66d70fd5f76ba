#include "stream_json.h"

#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include <sys/random.h>
#include <unistd.h>

namespace shoal::demo {
namespace json = boost::json;

namespace {

constexpr char kHex[] = "0123456789abcdef";

bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// The real CLI's flags, by how they take arguments.
enum class Arity { kNone, kOne, kList };

struct FlagSpec {
  std::string_view name;
  Arity arity;
};

// Real flags a stand-in accepts without acting on them.
constexpr std::array<FlagSpec, 26> kIgnoredFlags{{
    {"--include-partial-messages", Arity::kNone},
    {"--dangerously-skip-permissions", Arity::kNone},
    {"--allow-dangerously-skip-permissions", Arity::kNone},
    {"--ide", Arity::kNone},
    {"--debug", Arity::kNone},
    {"--mcp-debug", Arity::kNone},
    {"--no-session-persistence", Arity::kNone},
    {"--disable-slash-commands", Arity::kNone},
    {"--max-turns", Arity::kOne},
    {"--max-budget-usd", Arity::kOne},
    {"--max-thinking-tokens", Arity::kOne},
    {"--system-prompt", Arity::kOne},
    {"--system-prompt-file", Arity::kOne},
    {"--append-system-prompt", Arity::kOne},
    {"--append-system-prompt-file", Arity::kOne},
    {"--permission-prompt-tool", Arity::kOne},
    {"--fallback-model", Arity::kOne},
    {"--settings", Arity::kOne},
    {"--setting-sources", Arity::kOne},
    {"--agents", Arity::kOne},
    {"--json-schema", Arity::kOne},
    {"--tools", Arity::kOne},
    {"--plugin-dir", Arity::kOne},
    {"--disallowedTools", Arity::kList},
    {"--add-dir", Arity::kList},
    {"--betas", Arity::kList},
}};

std::string readFile(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

// --- argv ---------------------------------------------------------------------------------

ParsedArgs parseClaudeArgs(const std::vector<std::string>& argv) {
  ParsedArgs out;
  ClaudeArgs& a = out.args;
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string arg = argv[i];
    std::optional<std::string> inlineValue;
    if (startsWith(arg, "--")) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        inlineValue = arg.substr(eq + 1);
        arg.resize(eq);
      }
    }
    // One value: `=value` or the next argument.
    auto one = [&](std::string& into) -> bool {
      if (inlineValue) {
        into = *inlineValue;
        return true;
      }
      if (i + 1 >= argv.size()) {
        out.error = "error: option '" + arg + "' argument missing";
        return false;
      }
      into = argv[++i];
      return true;
    };
    // A list: `=value` and/or every following argument not starting with '-'.
    auto list = [&](std::vector<std::string>* into) -> bool {
      size_t taken = 0;
      if (inlineValue) {
        if (into != nullptr) into->push_back(*inlineValue);
        ++taken;
      }
      while (i + 1 < argv.size() && !startsWith(argv[i + 1], "-")) {
        if (into != nullptr) into->push_back(argv[i + 1]);
        ++i;
        ++taken;
      }
      if (taken == 0) {
        out.error = "error: option '" + arg + "' argument missing";
        return false;
      }
      return true;
    };
    auto flag = [&](bool& into) -> bool {
      if (inlineValue) {
        out.error = "error: option '" + arg + "' does not take an argument";
        return false;
      }
      into = true;
      return true;
    };

    bool ok = true;
    if (arg == "-p" || arg == "--print") {
      ok = flag(a.print);
    } else if (arg == "--input-format") {
      ok = one(a.inputFormat);
    } else if (arg == "--output-format") {
      ok = one(a.outputFormat);
    } else if (arg == "--verbose") {
      ok = flag(a.verbose);
    } else if (arg == "--replay-user-messages") {
      ok = flag(a.replayUserMessages);
    } else if (arg == "--session-id") {
      ok = one(a.sessionId);
    } else if (arg == "--resume" || arg == "-r") {
      ok = one(a.resume);
    } else if (arg == "--fork-session") {
      ok = flag(a.forkSession);
    } else if (arg == "--continue" || arg == "-c") {
      ok = flag(a.continueSession);
    } else if (arg == "--mcp-config") {
      ok = list(&a.mcpConfigs);
    } else if (arg == "--strict-mcp-config") {
      ok = flag(a.strictMcpConfig);
    } else if (arg == "--allowedTools" || arg == "--allowed-tools") {
      ok = list(&a.allowedTools);
    } else if (arg == "--model") {
      ok = one(a.model);
    } else if (arg == "--permission-mode") {
      ok = one(a.permissionMode);
    } else if (arg == "--debug-file") {
      ok = one(a.debugFile);
    } else if (startsWith(arg, "--")) {
      const FlagSpec* spec = nullptr;
      for (const FlagSpec& s : kIgnoredFlags) {
        if (s.name == arg) spec = &s;
      }
      if (spec == nullptr) {
        out.notes.push_back("ignoring unknown option '" + argv[i] + "'");
      } else if (spec->arity == Arity::kOne) {
        std::string ignored;
        ok = one(ignored);
      } else if (spec->arity == Arity::kList) {
        ok = list(nullptr);
      } else {
        bool ignored = false;
        ok = flag(ignored);
      }
    } else {
      out.notes.push_back("ignoring argument '" + arg +
                          "' (with --input-format stream-json the prompts come from stdin)");
    }
    if (!ok) return out;
  }
  return out;
}

std::string checkHeadless(const ClaudeArgs& a) {
  if (!a.print) {
    return "Error: this program runs only in headless mode: pass -p (--print) with "
           "--input-format stream-json --output-format stream-json --verbose";
  }
  if (a.inputFormat != "text" && a.inputFormat != "stream-json") {
    return "Error: Invalid input format \"" + a.inputFormat + "\"";
  }
  if (a.outputFormat != "text" && a.outputFormat != "json" && a.outputFormat != "stream-json") {
    return "Error: Invalid output format \"" + a.outputFormat + "\"";
  }
  if (a.inputFormat == "stream-json" && a.outputFormat != "stream-json") {
    return "Error: --input-format=stream-json requires output-format=stream-json.";
  }
  if (a.outputFormat == "stream-json" && !a.verbose) {
    return "Error: When using --print, --output-format=stream-json requires --verbose";
  }
  if (a.replayUserMessages && (a.inputFormat != "stream-json" || a.outputFormat != "stream-json")) {
    return "Error: --replay-user-messages requires both --input-format=stream-json and "
           "--output-format=stream-json";
  }
  if (!a.sessionId.empty() && !isUuid(a.sessionId)) {
    return "Error: Invalid session ID. Must be a valid UUID.";
  }
  if (a.inputFormat != "stream-json") {
    return "Error: this stand-in supports only --input-format stream-json";
  }
  return "";
}

std::string sessionIdFor(const ClaudeArgs& a) {
  if (!a.sessionId.empty()) return a.sessionId;
  if (!a.resume.empty() && !a.forkSession) return a.resume;
  return newUuid();
}

McpServers mcpServersFrom(const std::vector<std::string>& configs) {
  McpServers out;
  for (const std::string& config : configs) {
    std::string text = config;
    std::string where = "the --mcp-config JSON";
    size_t first = config.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || config[first] != '{') {
      bool ok = false;
      text = readFile(config, ok);
      where = "MCP config file " + config;
      if (!ok) {
        out.error = "Error: Invalid MCP configuration:\nMCP config file not found: " + config;
        return out;
      }
    }
    boost::system::error_code ec;
    json::value parsed = json::parse(text, ec);
    const json::object* root = ec ? nullptr : parsed.if_object();
    const json::value* servers = root != nullptr ? root->if_contains("mcpServers") : nullptr;
    if (servers == nullptr || !servers->is_object()) {
      out.error = "Error: Invalid MCP configuration:\n" + where +
                  " is not a JSON object with an \"mcpServers\" object";
      return out;
    }
    for (const auto& entry : servers->as_object()) {
      out.names.emplace_back(entry.key());
    }
  }
  return out;
}

// --- small helpers ------------------------------------------------------------------------

namespace {

void fillRandomOrDie(unsigned char* out, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::getrandom(out + done, size - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "getrandom failed: %s\n", std::strerror(errno));
      std::abort();
    }
    done += static_cast<size_t>(n);
  }
}

}  // namespace

std::string newUuid() {
  std::array<unsigned char, 16> b{};
  fillRandomOrDie(b.data(), b.size());
  b[6] = static_cast<unsigned char>(0x40 | (b[6] & 0x0f));
  b[8] = static_cast<unsigned char>(0x80 | (b[8] & 0x3f));
  std::string out;
  out.reserve(36);
  for (size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[b[i] >> 4];
    out += kHex[b[i] & 0x0f];
  }
  return out;
}

bool isUuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
      return false;
    }
  }
  return true;
}

std::string randomHex(size_t n) {
  std::vector<unsigned char> bytes((n + 1) / 2);
  fillRandomOrDie(bytes.data(), bytes.size());
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 0x0f];
  }
  out.resize(n);
  return out;
}

std::string isoTimestampNow() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  std::array<char, 96> buf{};
  std::snprintf(buf.data(), buf.size(), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(ms % 1000));
  return buf.data();
}

std::string utf8Prefix(std::string_view text, size_t maxChars) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if ((c & 0xc0) == 0x80) continue;  // continuation byte
    if (chars == maxChars) return std::string(text.substr(0, i));
    ++chars;
  }
  return std::string(text);
}

// --- stdin --------------------------------------------------------------------------------

std::string contentText(const json::value& message) {
  const json::object* m = message.if_object();
  const json::value* content = m != nullptr ? m->if_contains("content") : nullptr;
  if (content == nullptr) return "";
  if (const json::string* s = content->if_string()) return std::string(*s);
  std::string out;
  if (const json::array* blocks = content->if_array()) {
    bool first = true;
    for (const json::value& block : *blocks) {
      const json::object* b = block.if_object();
      if (b == nullptr) continue;
      const json::value* type = b->if_contains("type");
      const json::value* text = b->if_contains("text");
      if (type == nullptr || !type->is_string() || type->as_string() != "text") continue;
      if (text == nullptr || !text->is_string()) continue;
      if (!first) out += '\n';
      out += text->as_string();
      first = false;
    }
  }
  return out;
}

InputLine parseInputLine(std::string_view line) {
  InputLine out;
  if (line.find_first_not_of(" \t\r\n") == std::string_view::npos) return out;  // kBlank
  out.kind = InputLine::Kind::kMalformed;
  boost::system::error_code ec;
  json::value parsed = json::parse(line, ec);
  if (ec) {
    out.error = "invalid JSON on stdin: " + ec.message();
    return out;
  }
  json::object* object = parsed.if_object();
  if (object == nullptr) {
    out.error = "stdin line is not a JSON object";
    return out;
  }
  const json::value* type = object->if_contains("type");
  if (type == nullptr || !type->is_string()) {
    out.error = "stdin line has no string \"type\"";
    return out;
  }
  out.type = std::string(type->as_string());
  if (out.type == "user") {
    json::value* message = object->if_contains("message");
    if (message == nullptr || !message->is_object()) {
      out.error = "user line without a \"message\" object";
      return out;
    }
    const json::value* content = message->as_object().if_contains("content");
    if (content == nullptr || !(content->is_string() || content->is_array())) {
      out.error = "user message without a string or array \"content\"";
      return out;
    }
    if (const json::value* uuid = object->if_contains("uuid"); uuid != nullptr) {
      if (const json::string* s = uuid->if_string()) out.uuid = std::string(*s);
    }
    out.content = contentText(*message);
    out.message = std::move(*message);
    out.kind = InputLine::Kind::kUser;
    return out;
  }
  if (out.type == "control_request") {
    json::value* id = object->if_contains("request_id");
    json::value* request = object->if_contains("request");
    if (id == nullptr || !(id->is_string() || id->is_number()) || request == nullptr ||
        !request->is_object()) {
      out.error = "control_request without a \"request_id\" and a \"request\" object";
      return out;
    }
    const json::value* subtype = request->as_object().if_contains("subtype");
    if (subtype != nullptr && subtype->is_string()) out.subtype = std::string(subtype->as_string());
    out.requestId = std::move(*id);
    out.request = std::move(request->as_object());
    out.kind = InputLine::Kind::kControlRequest;
    return out;
  }
  out.kind = InputLine::Kind::kOther;
  return out;
}

struct StdinLines::Queue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Event> events;  // guarded by mu

  void push(Event event) {
    {
      std::lock_guard lock(mu);
      events.push_back(std::move(event));
    }
    cv.notify_all();
  }
};

StdinLines::StdinLines(int fd) : queue_(std::make_shared<Queue>()) {
  std::thread([fd, queue = queue_] {
    std::string pending;
    std::array<char, 65536> buf{};
    for (;;) {
      ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      const size_t scanned = pending.size();  // holds no line feed
      pending.append(buf.data(), static_cast<size_t>(n));
      size_t start = 0;
      for (size_t nl = pending.find('\n', scanned); nl != std::string::npos;
           nl = pending.find('\n', start)) {
        queue->push({false, pending.substr(start, nl - start)});
        start = nl + 1;
      }
      pending.erase(0, start);
    }
    if (!pending.empty()) queue->push({false, std::move(pending)});
    queue->push({true, {}});
  }).detach();
}

std::optional<StdinLines::Event> StdinLines::next(
    std::optional<std::chrono::steady_clock::time_point> deadline) {
  std::unique_lock lock(queue_->mu);
  // After the eof event nothing is ever pushed again, so later calls wait out their deadline.
  auto nonEmpty = [&] { return !queue_->events.empty(); };
  if (deadline) {
    if (!queue_->cv.wait_until(lock, *deadline, nonEmpty)) return std::nullopt;
  } else {
    queue_->cv.wait(lock, nonEmpty);
  }
  Event event = std::move(queue_->events.front());
  queue_->events.pop_front();
  return event;
}

// --- stdout -------------------------------------------------------------------------------

StreamJsonOut::StreamJsonOut(int fd, SessionInfo info, std::function<void()> onBroken)
    : fd_(fd), info_(std::move(info)), onBroken_(std::move(onBroken)) {}

void StreamJsonOut::write(const json::object& object) {
  std::string text = json::serialize(object);
  text += '\n';
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

void StreamJsonOut::line(json::object object) {
  if (!object.contains("session_id")) object["session_id"] = info_.sessionId;
  write(object);
}

void StreamJsonOut::init() {
  json::array tools;
  for (const std::string& t : info_.tools) {
    tools.emplace_back(t);
  }
  json::array servers;
  for (const std::string& name : info_.mcpServers) {
    servers.emplace_back(json::object{{"name", name}, {"status", "connected"}});
  }
  write(json::object{
      {"type", "system"},
      {"subtype", "init"},
      {"cwd", info_.cwd},
      {"session_id", info_.sessionId},
      {"tools", std::move(tools)},
      {"mcp_servers", std::move(servers)},
      {"model", info_.model},
      {"permissionMode", info_.permissionMode},
      {"slash_commands", json::array{}},
      {"apiKeySource", "none"},
      {"claude_code_version", info_.version},
      {"output_style", "default"},
      {"uuid", newUuid()},
  });
}

void StreamJsonOut::replay(const json::value& message, const std::string& uuid,
                           const std::string& timestamp) {
  write(json::object{
      {"type", "user"},
      {"message", message},
      {"session_id", info_.sessionId},
      {"parent_tool_use_id", nullptr},
      {"uuid", uuid},
      {"timestamp", timestamp},
      {"isReplay", true},
  });
}

std::string StreamJsonOut::assistant(const std::string& text, const std::string& error) {
  std::string uuid = newUuid();
  json::object line{
      {"type", "assistant"},
      {"message",
       json::object{
           {"id", info_.messageIdPrefix + randomHex(24)},
           {"type", "message"},
           {"role", "assistant"},
           {"model", info_.model},
           {"content", json::array{json::object{{"type", "text"}, {"text", text}}}},
           {"stop_reason", nullptr},
           {"stop_sequence", nullptr},
           {"usage", json::object{{"input_tokens", 1}, {"output_tokens", 1}}},
       }},
      {"parent_tool_use_id", nullptr},
      {"session_id", info_.sessionId},
      {"uuid", uuid},
  };
  if (!error.empty()) line["error"] = error;
  write(line);
  return uuid;
}

void StreamJsonOut::interruptedByUser() {
  write(json::object{
      {"type", "user"},
      {"message",
       json::object{
           {"role", "user"},
           {"content",
            json::array{json::object{{"type", "text"}, {"text", "[Request interrupted by user]"}}}},
       }},
      {"parent_tool_use_id", nullptr},
      {"session_id", info_.sessionId},
      {"uuid", newUuid()},
  });
}

std::string StreamJsonOut::result(const TurnResult& turn) {
  std::string uuid = newUuid();
  json::object line{
      {"type", "result"},
      {"subtype", turn.subtype},
      {"is_error", turn.isError},
      {"duration_ms", turn.durationMs},
      {"duration_api_ms", turn.durationMs},
      {"num_turns", turn.numTurns},
      {"session_id", info_.sessionId},
      {"total_cost_usd", 0},
      {"usage", json::object{{"input_tokens", 1}, {"output_tokens", 1}}},
      {"permission_denials", json::array{}},
      {"uuid", uuid},
  };
  if (turn.apiErrorStatus) {
    line["api_error_status"] = *turn.apiErrorStatus;
  } else {
    line["api_error_status"] = nullptr;
  }
  if (turn.subtype == "success") {
    line["result"] = turn.result;
  } else {
    json::array errors;
    for (const std::string& e : turn.errors) {
      errors.emplace_back(e);
    }
    line["errors"] = std::move(errors);
  }
  if (turn.interrupted) {
    line["stop_reason"] = nullptr;
  } else {
    line["stop_reason"] = "end_turn";
  }
  write(line);
  return uuid;
}

void StreamJsonOut::controlSuccess(const json::value& requestId,
                                   std::optional<json::object> response) {
  json::object inner{{"subtype", "success"}, {"request_id", requestId}};
  if (response) inner["response"] = std::move(*response);
  write(json::object{{"type", "control_response"}, {"response", std::move(inner)}});
}

void StreamJsonOut::controlError(const json::value& requestId, const std::string& error) {
  write(json::object{
      {"type", "control_response"},
      {"response", json::object{{"subtype", "error"}, {"request_id", requestId}, {"error", error}}},
  });
}

void StreamJsonOut::exitProcess(int code, const std::function<void()>& last) {
  // Held until _exit: no other line starts. A writer blocked on a full pipe must not keep
  // the process alive, so the wait is bounded.
  static_cast<void>(mu_.try_lock_for(std::chrono::milliseconds(200)));
  if (last) last();
  ::_exit(code);
}

}  // namespace shoal::demo
