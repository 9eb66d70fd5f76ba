// The MCP server over real sockets (mcp/server.h): a Server on an ephemeral loopback port,
// driven with raw HTTP/1.1 through the Streamable HTTP lifecycle, both response modes, the
// refusals, the body limit, keep-alive, and a slow tool that must not stall other clients.
#include "mcp/server.h"

#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include "mcp/sample_tools.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace shoal::mcp {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using ::testing::HasSubstr;
using tcp = asio::ip::tcp;

constexpr const char* kToken = "0123456789abcdef0123456789abcdef";

struct Reply {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
  json::object json() const { return json::parse(body).as_object(); }
};

// One HTTP/1.1 connection to the server, reused for every request sent through it.
class RawClient {
 public:
  explicit RawClient(uint16_t port) : port_(port), stream_(io_) {
    stream_.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }

  // The headers every MCP request carries, plus `extra` (which may replace one by name).
  Reply send(const std::string& method, const std::string& body,
             const std::map<std::string, std::string>& extra = {}) {
    std::map<std::string, std::string> headers = {
        {"Host", "127.0.0.1:" + std::to_string(port_)},
        {"Authorization", std::string("Bearer ") + kToken},
        {"Content-Type", "application/json"},
        {"Accept", "application/json, text/event-stream"}};
    for (const auto& [k, v] : extra) {
      headers[k] = v;
    }
    http::request<http::string_body> req(method == "POST"     ? http::verb::post
                                         : method == "DELETE" ? http::verb::delete_
                                                              : http::verb::get,
                                         "/mcp", 11);
    for (auto& [k, v] : headers) {
      if (!v.empty()) req.set(k, v);
    }
    req.body() = body;
    req.prepare_payload();
    http::write(stream_, req);
    return read();
  }

  Reply read() {
    http::response_parser<http::string_body> parser;
    parser.body_limit(std::uint64_t{64} * 1024 * 1024);
    http::read(stream_, buffer_, parser);
    Reply r;
    r.status = static_cast<int>(parser.get().result_int());
    for (const auto& f : parser.get()) {
      std::string name(f.name_string());
      for (char& c : name) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      r.headers[name] = std::string(f.value());
    }
    r.body = parser.get().body();
    return r;
  }

  // Writes raw bytes (for requests Beast would not build).
  void writeRaw(const std::string& bytes) { asio::write(stream_, asio::buffer(bytes)); }

  // True once the server has closed the connection (reads EOF or a reset).
  bool closedByServer() {
    char c;
    beast::error_code ec;
    stream_.socket().read_some(asio::buffer(&c, 1), ec);
    return ec == asio::error::eof || ec == asio::error::connection_reset;
  }

 private:
  uint16_t port_;
  asio::io_context io_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
};

std::string rpc(int id, const std::string& method, const std::string& params = "{}") {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method +
         R"(","params":)" + params + "}";
}

std::string callTool(int id, const std::string& name, const std::string& args) {
  return rpc(id, "tools/call", R"({"name":")" + name + R"(","arguments":)" + args + "}");
}

std::string initParams(const std::string& version) {
  return R"({"protocolVersion":")" + version +
         R"(","capabilities":{},"clientInfo":{"name":"raw","version":"0"}})";
}

// The JSON-RPC message in a response body: the body itself (JSON) or its one SSE event.
json::object messageOf(const Reply& r) {
  if (r.header("content-type") != "text/event-stream") return r.json();
  const std::string prefix = "event: message\ndata: ";
  EXPECT_EQ(r.body.compare(0, prefix.size(), prefix), 0) << r.body;
  EXPECT_EQ(r.body.substr(r.body.size() - 2), "\n\n");
  return json::parse(r.body.substr(prefix.size(), r.body.size() - prefix.size() - 2)).as_object();
}

class ServerTest : public ::testing::Test {
 protected:
  void startServer(bool preferSse = false, std::vector<ToolSpec> extra = {}) {
    ServerOptions o;
    o.bearerToken = kToken;
    o.version = "9.9.9";
    o.preferSse = preferSse;
    auto tools = sampleToolsForTest();
    for (auto& t : extra) {
      tools.push_back(std::move(t));
    }
    auto s = Server::start(o, std::move(tools));
    ASSERT_TRUE(s.isOk()) << s.status().toString();
    server_ = std::move(s).value();
    ASSERT_NE(server_->port(), 0);
  }

  std::unique_ptr<Server> server_;
};

// The whole lifecycle at each protocol revision, on one kept-alive connection, in both modes.
TEST_F(ServerTest, LifecycleAtEveryRevisionInBothModes) {
  for (bool sse : {false, true}) {
    server_.reset();
    startServer(sse);
    EXPECT_EQ(server_->url(), "http://127.0.0.1:" + std::to_string(server_->port()) + "/mcp");
    for (const char* version : {"2025-03-26", "2025-06-18", "2025-11-25"}) {
      SCOPED_TRACE(std::string(version) + (sse ? " sse" : " json"));
      RawClient c(server_->port());
      Reply init = c.send("POST", rpc(0, "initialize", initParams(version)));
      ASSERT_EQ(init.status, 200) << init.body;
      EXPECT_EQ(init.header("content-type"), sse ? "text/event-stream" : "application/json");
      EXPECT_EQ(messageOf(init).at("result").at("protocolVersion"), json::value(version));
      std::string session = init.header("mcp-session-id");
      ASSERT_EQ(session.size(), 32u);
      std::map<std::string, std::string> h = {{"Mcp-Session-Id", session},
                                              {"MCP-Protocol-Version", version}};

      Reply initialized =
          c.send("POST", R"({"jsonrpc":"2.0","method":"notifications/initialized"})", h);
      EXPECT_EQ(initialized.status, 202);
      EXPECT_TRUE(initialized.body.empty());

      Reply list = c.send("POST", rpc(1, "tools/list"), h);
      ASSERT_EQ(list.status, 200);
      EXPECT_EQ(messageOf(list).at("result").at("tools").as_array().size(), 3u);

      json::object echo = messageOf(c.send("POST", callTool(2, "echo", R"({"text":"hello"})"), h));
      EXPECT_EQ(echo.at("result").at("content").at(0).at("text"), json::value("hello"));
      EXPECT_EQ(echo.at("result").at("isError"), json::value(false));
      EXPECT_EQ(echo.at("result").at("_meta").at("shoal.test/length"), json::value(5));

      json::object fail = messageOf(c.send("POST", callTool(3, "fail", "{}"), h));
      EXPECT_EQ(fail.at("result").at("isError"), json::value(true));

      json::object boom = messageOf(c.send("POST", callTool(4, "boom", "{}"), h));
      EXPECT_EQ(boom.at("result").at("isError"), json::value(true));
      EXPECT_THAT(std::string(boom.at("result").at("content").at(0).at("text").as_string()),
                  HasSubstr("kaboom"));

      json::object unknown = messageOf(c.send("POST", callTool(5, "nope", "{}"), h));
      EXPECT_EQ(unknown.at("error").at("code"), json::value(-32602));

      json::object extra =
          messageOf(c.send("POST", callTool(6, "echo", R"({"text":"x","colour":"red"})"), h));
      EXPECT_EQ(extra.at("result").at("isError"), json::value(true));
      EXPECT_THAT(std::string(extra.at("result").at("content").at(0).at("text").as_string()),
                  HasSubstr("unknown argument `colour`"));

      json::object identity =
          messageOf(c.send("POST", callTool(7, "echo", R"({"text":"x","sender":"eve"})"), h));
      EXPECT_EQ(identity.at("result").at("isError"), json::value(true));
      EXPECT_EQ(identity.at("result").at("content").at(0).at("text"),
                json::value("identity comes from the seat; `sender` is not an argument"));

      json::object pong = messageOf(c.send("POST", rpc(8, "ping"), h));
      EXPECT_EQ(json::serialize(pong), R"({"jsonrpc":"2.0","id":8,"result":{}})");

      EXPECT_EQ(c.send("DELETE", "", h).status, 200);
      EXPECT_EQ(c.send("POST", rpc(9, "ping"), h).status, 404);
    }
  }
}

// Session and protocol-version header rules over the wire.
TEST_F(ServerTest, SessionAndVersionHeaderRules) {
  startServer();
  RawClient c(server_->port());
  std::string session =
      c.send("POST", rpc(0, "initialize", initParams("2025-06-18"))).header("mcp-session-id");
  EXPECT_EQ(c.send("POST", rpc(1, "ping")).status, 400);
  EXPECT_EQ(c.send("POST", rpc(1, "ping"), {{"Mcp-Session-Id", "not-a-session"}}).status, 404);
  Reply mismatch = c.send("POST", rpc(1, "ping"),
                          {{"Mcp-Session-Id", session}, {"MCP-Protocol-Version", "2025-11-25"}});
  EXPECT_EQ(mismatch.status, 400);
  EXPECT_EQ(c.send("POST", rpc(1, "ping"), {{"Mcp-Session-Id", session}}).status, 200);
}

// What Claude Code 2.1.332 sends first: a sessionless server/discover, answered -32601.
TEST_F(ServerTest, ServerDiscoverIsMethodNotFound) {
  startServer();
  RawClient c(server_->port());
  Reply r = c.send("POST", rpc(1, "server/discover"), {{"MCP-Protocol-Version", "2026-07-28"}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.json().at("error").at("code"), json::value(-32601));
  EXPECT_EQ(c.send("POST", rpc(2, "initialize", initParams("2025-11-25"))).status, 200);
}

// Refusals: 401 without / with a wrong token, 403 for a foreign Host or Origin, 405 for GET,
// 400 for malformed JSON.
TEST_F(ServerTest, Refusals) {
  startServer();
  RawClient c(server_->port());
  Reply noAuth = c.send("POST", rpc(1, "ping"), {{"Authorization", ""}});
  EXPECT_EQ(noAuth.status, 401);
  EXPECT_THAT(noAuth.header("www-authenticate"), HasSubstr("Bearer"));
  EXPECT_EQ(c.send("POST", rpc(1, "ping"), {{"Authorization", "Bearer wrong"}}).status, 401);
  EXPECT_EQ(c.send("POST", rpc(1, "ping"), {{"Host", "attacker.example"}}).status, 403);
  EXPECT_EQ(c.send("POST", rpc(1, "ping"), {{"Origin", "https://attacker.example"}}).status, 403);
  EXPECT_EQ(c.send("GET", "", {{"Accept", "text/event-stream"}}).status, 405);
  Reply bad = c.send("POST", "{not json");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.json().at("error").at("code"), json::value(-32700));
}

// A body over 4 MiB is refused with 413 as soon as its length is known; one under it works.
TEST_F(ServerTest, BodyLimitIs4MiB) {
  startServer();
  RawClient c(server_->port());
  std::string session =
      c.send("POST", rpc(0, "initialize", initParams("2025-11-25"))).header("mcp-session-id");
  std::string big(std::size_t{3} * 1024 * 1024, 'a');
  Reply ok = c.send("POST", callTool(1, "echo", R"({"text":")" + big + R"("})"),
                    {{"Mcp-Session-Id", session}});
  ASSERT_EQ(ok.status, 200);
  EXPECT_EQ(ok.json().at("result").at("content").at(0).at("text").as_string().size(), big.size());

  RawClient tooBig(server_->port());
  tooBig.writeRaw("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(server_->port()) +
                  "\r\nAuthorization: Bearer " + kToken +
                  "\r\nContent-Type: application/json\r\nContent-Length: " +
                  std::to_string(std::size_t{4} * 1024 * 1024 + 1) + "\r\n\r\n{\"jsonrpc\"");
  Reply refused = tooBig.read();
  EXPECT_EQ(refused.status, 413);
  EXPECT_TRUE(tooBig.closedByServer());
}

// A tool that blocks does not stall other clients: ping and tools/list answer meanwhile.
TEST_F(ServerTest, SlowToolDoesNotStallOtherConnections) {
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::promise<void> entered;
  ToolSpec wait{
      "wait", "", "Blocks until the test releases it.", {}, [gate, &entered](const json::object&) {
        entered.set_value();
        gate.wait();
        return ToolResult::ok("released");
      }};
  startServer(false, {wait});
  RawClient slow(server_->port());
  std::string session =
      slow.send("POST", rpc(0, "initialize", initParams("2025-11-25"))).header("mcp-session-id");
  std::map<std::string, std::string> h = {{"Mcp-Session-Id", session}};
  auto pending = std::async(std::launch::async,
                            [&] { return slow.send("POST", callTool(1, "wait", "{}"), h); });
  entered.get_future().wait();

  RawClient other(server_->port());
  EXPECT_EQ(other.send("POST", rpc(2, "ping"), h).status, 200);
  EXPECT_EQ(other.send("POST", rpc(3, "tools/list"), h).status, 200);

  release.set_value();
  Reply done = pending.get();
  EXPECT_EQ(done.json().at("result").at("content").at(0).at("text"), json::value("released"));
}

// ToolResult::onWritten hears whether the response carrying the result was written whole: true
// for a client that reads it; false for one that hangs up while a response too large for the
// socket buffers is still being written (the final hop of an inbox receipt, seed 004 §2.1).
TEST_F(ServerTest, WriteCallbackTellsACompleteWriteFromAFailedOne) {
  std::mutex mu;
  std::vector<bool> outcomes;
  std::condition_variable cv;
  std::promise<void> entered;  // the large call ran
  ToolSpec big{
      "big", "", "Answers with `size` bytes.",
      json::object{{"type", "object"},
                   {"properties", json::object{{"size", json::object{{"type", "integer"}}}}},
                   {"required", json::array{"size"}},
                   {"additionalProperties", false}},
      [&](const json::object& args) {
        ToolResult r = ToolResult::ok(std::string(args.at("size").to_number<size_t>(), 'x'));
        r.onWritten = [&](bool complete) {
          std::lock_guard<std::mutex> lock(mu);
          outcomes.push_back(complete);
          cv.notify_all();
        };
        if (r.text.size() > (1u << 20)) entered.set_value();
        return r;
      }};
  startServer(false, {big});
  auto waitFor = [&](size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(20), [&] { return outcomes.size() >= n; });
  };

  RawClient reader(server_->port());
  std::string session =
      reader.send("POST", rpc(0, "initialize", initParams("2025-11-25"))).header("mcp-session-id");
  std::map<std::string, std::string> h = {{"Mcp-Session-Id", session}};
  Reply whole = reader.send("POST", callTool(1, "big", R"({"size":1000})"), h);
  EXPECT_EQ(whole.status, 200);
  ASSERT_TRUE(waitFor(1));
  EXPECT_TRUE(outcomes[0]);

  // 32 MiB do not fit in the socket buffers: the write is still going when the client resets.
  asio::io_context io;
  tcp::socket s(io);
  s.open(tcp::v4());
  s.set_option(asio::socket_base::receive_buffer_size(4096));
  s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server_->port()));
  http::request<http::string_body> req(http::verb::post, "/mcp", 11);
  req.set("Host", "127.0.0.1:" + std::to_string(server_->port()));
  req.set("Authorization", std::string("Bearer ") + kToken);
  req.set("Content-Type", "application/json");
  req.set("Accept", "application/json");
  req.set("Mcp-Session-Id", session);
  req.body() = callTool(2, "big", R"({"size":33554432})");
  req.prepare_payload();
  http::write(s, req);
  entered.get_future().wait();
  // The tool ran, so the request was read; the write has begun or is about to: either way it
  // meets the reset.
  s.set_option(asio::socket_base::linger(true, 0));  // close = reset
  s.close();
  ASSERT_TRUE(waitFor(2));
  EXPECT_FALSE(outcomes[1]);
}

// stop() closes open connections and is idempotent; the destructor after it is harmless.
TEST_F(ServerTest, StopClosesConnections) {
  startServer();
  RawClient c(server_->port());
  EXPECT_EQ(c.send("POST", rpc(1, "server/discover")).status, 200);
  server_->stop();
  EXPECT_TRUE(c.closedByServer());
  server_->stop();
}

// start() refuses what it cannot serve: no token, an unparsable host, a port in use.
TEST(ServerStart, RefusesBadOptions) {
  ServerOptions o;
  o.version = "1";
  EXPECT_EQ(Server::start(o, {}).status().reason(), "no-bearer-token");
  o.bearerToken = "t";
  o.host = "not-an-ip";
  EXPECT_EQ(Server::start(o, {}).status().reason(), "bad-host");
  o.host = "127.0.0.1";
  auto first = Server::start(o, {});
  ASSERT_TRUE(first.isOk());
  o.port = (*first)->port();
  auto second = Server::start(o, {});
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace shoal::mcp
