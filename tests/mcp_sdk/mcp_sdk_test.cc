// The official MCP TypeScript SDK (@modelcontextprotocol/sdk, pinned by install.sh) as the
// client of a shoal_mcp Server: sdk_client.mjs connects over Streamable HTTP with a bearer
// token, lists the tools, calls each, and prints one JSON line that these tests check.
// sdk_stdio_client.mjs makes the same calls over stdio through `shoal mcp --config` (the
// bridge, mcp/stdio_bridge.h), which relays them to the same kind of Server.
//
// The suite installs the SDK once per test process (sdk_harness.h; install.sh is idempotent and
// serialises parallel installs). Without node/npm the script exits 3 and every test skips,
// saying why.
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <sys/stat.h>

#include "mcp/sample_tools.h"
#include "mcp/server.h"
#include "mcp_sdk/sdk_harness.h"
#include "testing/temp_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace shoal::mcp {
namespace {

namespace json = boost::json;
using std::chrono::seconds;
using ::testing::HasSubstr;

constexpr const char* kToken = "sdk-test-token-5f1d2c";

class McpSdkTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { (void)mcp_sdk::SdkInstall::once(); }

  void SetUp() override {
    const mcp_sdk::SdkInstall& sdk = mcp_sdk::SdkInstall::once();
    if (sdk.skipReason) GTEST_SKIP() << *sdk.skipReason;
    ASSERT_TRUE(sdk.installed) << "the SDK install failed: " << sdk.error;
  }

  void startServer(bool preferSse) {
    ServerOptions o;
    o.bearerToken = kToken;
    o.version = "0.1.0-test";
    o.instructions = "Shoal test server.";
    o.preferSse = preferSse;
    auto s = Server::start(o, sampleToolsForTest());
    ASSERT_TRUE(s.isOk()) << s.status().toString();
    server_ = std::move(s).value();
  }

  // Runs an SDK client script (argv after `node`) and returns its JSON line; its `ok` must be
  // `expectOk`. The script must finish within `limit`.
  static json::object runScript(std::vector<std::string> args, bool expectOk = true,
                                seconds limit = seconds(120)) {
    return mcp_sdk::runSdkScript(args, {}, expectOk, limit);
  }

  // sdk_client.mjs against the server, over Streamable HTTP.
  json::object runClient(const std::string& token = kToken) {
    return runScript({mcp_sdk::sdkScript("sdk_client.mjs"), server_->url(), token});
  }

  // A client config in the shape a seat writes (<cwd>/.shoal/mcp.json, mode 0600) for `url`.
  std::string writeConfig(const std::string& url, const std::string& token) {
    auto dir = testing::TempDir::create("mcp-sdk-config");
    EXPECT_TRUE(dir.isOk());
    if (!dir.isOk()) return "";
    configDirs_.push_back(std::move(dir).value());
    std::string path = configDirs_.back().join("mcp.json");
    json::object server{{"type", "http"},
                        {"url", url},
                        {"headers", json::object{{"Authorization", "Bearer " + token}}}};
    std::ofstream(path) << json::serialize(
                               json::object{{"mcpServers", json::object{{"shoal", server}}}})
                        << "\n";
    ::chmod(path.c_str(), 0600);
    return path;
  }

  // sdk_stdio_client.mjs: the SDK over stdio, through `shoal mcp --config <config>`.
  json::object runStdioClient(const std::string& config, bool expectOk = true,
                              seconds limit = seconds(120)) {
    return runScript({mcp_sdk::sdkScript("sdk_stdio_client.mjs"), SHOAL_BINARY, config}, expectOk,
                     limit);
  }

  // Checks what every run must show, in either response mode.
  static void checkRun(const json::object& out) {
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(out.at("protocolVersion"), json::value("2025-11-25"));
    EXPECT_EQ(out.at("serverInfo").at("name"), json::value("shoal"));
    EXPECT_EQ(out.at("serverInfo").at("version"), json::value("0.1.0-test"));
    EXPECT_EQ(out.at("instructions"), json::value("Shoal test server."));
    EXPECT_EQ(json::serialize(out.at("tools")), R"(["echo","fail","boom"])");
    EXPECT_EQ(json::serialize(out.at("titles")), R"(["Echo","Fail","Boom"])");

    const json::object& calls = out.at("calls").as_object();
    EXPECT_EQ(calls.at("echo").at("isError"), json::value(false));
    EXPECT_EQ(calls.at("echo").at("text"), json::value("hello from the sdk"));
    EXPECT_EQ(calls.at("echo").at("meta").at("shoal.test/length"), json::value(18));
    EXPECT_EQ(calls.at("echoLoud").at("text"), json::value("QUIET"));

    EXPECT_EQ(calls.at("fail").at("isError"), json::value(true));
    EXPECT_EQ(calls.at("fail").at("text"), json::value("fail: this tool always fails"));
    EXPECT_EQ(calls.at("boom").at("isError"), json::value(true));
    EXPECT_THAT(std::string(calls.at("boom").at("text").as_string()), HasSubstr("kaboom"));

    EXPECT_EQ(calls.at("identity").at("isError"), json::value(true));
    EXPECT_EQ(calls.at("identity").at("text"),
              json::value("identity comes from the seat; `from` is not an argument"));
    EXPECT_EQ(calls.at("undeclared").at("isError"), json::value(true));
    EXPECT_THAT(std::string(calls.at("undeclared").at("text").as_string()),
                HasSubstr("unknown argument `colour`"));

    EXPECT_EQ(calls.at("unknownTool").at("protocolError").at("code"), json::value(-32602));
  }

  std::unique_ptr<Server> server_;
  std::vector<testing::TempDir> configDirs_;
};

// The SDK client connects, lists, and calls every tool with JSON responses.
TEST_F(McpSdkTest, SdkClientListsAndCallsToolsWithJsonResponses) {
  startServer(/*preferSse=*/false);
  checkRun(runClient());
}

// The same run with every request answered as an SSE stream.
TEST_F(McpSdkTest, SdkClientListsAndCallsToolsWithSseResponses) {
  startServer(/*preferSse=*/true);
  checkRun(runClient());
}

// A wrong token fails the SDK's connect (401), and the script says so.
TEST_F(McpSdkTest, SdkClientWithWrongTokenIsRefused) {
  startServer(/*preferSse=*/false);
  json::object out = runScript({mcp_sdk::sdkScript("sdk_client.mjs"), server_->url(), "wrong"},
                               /*expectOk=*/false);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.at("code"), json::value(401)) << json::serialize(out);
}

// Over stdio through `shoal mcp`: the SDK negotiates, lists and calls every tool exactly as
// over HTTP (the bridge carries the session and version headers the server requires).
TEST_F(McpSdkTest, StdioClientThroughTheBridgeListsAndCallsTools) {
  startServer(/*preferSse=*/false);
  checkRun(runStdioClient(writeConfig(server_->url(), kToken)));
}

// The same through the bridge when the server answers every request as an SSE stream.
TEST_F(McpSdkTest, StdioClientThroughTheBridgeWithSseResponses) {
  startServer(/*preferSse=*/true);
  checkRun(runStdioClient(writeConfig(server_->url(), kToken)));
}

// A wrong token in the config: the bridge answers initialize with an error naming the 401, so
// the client fails at once instead of waiting for its request timeout (60 s).
TEST_F(McpSdkTest, StdioClientWithWrongTokenGetsAnErrorNotAHang) {
  startServer(/*preferSse=*/false);
  const auto start = std::chrono::steady_clock::now();
  json::object out =
      runStdioClient(writeConfig(server_->url(), "wrong"), /*expectOk=*/false, seconds(40));
  ASSERT_FALSE(out.empty());
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(40));
  EXPECT_EQ(out.at("code"), json::value(-32000)) << json::serialize(out);
  EXPECT_THAT(std::string(out.at("error").as_string()), HasSubstr("HTTP 401"));
  EXPECT_THAT(std::string(out.at("error").as_string()),
              HasSubstr("the bearer token is not this endpoint's"));
}

// An endpoint that is gone (the seat stopped): the client gets the bridge's error, not a hang.
TEST_F(McpSdkTest, StdioClientOfAStoppedEndpointGetsAnErrorNotAHang) {
  startServer(/*preferSse=*/false);
  const std::string config = writeConfig(server_->url(), kToken);
  server_->stop();
  json::object out = runStdioClient(config, /*expectOk=*/false, seconds(40));
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.at("code"), json::value(-32000)) << json::serialize(out);
  EXPECT_THAT(std::string(out.at("error").as_string()),
              HasSubstr("shoal mcp: cannot reach the seat's endpoint"));
}

}  // namespace
}  // namespace shoal::mcp
