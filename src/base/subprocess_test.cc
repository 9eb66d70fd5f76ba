#include "base/subprocess.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace shoal {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A scratch directory under TMPDIR, removed at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/shoal-subprocess-XXXXXX";
    char* made = mkdtemp(tmpl.data());
    EXPECT_NE(made, nullptr);
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A program that exits 0 reports success.
TEST(Subprocess, TrueExitsZero) {
  auto child = Subprocess::spawn({.argv = {"/bin/true"}});
  ASSERT_TRUE(child.isOk()) << child.status().toString();
  EXPECT_GT(child->pid(), 0);
  auto status = child->wait(seconds(30));
  ASSERT_TRUE(status.isOk()) << status.status().toString();
  EXPECT_TRUE(status->success());
  EXPECT_FALSE(child->running());
}

// The exit code of the child is reported exactly.
TEST(Subprocess, ExitCodeIsReported) {
  auto child = Subprocess::spawn({.argv = {"/bin/sh", "-c", "exit 3"}});
  ASSERT_TRUE(child.isOk()) << child.status().toString();
  auto status = child->wait(seconds(30));
  ASSERT_TRUE(status.isOk());
  EXPECT_TRUE(status->exited);
  EXPECT_EQ(status->code, 3);
  EXPECT_FALSE(status->success());
  EXPECT_EQ(status->toString(), "exit code 3");
}

// A missing binary is kNotFound and the error names it.
TEST(Subprocess, MissingBinaryIsNotFoundAndNamed) {
  auto child = Subprocess::spawn({.argv = {"/nonexistent/shoal-no-such-binary"}});
  ASSERT_FALSE(child.isOk());
  EXPECT_EQ(child.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(child.status().reason(), "binary-missing");
  EXPECT_NE(child.status().message().find("shoal-no-such-binary"), std::string::npos);

  auto onPath = Subprocess::spawn({.argv = {"shoal-no-such-binary-on-path"}});
  ASSERT_FALSE(onPath.isOk());
  EXPECT_EQ(onPath.status().code(), StatusCode::kNotFound);
  EXPECT_NE(onPath.status().message().find("shoal-no-such-binary-on-path"), std::string::npos);
}

// terminate() stops a long-running child with SIGTERM, without waiting out its sleep.
TEST(Subprocess, TerminateStopsALongSleep) {
  auto child = Subprocess::spawn({.argv = {"sleep", "100"}});
  ASSERT_TRUE(child.isOk()) << child.status().toString();
  auto polled = child->poll();
  ASSERT_TRUE(polled.isOk());
  EXPECT_FALSE(polled->has_value()) << "sleep 100 cannot have exited yet";
  auto status = child->terminate(seconds(10));
  ASSERT_TRUE(status.isOk()) << status.status().toString();
  EXPECT_FALSE(status->exited);
  EXPECT_EQ(status->signal, SIGTERM);
  // Once reaped, the pid is never signalled again.
  EXPECT_EQ(child->signal(SIGTERM).code(), StatusCode::kFailedPrecondition);
}

// A child that ignores SIGTERM is killed after the grace period.
TEST(Subprocess, TerminateEscalatesToSigkill) {
  ScratchDir dir;
  std::string ready = dir.path() + "/ready";
  // The child announces it has installed the trap, so SIGTERM cannot arrive before it.
  auto child = Subprocess::spawn(
      {.argv = {"/bin/sh", "-c", "trap '' TERM; echo up > " + ready + "; exec sleep 100"}});
  ASSERT_TRUE(child.isOk());
  // Wait for the announcement (bounded): polling a condition, not sleeping for time.
  for (int i = 0; i < 6000 && !std::filesystem::exists(ready); ++i) {
    auto r = child->wait(milliseconds(5));
    ASSERT_FALSE(r.isOk()) << "child exited early: " << r->toString();
  }
  ASSERT_TRUE(std::filesystem::exists(ready));
  auto status = child->terminate(milliseconds(200));
  ASSERT_TRUE(status.isOk()) << status.status().toString();
  EXPECT_EQ(status->signal, SIGKILL);
}

// wait(timeout) on a running child reports the deadline and leaves the child running.
TEST(Subprocess, WaitTimesOutOnRunningChild) {
  auto child = Subprocess::spawn({.argv = {"sleep", "100"}, .killOnDestroy = true});
  ASSERT_TRUE(child.isOk());
  auto status = child->wait(milliseconds(20));
  ASSERT_FALSE(status.isOk());
  EXPECT_EQ(status.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(child->running());
}

// Environment additions, cwd and append-to-file output reach the child.
TEST(Subprocess, EnvCwdAndOutputFileReachTheChild) {
  ScratchDir dir;
  std::string out = dir.path() + "/out.log";
  {
    std::ofstream pre(out);
    pre << "before\n";
  }
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "echo \"$SHOAL_TEST_VAR\"; pwd; echo oops >&2"};
  options.env = {{"SHOAL_TEST_VAR", "hello"}};
  options.cwd = dir.path();
  options.stdoutTarget = StdioTarget::appendTo(out);
  options.stderrTarget = StdioTarget::appendTo(out);
  auto child = Subprocess::spawn(options);
  ASSERT_TRUE(child.isOk()) << child.status().toString();
  auto status = child->wait(seconds(30));
  ASSERT_TRUE(status.isOk());
  EXPECT_TRUE(status->success());
  std::string text = readAll(out);
  EXPECT_EQ(text.rfind("before\n", 0), 0u) << "output must be appended, not truncated";
  EXPECT_NE(text.find("hello\n"), std::string::npos) << text;
  EXPECT_NE(text.find(std::filesystem::canonical(dir.path()).string()), std::string::npos) << text;
  EXPECT_NE(text.find("oops"), std::string::npos) << text;
}

// Variables can be removed from the inherited environment.
TEST(Subprocess, UnsetEnvRemovesAVariable) {
  setenv("SHOAL_TEST_UNSET_ME", "present", 1);
  auto child = Subprocess::spawn({.argv = {"/bin/sh", "-c", "test -z \"$SHOAL_TEST_UNSET_ME\""},
                                  .unsetEnv = {"SHOAL_TEST_UNSET_ME"}});
  ASSERT_TRUE(child.isOk());
  auto status = child->wait(seconds(30));
  ASSERT_TRUE(status.isOk());
  EXPECT_TRUE(status->success());
  unsetenv("SHOAL_TEST_UNSET_ME");
}

// Descriptors of the parent do not leak into the child, even without CLOEXEC.
TEST(Subprocess, ParentDescriptorsDoNotLeak) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);  // no O_CLOEXEC on purpose
  std::string check = "test ! -e /proc/self/fd/" + std::to_string(fds[1]);
  auto child = Subprocess::spawn({.argv = {"/bin/sh", "-c", check}});
  ASSERT_TRUE(child.isOk());
  auto status = child->wait(seconds(30));
  close(fds[0]);
  close(fds[1]);
  ASSERT_TRUE(status.isOk());
  EXPECT_TRUE(status->success()) << "fd leaked into the child";
}

// newSession puts the child in its own session.
TEST(Subprocess, NewSessionDetachesTheChild) {
  ScratchDir dir;
  std::string out = dir.path() + "/sid";
  auto child = Subprocess::spawn(
      {.argv = {"/bin/sh", "-c", "cut -d' ' -f6 /proc/$$/stat > " + out}, .newSession = true});
  ASSERT_TRUE(child.isOk());
  pid_t pid = child->pid();
  auto status = child->wait(seconds(30));
  ASSERT_TRUE(status.isOk());
  ASSERT_TRUE(status->success());
  EXPECT_EQ(std::stoi(readAll(out)), pid) << "the child must lead its own session";
}

// A moved-from Subprocess owns nothing; the moved-to one can still wait.
TEST(Subprocess, MoveTransfersOwnership) {
  auto child = Subprocess::spawn({.argv = {"/bin/true"}});
  ASSERT_TRUE(child.isOk());
  Subprocess moved = std::move(*child);
  EXPECT_FALSE(child->running());
  auto status = moved.wait(seconds(30));
  ASSERT_TRUE(status.isOk());
  EXPECT_TRUE(status->success());
}

}  // namespace
}  // namespace shoal
