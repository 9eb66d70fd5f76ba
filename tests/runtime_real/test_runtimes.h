// What the runtime-real tests share: running scripts/install-test-runtimes for the pinned real
// runtimes (once per test process, from SetUpTestSuite; an installed runtime makes it a version
// check) and reading the text files the runtimes and the fake model leave behind.
//
// The script's exit 3 (node or npm missing) becomes `skip`: every test of the suite skips and
// says why. Anything else that goes wrong is `error`.
//
// Test support only. Needs SHOAL_SOURCE_DIR and SHOAL_TEST_RUNTIMES_DIR (CMakeLists.txt).
#pragma once

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "base/file_system.h"
#include "base/subprocess.h"
#include "testing/temp_dir.h"

namespace shoal::testing {

inline std::string readText(const std::string& path) {
  return FileSystem::posix().readFile(path).valueOr("");
}

// The non-empty lines of `text`.
inline std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

struct InstalledRuntime {
  std::string binary;  // the executable the script named, on success
  std::string skip;    // node/npm missing: why the tests skip
  std::string error;   // anything else
  double tookS = 0;    // how long the script ran
};

// Runs `scripts/install-test-runtimes <flag> <dir>` (flag: --claude, --codex or --opencode);
// `runtime` names it in the skip message.
inline InstalledRuntime installTestRuntime(const std::string& flag, const std::string& runtime) {
  InstalledRuntime out;
  auto dir = TempDir::create("rt-install");
  if (!dir.isOk()) {
    out.error = dir.status().toString();
    return out;
  }
  SpawnOptions opts;
  opts.argv = {std::string(SHOAL_SOURCE_DIR) + "/scripts/install-test-runtimes", flag,
               SHOAL_TEST_RUNTIMES_DIR};
  opts.stdoutTarget = StdioTarget::appendTo(dir->join("out"));
  opts.stderrTarget = StdioTarget::appendTo(dir->join("err"));
  const auto started = std::chrono::steady_clock::now();
  auto child = Subprocess::spawn(opts);
  if (!child.isOk()) {
    out.error = "cannot run scripts/install-test-runtimes: " + child.status().toString();
    return out;
  }
  auto exit = child->wait(std::chrono::seconds(500));
  out.tookS = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::string stdoutText = readText(dir->join("out"));
  const std::string said = stdoutText + readText(dir->join("err"));
  if (!exit.isOk()) {
    (void)child->terminate(std::chrono::seconds(5));
    out.error =
        "scripts/install-test-runtimes did not finish: " + exit.status().toString() + "\n" + said;
  } else if (exit->exited && exit->code == 3) {
    out.skip = "the real " + runtime + " cannot be installed here: " + said;
  } else if (!exit->success()) {
    out.error = "scripts/install-test-runtimes failed (" + exit->toString() + "):\n" + said;
  } else {
    auto lines = splitLines(stdoutText);
    out.binary = lines.empty() ? "" : lines.back();
    if (out.binary.empty() || ::access(out.binary.c_str(), X_OK) != 0) {
      out.error = "scripts/install-test-runtimes named no executable:\n" + said;
    }
  }
  return out;
}

}  // namespace shoal::testing
