// The harness the MCP SDK tests share: installs the pinned official MCP TypeScript SDK
// (install.sh, into SHOAL_MCP_SDK_DIR, where CMake copies the client scripts) and runs one
// client script with node, returning the ONE JSON line it prints.
//
//   SdkInstall::once()   runs install.sh at most once per test process; `skipReason` is set
//                        when node or npm is missing (install.sh exit 3), `error` on a real
//                        failure. Call it from SetUpTestSuite and skip or fail in SetUp.
//   runSdkScript(…)      `node <args…>` with extra environment; adds a test failure (and
//                        returns {}) unless the script finishes within `limit`, exits as
//                        expected and prints a JSON object whose `ok` is `expectOk`.
//
// Header-only and gtest-dependent: include it only from test sources. The including target
// defines SHOAL_MCP_SDK_INSTALL and SHOAL_MCP_SDK_DIR (tests/mcp_sdk/CMakeLists.txt).
// Thread safety: call from the test's main thread.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "base/file_system.h"
#include "base/subprocess.h"
#include "testing/temp_dir.h"

#include <gtest/gtest.h>

namespace shoal::mcp_sdk {

inline std::string readText(const std::string& path) {
  return FileSystem::posix().readFile(path).valueOr("");
}

// The last non-empty line of `text`.
inline std::string lastLine(const std::string& text) {
  size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return text.substr(start, end + 1 - start);
}

// A client script's path in the install directory (next to node_modules).
inline std::string sdkScript(const std::string& name) {
  return std::string(SHOAL_MCP_SDK_DIR) + "/" + name;
}

struct SdkInstall {
  bool installed = false;
  std::optional<std::string> skipReason;  // node/npm missing: the tests skip, saying why
  std::string error;                      // any other failure: the tests fail with it

  static const SdkInstall& once() {
    static const SdkInstall result = run();
    return result;
  }

 private:
  static SdkInstall run() {
    SdkInstall out;
    auto dir = testing::TempDir::create("mcp-sdk-install");
    if (!dir.isOk()) {
      out.error = dir.status().toString();
      return out;
    }
    SpawnOptions o;
    o.argv = {"bash", SHOAL_MCP_SDK_INSTALL, SHOAL_MCP_SDK_DIR};
    o.stdoutTarget = StdioTarget::appendTo(dir->join("stdout"));
    o.stderrTarget = StdioTarget::appendTo(dir->join("stderr"));
    o.killOnDestroy = true;
    auto child = Subprocess::spawn(o);
    if (!child.isOk()) {
      out.error = child.status().toString();
      return out;
    }
    auto exit = child->wait(std::chrono::milliseconds(std::chrono::seconds(240)));
    if (!exit.isOk()) {
      out.error = "install.sh did not finish: " + exit.status().toString();
    } else if (exit->exited && exit->code == 3) {
      out.skipReason = readText(dir->join("stdout"));
    } else if (!exit->success()) {
      out.error = "install.sh " + exit->toString() + "\n" + readText(dir->join("stderr"));
    } else {
      out.installed = true;
    }
    return out;
  }
};

inline boost::json::object runSdkScript(
    const std::vector<std::string>& args,
    const std::vector<std::pair<std::string, std::string>>& env = {}, bool expectOk = true,
    std::chrono::seconds limit = std::chrono::seconds(120)) {
  namespace json = boost::json;
  auto dir = testing::TempDir::create("mcp-sdk-run");
  EXPECT_TRUE(dir.isOk());
  if (!dir.isOk()) return {};
  SpawnOptions o;
  o.argv = {"node"};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.env = env;
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

}  // namespace shoal::mcp_sdk
