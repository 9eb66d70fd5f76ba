// The SSE grammar's line endings (the response's framing is stream_parser_test.cc, the socket
// side event_stream_test.cc; whole bodies are client_test.cc's sseEventData tests).
#include "http/sse_decoder.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace shoal::http {
namespace {

using ::testing::ElementsAre;

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
