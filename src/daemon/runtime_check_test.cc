// checkRuntimeProgram: a seat is refused at `seat add` when its program cannot run.
#include <fstream>

#include <sys/stat.h>

#include "daemon/seat_launch.h"
#include "testing/temp_dir.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

SeatProfile profileOf(RuntimeKind kind, std::vector<std::string> command, std::string cwd) {
  SeatProfile p;
  p.name = "Reviewer";
  p.principal = wire::Principal{"local", "reviewer"};
  p.runtime = kind;
  p.command = std::move(command);
  p.cwd = std::move(cwd);
  return p;
}

void writeExecutable(const std::string& path) {
  std::ofstream(path) << "#!/bin/sh\n";
  ::chmod(path.c_str(), 0755);
}

// A runtime's default program is looked up on PATH; missing, the refusal names how to install.
TEST(RuntimeCheckTest, DefaultProgramIsLookedUpOnPath) {
  auto dir = testing::TempDir::create("bin");
  ASSERT_TRUE(dir.isOk());
  SeatProfile claude = profileOf(RuntimeKind::kClaude, {}, dir->path());
  Status missing = checkRuntimeProgram(claude, "/nonexistent:/also/not");
  EXPECT_EQ(missing.reason(), "runtime-missing");
  EXPECT_NE(missing.message().find("@anthropic-ai/claude-code"), std::string_view::npos);
  writeExecutable(dir->join("claude"));
  EXPECT_TRUE(checkRuntimeProgram(claude, "/nonexistent:" + dir->path()).isOk());
}

// A path runs as given; a relative one is resolved against the seat's cwd; a file that is not
// executable does not count.
TEST(RuntimeCheckTest, PathsAreCheckedAsFiles) {
  auto dir = testing::TempDir::create("seat");
  ASSERT_TRUE(dir.isOk());
  std::ofstream(dir->join("notes.txt")) << "x";
  writeExecutable(dir->join("agent.sh"));
  EXPECT_TRUE(
      checkRuntimeProgram(profileOf(RuntimeKind::kExec, {"./agent.sh"}, dir->path()), "").isOk());
  EXPECT_TRUE(
      checkRuntimeProgram(profileOf(RuntimeKind::kExec, {dir->join("agent.sh")}, "/"), "").isOk());
  EXPECT_EQ(
      checkRuntimeProgram(profileOf(RuntimeKind::kExec, {"./notes.txt"}, dir->path()), "").reason(),
      "runtime-missing");
  EXPECT_EQ(
      checkRuntimeProgram(profileOf(RuntimeKind::kExec, {"no-such-program-xyz"}, "/"), "/usr/bin")
          .reason(),
      "runtime-missing");
  EXPECT_TRUE(
      checkRuntimeProgram(profileOf(RuntimeKind::kExec, {"sh"}, "/"), "/bin:/usr/bin").isOk());
}

}  // namespace
}  // namespace shoal::daemon
