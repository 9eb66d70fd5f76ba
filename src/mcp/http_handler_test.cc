// The Streamable HTTP endpoint's rules (mcp/http_handler.h), driven without sockets.
#include "mcp/http_handler.h"

#include <string>

#include <boost/json.hpp>

#include "mcp/sample_tools.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace shoal::mcp {
namespace {

namespace json = boost::json;
using ::testing::HasSubstr;

constexpr uint16_t kPort = 4321;
constexpr const char* kToken = "secret-token";

class HttpHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override { handler_ = make(ServerOptions{}); }

  static std::unique_ptr<HttpHandler> make(ServerOptions options) {
    options.bearerToken = kToken;
    options.version = "1.2.3";
    options.instructions = "be brief";
    auto h = HttpHandler::create(options, kPort, sampleToolsForTest());
    EXPECT_TRUE(h.isOk()) << h.status().toString();
    return std::move(h).value();
  }

  static HttpRequest request(std::string method, std::string body, HttpHeaders extra = {}) {
    HttpRequest r;
    r.method = std::move(method);
    r.target = "/mcp";
    r.headers = {{"Host", "127.0.0.1:4321"},
                 {"Authorization", std::string("Bearer ") + kToken},
                 {"Content-Type", "application/json"},
                 {"Accept", "application/json, text/event-stream"}};
    for (auto& h : extra) {
      r.headers.push_back(std::move(h));
    }
    r.body = std::move(body);
    return r;
  }

  // Handles `r`, running a tool call inline when the handler defers one.
  HttpResponse send(const HttpRequest& r, HttpHandler* h = nullptr) {
    HttpHandler::Reply reply = (h ? h : handler_.get())->handle(r);
    return reply.work ? reply.work() : reply.response;
  }

  HttpResponse post(const std::string& body, HttpHeaders extra = {}) {
    return send(request("POST", body, std::move(extra)));
  }

  // Initializes at `version`; returns the session id.
  std::string initialize(const std::string& version = "2025-11-25", HttpHandler* h = nullptr) {
    HttpResponse r = send(request("POST", R"({"jsonrpc":"2.0","id":0,"method":"initialize",
        "params":{"protocolVersion":")" + version +
                                              R"(","capabilities":{},
        "clientInfo":{"name":"t","version":"1"}}})"),
                          h);
    EXPECT_EQ(r.status, 200);
    return std::string(r.header("Mcp-Session-Id"));
  }

  HttpResponse inSession(const std::string& session, const std::string& body,
                         HttpHeaders extra = {}) {
    extra.emplace_back("Mcp-Session-Id", session);
    return post(body, std::move(extra));
  }

  static json::object bodyOf(const HttpResponse& r) { return json::parse(r.body).as_object(); }

  static json::object callResult(const HttpResponse& r) {
    json::object o = bodyOf(r);
    EXPECT_TRUE(o.contains("result")) << r.body;
    return o.contains("result") ? o.at("result").as_object() : json::object{};
  }

  static std::string resultText(const json::object& result) {
    return std::string(result.at("content").as_array().at(0).at("text").as_string());
  }

  std::unique_ptr<HttpHandler> handler_;
};

// initialize echoes a supported version, answers an unsupported one with the latest, and mints
// a session id of visible ASCII.
TEST_F(HttpHandlerTest, InitializeNegotiatesVersionAndMintsSession) {
  for (const char* v : {"2025-03-26", "2025-06-18", "2025-11-25", "2024-11-05", "2099-01-01"}) {
    HttpResponse r = post(std::string(R"({"jsonrpc":"2.0","id":1,"method":"initialize",
        "params":{"protocolVersion":")") +
                          v + R"("}})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.header("Content-Type"), "application/json");
    json::object result = bodyOf(r).at("result").as_object();
    std::string expected = isSupportedProtocolVersion(v) ? v : "2025-11-25";
    EXPECT_EQ(result.at("protocolVersion"), json::value(expected));
    EXPECT_EQ(json::serialize(result.at("capabilities")), R"({"tools":{"listChanged":false}})");
    EXPECT_EQ(json::serialize(result.at("serverInfo")), R"({"name":"shoal","version":"1.2.3"})");
    EXPECT_EQ(result.at("instructions"), json::value("be brief"));
    std::string id(r.header("Mcp-Session-Id"));
    EXPECT_EQ(id.size(), 32u);
    for (char c : id) {
      EXPECT_TRUE(c >= 0x21 && c <= 0x7e);
    }
  }
  EXPECT_EQ(handler_->sessionCountForTest(), 5u);
}

// Without params.protocolVersion initialize is invalid params, and no session is made.
TEST_F(HttpHandlerTest, InitializeWithoutVersionIsInvalidParams) {
  HttpResponse r = post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  EXPECT_EQ(bodyOf(r).at("error").at("code"), json::value(jsonrpc::kInvalidParams));
  EXPECT_TRUE(r.header("Mcp-Session-Id").empty());
  EXPECT_EQ(handler_->sessionCountForTest(), 0u);
}

// Requests after initialize need the session header: missing 400, unknown 404.
TEST_F(HttpHandlerTest, SessionHeaderRules) {
  std::string s = initialize();
  EXPECT_EQ(post(R"({"jsonrpc":"2.0","id":2,"method":"ping"})").status, 400);
  HttpResponse unknown = inSession("0123", R"({"jsonrpc":"2.0","id":2,"method":"ping"})");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(bodyOf(unknown).at("error").at("code"), json::value(jsonrpc::kSessionNotFound));
  HttpResponse ok = inSession(s, R"({"jsonrpc":"2.0","id":2,"method":"ping"})");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body, R"({"jsonrpc":"2.0","id":2,"result":{}})");
}

// MCP-Protocol-Version must match the negotiated version when present; absent is fine.
TEST_F(HttpHandlerTest, ProtocolVersionHeaderMustMatch) {
  std::string s = initialize("2025-06-18");
  const std::string ping = R"({"jsonrpc":"2.0","id":3,"method":"ping"})";
  EXPECT_EQ(inSession(s, ping, {{"MCP-Protocol-Version", "2025-06-18"}}).status, 200);
  EXPECT_EQ(inSession(s, ping).status, 200);
  HttpResponse mismatch = inSession(s, ping, {{"MCP-Protocol-Version", "2025-11-25"}});
  EXPECT_EQ(mismatch.status, 400);
  EXPECT_THAT(mismatch.body, HasSubstr("2025-06-18"));
  EXPECT_EQ(inSession(s, ping, {{"MCP-Protocol-Version", "1999-01-01"}}).status, 400);
}

// Notifications and client responses are accepted with 202 and no body.
TEST_F(HttpHandlerTest, NotificationsAndResponsesGet202) {
  std::string s = initialize();
  HttpResponse n = inSession(s, R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  EXPECT_EQ(n.status, 202);
  EXPECT_TRUE(n.body.empty());
  EXPECT_EQ(inSession(s, R"({"jsonrpc":"2.0","method":"notifications/cancelled",
      "params":{"requestId":1}})")
                .status,
            202);
  EXPECT_EQ(inSession(s, R"({"jsonrpc":"2.0","id":"srv-1","result":{}})").status, 202);
  // Without a session a notification is refused like any other message.
  EXPECT_EQ(post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})").status, 400);
}

// An unknown method is -32601, with or without a session (the server/discover probe).
TEST_F(HttpHandlerTest, UnknownMethodsAreMethodNotFound) {
  HttpResponse probe = post(R"({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{
      "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})",
                            {{"MCP-Protocol-Version", "2026-07-28"}});
  EXPECT_EQ(probe.status, 200);
  EXPECT_EQ(bodyOf(probe).at("error").at("code"), json::value(jsonrpc::kMethodNotFound));
  EXPECT_EQ(bodyOf(probe).at("id"), json::value(1));

  std::string s = initialize();
  HttpResponse r = inSession(s, R"({"jsonrpc":"2.0","id":2,"method":"resources/list"})");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(bodyOf(r).at("error").at("code"), json::value(jsonrpc::kMethodNotFound));
}

// Malformed JSON is 400 + -32700; a non-message is 400 + -32600.
TEST_F(HttpHandlerTest, MalformedBodiesAre400) {
  HttpResponse bad = post("{nope");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bodyOf(bad).at("error").at("code"), json::value(jsonrpc::kParseError));
  HttpResponse notRpc = post(R"({"hello":"world"})");
  EXPECT_EQ(notRpc.status, 400);
  EXPECT_EQ(bodyOf(notRpc).at("error").at("code"), json::value(jsonrpc::kInvalidRequest));
}

// tools/list gives name, title, description and the normalized inputSchema; no title for
// 2025-03-26, which predates it.
TEST_F(HttpHandlerTest, ToolsListDescribesEveryTool) {
  std::string s = initialize();
  json::object result =
      callResult(inSession(s, R"({"jsonrpc":"2.0","id":4,"method":"tools/list"})"));
  const json::array& tools = result.at("tools").as_array();
  ASSERT_EQ(tools.size(), 3u);
  EXPECT_EQ(tools[0].at("name"), json::value("echo"));
  EXPECT_EQ(tools[0].at("title"), json::value("Echo"));
  EXPECT_TRUE(tools[0].as_object().contains("description"));
  EXPECT_EQ(tools[0].at("inputSchema").at("required"), json::parse(R"(["text"])"));
  EXPECT_EQ(tools[1].at("inputSchema").at("properties"), json::object{});

  std::string old = initialize("2025-03-26");
  json::object oldResult =
      callResult(inSession(old, R"({"jsonrpc":"2.0","id":4,"method":"tools/list"})"));
  EXPECT_FALSE(oldResult.at("tools").at(0).as_object().contains("title"));
}

// tools/call: success with _meta, tool error, a throw, unknown tool, bad arguments.
TEST_F(HttpHandlerTest, ToolsCallOutcomes) {
  std::string s = initialize();
  auto call = [&](const std::string& name, const std::string& args) {
    return inSession(s, R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":")" +
                            name + R"(","arguments":)" + args + "}}");
  };
  HttpHandler::Reply deferred = handler_->handle(request(
      "POST",
      R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}})",
      {{"Mcp-Session-Id", s}}));
  EXPECT_TRUE(deferred.work) << "a tool call must run off the network thread";

  json::object echo = callResult(call("echo", R"({"text":"hi","loud":true})"));
  EXPECT_EQ(resultText(echo), "HI");
  EXPECT_EQ(echo.at("isError"), json::value(false));
  EXPECT_EQ(echo.at("_meta").at("shoal.test/length"), json::value(2));
  EXPECT_EQ(echo.at("content").at(0).at("type"), json::value("text"));

  json::object fail = callResult(call("fail", "{}"));
  EXPECT_EQ(fail.at("isError"), json::value(true));
  EXPECT_FALSE(fail.contains("_meta"));

  json::object boom = callResult(call("boom", "{}"));
  EXPECT_EQ(boom.at("isError"), json::value(true));
  EXPECT_THAT(resultText(boom), HasSubstr("kaboom"));

  HttpResponse unknown = call("nope", "{}");
  EXPECT_EQ(bodyOf(unknown).at("error").at("code"), json::value(jsonrpc::kInvalidParams));

  HttpResponse notObject = call("echo", "[]");
  EXPECT_EQ(bodyOf(notObject).at("error").at("code"), json::value(jsonrpc::kInvalidParams));

  json::object extra = callResult(call("echo", R"({"text":"x","colour":"red"})"));
  EXPECT_EQ(extra.at("isError"), json::value(true));
  EXPECT_THAT(resultText(extra), HasSubstr("unknown argument `colour`"));
  EXPECT_THAT(resultText(extra), HasSubstr("`text`, `loud`"));

  json::object identity = callResult(call("echo", R"({"text":"x","from":"mallory"})"));
  EXPECT_EQ(identity.at("isError"), json::value(true));
  EXPECT_EQ(resultText(identity), "identity comes from the seat; `from` is not an argument");

  json::object missing = callResult(call("echo", "{}"));
  EXPECT_EQ(missing.at("isError"), json::value(true));
  EXPECT_THAT(resultText(missing), HasSubstr("missing required argument `text`"));

  HttpHandler::Reply refused = handler_->handle(request(
      "POST",
      R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"from":"x"}}})",
      {{"Mcp-Session-Id", s}}));
  EXPECT_FALSE(refused.work) << "a refused call needs no worker";
}

// preferSse answers requests as one SSE `message` event; notifications stay 202.
TEST_F(HttpHandlerTest, SseModeFramesOneEventPerResponse) {
  ServerOptions o;
  o.preferSse = true;
  auto h = make(o);
  std::string s = initialize("2025-11-25", h.get());
  HttpResponse r =
      send(request("POST", R"({"jsonrpc":"2.0","id":6,"method":"ping"})", {{"Mcp-Session-Id", s}}),
           h.get());
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Type"), "text/event-stream");
  EXPECT_EQ(r.body, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n\n");
  EXPECT_EQ(send(request("POST", R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                         {{"Mcp-Session-Id", s}}),
                 h.get())
                .status,
            202);
  // A client that accepts only JSON still gets JSON.
  HttpRequest jsonOnly =
      request("POST", R"({"jsonrpc":"2.0","id":7,"method":"ping"})", {{"Mcp-Session-Id", s}});
  jsonOnly.headers[3].second = "application/json";
  EXPECT_EQ(send(jsonOnly, h.get()).header("Content-Type"), "application/json");
}

// Batches: answered as an array for 2025-03-26 sessions, refused for later revisions.
TEST_F(HttpHandlerTest, BatchesOnlyFor20250326) {
  const std::string batch = R"([{"jsonrpc":"2.0","id":1,"method":"ping"},
      {"jsonrpc":"2.0","method":"notifications/initialized"},
      {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}}])";
  std::string old = initialize("2025-03-26");
  HttpResponse r = inSession(old, batch);
  ASSERT_EQ(r.status, 200) << r.body;
  json::array answers = json::parse(r.body).as_array();
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].at("id"), json::value(1));
  EXPECT_EQ(answers[1].at("result").at("content").at(0).at("text"), json::value("b"));
  EXPECT_EQ(inSession(old, R"([{"jsonrpc":"2.0","method":"notifications/initialized"}])").status,
            202);
  EXPECT_EQ(
      inSession(old, R"([{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}])").status,
      400);

  std::string s = initialize("2025-06-18");
  HttpResponse refused = inSession(s, batch);
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(bodyOf(refused).at("error").at("code"), json::value(jsonrpc::kInvalidRequest));
  EXPECT_THAT(refused.body, HasSubstr("batches are not supported"));
}

// A missing or wrong bearer token is 401 with WWW-Authenticate: Bearer.
TEST_F(HttpHandlerTest, BearerTokenIsRequired) {
  HttpRequest none = request("POST", R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  none.headers.erase(none.headers.begin() + 1);
  HttpResponse r = send(none);
  EXPECT_EQ(r.status, 401);
  EXPECT_THAT(std::string(r.header("WWW-Authenticate")), HasSubstr("Bearer"));

  HttpRequest wrong = request("POST", "{}");
  wrong.headers[1].second = "Bearer secret-tokeN";
  EXPECT_EQ(send(wrong).status, 401);
  wrong.headers[1].second = "Basic secret-token";
  EXPECT_EQ(send(wrong).status, 401);
  wrong.headers[1].second = std::string("bearer ") + kToken;  // the scheme is case-insensitive
  EXPECT_NE(send(wrong).status, 401);
}

// Host must name this server on loopback; Origin, when sent, must be a loopback http origin.
TEST_F(HttpHandlerTest, HostAndOriginAreChecked) {
  const std::string ping = R"({"jsonrpc":"2.0","id":1,"method":"server/discover"})";
  for (const char* host : {"localhost:4321", "LOCALHOST:4321", "127.0.0.1:4321"}) {
    HttpRequest r = request("POST", ping);
    r.headers[0].second = host;
    EXPECT_EQ(send(r).status, 200) << host;
  }
  for (const char* host : {"evil.example:4321", "127.0.0.1:80", "127.0.0.1", "localhost"}) {
    HttpRequest r = request("POST", ping);
    r.headers[0].second = host;
    EXPECT_EQ(send(r).status, 403) << host;
  }
  for (const char* origin : {"http://localhost:3000", "http://127.0.0.1", "http://127.0.0.1:9"}) {
    EXPECT_EQ(send(request("POST", ping, {{"Origin", origin}})).status, 200) << origin;
  }
  for (const char* origin : {"https://evil.example", "http://localhost.evil.example",
                             "http://127.0.0.1:80x", "null", "https://localhost"}) {
    EXPECT_EQ(send(request("POST", ping, {{"Origin", origin}})).status, 403) << origin;
  }
}

// A refusal quotes the offending header with its non-ASCII bytes escaped: HTTP lets a client
// send any byte above 0x7f in a header, and the JSON body must stay valid UTF-8 (found by
// fuzz_mcp_http).
TEST_F(HttpHandlerTest, ARefusalQuotingABadHeaderIsStillJson) {
  const std::string ping = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
  HttpRequest badHost = request("POST", ping);
  badHost.headers[0].second =
      "1\x96\xff"
      "27.0.0.1:4321";
  HttpResponse refusedHost = send(badHost);
  EXPECT_EQ(refusedHost.status, 403);
  EXPECT_THAT(std::string(bodyOf(refusedHost).at("error").at("message").as_string()),
              HasSubstr("`1\\x96\\xff27.0.0.1:4321`"));
  HttpResponse refusedOrigin = send(request("POST", ping, {{"Origin", "http://\xc3("}}));
  EXPECT_EQ(refusedOrigin.status, 403);
  EXPECT_THAT(std::string(bodyOf(refusedOrigin).at("error").at("message").as_string()),
              HasSubstr("`http://\\xc3(`"));
  std::string s = initialize();
  HttpResponse refusedVersion = inSession(s, ping, {{"MCP-Protocol-Version", "2025\xe2\x80"}});
  EXPECT_EQ(refusedVersion.status, 400);
  EXPECT_THAT(std::string(bodyOf(refusedVersion).at("error").at("message").as_string()),
              HasSubstr("`2025\\xe2\\x80`"));
}

// GET is 405 (no server stream); DELETE ends a session, after which it is 404.
TEST_F(HttpHandlerTest, GetIs405AndDeleteEndsTheSession) {
  HttpResponse get = send(request("GET", ""));
  EXPECT_EQ(get.status, 405);
  EXPECT_EQ(get.header("Allow"), "POST, DELETE");

  std::string s = initialize();
  EXPECT_EQ(send(request("DELETE", "", {{"Mcp-Session-Id", s}})).status, 200);
  EXPECT_EQ(send(request("DELETE", "", {{"Mcp-Session-Id", s}})).status, 404);
  EXPECT_EQ(send(request("DELETE", "")).status, 400);
  EXPECT_EQ(inSession(s, R"({"jsonrpc":"2.0","id":1,"method":"ping"})").status, 404);
}

// Other paths are 404; a wrong Content-Type is 415; an Accept with neither type is 406.
TEST_F(HttpHandlerTest, PathContentTypeAndAccept) {
  HttpRequest path = request("POST", "{}");
  path.target = "/other";
  EXPECT_EQ(send(path).status, 404);
  HttpRequest query = request("POST", R"({"jsonrpc":"2.0","id":1,"method":"x"})");
  query.target = "/mcp?x=1";
  EXPECT_EQ(send(query).status, 200);
  HttpRequest type = request("POST", "{}");
  type.headers[2].second = "text/plain";
  EXPECT_EQ(send(type).status, 415);
  HttpRequest accept = request("POST", "{}");
  accept.headers[3].second = "text/html";
  EXPECT_EQ(send(accept).status, 406);
}

// The session table is bounded: the least recently used session is ended to make room.
TEST_F(HttpHandlerTest, SessionTableIsBounded) {
  std::string first = initialize();
  std::string second = initialize();
  EXPECT_EQ(inSession(first, R"({"jsonrpc":"2.0","id":1,"method":"ping"})").status, 200);
  for (size_t i = 2; i < kMaxSessions + 1; ++i) {
    initialize();
  }
  EXPECT_EQ(handler_->sessionCountForTest(), kMaxSessions);
  EXPECT_EQ(inSession(second, R"({"jsonrpc":"2.0","id":1,"method":"ping"})").status, 404);
  EXPECT_EQ(inSession(first, R"({"jsonrpc":"2.0","id":1,"method":"ping"})").status, 200);
}

// Bad options and tools are refused at creation, naming the rule.
TEST(HttpHandlerCreate, RefusesBadOptionsAndTools) {
  ServerOptions o;
  o.version = "1";
  EXPECT_EQ(HttpHandler::create(o, 1, {}).status().reason(), "no-bearer-token");
  o.bearerToken = "t";
  o.version = "";
  EXPECT_EQ(HttpHandler::create(o, 1, {}).status().reason(), "no-server-info");
  o.version = "1";

  auto tools = sampleToolsForTest();
  tools.push_back(tools[0]);
  EXPECT_EQ(HttpHandler::create(o, 1, tools).status().reason(), "duplicate-tool");
  tools = sampleToolsForTest();
  tools[0].name = "has space";
  EXPECT_EQ(HttpHandler::create(o, 1, tools).status().reason(), "bad-tool-name");
  tools = sampleToolsForTest();
  tools[0].call = nullptr;
  EXPECT_EQ(HttpHandler::create(o, 1, tools).status().reason(), "tool-without-call");
  tools = sampleToolsForTest();
  tools[0].inputSchema["properties"].as_object()["as"] = json::object{{"type", "string"}};
  auto r = HttpHandler::create(o, 1, tools);
  EXPECT_EQ(r.status().reason(), "unsupported-schema");
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("tool `echo`"));
}

}  // namespace
}  // namespace shoal::mcp
