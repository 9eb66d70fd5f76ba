// The client side of a seat's endpoint (mcp/client_config.h, http/client.h): the config
// file, URLs, SSE bodies. mcp::Client against a real server is tested where a seat is
// (daemon/claude_seat_test.cc) and in tests/mcp_sdk.
#include "http/client.h"

#include <string>

#include "http/event_stream.h"
#include "http/sse_decoder.h"
#include "mcp/client_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace shoal::mcp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr const char* kSeatConfig =
    R"({"mcpServers":{"shoal":{"type":"http","url":"http://127.0.0.1:41234/mcp",)"
    R"("headers":{"Authorization":"Bearer tok-1"}}}})";

// The seat's config names its URL and the bearer token every request carries.
TEST(McpClientConfigTest, SeatConfigGivesUrlAndAuthorization) {
  auto e = parseMcpClientConfig(kSeatConfig);
  ASSERT_TRUE(e.isOk()) << e.status().toString();
  EXPECT_EQ(e->url, "http://127.0.0.1:41234/mcp");
  ASSERT_EQ(e->headers.size(), 1u);
  EXPECT_EQ(e->headers[0].name, "Authorization");
  EXPECT_EQ(e->headers[0].value, "Bearer tok-1");
  // The only server is taken whatever its name; no type means http when there is a url.
  auto only = parseMcpClientConfig(R"({"mcpServers":{"x":{"url":"http://localhost:9/mcp"}}})");
  ASSERT_TRUE(only.isOk()) << only.status().toString();
  EXPECT_EQ(only->url, "http://localhost:9/mcp");
}

// A config the bridge cannot use is refused with a reason naming what is wrong.
TEST(McpClientConfigTest, UnusableConfigsAreRefusedWithTheReason) {
  auto refusal = [](std::string_view text) {
    auto e = parseMcpClientConfig(text);
    EXPECT_FALSE(e.isOk()) << text;
    if (e.isOk()) return std::string();
    EXPECT_EQ(e.status().reason(), "bad-mcp-config");
    return std::string(e.status().message());
  };
  EXPECT_THAT(refusal("{nope"), HasSubstr("not JSON"));
  EXPECT_THAT(refusal(R"({"servers":{}})"), HasSubstr("no `mcpServers`"));
  EXPECT_THAT(refusal(R"({"mcpServers":{}})"), HasSubstr("empty"));
  EXPECT_THAT(refusal(R"({"mcpServers":{"a":{"url":"http://h:1/"},"b":{"url":"http://h:2/"}}})"),
              HasSubstr("no `shoal` server"));
  EXPECT_THAT(refusal(R"({"mcpServers":{"shoal":{"command":"shoal","args":["mcp"]}}})"),
              HasSubstr("stdio server"));
  EXPECT_THAT(refusal(R"({"mcpServers":{"shoal":{"type":"sse","url":"http://h:1/"}}})"),
              HasSubstr("type is `sse`"));
  EXPECT_THAT(refusal(R"({"mcpServers":{"shoal":{"url":"https://h:1/mcp"}}})"),
              HasSubstr("https is not supported"));
  EXPECT_THAT(refusal(R"({"mcpServers":{"shoal":{"url":"http://h:1/","headers":{"A":1}}}})"),
              HasSubstr("header `A` is not a string"));
}

// URLs split into what a request needs; the Host header keeps the port (the server checks it).
TEST(HttpUrlTest, UrlsSplitIntoHostPortAndTarget) {
  auto u = http::parseHttpUrl("http://127.0.0.1:41234/mcp?x=1#frag");
  ASSERT_TRUE(u.isOk());
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, "41234");
  EXPECT_EQ(u->target, "/mcp?x=1");
  EXPECT_EQ(u->hostHeader, "127.0.0.1:41234");
  auto v6 = http::parseHttpUrl("http://[::1]:8080");
  ASSERT_TRUE(v6.isOk());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, "8080");
  EXPECT_EQ(v6->target, "/");
  EXPECT_EQ(http::parseHttpUrl("http://localhost/mcp")->port, "80");
  EXPECT_EQ(http::parseHttpUrl("ftp://h/").status().reason(), "bad-url");
  EXPECT_EQ(http::parseHttpUrl("http://h:99999/").status().reason(), "bad-url");
  EXPECT_EQ(http::parseHttpUrl("http://u:p@h:1/").status().reason(), "bad-url");
  EXPECT_EQ(http::parseHttpUrl("http://:1/").status().reason(), "bad-url");
}

// Each SSE event's data is one message; comments and empty (priming) events are not.
TEST(SseEventDataTest, EachEventsDataInOrder) {
  EXPECT_THAT(http::sseEventData("event: message\ndata: {\"a\":1}\n\n"
                                 ": a comment\n\n"
                                 "id: 7\ndata:\n\n"
                                 "data: [1,\r\ndata: 2]\r\n\r\n"
                                 "data:{\"last\":true}"),
              ElementsAre("{\"a\":1}", "[1,\n2]", "{\"last\":true}"));
  EXPECT_THAT(http::sseEventData(""), IsEmpty());
}

// A stream arrives in arbitrary pieces: fed one byte at a time (a CRLF split between two
// reads included), the decoder yields the same events as the whole body, each once.
TEST(SseEventDataTest, TheDecoderIsIndifferentToHowTheBytesAreSplit) {
  const std::string body =
      "data: {\"type\":\"server.connected\"}\r\n\r\n: hb\r\ndata: a\r\ndata: b\r\n\r\ndata: c\n\n";
  http::SseDecoder decoder;
  std::vector<std::string> events;
  for (char c : body)
    decoder.feed(std::string_view(&c, 1), events);
  EXPECT_THAT(events, ElementsAre("{\"type\":\"server.connected\"}", "a\nb", "c"));
  decoder.finish(events);
  EXPECT_EQ(events.size(), 3u);  // nothing pending at the end
  EXPECT_EQ(decoder.pendingBytes(), 0u);
  EXPECT_EQ(http::sseEventData(body), events);
}

}  // namespace
}  // namespace shoal::mcp
