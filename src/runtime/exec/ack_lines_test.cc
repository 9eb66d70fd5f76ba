#include "runtime/exec/ack_lines.h"

#include <string>

#include <gtest/gtest.h>

namespace shoal::runtime {
namespace {

using Ids = std::vector<std::string>;

TEST(AckLinesTest, OnlyWellFormedLinesAcknowledge) {
  EXPECT_EQ(parseAckLine("ack m-1"), "m-1");
  EXPECT_EQ(parseAckLine("ack m-1\r"), "m-1");
  EXPECT_EQ(parseAckLine("ack \"\""), "\"\"");  // an empty id is shown quoted
  EXPECT_FALSE(parseAckLine("ack "));
  EXPECT_FALSE(parseAckLine("ack  m-1"));
  EXPECT_FALSE(parseAckLine("ack m 1"));
  EXPECT_FALSE(parseAckLine("ACK m-1"));
  EXPECT_FALSE(parseAckLine("acked m-1"));
  EXPECT_FALSE(parseAckLine("ack m\x01"));
  EXPECT_FALSE(parseAckLine(""));
}

TEST(AckLinesTest, LinesSplitAcrossReadsAreJoined) {
  AckLines lines;
  auto a = lines.feed("ack m-");
  EXPECT_TRUE(a.ids.empty());
  auto b = lines.feed("1\nack m-2\nhello\nac");
  EXPECT_EQ(b.ids, (Ids{"m-1", "m-2"}));
  EXPECT_EQ(b.ignored, 1u);
  auto c = lines.feed("k m-3");
  EXPECT_TRUE(c.ids.empty());
  auto end = lines.finish();  // the last line had no line feed: it still counts
  EXPECT_EQ(end.ids, (Ids{"m-3"}));
  EXPECT_TRUE(lines.finish().ids.empty());
}

TEST(AckLinesTest, AnOverlongLineIsDroppedWholeAndCostsBoundedMemory) {
  AckLines lines;
  const std::string huge(kMaxAckLineBytes * 4, 'x');
  auto a = lines.feed("ack " + huge);
  auto b = lines.feed(huge + "ack m-9\nack m-1\n");
  EXPECT_TRUE(a.ids.empty());
  EXPECT_EQ(b.ids, (Ids{"m-1"}));  // "ack m-9" was the tail of the long line
  EXPECT_EQ(b.ignored, 1u);
}

}  // namespace
}  // namespace shoal::runtime
