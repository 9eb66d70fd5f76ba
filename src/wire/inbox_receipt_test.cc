// The inbox receipt marker is found only in its exact form: prefix + 32 lowercase hex digits.
#include "wire/inbox_receipt.h"

#include <gtest/gtest.h>

namespace shoal::wire {
namespace {

TEST(InboxReceipt, MarkersAreExactlyThirtyTwoLowercaseHexDigits) {
  const std::string hex(32, 'f');
  EXPECT_EQ(inboxReceiptMarkers("x shoal-rcpt-" + hex + " y"),
            (std::vector<std::string>{"shoal-rcpt-" + hex}));
  EXPECT_TRUE(inboxReceiptMarkers("shoal-rcpt-" + std::string(31, 'f')).empty()) << "too short";
  EXPECT_TRUE(inboxReceiptMarkers("shoal-rcpt-" + std::string(33, 'f')).empty()) << "too long";
  EXPECT_TRUE(inboxReceiptMarkers("shoal-rcpt-" + std::string(32, 'F')).empty()) << "uppercase";
  EXPECT_TRUE(inboxReceiptMarkers("shoal-rcpt-" + std::string(32, 'g')).empty()) << "not hex";
  EXPECT_EQ(inboxReceiptMarkers("[shoal-rcpt-" + hex + ",shoal-rcpt-" + hex + "]").size(), 2u);
  EXPECT_TRUE(inboxReceiptMarkers("shoal-rcpt-").empty()) << "prefix at the end";
}

}  // namespace
}  // namespace shoal::wire
