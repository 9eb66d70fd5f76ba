#include "wire/liveness.h"

#include <string>

#include "wire/reasons.h"

#include <gtest/gtest.h>

namespace shoal::wire {
namespace {

std::string reasonOf(std::string_view json, Plane asked) {
  const Result<LivenessAnswer> r = decodeLivenessAnswer(json, asked);
  return r.isOk() ? "ok" : std::string(r.status().reason());
}

// Every responder value is read for the plane asked, with or without an instance.
TEST(LivenessAnswer, WellFormedAnswersDecodeAndRoundTrip) {
  for (const char* responder : {"bound", "unbound", "stale", "unknown"}) {
    const std::string json =
        R"({"plane":"delivery","responder":")" + std::string(responder) + R"(","instance":"i-1"})";
    const Result<LivenessAnswer> a = decodeLivenessAnswer(json, Plane::kDelivery);
    ASSERT_TRUE(a.isOk()) << a.status().toString();
    EXPECT_EQ(responderName(a->responder), responder);
    EXPECT_EQ(a->instance, "i-1");
    EXPECT_EQ(*encodeLivenessAnswer(*a), json);
  }
  const Result<LivenessAnswer> bare =
      decodeLivenessAnswer(R"({"plane":"manager","responder":"bound","extra":1})", Plane::kManager);
  ASSERT_TRUE(bare.isOk());
  EXPECT_FALSE(bare->instance.has_value());
}

// A reply for another plane, a bad responder or a bad instance is malformed.
TEST(LivenessAnswer, MalformedRepliesAreRefused) {
  EXPECT_EQ(reasonOf(R"({"plane":"manager","responder":"bound"})", Plane::kDelivery),
            reason::kMalformedLivenessAnswer);
  EXPECT_EQ(reasonOf(R"({"plane":"janitor","responder":"bound"})", Plane::kManager),
            reason::kMalformedLivenessAnswer);
  EXPECT_EQ(reasonOf(R"({"responder":"bound"})", Plane::kManager),
            reason::kMalformedLivenessAnswer);
  EXPECT_EQ(reasonOf(R"({"plane":"manager","responder":"up"})", Plane::kManager),
            reason::kMalformedLivenessAnswer);
  EXPECT_EQ(reasonOf(R"({"plane":"manager"})", Plane::kManager), reason::kMalformedLivenessAnswer);
  EXPECT_EQ(reasonOf(R"({"plane":"manager","responder":"bound","instance":""})", Plane::kManager),
            reason::kMalformedLivenessAnswer);
  EXPECT_EQ(reasonOf(R"({"plane":"manager","responder":"bound","instance":7})", Plane::kManager),
            reason::kMalformedLivenessAnswer);
  EXPECT_EQ(reasonOf("", Plane::kManager), reason::kMalformedJson);
  EXPECT_EQ(encodeLivenessAnswer({Plane::kManager, Responder::kBound, ""}).status().reason(),
            reason::kMalformedLivenessAnswer);
}

}  // namespace
}  // namespace shoal::wire
