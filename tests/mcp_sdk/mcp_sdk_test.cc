// The official MCP TypeScript SDK (@modelcontextprotocol/sdk, pinned by install.sh) as the
// client of a shoal_mcp Server: sdk_client.mjs connects over Streamable HTTP with a bearer
// token, lists the tools, calls each, and prints one JSON line that these tests check.
//
// The suite installs the SDK once per test process (install.sh is idempotent and serialises
// parallel installs). Without node/npm the script exits 3 and every test skips, saying why.
#include <chrono>
#include <optional>
#include <string>

#include <boost/json.hpp>

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

  // Runs sdk_client.mjs against the server and returns its JSON line.
  json::object runClient(const std::string& token = kToken) {
    auto dir = testing::TempDir::create("mcp-sdk-run");
    EXPECT_TRUE(dir.isOk());
    if (!dir.isOk()) return {};
    SpawnOptions o;
    o.argv = {"node", std::string(SHOAL_MCP_SDK_DIR) + "/sdk_client.mjs", server_->url(), token};
    o.stdoutTarget = StdioTarget::appendTo(dir->join("stdout"));
    o.stderrTarget = StdioTarget::appendTo(dir->join("stderr"));
    o.killOnDestroy = true;
    auto child = Subprocess::spawn(o);
    EXPECT_TRUE(child.isOk()) << child.status().toString();
    if (!child.isOk()) return {};
    auto exit = child->wait(std::chrono::milliseconds(seconds(120)));
    EXPECT_TRUE(exit.isOk()) << "sdk_client.mjs did not finish";
    std::string line = lastLine(readText(dir->join("stdout")));
    boost::system::error_code ec;
    json::value v = json::parse(line, ec);
    EXPECT_FALSE(ec) << "stdout: " << line << "\nstderr: " << readText(dir->join("stderr"));
    if (ec || !v.is_object()) return {};
    EXPECT_EQ(v.as_object().at("ok"), json::value(true)) << line;
    return v.as_object();
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

}  // namespace
}  // namespace shoal::mcp
