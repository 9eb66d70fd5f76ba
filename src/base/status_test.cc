#include "base/status.h"

#include <set>

#include "base/result.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

// A default Status is OK and carries no reason or message.
TEST(Status, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.toString(), "ok");
}

// An error keeps its code, reason token and message, and prints all three.
TEST(Status, ErrorCarriesCodeReasonAndMessage) {
  Status s = invalidArgument("malformed-subject", "subject has 5 tokens");
  EXPECT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.reason(), "malformed-subject");
  EXPECT_EQ(s.toString(), "invalid-argument (malformed-subject): subject has 5 tokens");
}

// Building a Status with kOk yields a plain OK, whatever text was given.
TEST(Status, OkCodeDropsText) {
  EXPECT_TRUE(Status(StatusCode::kOk, "x", "y").isOk());
}

// withContext prefixes the message and keeps code and reason.
TEST(Status, WithContextKeepsCodeAndReason) {
  Status s = unavailable("broker-down", "connection refused").withContext("reading presence");
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.reason(), "broker-down");
  EXPECT_EQ(s.message(), "reading presence: connection refused");
}

// Every code has a distinct stable name.
TEST(Status, CodeNamesAreDistinct) {
  std::set<std::string_view> names;
  for (int c = 0; c <= static_cast<int>(StatusCode::kCancelled); ++c) {
    names.insert(statusCodeName(static_cast<StatusCode>(c)));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(StatusCode::kCancelled) + 1);
}

Result<int> half(int x) {
  if (x % 2 != 0) return invalidArgument("odd", "cannot halve an odd number");
  return x / 2;
}

Result<int> quarter(int x) {
  SHOAL_ASSIGN_OR_RETURN(int h, half(x));
  return half(h);
}

// A Result holds the value or the error, and ASSIGN_OR_RETURN propagates the error.
TEST(Result, ValueOrErrorPropagates) {
  EXPECT_EQ(*quarter(8), 2);
  auto r = quarter(6);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().reason(), "odd");
  EXPECT_EQ(r.valueOr(-1), -1);
}

// A Result built from an OK Status is an internal error, never an empty success.
TEST(Result, OkStatusBecomesInternalError) {
  Result<int> r{Status::ok()};
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

// Reading the value of an error Result aborts: it is a bug, not a recoverable state.
TEST(ResultDeathTest, ValueOfErrorAborts) {
  Result<int> r = half(3);
  EXPECT_DEATH((void)r.value(), "Result::value\\(\\) on an error");
}

}  // namespace
}  // namespace shoal
