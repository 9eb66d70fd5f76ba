// `shoal channels list|set|default` against a real broker provisioned by `shoal up`: the
// `=defaults` row of a local space, merged compare-and-set writes, effective values, and bad
// input refused with nothing written.
#include <string>

#include <boost/json.hpp>

#include "cli_fixture.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

namespace json = boost::json;

class CliChannelsTest : public CliTest {
 protected:
  json::object listed() {
    CliRun run = shoal({"channels", "list", "--json"});
    EXPECT_EQ(run.code, 0) << run.err;
    boost::system::error_code ec;
    json::value v = json::parse(run.out, ec);
    EXPECT_FALSE(ec) << run.out;
    return ec || !v.is_object() ? json::object{} : v.as_object();
  }
};

TEST_F(CliChannelsTest, RegistryRecordsAreMergedValidatedAndResolved) {
  ASSERT_EQ(up().code, 0);
  // A local space is provisioned with durable delivery by default and no channel records.
  json::object before = listed();
  EXPECT_EQ(before["defaults"].at("deliveryClass"), "durable") << json::serialize(before);
  EXPECT_TRUE(before["channels"].as_array().empty());

  CliRun set = shoal({"channels", "set", "team.backend", "--class", "live", "--replay-window",
                      "24h", "--description", "backend work"});
  ASSERT_EQ(set.code, 0) << set.err;
  // A second set changes only what it names.
  ASSERT_EQ(shoal({"channels", "set", "team.backend", "--instructions", "review in pairs"}).code,
            0);
  json::object after = listed();
  ASSERT_EQ(after["channels"].as_array().size(), 1u) << json::serialize(after);
  const json::object& row = after["channels"].as_array()[0].as_object();
  EXPECT_EQ(row.at("channel"), "team.backend");
  EXPECT_EQ(row.at("record").at("description"), "backend work");
  EXPECT_EQ(row.at("record").at("instructions"), "review in pairs");
  EXPECT_EQ(row.at("effective").at("deliveryClass"), "live");
  EXPECT_EQ(row.at("effective").at("replay"), true);
  EXPECT_EQ(row.at("effective").at("replayWindowMs"), 86400000);

  // Defaults apply where a channel has no value of its own.
  ASSERT_EQ(shoal({"channels", "default", "--replay", "off"}).code, 0);
  json::object later = listed();
  EXPECT_EQ(later["defaults"].at("replay"), false);
  EXPECT_EQ(later["channels"].as_array()[0].at("effective").at("replay"), false);
  CliRun text = shoal({"channels", "list"});
  EXPECT_NE(text.out.find("#team.backend"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("class live · replay off · backend work"), std::string::npos) << text.out;

  // Refused, exit 2, nothing written: an over-long description (never truncated), a bad
  // window, a wildcard, an unknown class.
  const std::string longText(201, 'a');
  CliRun tooLong = shoal({"channels", "set", "team.backend", "--description", longText});
  EXPECT_EQ(tooLong.code, 2);
  EXPECT_NE(tooLong.err.find("refused, never truncated"), std::string::npos) << tooLong.err;
  EXPECT_EQ(shoal({"channels", "set", "team.backend", "--replay-window", "5x"}).code, 2);
  EXPECT_EQ(shoal({"channels", "set", "team.*", "--class", "live"}).code, 2);
  EXPECT_EQ(shoal({"channels", "default", "--class", "sometimes"}).code, 2);
  json::object unchanged = listed();
  EXPECT_EQ(unchanged["channels"].as_array()[0].at("record"), row.at("record"));
  EXPECT_EQ(unchanged["defaults"].at("deliveryClass"), "durable");
}

}  // namespace
}  // namespace shoal
