// `shoal mcp`: the stdio bridge finds a seat's MCP endpoint through the real daemon and relays
// MCP over stdin/stdout to it; without a usable endpoint it exits 2 naming the remedy.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "cli_fixture.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

namespace json = boost::json;

class CliMcpTest : public CliTest {};

std::vector<json::value> jsonLines(const std::string& out) {
  std::vector<json::value> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    boost::system::error_code ec;
    json::value v = json::parse(line, ec);
    EXPECT_FALSE(ec) << "stdout carries only JSON lines, got: " << line;
    if (!ec) lines.push_back(std::move(v));
  }
  return lines;
}

// A running exec seat's endpoint, found by the seat's name: initialize negotiates the version
// the client asked for, tools/list (sent in that session) lists the seat's shoal_* tools, a
// line that is not JSON gets a parse error, and end of input exits 0.
TEST_F(CliMcpTest, BridgeRelaysToARunningSeatFoundThroughTheDaemon) {
  ASSERT_EQ(up().code, 0);
  CliRun added = shoal({"seat", "add", "Bridge Echo", "--", "/bin/cat"});
  ASSERT_EQ(added.code, 0) << added.out << added.err;

  const std::string input =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
      R"("capabilities":{},"clientInfo":{"name":"cli-test","version":"1"}}})"
      "\n"
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
      "\n"
      R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})"
      "\n"
      "this is not json\n";
  CliRun run = shoalWithInput({"mcp", "--seat", "Bridge Echo"}, input);
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  std::vector<json::value> lines = jsonLines(run.out);
  ASSERT_EQ(lines.size(), 3u) << run.out << run.err;

  EXPECT_EQ(lines[0].at("id"), json::value(1)) << run.out;
  EXPECT_EQ(lines[0].at("result").at("protocolVersion"), json::value("2025-06-18"));
  EXPECT_EQ(lines[0].at("result").at("serverInfo").at("version"),
            json::value("seat " + owner() + ".bridge_echo"));

  EXPECT_EQ(lines[1].at("id"), json::value(2)) << run.out;
  std::vector<std::string> tools;
  for (const auto& t : lines[1].at("result").at("tools").as_array())
    tools.emplace_back(t.at("name").as_string());
  for (const char* name : {"shoal_dm", "shoal_send", "shoal_roster", "shoal_status"}) {
    EXPECT_NE(std::find(tools.begin(), tools.end(), name), tools.end()) << name << "\n" << run.out;
  }

  EXPECT_TRUE(lines[2].at("id").is_null()) << run.out;
  EXPECT_EQ(lines[2].at("error").at("code"), json::value(-32700));

  // Stopped, the seat serves no endpoint: exit 2, saying so and how to start it.
  ASSERT_EQ(shoal({"seat", "stop", "Bridge Echo"}).code, 0);
  CliRun stopped = shoalWithInput({"mcp", "--seat", owner() + ".bridge_echo"}, "");
  EXPECT_EQ(stopped.code, 2) << stopped.err;
  EXPECT_NE(stopped.err.find("serves no MCP endpoint"), std::string::npos) << stopped.err;
  EXPECT_NE(stopped.err.find("shoal seat start"), std::string::npos) << stopped.err;
  EXPECT_EQ(stopped.out, "");
}

// No usable endpoint: an unknown seat, no daemon, or nothing named at all is exit 2 with the
// remedy on stderr and nothing on stdout.
TEST_F(CliMcpTest, NoEndpointIsExit2WithTheRemedy) {
  CliRun nothing = shoalWithInput({"mcp"}, "");
  EXPECT_EQ(nothing.code, 2);
  EXPECT_NE(nothing.err.find("--seat NAME"), std::string::npos) << nothing.err;
  EXPECT_NE(nothing.err.find("SHOAL_MCP_CONFIG"), std::string::npos) << nothing.err;
  EXPECT_EQ(nothing.out, "");

  CliRun noFile = shoalWithInput({"mcp", "--config", home_->join("missing.json")}, "");
  EXPECT_EQ(noFile.code, 2);
  EXPECT_NE(noFile.err.find("no MCP client config at"), std::string::npos) << noFile.err;

  CliRun noDaemon = shoalWithInput({"mcp", "--seat", "nosuch"}, "");
  EXPECT_EQ(noDaemon.code, 2);
  EXPECT_NE(noDaemon.err.find("shoal daemon"), std::string::npos) << noDaemon.err;

  ASSERT_EQ(up().code, 0);
  CliRun unknown = shoalWithInput({"mcp", "--seat", "nosuch"}, "");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("no seat " + owner() + ".nosuch"), std::string::npos) << unknown.err;
  EXPECT_EQ(unknown.out, "");
}

}  // namespace
}  // namespace shoal
