// Tool argument checking (mcp/schema_check.h): the accepted schema subset and the messages a
// model reads when its arguments do not fit.
#include "mcp/schema_check.h"

#include <string>

#include <boost/json.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace shoal::mcp {
namespace {

namespace json = boost::json;
using ::testing::HasSubstr;

json::object parseObject(const char* text) {
  return json::parse(text).as_object();
}

json::object dmSchema() {
  auto s = normalizeInputSchema(parseObject(R"({
    "type":"object",
    "properties":{
      "to":{"type":"string","description":"recipient"},
      "text":{"type":"string"},
      "urgent":{"type":"boolean"},
      "count":{"type":"integer"},
      "weight":{"type":"number"},
      "tags":{"type":"array","items":{"type":"string"}},
      "extra":{"type":"object"},
      "mode":{"type":"string","enum":["a","b"]}
    },
    "required":["to","text"],
    "additionalProperties":false})"));
  EXPECT_TRUE(s.isOk()) << s.status().toString();
  return *s;
}

std::string problem(const json::object& schema, const char* args) {
  auto r = checkArguments(schema, parseObject(args));
  EXPECT_FALSE(r.isOk()) << args;
  if (r.isOk()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return std::string(r.status().message());
}

// Arguments that fit come back unchanged (integral doubles become integers).
TEST(SchemaCheck, FittingArgumentsPass) {
  auto r = checkArguments(dmSchema(), parseObject(R"({"to":"bob","text":"hi","urgent":true,
      "count":3,"weight":1.5,"tags":["x","y"],"extra":{"k":1},"mode":"b"})"));
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(r->at("to"), json::value("bob"));
  EXPECT_EQ(r->at("count"), json::value(3));

  auto integral = checkArguments(dmSchema(), parseObject(R"({"to":"b","text":"t","count":4.0})"));
  ASSERT_TRUE(integral.isOk());
  EXPECT_TRUE(integral->at("count").is_int64());
  EXPECT_EQ(integral->at("count").as_int64(), 4);
}

// Arguments are closed: a key not in `properties` names itself and the allowed ones.
TEST(SchemaCheck, UnknownKeyIsRefusedNamingAllowedOnes) {
  std::string m = problem(dmSchema(), R"({"to":"b","text":"t","colour":"red"})");
  EXPECT_THAT(m, HasSubstr("unknown argument `colour`"));
  EXPECT_THAT(m, HasSubstr("`to`, `text`, `urgent`"));
  auto r = checkArguments(dmSchema(), parseObject(R"({"to":"b","text":"t","x":1})"));
  EXPECT_EQ(r.status().reason(), "unknown-argument");

  auto none = normalizeInputSchema(parseObject(R"({"type":"object"})"));
  ASSERT_TRUE(none.isOk());
  EXPECT_THAT(problem(*none, R"({"x":1})"), HasSubstr("this tool takes no arguments"));
}

// Identity-like keys get the identity message, never the generic one.
TEST(SchemaCheck, IdentityKeysAreNeverArguments) {
  for (const char* key :
       {"from", "sender", "seat", "as", "identity", "principal", "on_behalf_of"}) {
    json::object args{{"to", "b"}, {"text", "t"}, {key, "mallory"}};
    auto r = checkArguments(dmSchema(), args);
    ASSERT_FALSE(r.isOk()) << key;
    EXPECT_EQ(r.status().reason(), "identity-argument");
    EXPECT_EQ(r.status().message(),
              std::string("identity comes from the seat; `") + key + "` is not an argument");
  }
}

// A missing required argument is named with its type.
TEST(SchemaCheck, MissingRequiredIsRefused) {
  EXPECT_EQ(problem(dmSchema(), R"({"to":"b"})"), "missing required argument `text` (string)");
}

// Each basic type is checked; the message says what was expected and what came.
TEST(SchemaCheck, WrongBasicTypesAreRefused) {
  const json::object s = dmSchema();
  EXPECT_EQ(problem(s, R"({"to":1,"text":"t"})"), "argument `to` must be a string, got integer");
  EXPECT_EQ(problem(s, R"({"to":"b","text":"t","urgent":"yes"})"),
            "argument `urgent` must be a boolean, got string");
  EXPECT_EQ(problem(s, R"({"to":"b","text":"t","count":1.5})"),
            "argument `count` must be an integer, got a non-integral number");
  EXPECT_EQ(problem(s, R"({"to":"b","text":"t","weight":"1"})"),
            "argument `weight` must be a number, got string");
  EXPECT_EQ(problem(s, R"({"to":"b","text":"t","tags":"x"})"),
            "argument `tags` must be an array of strings, got string");
  EXPECT_EQ(problem(s, R"({"to":"b","text":"t","tags":["x",2]})"),
            "argument `tags` must be an array of strings, got integer at index 1");
  EXPECT_EQ(problem(s, R"({"to":"b","text":"t","extra":[]})"),
            "argument `extra` must be an object, got array");
  EXPECT_EQ(problem(s, R"({"to":null,"text":"t"})"), "argument `to` must be a string, got null");
  EXPECT_EQ(problem(s, R"({"to":"b","text":"t","mode":"c"})"),
            "argument `mode` must be one of `a`, `b`, got `c`");
}

// Every problem is reported at once, the reason being the first one's.
TEST(SchemaCheck, AllProblemsAreReportedTogether) {
  auto r = checkArguments(dmSchema(), parseObject(R"({"from":"x","text":5})"));
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().reason(), "identity-argument");
  EXPECT_EQ(r.status().message(),
            "identity comes from the seat; `from` is not an argument; missing required argument "
            "`to` (string); argument `text` must be a string, got integer");
}

// Normalizing fills in what is implied and refuses what the checker would not enforce.
TEST(SchemaCheck, NormalizeFillsInAndRefusesTheUnchecked) {
  auto empty = normalizeInputSchema({});
  ASSERT_TRUE(empty.isOk());
  EXPECT_EQ(json::serialize(*empty),
            R"({"type":"object","additionalProperties":false,"properties":{}})");

  for (const char* bad : {
           R"({"type":"array"})",
           R"({"type":"object","additionalProperties":true})",
           R"({"type":"object","properties":{"x":{"type":"string","minLength":1}}})",
           R"({"type":"object","properties":{"x":{"type":["string","null"]}}})",
           R"({"type":"object","properties":{"x":{"type":"array","items":{"type":"integer"}}}})",
           R"({"type":"object","properties":{"x":{"type":"array"}}})",
           R"({"type":"object","properties":{"x":{"type":"integer","enum":[1]}}})",
           R"({"type":"object","properties":{"x":{"type":"string"}},"required":["y"]})",
           R"({"type":"object","properties":{"from":{"type":"string"}}})",
           R"({"type":"object","oneOf":[]})",
       }) {
    auto r = normalizeInputSchema(parseObject(bad));
    EXPECT_FALSE(r.isOk()) << bad;
    EXPECT_EQ(r.status().reason(), "unsupported-schema") << bad;
  }
}

}  // namespace
}  // namespace shoal::mcp
