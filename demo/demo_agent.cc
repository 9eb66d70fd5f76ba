// shoal-demo-agent: A SCRIPTED DEMO AGENT, NOT AN AI. It lets you watch a Shoal seat work
// (deliveries in, turns, receipts) without installing or paying for a real agent runtime.
// It never reads files or runs commands: every answer is one fixed-form line summarising what it
// was handed and, when its seat gave it the shoal tools ($SHOAL_MCP_CONFIG or --mcp-config),
// a one-line reply to each direct message or job, sent with the seat's `shoal_dm` tool so the
// sender hears back on the mesh (and the seat's wake closes `replied`).
//
// It speaks the Claude Code CLI's headless stream-json protocol (demo/stream_json.h), so a
// seat profile runs it where it would run `claude`:
//
//   shoal-demo-agent [--name NAME] -p --input-format stream-json --output-format stream-json
//                    --verbose --replay-user-messages [more Claude flags]
//
// Switches:
//   --name NAME   the name it answers with (default "demo"); `--name=NAME` works too.
//   The real Claude flags are accepted as by the real CLI (demo/stream_json.h): -p/--print,
//   --input-format X, --output-format X, --verbose, --replay-user-messages, --session-id UUID,
//   --resume X, --fork-session, --mcp-config X, --strict-mcp-config, --allowedTools X,
//   --model X, --permission-mode X, --debug-file X, …; unknown `--flags` are ignored with a
//   note on stderr. The combinations the real CLI refuses (no -p, stream-json input without
//   stream-json output, …) end it with a message on stderr and exit 1.
//
// Per user line on stdin: system/init, the replay of the line (with --replay-user-messages;
// the client's uuid is kept), one assistant line, one result. The assistant text:
//
//   demo agent <name>: read <N> message(s): <kind> from <sender>: <first 60 characters> | …
//
// where the items come from the shoal delivery block in the content (the block opened by a
// line starting `=== shoal delivery for`, one item per line starting with `[dm]`, `[#chan]`
// or `[work for role]`). Content without a delivery block is answered with
// `demo agent <name>: read 0 message(s) (no shoal delivery block): <first 60 characters>`.
// The reply (one `shoal_dm` per [dm] or [work for …] item, to the sender's id):
//
//   <name> here (a scripted demo, not an AI): I read your message "<first 60 characters>"
//
// A failed reply is noted on stderr (the runtime log) and the turn goes on.
// control_request: interrupt and initialize get a success response (a turn is over before
// the next line is read, so there is nothing to interrupt); other subtypes an error. A
// malformed stdin line ends it with exit 1; stdin EOF with exit 0.
#include <csignal>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>
#include <unistd.h>

#include "mcp/client.h"
#include "stream_json.h"

namespace {

namespace demo = shoal::demo;

constexpr std::string_view kHeader = "=== shoal delivery for";
constexpr std::string_view kTail = "=== end of shoal delivery";
constexpr size_t kExcerptChars = 60;

bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = nl + 1;
  }
  return lines;
}

// One item of a delivery block, from its head line `[<where>[, flags]] <name> (<id>)…: text`.
struct Item {
  std::string kind;
  std::string from;
  std::string fromId;
  std::string text;
};

Item parseHead(std::string_view head) {
  Item item;
  size_t close = head.find(']');
  std::string_view tag = head.substr(1, close == std::string_view::npos ? 0 : close - 1);
  item.kind = std::string(tag.substr(0, tag.find(", ")));
  std::string_view rest;
  if (close != std::string_view::npos) rest = head.substr(close + 1);
  if (!rest.empty() && rest.front() == ' ') rest = rest.substr(1);
  item.from = std::string(rest.substr(0, rest.find(" (")));
  if (size_t open = rest.find(" ("); open != std::string_view::npos) {
    size_t shut = rest.find(')', open);
    if (shut != std::string_view::npos)
      item.fromId = std::string(rest.substr(open + 2, shut - open - 2));
  }
  size_t id = rest.find(", id ");
  size_t colon = rest.find(": ", id == std::string_view::npos ? 0 : id);
  if (colon != std::string_view::npos) item.text = std::string(rest.substr(colon + 2));
  return item;
}

std::vector<Item> itemsOf(const std::string& content, bool* sawBlock) {
  std::vector<Item> items;
  bool inBlock = false;
  *sawBlock = false;
  for (std::string_view line : splitLines(content)) {
    if (startsWith(line, kHeader)) {
      inBlock = true;
      *sawBlock = true;
      continue;
    }
    if (startsWith(line, kTail)) {
      inBlock = false;
      continue;
    }
    if (!inBlock) continue;
    // Further lines of an item are indented by two spaces.
    if (startsWith(line, "  ") && !items.empty()) {
      Item& last = items.back();
      if (!last.text.empty()) last.text += ' ';
      last.text += std::string(line.substr(2));
      continue;
    }
    // An item head starts with its tag; "[… N more message(s) …]" is the daemon's note.
    if (startsWith(line, "[") && !startsWith(line, "[\u2026")) items.push_back(parseHead(line));
  }
  return items;
}

std::string summarise(const std::string& name, const std::string& content) {
  bool sawBlock = false;
  std::vector<Item> items = itemsOf(content, &sawBlock);
  std::string out = fmt::format("demo agent {}: read {} message(s)", name, items.size());
  if (!sawBlock) {
    std::string flat = content;
    for (char& c : flat) {
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    }
    return out + " (no shoal delivery block): " + demo::utf8Prefix(flat, kExcerptChars);
  }
  for (size_t i = 0; i < items.size(); ++i) {
    out += i == 0 ? ": " : " | ";
    out += fmt::format("{} from {}: {}", items[i].kind, items[i].from,
                       demo::utf8Prefix(items[i].text, kExcerptChars));
  }
  return out;
}

// Answers each DM and job of the block with the seat's shoal_dm tool.
void replyOnTheMesh(shoal::mcp::Client* seat, const std::string& name, const std::string& content) {
  if (seat == nullptr) return;
  bool sawBlock = false;
  for (const Item& item : itemsOf(content, &sawBlock)) {
    if (item.fromId.empty() || (item.kind != "dm" && !startsWith(item.kind, "work for"))) continue;
    std::string text =
        fmt::format("{} here (a scripted demo, not an AI): I read your message \"{}\"", name,
                    demo::utf8Prefix(item.text, kExcerptChars));
    auto sent = seat->callTool("shoal_dm", {{"to", item.fromId}, {"text", text}});
    if (!sent.isOk()) {
      fmt::print(stderr, "shoal-demo-agent: replying to {}: {}\n", item.fromId,
                 sent.status().toString());
    } else if (const auto* e = sent->if_contains("isError"); e && e->is_bool() && e->as_bool()) {
      fmt::print(stderr, "shoal-demo-agent: replying to {}: {}\n", item.fromId,
                 shoal::mcp::Client::textOf(*sent));
    }
  }
}

// The seat's shoal tools, when it gave them: `$SHOAL_MCP_CONFIG`, else the first --mcp-config
// (a file, or the JSON itself, as Claude takes it). Null when there are none.
std::unique_ptr<shoal::mcp::Client> seatTools(const std::vector<std::string>& mcpConfigs) {
  std::string source;
  if (const char* env = std::getenv("SHOAL_MCP_CONFIG"); env != nullptr) source = env;
  if (source.empty() && !mcpConfigs.empty()) source = mcpConfigs.front();
  if (source.empty()) return nullptr;
  auto endpoint = source.front() == '{'
                      ? shoal::mcp::parseMcpClientConfig(source)
                      : shoal::mcp::readMcpClientConfig(shoal::FileSystem::posix(), source);
  auto client = endpoint.isOk() ? shoal::mcp::Client::connect(std::move(endpoint).value())
                                : shoal::Result<shoal::mcp::Client>(endpoint.status());
  if (!client.isOk()) {
    fmt::print(stderr, "shoal-demo-agent: no shoal tools: {}\n", client.status().toString());
    return nullptr;
  }
  auto seat = std::make_unique<shoal::mcp::Client>(std::move(client).value());
  if (auto init = seat->initialize(); !init.isOk()) {
    fmt::print(stderr, "shoal-demo-agent: no shoal tools: {}\n", init.status().toString());
    return nullptr;
  }
  return seat;
}

std::string currentDirectory() {
  std::vector<char> buf(4096);
  if (::getcwd(buf.data(), buf.size()) == nullptr) return "";
  return buf.data();
}

}  // namespace

int main(int argc, char** argv) {
  std::string name = "demo";
  std::vector<std::string> rest;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--name" && i + 1 < argc) {
      name = argv[++i];
    } else if (startsWith(arg, "--name=")) {
      name = arg.substr(7);
    } else if (arg == "--name") {
      fmt::print(stderr, "shoal-demo-agent: --name needs a value\n");
      return 1;
    } else {
      rest.push_back(arg);
    }
  }
  demo::ParsedArgs parsed = demo::parseClaudeArgs(rest);
  if (parsed.error.empty()) parsed.error = demo::checkHeadless(parsed.args);
  if (!parsed.error.empty()) {
    fmt::print(stderr, "{}\n", parsed.error);
    return 1;
  }
  for (const std::string& note : parsed.notes) {
    fmt::print(stderr, "shoal-demo-agent: {}\n", note);
  }
  demo::McpServers mcp = demo::mcpServersFrom(parsed.args.mcpConfigs);
  if (!mcp.error.empty()) {
    fmt::print(stderr, "{}\n", mcp.error);
    return 1;
  }

  demo::SessionInfo info;
  info.sessionId = demo::sessionIdFor(parsed.args);
  info.cwd = currentDirectory();
  info.model = "shoal-demo-agent (scripted, not an AI)";
  info.version = "shoal-demo-agent";
  info.messageIdPrefix = "msg_demo_";
  info.mcpServers = std::move(mcp.names);
  fmt::print(stderr, "shoal-demo-agent: a scripted demo, not an AI (name {}, session {})\n", name,
             info.sessionId);

  std::signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<shoal::mcp::Client> tools;  // connected at the first turn (the seat serves it)
  bool toolsTried = false;
  demo::StreamJsonOut out(1, info, nullptr);
  demo::StdinLines in(0);
  for (;;) {
    auto event = in.next(std::nullopt);
    if (!event) continue;
    if (event->eof) return 0;
    demo::InputLine input = demo::parseInputLine(event->line);
    switch (input.kind) {
      case demo::InputLine::Kind::kBlank:
        break;
      case demo::InputLine::Kind::kMalformed:
        fmt::print(stderr, "shoal-demo-agent: {}\n", input.error);
        return 1;
      case demo::InputLine::Kind::kOther:
        fmt::print(stderr, "shoal-demo-agent: ignoring a stdin line of type '{}'\n", input.type);
        break;
      case demo::InputLine::Kind::kControlRequest:
        if (input.subtype == "interrupt") {
          out.controlSuccess(input.requestId);
        } else if (input.subtype == "initialize") {
          out.controlSuccess(input.requestId, boost::json::object{{"pid", ::getpid()}});
        } else {
          out.controlError(input.requestId, "unknown control subtype");
        }
        break;
      case demo::InputLine::Kind::kUser: {
        out.init();
        if (parsed.args.replayUserMessages) {
          out.replay(input.message, input.uuid ? *input.uuid : demo::newUuid(),
                     demo::isoTimestampNow());
        }
        if (!toolsTried) {
          toolsTried = true;
          tools = seatTools(parsed.args.mcpConfigs);
        }
        replyOnTheMesh(tools.get(), name, input.content);
        demo::TurnResult result;
        result.result = summarise(name, input.content);
        out.assistant(result.result);
        out.result(result);
        break;
      }
    }
  }
}
