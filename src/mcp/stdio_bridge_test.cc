// McpBridge against a scripted HTTP endpoint: the headers each request carries, how answers
// become stdout lines, and that every request gets an answer whatever the endpoint does.
#include "mcp/stdio_bridge.h"

#include <deque>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace shoal::mcp {
namespace {

namespace json = boost::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr const char* kSeatConfig =
    R"({"mcpServers":{"shoal":{"type":"http","url":"http://127.0.0.1:41234/mcp",)"
    R"("headers":{"Authorization":"Bearer tok-1"}}}})";

// The endpoint: records every call and answers from a script (an error once it runs out).
struct ScriptedEndpoint {
  std::vector<http::HttpCall> calls;
  std::deque<Result<http::HttpReply>> replies;

  HttpSend send() {
    return [this](const http::HttpCall& call) -> Result<http::HttpReply> {
      calls.push_back(call);
      if (replies.empty()) return internalError("unscripted", "no reply scripted for this call");
      Result<http::HttpReply> r = replies.front();
      replies.pop_front();
      return r;
    };
  }

  void answer(int status, std::string contentType, std::string body,
              std::vector<http::HttpHeader> headers = {}) {
    http::HttpReply r;
    r.status = status;
    if (!contentType.empty()) headers.push_back({"Content-Type", std::move(contentType)});
    r.headers = std::move(headers);
    r.body = std::move(body);
    replies.emplace_back(std::move(r));
  }
};

std::string headerOf(const http::HttpCall& call, std::string_view name) {
  http::HttpReply asReply;
  asReply.headers = call.headers;
  return asReply.header(name);
}

McpEndpoint seatEndpoint() {
  auto e = mcp::parseMcpClientConfig(kSeatConfig);
  EXPECT_TRUE(e.isOk()) << e.status().toString();
  return e.isOk() ? *e : McpEndpoint{};
}

constexpr const char* kInitialize =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
    R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
constexpr const char* kInitializeResult =
    R"({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},)"
    R"("serverInfo":{"name":"shoal","version":"x"}}})";

// A bridge with an initialized session "sess-1" at 2025-06-18.
class McpBridgeTest : public ::testing::Test {
 protected:
  McpBridgeTest() : bridge_(seatEndpoint(), endpoint_.send()) {}

  void initialize() {
    endpoint_.answer(200, "application/json", kInitializeResult, {{"Mcp-Session-Id", "sess-1"}});
    ASSERT_THAT(bridge_.relay(kInitialize),
                ElementsAre(json::serialize(json::parse(kInitializeResult))));
    ASSERT_EQ(bridge_.sessionId(), "sess-1");
    ASSERT_EQ(bridge_.protocolVersion(), "2025-06-18");
  }

  ScriptedEndpoint endpoint_;
  McpBridge bridge_;
};

// initialize goes without session headers; every later message carries the session id from its
// response and the version its result negotiated, with the token, Content-Type and Accept.
TEST_F(McpBridgeTest, LaterRequestsCarryTheSessionAndNegotiatedVersion) {
  initialize();
  const http::HttpCall& init = endpoint_.calls.at(0);
  EXPECT_EQ(init.method, "POST");
  EXPECT_EQ(init.body, kInitialize);
  EXPECT_EQ(headerOf(init, "Authorization"), "Bearer tok-1");
  EXPECT_EQ(headerOf(init, "Content-Type"), "application/json");
  EXPECT_EQ(headerOf(init, "Accept"), "application/json, text/event-stream");
  EXPECT_EQ(headerOf(init, "Mcp-Session-Id"), "");
  EXPECT_EQ(headerOf(init, "MCP-Protocol-Version"), "");

  endpoint_.answer(202, "", "");
  EXPECT_THAT(bridge_.relay(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"),
              IsEmpty());
  endpoint_.answer(200, "application/json", R"({"jsonrpc":"2.0","id":1,"result":{"tools":[]}})");
  EXPECT_THAT(bridge_.relay(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})"
                            "\r"),
              ElementsAre(R"({"jsonrpc":"2.0","id":1,"result":{"tools":[]}})"));
  ASSERT_EQ(endpoint_.calls.size(), 3u);
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(headerOf(endpoint_.calls[i], "Mcp-Session-Id"), "sess-1");
    EXPECT_EQ(headerOf(endpoint_.calls[i], "MCP-Protocol-Version"), "2025-06-18");
    EXPECT_EQ(headerOf(endpoint_.calls[i], "Authorization"), "Bearer tok-1");
  }
  EXPECT_EQ(endpoint_.calls[2].body, R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
}

// An SSE answer is one stdout line per event; a pretty-printed JSON answer is still one line.
TEST_F(McpBridgeTest, AnswersBecomeSingleLines) {
  initialize();
  endpoint_.answer(200, "text/event-stream; charset=utf-8",
                   "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n\n"
                   "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n");
  EXPECT_THAT(bridge_.relay(R"({"jsonrpc":"2.0","id":2,"method":"ping"})"),
              ElementsAre(R"({"jsonrpc":"2.0","method":"notifications/x"})",
                          R"({"jsonrpc":"2.0","id":2,"result":{}})"));
  endpoint_.answer(
      200, "application/json",
      "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 3,\n  \"result\": {\"text\": \"a\\nb\"}\n}\n");
  auto lines = bridge_.relay(R"({"jsonrpc":"2.0","id":3,"method":"ping"})");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].find('\n'), std::string::npos) << lines[0];
  EXPECT_EQ(json::parse(lines[0]).at("result").at("text"), json::value("a\nb"));
}

// An endpoint that cannot be reached: the request is answered with an error saying so, a
// notification is dropped (logged), and the bridge goes on.
TEST_F(McpBridgeTest, UnreachableEndpointAnswersRequestsWithAnError) {
  endpoint_.replies.emplace_back(
      unavailable("http-connect-failed", "cannot connect to http://127.0.0.1:41234/mcp: refused"));
  auto lines = bridge_.relay(R"({"jsonrpc":"2.0","id":"a-7","method":"initialize","params":{}})");
  ASSERT_EQ(lines.size(), 1u);
  json::value v = json::parse(lines[0]);
  EXPECT_EQ(v.at("id"), json::value("a-7"));
  EXPECT_EQ(v.at("error").at("code"), json::value(kBridgeErrorCode));
  EXPECT_THAT(std::string(v.at("error").at("message").as_string()),
              HasSubstr("shoal mcp: cannot reach the seat's endpoint: cannot connect"));
  EXPECT_EQ(bridge_.sessionId(), "");

  endpoint_.replies.emplace_back(unavailable("http-connect-failed", "refused"));
  EXPECT_THAT(bridge_.relay(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"),
              IsEmpty());

  // A connection that broke after the request went out: the error says it may have run.
  endpoint_.replies.emplace_back(unavailable("http-exchange-failed", "reset"));
  lines = bridge_.relay(R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{}})");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(std::string(json::parse(lines[0]).at("error").at("message").as_string()),
              HasSubstr("broke after the request was sent (it may have run)"));
}

// A refusal without a JSON-RPC body (e.g. a proxy's 401) answers the request with the status.
TEST_F(McpBridgeTest, RefusalWithoutBodyAnswersWithTheHttpStatus) {
  endpoint_.answer(401, "text/plain", "nope");
  auto lines = bridge_.relay(kInitialize);
  ASSERT_EQ(lines.size(), 1u);
  json::value v = json::parse(lines[0]);
  EXPECT_EQ(v.at("id"), json::value(0));
  EXPECT_EQ(v.at("error").at("data").at("httpStatus"), json::value(401));
  EXPECT_THAT(std::string(v.at("error").at("message").as_string()),
              HasSubstr("shoal mcp: the seat's endpoint refused the request: HTTP 401"));
}

// src/mcp refuses with a JSON-RPC error whose id is null: it is passed on with the request's
// id (the client could not match it otherwise), keeping the server's code and message.
TEST_F(McpBridgeTest, AnonymousRefusalGetsTheRequestsId) {
  initialize();
  endpoint_.answer(404, "application/json",
                   R"({"jsonrpc":"2.0","id":null,"error":{"code":-32001,)"
                   R"("message":"session not found"}})");
  auto lines = bridge_.relay(R"({"jsonrpc":"2.0","id":9,"method":"tools/list"})");
  ASSERT_EQ(lines.size(), 1u);
  json::value v = json::parse(lines[0]);
  EXPECT_EQ(v.at("id"), json::value(9));
  EXPECT_EQ(v.at("error").at("code"), json::value(-32001));
  std::string message(v.at("error").at("message").as_string());
  EXPECT_THAT(message, HasSubstr("HTTP 404"));
  EXPECT_THAT(message, HasSubstr("session not found"));
  EXPECT_EQ(v.at("error").at("data").at("httpStatus"), json::value(404));
}

// A line that is not JSON gets a parse error with id null, nothing is sent, and the bridge
// relays the next line as usual.
TEST_F(McpBridgeTest, MalformedLineGetsAParseErrorAndTheBridgeGoesOn) {
  auto lines = bridge_.relay("{\"jsonrpc\":\"2.0\",");
  ASSERT_EQ(lines.size(), 1u);
  json::value v = json::parse(lines[0]);
  EXPECT_TRUE(v.at("id").is_null());
  EXPECT_EQ(v.at("error").at("code"), json::value(-32700));
  EXPECT_TRUE(endpoint_.calls.empty());
  EXPECT_THAT(bridge_.relay("   "), IsEmpty());
  EXPECT_TRUE(endpoint_.calls.empty());
  initialize();
}

// A request the endpoint accepts without answering (202, an empty body) still gets an answer.
TEST_F(McpBridgeTest, RequestLeftWithoutAResponseIsAnsweredWithAnError) {
  initialize();
  endpoint_.answer(202, "", "");
  auto lines = bridge_.relay(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{}})");
  ASSERT_EQ(lines.size(), 1u);
  json::value v = json::parse(lines[0]);
  EXPECT_EQ(v.at("id"), json::value(4));
  EXPECT_THAT(std::string(v.at("error").at("message").as_string()),
              HasSubstr("answered HTTP 202 without a response"));
}

// A batch is forwarded as is; its requests the answer leaves out get errors, as one array.
TEST_F(McpBridgeTest, BatchIsForwardedAndItsUnansweredRequestsGetErrors) {
  initialize();
  const std::string batch =
      R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},)"
      R"({"jsonrpc":"2.0","id":2,"method":"ping"}])";
  endpoint_.answer(200, "application/json", R"([{"jsonrpc":"2.0","id":1,"result":{}}])");
  auto lines = bridge_.relay(batch);
  EXPECT_EQ(endpoint_.calls.back().body, batch);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], R"([{"jsonrpc":"2.0","id":1,"result":{}}])");
  json::value errors = json::parse(lines[1]);
  ASSERT_TRUE(errors.is_array());
  ASSERT_EQ(errors.as_array().size(), 1u);
  EXPECT_EQ(errors.as_array()[0].at("id"), json::value(2));
}

// End of input ends the session with DELETE (its id and version); a second initialize ends the
// first session before starting the next.
TEST_F(McpBridgeTest, SessionsAreEndedWithDelete) {
  bridge_.finish();  // no session yet: nothing to end
  EXPECT_TRUE(endpoint_.calls.empty());
  initialize();
  endpoint_.answer(200, "", "");  // the DELETE
  endpoint_.answer(200, "application/json", kInitializeResult, {{"Mcp-Session-Id", "sess-2"}});
  EXPECT_EQ(bridge_.relay(kInitialize).size(), 1u);
  ASSERT_EQ(endpoint_.calls.size(), 3u);
  EXPECT_EQ(endpoint_.calls[1].method, "DELETE");
  EXPECT_EQ(headerOf(endpoint_.calls[1], "Mcp-Session-Id"), "sess-1");
  EXPECT_EQ(headerOf(endpoint_.calls[2], "Mcp-Session-Id"), "");
  EXPECT_EQ(bridge_.sessionId(), "sess-2");

  endpoint_.replies.emplace_back(unavailable("http-connect-failed", "gone"));  // ignored
  bridge_.finish();
  ASSERT_EQ(endpoint_.calls.size(), 4u);
  EXPECT_EQ(endpoint_.calls[3].method, "DELETE");
  EXPECT_EQ(headerOf(endpoint_.calls[3], "Mcp-Session-Id"), "sess-2");
  EXPECT_EQ(headerOf(endpoint_.calls[3], "MCP-Protocol-Version"), "2025-06-18");
  EXPECT_EQ(headerOf(endpoint_.calls[3], "Authorization"), "Bearer tok-1");
  EXPECT_EQ(bridge_.sessionId(), "");
}

}  // namespace
}  // namespace shoal::mcp
