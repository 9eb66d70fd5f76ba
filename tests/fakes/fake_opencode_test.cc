// fake_opencode behaves like `opencode serve` (as the real 1.18.33 was seen doing): these tests
// run the built binary on an ephemeral port, talk HTTP to it and read its /event stream, waiting
// for events and conditions with deadlines, never sleeping.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <arpa/inet.h>
#include <boost/json.hpp>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http/client.h"
#include "piped_child.h"
#include "testing/eventually.h"
#include "testing/temp_dir.h"

#include <gtest/gtest.h>

namespace shoal::testing {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

constexpr std::string_view kListening = "opencode server listening on http://127.0.0.1:";

// `object[key]` as a string ("" when absent or not a string).
std::string str(const json::object& object, std::string_view key) {
  const json::value* v = object.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : "";
}

const json::object& props(const json::object& event) {
  return event.at("properties").as_object();
}

std::string type(const json::object& event) {
  return str(event, "type");
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A caller-minted message id in opencode's ascending layout: msg_ + 12 hex + 14 base62.
std::string mintMessageId() {
  static std::atomic<uint64_t> counter{0};
  static constexpr std::string_view kBase62 =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const auto ms =
      std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const uint64_t value =
      (static_cast<uint64_t>(ms) * 4096 + (++counter % 4096)) & 0xFFFFFFFFFFFFULL;
  char hex[13];
  std::snprintf(hex, sizeof hex, "%012llx", static_cast<unsigned long long>(value));
  std::string id = std::string("msg_") + hex;
  std::mt19937 random(std::random_device{}());
  for (int i = 0; i < 14; ++i) {
    id += kBase62[random() % kBase62.size()];
  }
  return id;
}

// A GET /event subscriber on a raw socket: a reader thread decodes the chunked body and queues
// each `data:` line's JSON object; the end of the stream is queued as nullopt.
//
// Thread safety: one test thread; the reader thread only fills the queue.
// Lifetime: the destructor shuts the socket down and joins the reader.
class EventStream {
 public:
  // nullptr (with a test failure) when connecting or the response head fails.
  static std::unique_ptr<EventStream> open(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval timeout{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    const std::string request =
        "GET /event?directory=/tmp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: "
        "text/event-stream\r\n\r\n";
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
            static_cast<ssize_t>(request.size())) {
      ::close(fd);
      ADD_FAILURE() << "cannot connect to /event on port " << port;
      return nullptr;
    }
    std::unique_ptr<EventStream> stream(new EventStream(fd));
    size_t end;
    while ((end = stream->buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!stream->fill()) {
        ADD_FAILURE() << "no response head from /event: " << stream->buffer_;
        return nullptr;
      }
    }
    const std::string head = stream->buffer_.substr(0, end);
    stream->buffer_.erase(0, end + 4);
    if (!head.starts_with("HTTP/1.1 200") ||
        head.find("Content-Type: text/event-stream") == std::string::npos ||
        head.find("Transfer-Encoding: chunked") == std::string::npos) {
      ADD_FAILURE() << "unexpected /event head: " << head;
      return nullptr;
    }
    timeval forever{0, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &forever, sizeof forever);
    stream->reader_ = std::thread([s = stream.get()] { s->readLoop(); });
    return stream;
  }

  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;
  ~EventStream() {
    ::shutdown(fd_, SHUT_RDWR);
    if (reader_.joinable()) reader_.join();
    ::close(fd_);
  }

  // The next event (heartbeats included); nullopt when the stream ended or `timeout` passed.
  std::optional<json::object> next(milliseconds timeout = kDefaultWait) {
    if (ended_) return std::nullopt;
    auto item = events_.pop(timeout);
    if (!item) {
      ADD_FAILURE() << "no event within " << timeout.count() << " ms";
      return std::nullopt;
    }
    if (!*item) ended_ = true;
    return *item;
  }

  // True when the stream ends before any further event (within the default wait).
  bool ends() {
    auto item = events_.pop(kDefaultWait);
    if (item && !*item) ended_ = true;
    return ended_;
  }

 private:
  explicit EventStream(int fd) : fd_(fd) {}

  bool fill() {
    char chunk[8192];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  void readLoop() {
    std::string payload;  // decoded body not yet split into events
    for (;;) {
      size_t nl;
      while ((nl = buffer_.find("\r\n")) == std::string::npos) {
        if (!fill()) return events_.push(std::nullopt);
      }
      const size_t size = std::stoul(buffer_.substr(0, nl), nullptr, 16);
      if (size == 0) return events_.push(std::nullopt);
      while (buffer_.size() < nl + 2 + size + 2) {
        if (!fill()) return events_.push(std::nullopt);
      }
      payload += buffer_.substr(nl + 2, size);
      buffer_.erase(0, nl + 2 + size + 2);
      size_t sep;
      while ((sep = payload.find("\n\n")) != std::string::npos) {
        std::istringstream lines(payload.substr(0, sep));
        payload.erase(0, sep + 2);
        std::string line;
        while (std::getline(lines, line)) {
          if (!line.starts_with("data: ")) continue;
          boost::system::error_code ec;
          json::value v = json::parse(line.substr(6), ec);
          if (!ec && v.is_object()) events_.push(v.as_object());
        }
      }
    }
  }

  const int fd_;
  std::string buffer_;  // read, not yet decoded (the reader's once it runs)
  std::thread reader_;
  EventQueue<std::optional<json::object>> events_;
  bool ended_ = false;
};

// An event's name for order checks: the type, with the role (message.updated), the part type
// (message.part.updated) or the status type (session.status) after a colon.
std::string label(const json::object& event) {
  std::string t = type(event);
  if (t == "message.updated") return t + ":" + str(props(event).at("info").as_object(), "role");
  if (t == "message.part.updated") {
    return t + ":" + str(props(event).at("part").as_object(), "type");
  }
  if (t == "session.status") {
    return t + ":" + str(props(event).at("status").as_object(), "type");
  }
  return t;
}

// The labels of `events`, heartbeats left out and a run of deltas counted once.
std::vector<std::string> labels(const std::vector<json::object>& events) {
  std::vector<std::string> out;
  for (const json::object& event : events) {
    std::string l = label(event);
    if (l == "server.heartbeat") continue;
    if (l == "message.part.delta" && !out.empty() && out.back() == l) continue;
    out.push_back(l);
  }
  return out;
}

// The events of a plain answer after the prompt's user message and text part.
std::vector<std::string> plainAnswer() {
  return {"session.status:busy",
          "message.updated:assistant",
          "message.part.updated:step-start",
          "message.part.updated:text",
          "message.part.delta",
          "message.part.updated:text",
          "message.part.updated:step-finish",
          "message.updated:assistant",
          "message.updated:assistant",
          "session.status:busy"};
}

std::vector<std::string> plainPrompt() {
  std::vector<std::string> out{"message.updated:user", "message.part.updated:text"};
  for (std::string& l : plainAnswer()) {
    out.push_back(std::move(l));
  }
  out.push_back("session.status:idle");
  out.push_back("session.idle");
  return out;
}

// The events of a successful summarize, its compaction user message to the last session.idle.
std::vector<std::string> summarizeEvents(bool compacted = true) {
  std::vector<std::string> out{"message.updated:user",      "message.part.updated:compaction",
                               "session.status:busy",       "message.updated:assistant",
                               "session.status:busy",       "message.part.updated:step-start",
                               "message.part.updated:text", "message.part.delta",
                               "message.part.updated:text", "message.part.updated:step-finish",
                               "message.updated:assistant", "message.updated:assistant"};
  if (compacted) out.push_back("session.compacted");
  for (const char* l : {"session.status:busy", "session.status:idle", "session.idle"}) {
    out.emplace_back(l);
  }
  return out;
}

// The deltas of `events` joined.
std::string deltas(const std::vector<json::object>& events) {
  std::string out;
  for (const json::object& e : events) {
    if (type(e) == "message.part.delta") out += str(props(e), "delta");
  }
  return out;
}

class FakeOpenCodeTest : public ::testing::Test {
 protected:
  struct Fake {
    std::unique_ptr<PipedChild> child;
    int port = 0;
  };

  void SetUp() override {
    auto dir = TempDir::create("fake-opencode");
    ASSERT_TRUE(dir.isOk());
    dir_.emplace(std::move(*dir));
  }

  std::string logPath() const { return dir_->join("fake.log"); }
  std::string statePath() const { return dir_->join("state.json"); }
  std::string stderrPath() const { return dir_->join("stderr.txt"); }

  // Starts the fake as the driver would (profile command, then --port and --hostname) and
  // waits for its listening line. `port` stays 0 on failure.
  Fake start(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv{FAKE_OPENCODE_BINARY, "--state", statePath(),
                                  "--fake-log",         logPath(), "serve"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"--port", "0", "--hostname", "127.0.0.1"});
    Fake fake;
    fake.child = PipedChild::start(argv, stderrPath());
    if (fake.child == nullptr) {
      ADD_FAILURE() << "cannot start " << FAKE_OPENCODE_BINARY;
      return fake;
    }
    auto line = fake.child->nextLine();
    if (!line || !line->starts_with(kListening)) {
      ADD_FAILURE() << "no listening line; stdout:\n"
                    << fake.child->transcript() << "stderr:\n"
                    << readFile(stderrPath());
      return fake;
    }
    fake.port = std::stoi(line->substr(kListening.size()));
    return fake;
  }

  static http::HttpReply call(int port, const std::string& method, const std::string& path,
                              const std::string& body = "") {
    http::HttpClientOptions options;
    options.connectTimeout = milliseconds(2000);
    options.responseTimeout = kDefaultWait;
    auto client =
        http::HttpClient::forUrl("http://127.0.0.1:" + std::to_string(port) + path, options);
    if (!client.isOk()) {
      ADD_FAILURE() << client.status().toString();
      return {};
    }
    http::HttpCall request;
    request.method = method;
    if (!body.empty()) request.headers.push_back({"Content-Type", "application/json"});
    request.body = body;
    auto reply = client->send(request);
    if (!reply.isOk()) {
      ADD_FAILURE() << method << " " << path << ": " << reply.status().toString();
      return {};
    }
    return *reply;
  }

  // The reply's body as JSON ({} / null when it is not JSON).
  static json::value body(const http::HttpReply& reply) {
    boost::system::error_code ec;
    json::value v = json::parse(reply.body, ec);
    return ec ? json::value() : v;
  }

  static json::object object(const http::HttpReply& reply) {
    json::value v = body(reply);
    return v.is_object() ? v.as_object() : json::object{};
  }

  static std::string createSession(int port, const std::string& title = "rt test") {
    http::HttpReply reply =
        call(port, "POST", "/session", json::serialize(json::object{{"title", title}}));
    EXPECT_EQ(reply.status, 200) << reply.body;
    json::object info = object(reply);
    EXPECT_TRUE(str(info, "id").starts_with("ses_")) << reply.body;
    EXPECT_EQ(str(info, "title"), title);
    return str(info, "id");
  }

  // createSession, then its session.created and session.updated taken from `stream`.
  static std::string createSession(int port, EventStream& stream,
                                   const std::string& title = "rt test") {
    std::string id = createSession(port, title);
    auto events = untilType(stream, "session.updated");
    EXPECT_EQ(labels(events), (std::vector<std::string>{"session.created", "session.updated"}));
    return id;
  }

  static std::string promptBody(const std::string& text, const std::string& messageId = "") {
    json::object b{{"parts", json::array{json::object{{"type", "text"}, {"text", text}}}}};
    if (!messageId.empty()) b["messageID"] = messageId;
    return json::serialize(b);
  }

  // prompt_async, expecting 204 with no body.
  static void promptAsync(int port, const std::string& session, const std::string& text,
                          const std::string& messageId = "") {
    http::HttpReply reply =
        call(port, "POST", "/session/" + session + "/prompt_async", promptBody(text, messageId));
    EXPECT_EQ(reply.status, 204) << reply.body;
    EXPECT_EQ(reply.body, "");
  }

  // Events up to and including the first that `done` accepts (empty on end or timeout).
  template <typename Done>
  static std::vector<json::object> until(EventStream& stream, Done done) {
    std::vector<json::object> events;
    for (;;) {
      auto event = stream.next();
      if (!event) {
        ADD_FAILURE() << "stream ended or stalled after " << events.size() << " events";
        return {};
      }
      events.push_back(*event);
      if (done(*event)) return events;
    }
  }

  static std::vector<json::object> untilType(EventStream& stream, const std::string& t) {
    return until(stream, [&](const json::object& e) { return type(e) == t; });
  }

  // Events up to and including `session`'s `idles`-th session.idle.
  static std::vector<json::object> untilIdle(EventStream& stream, const std::string& session,
                                             int idles = 1) {
    int seen = 0;
    return until(stream, [&](const json::object& e) {
      return type(e) == "session.idle" && str(props(e), "sessionID") == session && ++seen == idles;
    });
  }

  // Opens /event and takes its server.connected.
  static std::unique_ptr<EventStream> subscribe(int port) {
    auto stream = EventStream::open(port);
    if (stream == nullptr) return nullptr;
    auto first = stream->next();
    EXPECT_TRUE(first && type(*first) == "server.connected");
    if (first) {
      EXPECT_EQ(json::serialize(props(*first)), "{}");
    }
    return stream;
  }

  std::vector<json::object> logLines(const std::string& event) const {
    std::vector<json::object> out;
    std::istringstream in(readFile(logPath()));
    std::string line;
    while (std::getline(in, line)) {
      json::object o = json::parse(line).as_object();
      if (str(o, "event") == event) out.push_back(o);
    }
    return out;
  }

  static std::string summarizeBody(const std::string& provider = "fake",
                                   const std::string& model = "fake-model") {
    return json::serialize(
        json::object{{"providerID", provider}, {"modelID", model}, {"auto", false}});
  }

  static http::HttpReply summarize(int port, const std::string& session,
                                   const std::string& body = summarizeBody()) {
    return call(port, "POST", "/session/" + session + "/summarize", body);
  }

  // The assistants in `session`'s message list answering `parent`, in id order.
  static std::vector<json::object> assistantsOf(int port, const std::string& session,
                                                const std::string& parent) {
    std::vector<json::object> out;
    json::value list = body(call(port, "GET", "/session/" + session + "/message"));
    if (!list.is_array()) return out;
    for (const json::value& m : list.as_array()) {
      const json::object& info = m.at("info").as_object();
      if (str(info, "role") == "assistant" && str(info, "parentID") == parent) {
        out.push_back(m.as_object());
      }
    }
    return out;
  }

  std::optional<TempDir> dir_;
};

// The listening line comes only once the port is bound (after --listen-delay-ms), names the
// ephemeral port, and the port answers; a non-loopback --hostname is refused with exit 2.
TEST_F(FakeOpenCodeTest, ListeningLineNamesABoundPortAndOnlyLoopbackIsServed) {
  Fake fake = start({"--listen-delay-ms=30", "--turn-ms", "5"});
  ASSERT_NE(fake.port, 0);
  EXPECT_GT(fake.port, 0);
  http::HttpReply doc = call(fake.port, "GET", "/doc");
  EXPECT_EQ(doc.status, 200);
  json::object spec = object(doc);
  EXPECT_EQ(str(spec, "openapi"), "3.1.0");
  EXPECT_TRUE(spec.at("paths").as_object().contains("/session/{sessionID}/prompt_async"));
  http::HttpReply unknown = call(fake.port, "GET", "/config/nope");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(str(object(unknown), "name"), "NotFoundError");

  auto refused = PipedChild::start(
      {FAKE_OPENCODE_BINARY, "serve", "--port", "0", "--hostname", "0.0.0.0"}, stderrPath());
  ASSERT_NE(refused, nullptr);
  auto exit = refused->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->exited && exit->code == 2) << exit->toString();
  EXPECT_TRUE(refused->outputEnds());
  EXPECT_NE(readFile(stderrPath()).find("only loopback"), std::string::npos);
}

// One prompt_async: 204 at once, then the real 1.18.33 event order with
// "fake-reply-N: <text>" streamed in deltas and an assistant finished "stop".
TEST_F(FakeOpenCodeTest, OnePromptFollowsTheRealEventOrder) {
  Fake fake = start();
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);  // session.created, .updated

  for (int n = 1; n <= 2; ++n) {
    const std::string text = "hello opencode " + std::to_string(n);
    promptAsync(fake.port, session, text);
    auto events = untilIdle(*stream, session);
    ASSERT_EQ(labels(events), plainPrompt());
    const json::object& user = props(events[0]).at("info").as_object();
    EXPECT_EQ(str(user, "role"), "user");
    EXPECT_EQ(str(user, "agent"), "build");
    EXPECT_EQ(str(user.at("model").as_object(), "providerID"), "fake");
    EXPECT_TRUE(str(user, "id").starts_with("msg_"));
    EXPECT_EQ(str(user, "id").size(), 4u + 12u + 14u);
    const json::object& userPart = props(events[1]).at("part").as_object();
    EXPECT_EQ(str(userPart, "text"), text);
    EXPECT_EQ(str(userPart, "messageID"), str(user, "id"));
    const json::object& created_ = props(events[3]).at("info").as_object();
    EXPECT_EQ(str(created_, "parentID"), str(user, "id"));
    EXPECT_FALSE(created_.contains("finish"));
    EXPECT_FALSE(created_.at("time").as_object().contains("completed"));
    const std::string reply = "fake-reply-" + std::to_string(n) + ": " + text;
    EXPECT_EQ(deltas(events), reply);
    const json::object& done = props(events.end()[-5]).at("info").as_object();
    EXPECT_EQ(str(done, "id"), str(created_, "id"));
    EXPECT_EQ(str(done, "finish"), "stop");
    EXPECT_TRUE(done.at("time").as_object().contains("completed"));
    for (const json::object& e : events) {
      if (type(e) == "message.part.delta") {
        EXPECT_EQ(str(props(e), "field"), "text");
        EXPECT_LE(str(props(e), "delta").size(), 16u);
      }
    }
  }
}

// A caller messageID becomes the user message's id verbatim, is the assistant's parentID, and
// is found by GET /session/:id/message/:mid; the blocking /message returns that assistant.
TEST_F(FakeOpenCodeTest, CallerMessageIdIsStoredVerbatimAndIsTheAssistantsParent) {
  Fake fake = start();
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  const std::string mid = mintMessageId();
  promptAsync(fake.port, session, "deliver: one", mid);
  auto events = untilIdle(*stream, session);
  ASSERT_EQ(labels(events), plainPrompt());
  auto user = std::find_if(events.begin(), events.end(), [](const json::object& e) {
    return label(e) == "message.updated:user";
  });
  ASSERT_NE(user, events.end());
  EXPECT_EQ(str(props(*user).at("info").as_object(), "id"), mid);

  http::HttpReply exact = call(fake.port, "GET", "/session/" + session + "/message/" + mid);
  ASSERT_EQ(exact.status, 200) << exact.body;
  json::object message = object(exact);
  EXPECT_EQ(str(message.at("info").as_object(), "id"), mid);
  EXPECT_EQ(str(message.at("parts").as_array().at(0).as_object(), "text"), "deliver: one");
  auto answers = assistantsOf(fake.port, session, mid);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(str(answers[0].at("info").as_object(), "finish"), "stop");

  const std::string mid2 = mintMessageId();
  http::HttpReply sync =
      call(fake.port, "POST", "/session/" + session + "/message", promptBody("deliver: two", mid2));
  ASSERT_EQ(sync.status, 200) << sync.body;
  json::object assistant = object(sync);
  EXPECT_EQ(str(assistant.at("info").as_object(), "parentID"), mid2);
  EXPECT_EQ(str(assistant.at("info").as_object(), "finish"), "stop");
  bool replied = false;
  for (const json::value& p : assistant.at("parts").as_array()) {
    replied = replied || str(p.as_object(), "text") == "fake-reply-2: deliver: two";
  }
  EXPECT_TRUE(replied) << sync.body;
}

// Bad input: a messageID without the "msg" prefix, malformed JSON and missing parts get 400
// BadRequest (nothing accepted); an unknown session or message gets 404 NotFoundError.
TEST_F(FakeOpenCodeTest, BadInputGets400AndUnknownSessionsGet404) {
  Fake fake = start();
  ASSERT_NE(fake.port, 0);
  const std::string session = createSession(fake.port);
  const std::string prompt = "/session/" + session + "/prompt_async";

  http::HttpReply noPrefix = call(fake.port, "POST", prompt, promptBody("x", "client-1"));
  EXPECT_EQ(noPrefix.status, 400);
  EXPECT_EQ(
      noPrefix.body,
      R"({"name":"BadRequest","data":{"message":"Expected a string starting with \"msg\", got \"client-1\""}})");
  http::HttpReply number =
      call(fake.port, "POST", prompt, R"({"messageID":5,"parts":[{"type":"text","text":"x"}]})");
  EXPECT_EQ(number.status, 400);
  EXPECT_NE(number.body.find("got 5"), std::string::npos) << number.body;
  http::HttpReply malformed = call(fake.port, "POST", prompt, "{\"parts\":[");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(str(object(malformed), "name"), "BadRequest");
  http::HttpReply noParts = call(fake.port, "POST", prompt, R"({"messageID":"msg_x"})");
  EXPECT_EQ(noParts.status, 400);
  EXPECT_EQ(str(object(noParts), "name"), "BadRequest");

  const std::string missing =
      R"({"name":"NotFoundError","data":{"message":"Session not found: ses_unknown"}})";
  http::HttpReply unknownPrompt =
      call(fake.port, "POST", "/session/ses_unknown/prompt_async", promptBody("x"));
  EXPECT_EQ(unknownPrompt.status, 404);
  EXPECT_EQ(unknownPrompt.body, missing);
  http::HttpReply unknownGet = call(fake.port, "GET", "/session/ses_unknown");
  EXPECT_EQ(unknownGet.status, 404);
  EXPECT_EQ(unknownGet.body, missing);
  EXPECT_EQ(call(fake.port, "GET", "/session/ses_unknown/message").status, 404);
  http::HttpReply unknownMessage =
      call(fake.port, "GET", "/session/" + session + "/message/msg_nope");
  EXPECT_EQ(unknownMessage.status, 404);
  EXPECT_EQ(str(object(unknownMessage), "name"), "NotFoundError");
  EXPECT_EQ(call(fake.port, "POST", "/session/ses_unknown/abort").status, 404);

  EXPECT_TRUE(logLines("input").empty());
  EXPECT_EQ(body(call(fake.port, "GET", "/session/" + session + "/message")),
            json::value(json::array{}));
}

// /session/status holds only busy (or retry) sessions: {} when idle, the session while it is
// busy, {} again once it is idle.
TEST_F(FakeOpenCodeTest, SessionStatusListsOnlyBusySessions) {
  Fake fake = start();
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  EXPECT_EQ(call(fake.port, "GET", "/session/status").body, "{}");
  promptAsync(fake.port, session, "stuck FAKE_HANG");
  ASSERT_FALSE(until(*stream, [](const json::object& e) {
                 return label(e) == "session.status:busy";
               }).empty());
  EXPECT_EQ(body(call(fake.port, "GET", "/session/status?directory=/tmp")),
            json::parse(R"({")" + session + R"(":{"type":"busy"}})"));
  EXPECT_EQ(call(fake.port, "POST", "/session/" + session + "/abort").body, "true");
  untilIdle(*stream, session);
  EXPECT_EQ(call(fake.port, "GET", "/session/status").body, "{}");
}

// A prompt_async while busy: 204 and its user message at once, answered after the current one
// by its own assistant (parentID = its id), with a single idle at the very end.
TEST_F(FakeOpenCodeTest, PromptWhileBusyIsAnsweredAfterWithNoIdleBetween) {
  Fake fake = start();
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  const std::string first = mintMessageId();
  const std::string second = mintMessageId();
  promptAsync(fake.port, session, "first FAKE_SLOW_1000", first);
  auto head =
      until(*stream, [](const json::object& e) { return label(e) == "message.updated:assistant"; });
  ASSERT_FALSE(head.empty());
  promptAsync(fake.port, session, "second", second);
  auto rest = untilIdle(*stream, session);
  ASSERT_FALSE(rest.empty());

  // What came: the first answer's head (user, part, busy, assistant), the second user message
  // and part at once, the rest of the first answer, the whole second, one idle.
  std::vector<std::string> got = labels(head);
  for (const std::string& l : labels(rest)) {
    got.push_back(l);
  }
  std::vector<std::string> want = {"message.updated:user", "message.part.updated:text",
                                   "session.status:busy",  "message.updated:assistant",
                                   "message.updated:user", "message.part.updated:text"};
  for (size_t i = 2; i < plainAnswer().size(); ++i) {
    want.push_back(plainAnswer()[i]);
  }
  for (const std::string& l : plainAnswer()) {
    want.push_back(l);
  }
  want.push_back("session.status:idle");
  want.push_back("session.idle");
  EXPECT_EQ(got, want);
  EXPECT_EQ(str(props(rest[0]).at("info").as_object(), "id"), second);

  auto firstAnswer = assistantsOf(fake.port, session, first);
  auto secondAnswer = assistantsOf(fake.port, session, second);
  ASSERT_EQ(firstAnswer.size(), 1u);
  ASSERT_EQ(secondAnswer.size(), 1u);
  EXPECT_LT(str(firstAnswer[0].at("info").as_object(), "id"),
            str(secondAnswer[0].at("info").as_object(), "id"));
  EXPECT_EQ(deltas(rest), "fake-reply-1: first FAKE_SLOW_1000fake-reply-2: second");
}

// Abort mid-answer (FAKE_HANG), as 1.18.33 with the model call in flight: true, then
// session.error MessageAbortedError, the processor's idle, the assistant completed with that
// error, the Runner's idle; the stored assistant says the same; a second abort is false.
TEST_F(FakeOpenCodeTest, AbortEndsTheAnswerWithMessageAbortedError) {
  Fake fake = start();
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  const std::string mid = mintMessageId();
  promptAsync(fake.port, session, "wait FAKE_HANG", mid);
  auto head =
      until(*stream, [](const json::object& e) { return label(e) == "message.updated:assistant"; });
  ASSERT_FALSE(head.empty());
  const std::string assistant = str(props(head.back()).at("info").as_object(), "id");

  http::HttpReply aborted = call(fake.port, "POST", "/session/" + session + "/abort");
  EXPECT_EQ(aborted.status, 200);
  EXPECT_EQ(aborted.body, "true");
  auto tail = untilIdle(*stream, session);
  ASSERT_EQ(labels(tail),
            (std::vector<std::string>{"session.error", "session.status:idle", "session.idle"}));
  EXPECT_EQ(json::serialize(props(tail[0])),
            R"({"sessionID":")" + session +
                R"(","error":{"name":"MessageAbortedError","data":{"message":"Aborted"}}})");
  auto runner = untilIdle(*stream, session);
  ASSERT_EQ(labels(runner), (std::vector<std::string>{"message.updated:assistant",
                                                      "session.status:idle", "session.idle"}));
  const json::object& ended = props(runner[0]).at("info").as_object();
  EXPECT_EQ(str(ended, "id"), assistant);
  EXPECT_EQ(str(ended.at("error").as_object(), "name"), "MessageAbortedError");
  EXPECT_TRUE(ended.at("time").as_object().contains("completed"));
  EXPECT_FALSE(ended.contains("finish"));

  json::object stored =
      object(call(fake.port, "GET", "/session/" + session + "/message/" + assistant));
  EXPECT_EQ(str(stored.at("info").at("error").as_object(), "name"), "MessageAbortedError");
  EXPECT_EQ(call(fake.port, "POST", "/session/" + session + "/abort").body, "false");
  auto turns = logLines("turn");
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(str(turns[0], "error"), "MessageAbortedError");
  EXPECT_EQ(str(turns[0], "userMessageId"), mid);
}

// FAKE_RETRY_FOREVER: retry statuses with growing attempts (shown by /session/status) until
// an abort, which ends it like any abort.
TEST_F(FakeOpenCodeTest, RetryForeverRetriesUntilAborted) {
  Fake fake = start();
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  promptAsync(fake.port, session, "FAKE_RETRY_FOREVER");
  for (int attempt = 1; attempt <= 2; ++attempt) {
    auto events =
        until(*stream, [](const json::object& e) { return label(e) == "session.status:retry"; });
    ASSERT_FALSE(events.empty());
    const json::object& status = props(events.back()).at("status").as_object();
    EXPECT_EQ(status.at("attempt"), attempt);
    EXPECT_EQ(str(status, "message"), "fake forced error 500");
    EXPECT_GT(status.at("next").as_int64(), 0);
  }
  json::object statuses = object(call(fake.port, "GET", "/session/status"));
  EXPECT_EQ(str(statuses.at(session).as_object(), "type"), "retry");
  EXPECT_EQ(call(fake.port, "POST", "/session/" + session + "/abort").body, "true");
  auto tail = untilIdle(*stream, session);
  std::vector<std::string> end = labels(tail);
  ASSERT_GE(end.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(end.end() - 3, end.end()),
            (std::vector<std::string>{"session.error", "session.status:idle", "session.idle"}));
  EXPECT_EQ(labels(untilIdle(*stream, session)),
            (std::vector<std::string>{"message.updated:assistant", "session.status:idle",
                                      "session.idle"}));
  EXPECT_EQ(call(fake.port, "GET", "/session/status").body, "{}");
}

// FAKE_NO_ASSISTANT: busy, session.error UnknownError, idle, and no assistant anywhere.
TEST_F(FakeOpenCodeTest, NoAssistantGoesIdleWithoutAnyAssistant) {
  Fake fake = start();
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  const std::string mid = mintMessageId();
  promptAsync(fake.port, session, "FAKE_NO_ASSISTANT", mid);
  auto events = untilIdle(*stream, session);
  ASSERT_EQ(labels(events),
            (std::vector<std::string>{"message.updated:user", "message.part.updated:text",
                                      "session.status:busy", "session.error", "session.status:idle",
                                      "session.idle"}));
  EXPECT_EQ(str(props(events[3]).at("error").as_object(), "name"), "UnknownError");
  json::value list = body(call(fake.port, "GET", "/session/" + session + "/message"));
  ASSERT_TRUE(list.is_array());
  ASSERT_EQ(list.as_array().size(), 1u);
  EXPECT_EQ(list.as_array()[0].at("info").at("id"), mid.c_str());
  auto turns = logLines("turn");
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_TRUE(turns[0].at("assistantId").is_null());
}

// FAKE_DROP_SSE: every open stream ends right after the assistant's first message.updated;
// the answer still completes in the message list, and a new stream can be opened.
TEST_F(FakeOpenCodeTest, DropSseClosesEveryStreamButTheAnswerCompletes) {
  Fake fake = start();
  ASSERT_NE(fake.port, 0);
  auto one = subscribe(fake.port);
  auto two = subscribe(fake.port);
  ASSERT_TRUE(one && two);
  const std::string session = createSession(fake.port, *one);
  untilType(*two, "session.updated");
  const std::string mid = mintMessageId();
  promptAsync(fake.port, session, "FAKE_DROP_SSE", mid);
  for (EventStream* stream : {one.get(), two.get()}) {
    auto events = until(
        *stream, [](const json::object& e) { return label(e) == "message.updated:assistant"; });
    ASSERT_FALSE(events.empty());
    EXPECT_TRUE(stream->ends());
  }
  EXPECT_TRUE(eventually([&] {
    auto answers = assistantsOf(fake.port, session, mid);
    return answers.size() == 1 && str(answers[0].at("info").as_object(), "finish") == "stop";
  }));
  auto three = subscribe(fake.port);
  EXPECT_NE(three, nullptr);
}

// --state: a second process on the same file serves the sessions and messages of the first
// (which SIGTERM ended with 143), every session idle.
TEST_F(FakeOpenCodeTest, StatePersistsAcrossARestart) {
  const std::string mid = mintMessageId();
  std::string session;
  {
    Fake fake = start();
    ASSERT_NE(fake.port, 0);
    auto stream = subscribe(fake.port);
    ASSERT_NE(stream, nullptr);
    session = createSession(fake.port, "persisted");
    promptAsync(fake.port, session, "remember me", mid);
    untilIdle(*stream, session);
    fake.child->signal(SIGTERM);
    auto exit = fake.child->waitExit();
    ASSERT_TRUE(exit);
    EXPECT_TRUE(exit->exited && exit->code == 143) << exit->toString();
  }
  Fake again = start();
  ASSERT_NE(again.port, 0);
  http::HttpReply info = call(again.port, "GET", "/session/" + session);
  ASSERT_EQ(info.status, 200) << info.body;
  EXPECT_EQ(str(object(info), "title"), "persisted");
  json::value list = body(call(again.port, "GET", "/session/" + session + "/message"));
  ASSERT_TRUE(list.is_array());
  EXPECT_EQ(list.as_array().size(), 2u);
  http::HttpReply user = call(again.port, "GET", "/session/" + session + "/message/" + mid);
  ASSERT_EQ(user.status, 200);
  EXPECT_EQ(str(object(user).at("parts").as_array().at(0).as_object(), "text"), "remember me");
  auto answers = assistantsOf(again.port, session, mid);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(str(answers[0].at("info").as_object(), "finish"), "stop");
  EXPECT_EQ(call(again.port, "GET", "/session/status").body, "{}");
}

// The real bug (seen on 1.18.33): a messageID that exists in another session gets 204,
// its text is appended to the old message over there, and nothing runs or is emitted.
TEST_F(FakeOpenCodeTest, AReusedMessageIdCorruptsTheOtherSession) {
  Fake fake = start();
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string a = createSession(fake.port, *stream, "a");
  const std::string b = createSession(fake.port, *stream, "b");
  const std::string mid = mintMessageId();
  promptAsync(fake.port, a, "first", mid);
  untilIdle(*stream, a);

  promptAsync(fake.port, b, "intruder", mid);
  const std::string next = mintMessageId();
  promptAsync(fake.port, b, "after", next);
  auto events = untilIdle(*stream, b);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(str(props(events[0]).at("info").as_object(), "id"), next);  // nothing before it
  EXPECT_EQ(labels(events), plainPrompt());

  json::object old = object(call(fake.port, "GET", "/session/" + a + "/message/" + mid));
  const json::array& parts = old.at("parts").as_array();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(str(parts[0].as_object(), "text"), "first");
  EXPECT_EQ(str(parts[1].as_object(), "text"), "intruder");
  EXPECT_EQ(call(fake.port, "GET", "/session/" + b + "/message/" + mid).status, 404);
  json::value listB = body(call(fake.port, "GET", "/session/" + b + "/message"));
  EXPECT_EQ(listB.as_array().size(), 2u);

  auto inputs = logLines("input");
  ASSERT_EQ(inputs.size(), 3u);
  EXPECT_EQ(str(inputs[1], "sessionId"), b);
  EXPECT_EQ(str(inputs[1], "messageId"), mid);
  EXPECT_EQ(inputs[1].at("reused"), true);
  EXPECT_FALSE(inputs[2].contains("reused"));
}

// --fake-log: start (argv), every request (method, path without query, status), the input
// before its 204, the turn, and the exit on SIGTERM (143).
TEST_F(FakeOpenCodeTest, FakeLogRecordsRequestsInputsTurnsAndTheExit) {
  Fake fake = start({"--turn-ms=5"});
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  const std::string mid = mintMessageId();
  http::HttpReply accepted =
      call(fake.port, "POST", "/session/" + session + "/prompt_async?directory=/tmp/project",
           promptBody("logged text", mid));
  EXPECT_EQ(accepted.status, 204);
  auto inputs = logLines("input");  // already there: written before the 204
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(str(inputs[0], "sessionId"), session);
  EXPECT_EQ(str(inputs[0], "messageId"), mid);
  EXPECT_EQ(str(inputs[0], "text"), "logged text");
  untilIdle(*stream, session);
  auto turns = logLines("turn");
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(str(turns[0], "userMessageId"), mid);
  EXPECT_EQ(str(turns[0], "finish"), "stop");
  EXPECT_TRUE(str(turns[0], "assistantId").starts_with("msg_"));
  EXPECT_TRUE(turns[0].at("error").is_null());

  fake.child->signal(SIGTERM);
  auto exit = fake.child->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->exited && exit->code == 143) << exit->toString();

  auto starts = logLines("start");
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].at("pid"), fake.child->pid());
  const json::array& argv = starts[0].at("argv").as_array();
  EXPECT_NE(std::find(argv.begin(), argv.end(), json::value("serve")), argv.end());
  std::vector<std::string> requests;
  for (const json::object& r : logLines("request")) {
    requests.push_back(str(r, "method") + " " + str(r, "path") + " " +
                       std::to_string(r.at("status").as_int64()));
  }
  EXPECT_EQ(requests, (std::vector<std::string>{"GET /event 200", "POST /session 200",
                                                "POST /session/" + session + "/prompt_async 204"}));
  auto exits = logLines("exit");
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].at("code"), 143);
}

// FAKE_TOOLS: a first assistant step with the echo_echo tool (pending → running → completed)
// finishing "tool-calls", then a second assistant with the same parentID finishing "stop".
TEST_F(FakeOpenCodeTest, ToolsGiveTwoAssistantsWithTheSameParent) {
  Fake fake = start();
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  const std::string mid = mintMessageId();
  promptAsync(fake.port, session, "banana FAKE_TOOLS", mid);
  auto events = untilIdle(*stream, session);
  std::vector<std::string> tools;
  for (const json::object& e : events) {
    if (label(e) == "message.part.updated:tool") {
      const json::object& part = props(e).at("part").as_object();
      EXPECT_EQ(str(part, "tool"), "echo_echo");
      tools.push_back(str(part.at("state").as_object(), "status"));
    }
  }
  EXPECT_EQ(tools, (std::vector<std::string>{"pending", "running", "completed"}));
  auto answers = assistantsOf(fake.port, session, mid);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(str(answers[0].at("info").as_object(), "finish"), "tool-calls");
  EXPECT_EQ(str(answers[1].at("info").as_object(), "finish"), "stop");
  EXPECT_EQ(deltas(events), "fake-reply-1: banana FAKE_TOOLS");
}

// FAKE_ERROR_FATAL: session.error APIError 400, the assistant completed with that error and
// no finish, then idle.
TEST_F(FakeOpenCodeTest, FatalErrorEndsTheAssistantWithTheApiError) {
  Fake fake = start();
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  promptAsync(fake.port, session, "FAKE_ERROR_FATAL");
  auto events = untilIdle(*stream, session);
  ASSERT_EQ(labels(events),
            (std::vector<std::string>{"message.updated:user", "message.part.updated:text",
                                      "session.status:busy", "message.updated:assistant",
                                      "session.error", "message.updated:assistant",
                                      "session.status:idle", "session.idle"}));
  EXPECT_EQ(
      json::serialize(props(events[4]).at("error")),
      R"({"name":"APIError","data":{"message":"fake forced error 400","statusCode":400,"isRetryable":false}})");
  const json::object& ended = props(events[5]).at("info").as_object();
  EXPECT_EQ(ended.at("error"), props(events[4]).at("error"));
  EXPECT_FALSE(ended.contains("finish"));
  EXPECT_TRUE(ended.at("time").as_object().contains("completed"));
}

// FAKE_OVERFLOW: the `compaction.auto=false` overflow of 1.18.33 — session.error
// ContextOverflowError, the processor's idle, the assistant completed with finish "error" and
// that error, then the Runner's idle.
TEST_F(FakeOpenCodeTest, OverflowIsTwoIdlesWithTheErroredAssistantBetween) {
  Fake fake = start();
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  promptAsync(fake.port, session, "FAKE_OVERFLOW");
  auto events = untilIdle(*stream, session);
  ASSERT_EQ(labels(events),
            (std::vector<std::string>{"message.updated:user", "message.part.updated:text",
                                      "session.status:busy", "message.updated:assistant",
                                      "session.error", "session.status:idle", "session.idle"}));
  EXPECT_EQ(props(events[4]).at("error").at("name").as_string(), "ContextOverflowError");
  auto after = untilIdle(*stream, session);
  ASSERT_GE(after.size(), 3u);
  EXPECT_EQ(label(after.front()), "message.updated:assistant");
  const json::object& ended = props(after.front()).at("info").as_object();
  EXPECT_EQ(ended.at("finish").as_string(), "error");
  EXPECT_EQ(ended.at("error"), props(events[4]).at("error"));
  EXPECT_EQ(label(after[after.size() - 2]), "session.status:idle");
  EXPECT_EQ(label(after.back()), "session.idle");
}

// FAKE_CRASH: the assistant's message.updated reaches the stream, then the process exits 3.
TEST_F(FakeOpenCodeTest, CrashExitsThreeAfterTheAssistantIsCreated) {
  Fake fake = start();
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  promptAsync(fake.port, session, "FAKE_CRASH");
  auto events =
      until(*stream, [](const json::object& e) { return label(e) == "message.updated:assistant"; });
  EXPECT_FALSE(events.empty());
  EXPECT_TRUE(stream->ends());
  auto exit = fake.child->waitExit();
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->exited && exit->code == 3) << exit->toString();
}

// The other markers shape the events as documented in fake_opencode.cc.
TEST_F(FakeOpenCodeTest, ScriptedMarkersShapeTheEvents) {
  Fake fake = start({"--heartbeat-ms", "10000"});
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  std::vector<std::string> answer = plainAnswer();
  auto prompt = [&](std::vector<std::string> head, bool plainTail) {
    std::vector<std::string> out{"message.updated:user", "message.part.updated:text"};
    out.insert(out.end(), head.begin(), head.end());
    if (plainTail) out.insert(out.end(), answer.begin(), answer.end());
    out.push_back("session.status:idle");
    out.push_back("session.idle");
    return out;
  };
  std::vector<std::string> retryOnce = answer;
  retryOnce.insert(retryOnce.begin() + 2, {"session.status:retry", "session.status:busy"});
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases{
      {"FAKE_IDLE_EARLY", prompt({"session.status:idle", "session.idle"}, true)},
      {"FAKE_ERROR_RECOVER",
       [&] {
         auto out = prompt({}, true);
         out.insert(out.begin() + 3, "session.error");
         return out;
       }()},
      {"FAKE_RETRY_ONCE", prompt(retryOnce, false)},
      {"FAKE_AUTO_COMPACT",
       prompt({"session.status:busy", "message.updated:user", "message.part.updated:compaction",
               "message.updated:assistant", "message.part.updated:step-start",
               "message.part.updated:text", "message.part.delta", "message.part.updated:text",
               "message.part.updated:step-finish", "message.updated:assistant",
               "message.updated:assistant", "session.compacted"},
              false)},
  };
  for (const auto& [marker, expected] : cases) {
    promptAsync(fake.port, session, "marker " + marker);
    auto events = untilIdle(*stream, session, marker == "FAKE_IDLE_EARLY" ? 2 : 1);
    EXPECT_EQ(labels(events), expected) << marker;
    if (marker == "FAKE_AUTO_COMPACT") {
      const std::string compaction = str(props(events[3]).at("info").as_object(), "id");
      const json::object& summary = props(events[5]).at("info").as_object();
      EXPECT_EQ(str(summary, "parentID"), compaction);
      EXPECT_EQ(summary.at("summary"), true);
    }
  }

  // FAKE_SILENT: the user message, then nothing; abort still ends it.
  promptAsync(fake.port, session, "FAKE_SILENT");
  auto silent = untilType(*stream, "message.part.updated");
  EXPECT_EQ(labels(silent),
            (std::vector<std::string>{"message.updated:user", "message.part.updated:text"}));
  EXPECT_EQ(call(fake.port, "GET", "/session/status").body, "{}");
  EXPECT_EQ(call(fake.port, "POST", "/session/" + session + "/abort").body, "true");
  EXPECT_EQ(labels(untilIdle(*stream, session)),
            (std::vector<std::string>{"session.error", "session.status:idle", "session.idle"}));
}

// FAKE_PRUNE: 100 ms after the idle, the newest tool part of an earlier answer comes again
// with state.time.compacted set.
TEST_F(FakeOpenCodeTest, PruneUpdatesAnEarlierToolPartAfterTheIdle) {
  Fake fake = start();
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  const std::string toolsId = mintMessageId();
  promptAsync(fake.port, session, "FAKE_TOOLS", toolsId);
  untilIdle(*stream, session);
  auto toolAnswer = assistantsOf(fake.port, session, toolsId);
  ASSERT_EQ(toolAnswer.size(), 2u);
  const std::string toolMessage = str(toolAnswer[0].at("info").as_object(), "id");
  promptAsync(fake.port, session, "FAKE_PRUNE");
  untilIdle(*stream, session);
  auto pruned =
      until(*stream, [](const json::object& e) { return label(e) == "message.part.updated:tool"; });
  ASSERT_FALSE(pruned.empty());
  const json::object& part = props(pruned.back()).at("part").as_object();
  EXPECT_EQ(str(part, "messageID"), toolMessage);
  EXPECT_TRUE(part.at("state").at("time").as_object().contains("compacted"));
}

// /event sends server.heartbeat every --heartbeat-ms while nothing else happens.
TEST_F(FakeOpenCodeTest, HeartbeatsComeEveryPeriod) {
  Fake fake = start({"--heartbeat-ms", "50"});
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  for (int i = 0; i < 2; ++i) {
    auto event = stream->next();
    ASSERT_TRUE(event);
    EXPECT_EQ(type(*event), "server.heartbeat");
  }
}

// POST /summarize (the real 1.18.33 probe): a compaction user message U (auto:false) and its
// part, busy, the summary assistant (parent U, summary:true, mode "compaction"), its text,
// session.compacted before the final idle; the call answers 200 true; U and the summary stay
// in the message list after the earlier messages.
TEST_F(FakeOpenCodeTest, SummarizeCompactsAndAnswersTrue) {
  Fake fake = start({"--turn-ms", "5", "--summarize-ms", "5"});
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  const std::string mid = mintMessageId();
  promptAsync(fake.port, session, "hello opencode", mid);
  untilIdle(*stream, session);

  http::HttpReply reply = summarize(fake.port, session);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "true");
  auto events = untilIdle(*stream, session);
  ASSERT_EQ(labels(events), summarizeEvents());
  const json::object& user = props(events[0]).at("info").as_object();
  const std::string compaction = str(user, "id");
  EXPECT_TRUE(compaction.starts_with("msg_"));
  EXPECT_EQ(compaction.size(), 4u + 12u + 14u);
  EXPECT_GT(compaction, mid);
  EXPECT_EQ(str(user, "role"), "user");
  EXPECT_FALSE(user.contains("parentID"));
  EXPECT_EQ(json::serialize(user.at("model")), R"({"providerID":"fake","modelID":"fake-model"})");
  const json::object& part = props(events[1]).at("part").as_object();
  EXPECT_EQ(part.at("auto"), false);
  EXPECT_EQ(str(part, "messageID"), compaction);
  EXPECT_EQ(str(part, "sessionID"), session);
  const json::object& created = props(events[3]).at("info").as_object();
  const std::string assistant = str(created, "id");
  EXPECT_EQ(str(created, "parentID"), compaction);
  EXPECT_EQ(created.at("summary"), true);
  EXPECT_EQ(str(created, "mode"), "compaction");
  EXPECT_EQ(str(created, "agent"), "compaction");
  EXPECT_EQ(str(created, "providerID"), "fake");
  EXPECT_EQ(str(created, "modelID"), "fake-model");
  EXPECT_FALSE(created.at("time").as_object().contains("completed"));
  EXPECT_EQ(deltas(events), "fake-summary-2: summary of 2 messages");
  for (int i : {-6, -5}) {  // before session.compacted, busy, idle, session.idle
    const json::object& done = props(events.end()[i]).at("info").as_object();
    EXPECT_EQ(str(done, "id"), assistant);
    EXPECT_EQ(str(done, "finish"), "stop");
    EXPECT_EQ(done.at("summary"), true);
    EXPECT_TRUE(done.at("time").as_object().contains("completed"));
  }
  EXPECT_EQ(str(props(events.end()[-4]), "sessionID"), session);

  json::value list = body(call(fake.port, "GET", "/session/" + session + "/message"));
  ASSERT_TRUE(list.is_array());
  ASSERT_EQ(list.as_array().size(), 4u);
  const json::object& storedUser = list.as_array()[2].as_object();
  EXPECT_EQ(str(storedUser.at("info").as_object(), "id"), compaction);
  ASSERT_EQ(storedUser.at("parts").as_array().size(), 1u);
  EXPECT_EQ(str(storedUser.at("parts").as_array()[0].as_object(), "type"), "compaction");
  const json::object& storedSummary = list.as_array()[3].as_object();
  const json::object& info = storedSummary.at("info").as_object();
  EXPECT_EQ(str(info, "id"), assistant);
  EXPECT_EQ(str(info, "parentID"), compaction);
  EXPECT_EQ(info.at("summary"), true);
  EXPECT_EQ(str(info, "finish"), "stop");
  std::vector<std::string> parts;
  for (const json::value& p : storedSummary.at("parts").as_array()) {
    parts.push_back(str(p.as_object(), "type"));
  }
  EXPECT_EQ(parts, (std::vector<std::string>{"step-start", "text", "step-finish"}));
  auto logged = logLines("summarize");
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_EQ(str(logged[0], "messageId"), compaction);
  EXPECT_EQ(str(logged[0], "modelID"), "fake-model");
}

// A prompt_async while a summarize runs: 204 and its user message at once, answered after
// session.compacted with no idle in between; the summarize call answers only then.
TEST_F(FakeOpenCodeTest, PromptDuringSummarizeIsQueuedBehindTheCompaction) {
  Fake fake = start({"--turn-ms", "5", "--summarize-ms", "200"});
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  http::HttpReply reply;
  std::thread caller([&] { reply = summarize(fake.port, session); });
  auto head =
      until(*stream, [](const json::object& e) { return label(e) == "message.updated:assistant"; });
  const std::string mid = mintMessageId();
  promptAsync(fake.port, session, "during summarize", mid);
  auto rest = untilIdle(*stream, session);
  caller.join();
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "true");

  std::vector<std::string> got = labels(head);
  for (const std::string& l : labels(rest)) {
    got.push_back(l);
  }
  std::vector<std::string> want = summarizeEvents();
  want.resize(want.size() - 2);  // no idle after the compaction's busy
  want.insert(want.begin() + 5, {"message.updated:user", "message.part.updated:text"});
  for (const std::string& l : plainAnswer()) {
    want.push_back(l);
  }
  want.push_back("session.status:idle");
  want.push_back("session.idle");
  EXPECT_EQ(got, want);
  EXPECT_EQ(deltas(rest), "fake-summary-1: summary of 0 messagesfake-reply-2: during summarize");
  auto answers = assistantsOf(fake.port, session, mid);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(str(answers[0].at("info").as_object(), "finish"), "stop");
  EXPECT_FALSE(answers[0].at("info").as_object().contains("summary"));
}

// Bad summarize input: a missing providerID / modelID gets the real 400, an unknown session
// 404. A model the fake has not: 500 UnknownError at once, and still the compaction user
// message, busy, session.error "Model not found", idle; no assistant.
TEST_F(FakeOpenCodeTest, SummarizeRefusesBadInputAndAnUnknownModel) {
  Fake fake = start();
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);

  http::HttpReply empty = summarize(fake.port, session, "{}");
  EXPECT_EQ(empty.status, 400);
  EXPECT_EQ(
      empty.body,
      R"({"name":"BadRequest","data":{"message":"Missing key\n  at [\"providerID\"]","kind":"Payload"}})");
  http::HttpReply noModel = summarize(fake.port, session, R"({"providerID":"fake"})");
  EXPECT_EQ(noModel.status, 400);
  EXPECT_NE(noModel.body.find(R"(at [\"modelID\"])"), std::string::npos) << noModel.body;
  http::HttpReply unknown = summarize(fake.port, "ses_unknown");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.body,
            R"({"name":"NotFoundError","data":{"message":"Session not found: ses_unknown"}})");

  http::HttpReply wrong = summarize(fake.port, session, summarizeBody("fake", "nope"));
  EXPECT_EQ(wrong.status, 500);
  json::object error = object(wrong);
  EXPECT_EQ(str(error, "name"), "UnknownError");
  EXPECT_EQ(str(error.at("data").as_object(), "message"),
            "Unexpected server error. Check server logs for details.");
  EXPECT_TRUE(str(error.at("data").as_object(), "ref").starts_with("err_"));
  auto events = untilIdle(*stream, session);
  ASSERT_EQ(labels(events),
            (std::vector<std::string>{"message.updated:user", "message.part.updated:compaction",
                                      "session.status:busy", "session.error", "session.status:idle",
                                      "session.idle"}));
  const json::object& user = props(events[0]).at("info").as_object();
  EXPECT_EQ(json::serialize(user.at("model")), R"({"providerID":"fake","modelID":"nope"})");
  EXPECT_EQ(
      json::serialize(props(events[3])),
      R"({"sessionID":")" + session +
          R"(","error":{"name":"UnknownError","data":{"message":"Model not found: fake/nope."}}})");
  json::value list = body(call(fake.port, "GET", "/session/" + session + "/message"));
  ASSERT_TRUE(list.is_array());
  ASSERT_EQ(list.as_array().size(), 1u);
  EXPECT_EQ(str(list.as_array()[0].at("info").as_object(), "id"), str(user, "id"));
}

// --summarize-fail: after the summary assistant, session.error APIError 400, idle, the
// assistant completed with the error, idle again; no session.compacted; still 200 true.
TEST_F(FakeOpenCodeTest, SummarizeFailEndsWithoutCompaction) {
  Fake fake = start({"--summarize-fail", "--summarize-ms", "5"});
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  http::HttpReply reply = summarize(fake.port, session);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "true");
  auto events = untilIdle(*stream, session, 2);
  ASSERT_EQ(labels(events),
            (std::vector<std::string>{"message.updated:user", "message.part.updated:compaction",
                                      "session.status:busy", "message.updated:assistant",
                                      "session.status:busy", "session.error", "session.status:idle",
                                      "session.idle", "message.updated:assistant",
                                      "session.status:idle", "session.idle"}));
  EXPECT_EQ(
      json::serialize(props(events[5]).at("error")),
      R"({"name":"APIError","data":{"message":"Bad Request","statusCode":400,"isRetryable":false}})");
  const json::object& ended = props(events[8]).at("info").as_object();
  EXPECT_EQ(ended.at("error"), props(events[5]).at("error"));
  EXPECT_EQ(ended.at("summary"), true);
  EXPECT_FALSE(ended.contains("finish"));
  EXPECT_TRUE(ended.at("time").as_object().contains("completed"));
}

// --summarize-no-compacted: the success sequence without session.compacted; still 200 true.
TEST_F(FakeOpenCodeTest, SummarizeNoCompactedLeavesOutTheCompactedEvent) {
  Fake fake = start({"--summarize-no-compacted", "--summarize-ms", "5"});
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  http::HttpReply reply = summarize(fake.port, session);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "true");
  EXPECT_EQ(labels(untilIdle(*stream, session)), summarizeEvents(false));
}

// --summarize-retry: retry statuses every 200 ms with the call pending until an abort, which
// completes the summary assistant with no error and answers the call 200 true.
TEST_F(FakeOpenCodeTest, SummarizeRetryRetriesUntilAborted) {
  Fake fake = start({"--summarize-retry"});
  ASSERT_NE(fake.port, 0);
  auto stream = subscribe(fake.port);
  ASSERT_NE(stream, nullptr);
  const std::string session = createSession(fake.port, *stream);
  std::atomic<bool> returned{false};
  http::HttpReply reply;
  std::thread caller([&] {
    reply = summarize(fake.port, session);
    returned = true;
  });
  for (int attempt = 1; attempt <= 2; ++attempt) {
    auto events =
        until(*stream, [](const json::object& e) { return label(e) == "session.status:retry"; });
    ASSERT_FALSE(events.empty());
    const json::object& status = props(events.back()).at("status").as_object();
    EXPECT_EQ(status.at("attempt"), attempt);
    EXPECT_EQ(str(status, "message"), "fake forced error 500");
    EXPECT_GT(status.at("next").as_int64(), 0);
  }
  EXPECT_FALSE(returned);
  json::object statuses = object(call(fake.port, "GET", "/session/status"));
  EXPECT_EQ(str(statuses.at(session).as_object(), "type"), "retry");
  EXPECT_EQ(call(fake.port, "POST", "/session/" + session + "/abort").body, "true");
  caller.join();
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "true");
  auto tail = untilIdle(*stream, session);
  ASSERT_EQ(labels(tail), (std::vector<std::string>{"message.updated:assistant",
                                                    "session.status:idle", "session.idle"}));
  const json::object& ended = props(tail[0]).at("info").as_object();
  EXPECT_EQ(ended.at("summary"), true);
  EXPECT_FALSE(ended.contains("error"));
  EXPECT_FALSE(ended.contains("finish"));
  EXPECT_TRUE(ended.at("time").as_object().contains("completed"));
}

}  // namespace
}  // namespace shoal::testing
