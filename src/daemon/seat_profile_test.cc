#include "daemon/seat_profile.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

SeatProfile sample() {
  SeatProfile p;
  p.name = "Reviewer 1";
  p.principal = wire::Principal{"local", "reviewer_1"};
  p.runtime = RuntimeKind::kExec;
  p.command = {"/usr/bin/env", "python3", "agent.py"};
  p.cwd = "/srv/seats/reviewer_1";
  p.role = "reviewer";
  p.channels = {"team.backend"};
  p.env = {"ANTHROPIC_API_KEY"};
  p.lifecycleUid = "abcdefghijklmnopqrstuvwxyz";
  return p;
}

TEST(SeatProfileTest, RoundTrips) {
  auto bytes = encodeSeatProfile(sample());
  ASSERT_TRUE(bytes.isOk()) << bytes.status().toString();
  auto back = decodeSeatProfile(*bytes);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(*back, sample());
}

TEST(SeatProfileTest, TheAckProtocolIsAnExecOptionThatRoundTrips) {
  SeatProfile acking = sample();
  acking.acks = true;
  auto bytes = encodeSeatProfile(acking);
  ASSERT_TRUE(bytes.isOk()) << bytes.status().toString();
  EXPECT_NE(bytes->find(R"("ack":true)"), std::string::npos);
  auto back = decodeSeatProfile(*bytes);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_TRUE(back->acks);
  // Absent means false, and an old profile (no key) still decodes.
  auto plain = encodeSeatProfile(sample());
  ASSERT_TRUE(plain.isOk());
  EXPECT_EQ(plain->find("\"ack\""), std::string::npos);

  acking.runtime = RuntimeKind::kClaude;
  EXPECT_EQ(validateSeatProfile(acking).reason(), "ack-needs-exec");
  std::string wrongType = plain->substr(0, plain->size() - 1) + R"(,"ack":"yes"})";
  EXPECT_EQ(decodeSeatProfile(wrongType).status().reason(), "bad-seat-profile");
}

TEST(SeatProfileTest, UnknownKeyIsRefusedNotDefaulted) {
  auto bytes = encodeSeatProfile(sample());
  ASSERT_TRUE(bytes.isOk());
  std::string typo = bytes->substr(0, bytes->size() - 1) + R"(,"chanels":["x"]})";
  auto back = decodeSeatProfile(typo);
  ASSERT_FALSE(back.isOk());
  EXPECT_EQ(back.status().reason(), "bad-seat-profile");
  EXPECT_NE(back.status().message().find("chanels"), std::string::npos);
}

TEST(SeatProfileTest, BadInputsAreNamed) {
  struct Case {
    const char* what;
    void (*mutate)(SeatProfile&);
    const char* reason;
  };
  const Case cases[] = {
      {"empty name", [](SeatProfile& p) { p.name.clear(); }, "bad-seat-name"},
      {"control in name", [](SeatProfile& p) { p.name = "a\nb"; }, "bad-seat-name"},
      {"nkey owner", [](SeatProfile& p) { p.principal.owner = "UABC"; }, ""},
      {"exec without command", [](SeatProfile& p) { p.command.clear(); }, "missing-command"},
      {"relative cwd", [](SeatProfile& p) { p.cwd = "seats/x"; }, "bad-cwd"},
      {"bad role", [](SeatProfile& p) { p.role = "re view"; }, "bad-role"},
      {"wildcard channel", [](SeatProfile& p) { p.channels = {"team.*"}; }, "bad-channel"},
      {"bad env name", [](SeatProfile& p) { p.env = {"lower"}; }, "bad-env-name"},
      {"bad uid", [](SeatProfile& p) { p.lifecycleUid = "UPPER"; }, "bad-lifecycle-uid"},
  };
  for (const auto& c : cases) {
    SeatProfile p = sample();
    c.mutate(p);
    Status s = validateSeatProfile(p);
    EXPECT_FALSE(s.isOk()) << c.what;
    if (*c.reason != '\0') {
      EXPECT_EQ(s.reason(), c.reason) << c.what;
    }
    EXPECT_FALSE(encodeSeatProfile(p).isOk()) << c.what;
  }
  // A non-exec runtime may leave the command to its default.
  SeatProfile claude = sample();
  claude.runtime = RuntimeKind::kClaude;
  claude.command.clear();
  EXPECT_TRUE(validateSeatProfile(claude).isOk());
}

TEST(SeatProfileTest, MalformedJsonAndWrongTypes) {
  EXPECT_EQ(decodeSeatProfile("{").status().reason(), "malformed-json");
  EXPECT_EQ(decodeSeatProfile("[]").status().reason(), "bad-seat-profile");
  EXPECT_EQ(decodeSeatProfile(R"({"name":1})").status().reason(), "bad-seat-profile");
  EXPECT_EQ(decodeSeatProfile(R"({"name":"x"})").status().reason(), "bad-seat-profile");
  EXPECT_EQ(decodeSeatProfile(std::string(kMaxProfileBytes + 1, ' ')).status().reason(),
            "bad-seat-profile");
}

}  // namespace
}  // namespace shoal::daemon
