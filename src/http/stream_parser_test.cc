// StreamParser: the response of an event-stream GET through Beast's parser — the head, a chunked,
// sized or close-delimited body fed in arbitrary pieces, and the refusals.
#include "http/stream_parser.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace shoal::http {
namespace {

using ::testing::ElementsAre;

constexpr const char* kChunkedHead =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
    "Transfer-Encoding: chunked\r\n\r\n";

// Chunk boundaries and read boundaries are independent: fed one byte at a time, the parser
// yields the same events as fed whole, keeps only what it cannot parse yet, and sees the end.
TEST(StreamParserTest, EventsAreTheSameWhateverTheReadBoundaries) {
  const std::string response = std::string(kChunkedHead) +
                               "8\r\ndata: he\r\n1;ext=1\r\nl\r\nA\r\nlo\n\ndata: \r\n"
                               "6\r\nlast\n\n\r\n0\r\n\r\n";
  StreamParser whole;
  std::string bytes = response;
  std::vector<std::string> events;
  ASSERT_TRUE(whole.feed(bytes, events).isOk());
  EXPECT_THAT(events, ElementsAre("hello", "last"));
  EXPECT_TRUE(whole.headDone());
  EXPECT_EQ(whole.status(), 200);
  EXPECT_TRUE(whole.eventStream());
  EXPECT_TRUE(whole.ended());
  EXPECT_TRUE(bytes.empty());

  StreamParser split;
  std::string pending;
  std::vector<std::string> pieces;
  for (char c : response) {
    pending += c;
    ASSERT_TRUE(split.feed(pending, pieces).isOk());
    if (split.headDone()) {
      // At most the CRLF that ends a chunk and the next chunk's partial size line.
      EXPECT_LE(pending.size(), 10u);
    }
  }
  EXPECT_EQ(pieces, events);
  EXPECT_TRUE(split.ended());
}

// A body without a length ends with the connection; its last event needs no blank line.
TEST(StreamParserTest, AClosedDelimitedBodyEndsAtEof) {
  StreamParser parser;
  std::string bytes =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: a\n\ndata: b";
  std::vector<std::string> events;
  ASSERT_TRUE(parser.feed(bytes, events).isOk());
  EXPECT_THAT(events, ElementsAre("a"));
  EXPECT_FALSE(parser.ended());
  ASSERT_TRUE(parser.eof(events).isOk());
  EXPECT_THAT(events, ElementsAre("a", "b"));
  EXPECT_TRUE(parser.ended());
}

// A chunked body cut short, and a connection closed inside the head, are an end, named.
TEST(StreamParserTest, ACutShortBodyOrHeadIsAnEnd) {
  StreamParser chunked;
  std::string bytes = std::string(kChunkedHead) + "a\r\ndata: x";
  std::vector<std::string> events;
  ASSERT_TRUE(chunked.feed(bytes, events).isOk());
  EXPECT_EQ(chunked.eof(events).reason(), "event-stream-ended");
  EXPECT_TRUE(events.empty());

  StreamParser head;
  bytes = "HTTP/1.1 200 OK\r\nContent-Ty";
  ASSERT_TRUE(head.feed(bytes, events).isOk());
  EXPECT_FALSE(head.headDone());
  EXPECT_EQ(head.eof(events).reason(), "event-stream-ended");
}

// Bad chunk framing is malformed; something that is not an HTTP/1.x head, or a head over
// 64 KiB, is not an event stream.
TEST(StreamParserTest, BadFramingAndBadHeadsAreRefusedByName) {
  StreamParser badSize;
  std::string bytes = std::string(kChunkedHead) + "zz\r\nhi\r\n";
  std::vector<std::string> events;
  EXPECT_EQ(badSize.feed(bytes, events).reason(), "event-stream-malformed");

  StreamParser unterminated;
  bytes = std::string(kChunkedHead) + "2\r\nhiXX\r\n3\r\nabc\r\n";
  EXPECT_EQ(unterminated.feed(bytes, events).reason(), "event-stream-malformed");

  StreamParser notHttp;
  bytes = "SSH-2.0-OpenSSH_9.2\r\n\r\n";
  EXPECT_EQ(notHttp.feed(bytes, events).reason(), "not-an-event-stream");

  StreamParser huge;
  bytes = "HTTP/1.1 200 OK\r\nX-Pad: " + std::string(70 * 1024, 'a');
  EXPECT_EQ(huge.feed(bytes, events).reason(), "not-an-event-stream");
}

// Another answer is parsed whole, so the caller can say what it was.
TEST(StreamParserTest, AnotherAnswerKeepsItsStatusTypeAndBodyStart) {
  StreamParser parser;
  std::string bytes =
      "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n"
      "{\"no\":\"such\"}";
  std::vector<std::string> events;
  ASSERT_TRUE(parser.feed(bytes, events).isOk());
  EXPECT_EQ(parser.status(), 404);
  EXPECT_FALSE(parser.eventStream());
  EXPECT_EQ(parser.bodyStart(), "{\"no\":\"such\"}");
  EXPECT_TRUE(parser.ended());
}

}  // namespace
}  // namespace shoal::http
