// The pure framings under an event stream: chunked transfer coding fed in arbitrary pieces, and
// the SSE grammar's line endings (the socket side is event_stream_test.cc; whole bodies are
// client_test.cc's sseEventData tests).
#include "http/sse_decoder.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace shoal::http {
namespace {

using ::testing::ElementsAre;

// Chunk boundaries and read boundaries are independent: fed one byte at a time, the decoder
// yields the same payload as fed whole, keeps only what it cannot decode yet, and sees the end.
TEST(ChunkedDecoderTest, PayloadIsTheSameWhateverTheReadBoundaries) {
  const std::string body = "5\r\nhello\r\n1;ext=1\r\n \r\nA\r\n0123456789\r\n0\r\n\r\n";
  ChunkedDecoder whole;
  std::string bytes = body, payload;
  ASSERT_TRUE(whole.decode(bytes, payload).isOk());
  EXPECT_EQ(payload, "hello 0123456789");
  EXPECT_TRUE(whole.ended());
  EXPECT_TRUE(bytes.empty());

  ChunkedDecoder split;
  std::string pending, pieces;
  for (char c : body) {
    pending += c;
    ASSERT_TRUE(split.decode(pending, pieces).isOk());
    EXPECT_LE(pending.size(), 8u);  // at most a partial size line ("1;ext=1\r") is held
  }
  EXPECT_EQ(pieces, payload);
  EXPECT_TRUE(split.ended());
}

// A partial size line waits for more bytes, but never past 1 KiB.
TEST(ChunkedDecoderTest, APartialSizeLineWaitsUpTo1KiB) {
  ChunkedDecoder decoder;
  std::string bytes = "1f", payload;
  ASSERT_TRUE(decoder.decode(bytes, payload).isOk());
  EXPECT_EQ(bytes, "1f");
  EXPECT_FALSE(decoder.ended());
  std::string endless(1025, '0');
  EXPECT_EQ(decoder.decode(endless, payload).reason(), "event-stream-malformed");
}

// A size that is not a number, and a chunk not followed by CRLF, are malformed; the payload
// decoded before the error is kept.
TEST(ChunkedDecoderTest, BadSizesAndMissingChunkEndsAreMalformed) {
  ChunkedDecoder bad;
  std::string bytes = "zz\r\nhi\r\n", payload;
  EXPECT_EQ(bad.decode(bytes, payload).reason(), "event-stream-malformed");
  EXPECT_EQ(bytes, "zz\r\nhi\r\n");

  ChunkedDecoder unterminated;
  bytes = "2\r\nhiXX";
  EXPECT_EQ(unterminated.decode(bytes, payload).reason(), "event-stream-malformed");
  EXPECT_EQ(payload, "hi");
}

// CR alone, LF alone and CRLF all end a line, even when a CRLF is split across two feeds.
TEST(SseDecoderTest, EveryLineEndingEndsALine) {
  SseDecoder decoder;
  std::vector<std::string> events;
  decoder.feed("data: a\rdata: b\r", events);
  decoder.feed("\n\r\ndata: c\n\n", events);
  EXPECT_THAT(events, ElementsAre("a\nb", "c"));
  EXPECT_EQ(decoder.pendingBytes(), 0u);
}

}  // namespace
}  // namespace shoal::http
