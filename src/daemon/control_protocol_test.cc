// The control socket's messages: what the daemon accepts as a request, what the CLI reads back
// from a reply, and that each side reads what the other writes.
#include "daemon/control_protocol.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

// A request is a string op and an optional object of args; args come back as compact JSON.
TEST(ControlProtocol, ARequestIsAnOpAndAnOptionalArgsObject) {
  auto full = parseControlRequest(R"({"op":"seat.show","args":{ "seat" : "alice" }})");
  ASSERT_TRUE(full.isOk()) << full.status().toString();
  EXPECT_EQ(full->op, "seat.show");
  EXPECT_EQ(full->argsJson, R"({"seat":"alice"})");
  auto bare = parseControlRequest(R"({"op":"status"})");
  ASSERT_TRUE(bare.isOk());
  EXPECT_EQ(bare->argsJson, "{}");
}

// Anything but that is refused with a reason, and nothing reaches the handler.
TEST(ControlProtocol, EverythingElseIsRefusedWithAReason) {
  for (const char* bad : {"", "not json", "[1]", "\"op\"", "{\"op\":\"a\"} trailing"}) {
    auto r = parseControlRequest(bad);
    ASSERT_FALSE(r.isOk()) << bad;
    EXPECT_EQ(r.status().reason(), "malformed-json") << bad;
  }
  for (const char* bad : {R"({})", R"({"op":""})", R"({"op":7})", R"({"op":"a","args":[]})",
                          R"({"op":"a","extra":1})", R"({"args":{}})"}) {
    auto r = parseControlRequest(bad);
    ASSERT_FALSE(r.isOk()) << bad;
    EXPECT_EQ(r.status().reason(), "bad-control-request") << bad;
    EXPECT_FALSE(r.status().message().empty());
  }
}

// The CLI's request line is one line the daemon reads back as the same request.
TEST(ControlProtocol, AnEncodedRequestParsesBackTheSame) {
  auto line = encodeControlRequest(ControlRequest{"seat.add", R"({"name":"a\nb","n":[1,2.5]})"});
  ASSERT_TRUE(line.isOk());
  ASSERT_EQ(line->back(), '\n');
  EXPECT_EQ(line->find('\n'), line->size() - 1);
  auto back = parseControlRequest(std::string_view(*line).substr(0, line->size() - 1));
  ASSERT_TRUE(back.isOk());
  EXPECT_EQ(back->op, "seat.add");
  EXPECT_EQ(back->argsJson, R"({"name":"a\nb","n":[1,2.5E0]})");
  EXPECT_EQ(encodeControlRequest(ControlRequest{"status", "[]"}).status().reason(),
            "bad-control-request");
}

// The daemon's replies read back as the result text or the same error, code included.
TEST(ControlProtocol, RepliesReadBackAsTheResultOrTheSameError) {
  auto ok = parseControlReply(controlResultReply(R"({"seats":[]})"));
  ASSERT_TRUE(ok.isOk());
  EXPECT_EQ(*ok, R"({"seats":[]})");
  const Status busy = unavailable("control-busy", "try again");
  auto refused = parseControlReply(controlErrorReply(busy));
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status(), busy);
  EXPECT_EQ(*parseControlReply(R"({"ok":true})"), "null");
  EXPECT_EQ(parseControlReply(R"({"ok":false,"error":{"code":"no-such-code"}})").status().code(),
            StatusCode::kInternal);
  for (const char* bad : {"", "{}", R"({"ok":false})", R"({"ok":false,"error":"x"})"}) {
    EXPECT_EQ(parseControlReply(bad).status().reason(), "bad-control-reply") << bad;
  }
}

}  // namespace
}  // namespace shoal::daemon
