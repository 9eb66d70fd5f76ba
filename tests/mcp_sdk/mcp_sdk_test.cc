// The official MCP TypeScript SDK (@modelcontextprotocol/sdk, pinned by install.sh) as the
// client of a shoal_mcp Server: sdk_client.mjs connects over Streamable HTTP with a bearer
// token, lists the tools, calls each, and prints one JSON line that these tests check.
// sdk_stdio_client.mjs makes the same calls over stdio through `shoal mcp --config` (the
// bridge, cli/mcp_bridge.h), which relays them to the same kind of Server.
//
// The suite installs the SDK once per test process (install.sh is idempotent and serialises
// parallel installs). Without node/npm the script exits 3 and every test skips, saying why.
#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <sys/stat.h>

#include "base/file_system.h"
#include "base/subprocess.h"
#include "mcp/sample_tools.h"
#include "mcp/server.h"
#include "testing/temp_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace shoal::mcp {
namespace {

namespace json = boost::json;
using std::chrono::seconds;
using ::testing::HasSubstr;

constexpr const char* kToken = "sdk-test-token-5f1d2c";

std::string readText(const std::string& path) {
  return FileSystem::posix().readFile(path).valueOr("");
}

// The last non-empty line of `text`.
std::string lastLine(const std::string& text) {
  size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end + 1 - (start == std::string::npos ? 0 : start + 1));
}

class McpSdkTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto dir = testing::TempDir::create("mcp-sdk-install");
    ASSERT_TRUE(dir.isOk()) << dir.status().toString();
    SpawnOptions o;
    o.argv = {"bash", SHOAL_MCP_SDK_INSTALL, SHOAL_MCP_SDK_DIR};
    o.stdoutTarget = StdioTarget::appendTo(dir->join("stdout"));
    o.stderrTarget = StdioTarget::appendTo(dir->join("stderr"));
    o.killOnDestroy = true;
    auto child = Subprocess::spawn(o);
    ASSERT_TRUE(child.isOk()) << child.status().toString();
    auto exit = child->wait(std::chrono::milliseconds(seconds(240)));
    ASSERT_TRUE(exit.isOk()) << "install.sh did not finish: " << exit.status().toString();
    if (exit->exited && exit->code == 3) {
      skipReason_ = readText(dir->join("stdout"));
      return;
    }
    ASSERT_TRUE(exit->success()) << "install.sh " << exit->toString() << "\n"
                                 << readText(dir->join("stderr"));
    installed_ = true;
  }

  void SetUp() override {
    if (skipReason_) GTEST_SKIP() << *skipReason_;
    ASSERT_TRUE(installed_) << "the SDK install failed (see the suite set-up)";
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
  json::object runScript(std::vector<std::string> args, bool expectOk = true,
                         seconds limit = seconds(120)) {
    auto dir = testing::TempDir::create("mcp-sdk-run");
    EXPECT_TRUE(dir.isOk());
    if (!dir.isOk()) return {};
    SpawnOptions o;
    o.argv = {"node"};
    o.argv.insert(o.argv.end(), args.begin(), args.end());
    o.stdoutTarget = StdioTarget::appendTo(dir->join("stdout"));
    o.stderrTarget = StdioTarget::appendTo(dir->join("stderr"));
    o.killOnDestroy = true;
    auto child = Subprocess::spawn(o);
    EXPECT_TRUE(child.isOk()) << child.status().toString();
    if (!child.isOk()) return {};
    auto exit = child->wait(std::chrono::milliseconds(limit));
    EXPECT_TRUE(exit.isOk()) << args[0] << " did not finish within " << limit.count() << " s\n"
                             << readText(dir->join("stderr"));
    if (!exit.isOk()) return {};
    EXPECT_EQ(exit->success(), expectOk) << exit->toString();
    std::string line = lastLine(readText(dir->join("stdout")));
    boost::system::error_code ec;
    json::value v = json::parse(line, ec);
    EXPECT_FALSE(ec) << "stdout: " << line << "\nstderr: " << readText(dir->join("stderr"));
    if (ec || !v.is_object()) return {};
    EXPECT_EQ(v.as_object().at("ok"), json::value(expectOk))
        << line << "\nstderr: " << readText(dir->join("stderr"));
    return v.as_object();
  }

  // sdk_client.mjs against the server, over Streamable HTTP.
  json::object runClient(const std::string& token = kToken) {
    return runScript({std::string(SHOAL_MCP_SDK_DIR) + "/sdk_client.mjs", server_->url(), token});
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
    return runScript(
        {std::string(SHOAL_MCP_SDK_DIR) + "/sdk_stdio_client.mjs", SHOAL_BINARY, config}, expectOk,
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

  static inline std::optional<std::string> skipReason_;
  static inline bool installed_ = false;
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
  auto dir = testing::TempDir::create("mcp-sdk-bad-token");
  ASSERT_TRUE(dir.isOk());
  SpawnOptions o;
  o.argv = {"node", std::string(SHOAL_MCP_SDK_DIR) + "/sdk_client.mjs", server_->url(), "wrong"};
  o.stdoutTarget = StdioTarget::appendTo(dir->join("stdout"));
  o.killOnDestroy = true;
  auto child = Subprocess::spawn(o);
  ASSERT_TRUE(child.isOk());
  auto exit = child->wait(std::chrono::milliseconds(seconds(120)));
  ASSERT_TRUE(exit.isOk());
  EXPECT_FALSE(exit->success());
  std::string line = lastLine(readText(dir->join("stdout")));
  boost::system::error_code ec;
  json::value v = json::parse(line, ec);
  ASSERT_FALSE(ec) << line;
  EXPECT_EQ(v.at("ok"), json::value(false)) << line;
  EXPECT_EQ(v.at("code"), json::value(401)) << line;
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
