#include "runtime/child_process.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/line_reader.h"
#include "runtime/reasons.h"

#include <gtest/gtest.h>

namespace shoal::runtime {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A scratch directory under TMPDIR, removed at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): test setup
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/shoal-runtime-XXXXXX";
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

size_t openFdCount() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++n;
  }
  return n;
}

std::unique_ptr<ChildProcess> spawnOk(const ChildOptions& options) {
  auto child = ChildProcess::spawn(options);
  EXPECT_TRUE(child.isOk()) << child.status().toString();
  return child.isOk() ? std::move(*child) : nullptr;
}

std::unique_ptr<LineReader> stdoutLines(ChildProcess& child) {
  auto source = FdByteSource::create(child.takeStdout());
  EXPECT_TRUE(source.isOk()) << source.status().toString();
  return std::make_unique<LineReader>(std::move(*source));
}

std::vector<std::string> allLines(LineReader& reader) {
  std::vector<std::string> out;
  for (;;) {
    auto next = reader.next();
    EXPECT_TRUE(next.isOk()) << next.status().toString();
    if (!next.isOk() || !next->has_value()) return out;
    out.push_back(**next);
  }
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Waits (up to 10 s) for `pid` — not our child — to exit, through a pidfd opened while it
// still existed. True once it has exited.
bool waitForForeignExit(int pidfd) {
  struct pollfd pfd = {pidfd, POLLIN, 0};
  return ::poll(&pfd, 1, 10'000) == 1;
}

int openForeignPidfd(pid_t pid) {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

// Bytes written to stdin come back through `cat` line by line; closing stdin ends the stream
// and the child exits 0.
TEST(ChildProcess, EchoRoundTripThroughCat) {
  auto child = spawnOk({.argv = {"cat"}});
  ASSERT_NE(child, nullptr);
  auto reader = stdoutLines(*child);
  StdinWrite w = child->writeStdin("hello\nworld\r\n\n", seconds(10));
  ASSERT_TRUE(w.status.isOk()) << w.status.toString();
  EXPECT_EQ(w.bytesWritten, 14u);
  child->closeStdin();
  EXPECT_EQ(allLines(*reader), (std::vector<std::string>{"hello", "world\r", ""}));
  auto status = child->wait(seconds(10));
  ASSERT_TRUE(status.isOk()) << status.status().toString();
  EXPECT_TRUE(status->success());
}

// Writes larger than the pipe buffer go through whole (EAGAIN waits, partial writes resume)
// while another thread reads.
TEST(ChildProcess, LargeWritesArriveWholeThroughAPipe) {
  auto child = spawnOk({.argv = {"cat"}});
  ASSERT_NE(child, nullptr);
  auto reader = stdoutLines(*child);
  const std::string big(size_t{3} * 1024 * 1024, 'q');
  StdinWrite w;
  std::thread writer([&] {
    std::string payload = big + "\n" + big + "\n";
    w = child->writeStdin(payload, seconds(20));
    child->closeStdin();
  });
  std::vector<std::string> lines = allLines(*reader);
  writer.join();
  ASSERT_TRUE(w.status.isOk()) << w.status.toString();
  EXPECT_EQ(w.bytesWritten, 2 * (big.size() + 1));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], big);
  EXPECT_EQ(lines[1], big);
}

// The child leads its own process group.
TEST(ChildProcess, ChildLeadsItsOwnProcessGroup) {
  auto child = spawnOk({.argv = {"sleep", "1000"}});
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(::getpgid(child->pid()), child->pid());
  EXPECT_NE(::getpgid(child->pid()), ::getpgrp());
}

// terminate() ends the whole group: a grandchild started in the background is gone too.
TEST(ChildProcess, TerminateKillsGrandchildren) {
  auto child = spawnOk({.argv = {"/bin/sh", "-c", "sleep 1000 & echo $!; wait"}});
  ASSERT_NE(child, nullptr);
  auto reader = stdoutLines(*child);
  auto line = reader->next();
  ASSERT_TRUE(line.isOk() && line->has_value()) << line.status().toString();
  const pid_t grandchild = static_cast<pid_t>(std::stol(**line));
  UniqueFd pidfd(openForeignPidfd(grandchild));
  ASSERT_TRUE(pidfd.valid());
  EXPECT_EQ(::getpgid(grandchild), child->pid());

  auto ended = child->terminate(seconds(5));
  ASSERT_TRUE(ended.isOk()) << ended.status().toString();
  EXPECT_FALSE(ended->exited);
  EXPECT_EQ(ended->signal, SIGTERM);
  EXPECT_TRUE(child->reaped());
  EXPECT_TRUE(waitForForeignExit(pidfd.get()));
}

// The destructor SIGKILLs the group: grandchildren do not outlive the ChildProcess.
TEST(ChildProcess, DestructorKillsGrandchildren) {
  auto child = spawnOk({.argv = {"/bin/sh", "-c", "sleep 1000 & echo $!; wait"}});
  ASSERT_NE(child, nullptr);
  auto reader = stdoutLines(*child);
  auto line = reader->next();
  ASSERT_TRUE(line.isOk() && line->has_value());
  const pid_t grandchild = static_cast<pid_t>(std::stol(**line));
  UniqueFd pidfd(openForeignPidfd(grandchild));
  ASSERT_TRUE(pidfd.valid());
  const pid_t leader = child->pid();
  child.reset();
  EXPECT_TRUE(waitForForeignExit(pidfd.get()));
  // Reaped: no zombie of ours remains.
  EXPECT_EQ(::waitpid(leader, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

// A leader that exits on its own leaves stragglers in its group; the unreaped leader pins the
// group id, so the group can still be signalled, and the destructor ends the stragglers.
TEST(ChildProcess, StragglersOfAnExitedLeaderAreKilled) {
  auto child = spawnOk({.argv = {"/bin/sh", "-c", "sleep 1000 & echo $!"}});
  ASSERT_NE(child, nullptr);
  auto reader = stdoutLines(*child);
  auto line = reader->next();
  ASSERT_TRUE(line.isOk() && line->has_value());
  const pid_t straggler = static_cast<pid_t>(std::stol(**line));
  UniqueFd pidfd(openForeignPidfd(straggler));
  ASSERT_TRUE(pidfd.valid());
  auto status = child->wait(seconds(10));
  ASSERT_TRUE(status.isOk());
  EXPECT_TRUE(status->success());
  EXPECT_FALSE(child->reaped());
  EXPECT_TRUE(child->signalGroup(0).isOk());  // the group still has a live member
  child.reset();
  EXPECT_TRUE(waitForForeignExit(pidfd.get()));
}

// The exit code is reported exactly.
TEST(ChildProcess, ExitCodeIsReported) {
  auto child = spawnOk({.argv = {"/bin/sh", "-c", "exit 7"}});
  ASSERT_NE(child, nullptr);
  auto status = child->wait(seconds(10));
  ASSERT_TRUE(status.isOk());
  EXPECT_TRUE(status->exited);
  EXPECT_EQ(status->code, 7);
  auto polled = child->poll();
  ASSERT_TRUE(polled.isOk());
  ASSERT_TRUE(polled->has_value());
  EXPECT_EQ((*polled)->code, 7);
}

// A signal death is reported as the signal.
TEST(ChildProcess, SignalDeathIsReported) {
  auto child = spawnOk({.argv = {"sleep", "1000"}});
  ASSERT_NE(child, nullptr);
  auto running = child->poll();
  ASSERT_TRUE(running.isOk());
  EXPECT_FALSE(running->has_value());
  auto early = child->wait(milliseconds(1));
  EXPECT_EQ(early.status().reason(), reason::kStillRunning);
  ASSERT_TRUE(child->signalGroup(SIGTERM).isOk());
  auto status = child->wait(seconds(10));
  ASSERT_TRUE(status.isOk());
  EXPECT_FALSE(status->exited);
  EXPECT_EQ(status->signal, SIGTERM);
  EXPECT_EQ(status->toString(), "killed by signal 15 (Terminated)");
}

// terminate() escalates to SIGKILL when the group ignores SIGTERM for the whole grace.
TEST(ChildProcess, TerminateEscalatesToSigkillAfterGrace) {
  auto child = spawnOk({.argv = {"/bin/sh", "-c", "trap '' TERM; echo ready; sleep 1000"}});
  ASSERT_NE(child, nullptr);
  auto reader = stdoutLines(*child);
  auto ready = reader->next();
  ASSERT_TRUE(ready.isOk() && ready->has_value());
  auto ended = child->terminate(milliseconds(100));
  ASSERT_TRUE(ended.isOk()) << ended.status().toString();
  EXPECT_EQ(ended->signal, SIGKILL);
  // Reaped: signalling is refused now (the pid may belong to someone else).
  EXPECT_EQ(child->signalGroup(SIGTERM).reason(), reason::kNotRunning);
  auto again = child->terminate(milliseconds(100));
  ASSERT_TRUE(again.isOk());
  EXPECT_EQ(again->signal, SIGKILL);
}

// Writing to a child that exited is `stdin-closed`, not a SIGPIPE that kills the daemon, and
// leaves no SIGPIPE pending.
TEST(ChildProcess, WriteAfterChildExitIsStdinClosed) {
  auto child = spawnOk({.argv = {"true"}});
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->wait(seconds(10)).isOk());
  StdinWrite w = child->writeStdin("are you there?\n", seconds(1));
  EXPECT_EQ(w.status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w.status.reason(), reason::kStdinClosed);
  EXPECT_EQ(w.bytesWritten, 0u);
  EXPECT_NE(w.status.message().find("0 of 15 bytes"), std::string_view::npos)
      << w.status.toString();
  sigset_t pending;
  sigemptyset(&pending);
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
  // Our own close is a different refusal.
  child->closeStdin();
  EXPECT_EQ(child->writeStdin("x").status.reason(), reason::kStdinNotOpen);
}

// A child that does not read: the write times out with an exact partial count, and a stop
// request ends a blocked write.
TEST(ChildProcess, StalledWriteTimesOutOrIsCancelledWithExactCount) {
  auto child = spawnOk({.argv = {"sleep", "1000"}});
  ASSERT_NE(child, nullptr);
  const std::string big(size_t{1024} * 1024, 'w');
  StdinWrite first = child->writeStdin(big, milliseconds(50));
  EXPECT_EQ(first.status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(first.status.reason(), reason::kStdinWriteTimeout);
  EXPECT_GT(first.bytesWritten, 0u);  // the pipe buffer took some
  EXPECT_LT(first.bytesWritten, big.size());

  std::stop_source stop;
  StdinWrite second;
  std::thread writer([&] { second = child->writeStdin(big, std::nullopt, stop.get_token()); });
  stop.request_stop();
  writer.join();
  EXPECT_EQ(second.status.code(), StatusCode::kCancelled);
  EXPECT_EQ(second.status.reason(), reason::kStdinWriteCancelled);
  EXPECT_EQ(second.bytesWritten, 0u);  // the pipe was full
}

// The environment: only allow-listed names are inherited, then additions apply.
TEST(ChildProcess, EnvironmentAllowListAndAdditions) {
  // NOLINTBEGIN(concurrency-mt-unsafe): no other thread reads the environment here
  ASSERT_EQ(setenv("SHOAL_RT_TEST_KEEP", "kept", 1), 0);
  ASSERT_EQ(setenv("SHOAL_RT_TEST_DROP", "dropped", 1), 0);
  // NOLINTEND(concurrency-mt-unsafe)
  auto child =
      spawnOk({.argv = {"/bin/sh", "-c", "echo \"$SHOAL_RT_TEST_KEEP|$SHOAL_RT_TEST_DROP|$ADDED\""},
               .envAllowList = std::vector<std::string>{"SHOAL_RT_TEST_KEEP", "PATH"},
               .env = {{"ADDED", "one"}, {"ADDED", "two"}}});
  ASSERT_NE(child, nullptr);
  auto reader = stdoutLines(*child);
  EXPECT_EQ(allLines(*reader), std::vector<std::string>{"kept||two"});

  auto inherit = spawnOk({.argv = {"/bin/sh", "-c", "echo \"$SHOAL_RT_TEST_DROP\""}});
  ASSERT_NE(inherit, nullptr);
  auto all = stdoutLines(*inherit);
  EXPECT_EQ(allLines(*all), std::vector<std::string>{"dropped"});
  unsetenv("SHOAL_RT_TEST_KEEP");  // NOLINT(concurrency-mt-unsafe)
  unsetenv("SHOAL_RT_TEST_DROP");  // NOLINT(concurrency-mt-unsafe)
}

// The child runs in the requested working directory; a missing one is refused up front.
TEST(ChildProcess, WorkingDirectory) {
  ScratchDir dir;
  auto child = spawnOk({.argv = {"pwd"}, .cwd = dir.path()});
  ASSERT_NE(child, nullptr);
  auto reader = stdoutLines(*child);
  auto lines = allLines(*reader);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(std::filesystem::canonical(lines[0]), std::filesystem::canonical(dir.path()));

  auto missing = ChildProcess::spawn({.argv = {"pwd"}, .cwd = dir.path() + "/nope"});
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().reason(), reason::kCwdMissing);
}

// stderr to a pipe is readable separately from stdout; to a log file it is appended.
TEST(ChildProcess, StderrToPipeOrLogFile) {
  auto piped = spawnOk({.argv = {"/bin/sh", "-c", "echo out; echo err >&2"}});
  ASSERT_NE(piped, nullptr);
  auto errSource = FdByteSource::create(piped->takeStderr());
  ASSERT_TRUE(errSource.isOk());
  LineReader errLines(std::move(*errSource));
  auto outLines = stdoutLines(*piped);
  EXPECT_EQ(allLines(*outLines), std::vector<std::string>{"out"});
  EXPECT_EQ(allLines(errLines), std::vector<std::string>{"err"});
  EXPECT_FALSE(piped->takeStderr().valid());  // taken once

  ScratchDir dir;
  const std::string log = dir.path() + "/runtime.log";
  { std::ofstream(log) << "earlier\n"; }
  auto logged = spawnOk(
      {.argv = {"/bin/sh", "-c", "echo oops >&2"}, .stderrTarget = StderrTarget::appendTo(log)});
  ASSERT_NE(logged, nullptr);
  ASSERT_TRUE(logged->wait(seconds(10)).isOk());
  EXPECT_EQ(readFile(log), "earlier\noops\n");
  EXPECT_FALSE(logged->takeStderr().valid());

  auto badLog = ChildProcess::spawn(
      {.argv = {"true"}, .stderrTarget = StderrTarget::appendTo(dir.path() + "/x/y")});
  ASSERT_FALSE(badLog.isOk());
  EXPECT_NE(badLog.status().message().find("x/y"), std::string_view::npos);
}

// A missing binary is kNotFound and named.
TEST(ChildProcess, MissingBinaryIsNotFoundAndNamed) {
  auto missing = ChildProcess::spawn({.argv = {"shoal-no-such-runtime-binary"}});
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().reason(), reason::kBinaryMissing);
  EXPECT_NE(missing.status().message().find("shoal-no-such-runtime-binary"),
            std::string_view::npos);
  auto empty = ChildProcess::spawn({});
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
}

// Descriptors: the child sees only 0-2 (a non-CLOEXEC fd of ours does not leak in), and
// spawning, using and destroying children leaves the parent's fd count unchanged.
TEST(ChildProcess, NoDescriptorLeaks) {
  UniqueFd inheritable(::open("/dev/null", O_RDONLY));  // deliberately not CLOEXEC
  ASSERT_TRUE(inheritable.valid());
  const std::string probe = "test -e /proc/self/fd/" + std::to_string(inheritable.get()) +
                            " && echo leaked || echo clean";
  auto checker = spawnOk({.argv = {"/bin/sh", "-c", probe}});
  ASSERT_NE(checker, nullptr);
  auto checkerLines = stdoutLines(*checker);
  EXPECT_EQ(allLines(*checkerLines), std::vector<std::string>{"clean"});
  checkerLines.reset();
  checker.reset();

  const size_t before = openFdCount();
  for (int i = 0; i < 5; ++i) {
    auto child = spawnOk({.argv = {"cat"}});
    ASSERT_NE(child, nullptr);
    auto reader = stdoutLines(*child);
    ASSERT_TRUE(child->writeStdin("x\n", seconds(10)).status.isOk());
    auto line = reader->next();
    ASSERT_TRUE(line.isOk() && line->has_value());
    // Destroyed with stdin still open and stderr untaken: the destructor cleans up.
  }
  for (int i = 0; i < 5; ++i) {
    auto child = spawnOk({.argv = {"true"}});
    ASSERT_NE(child, nullptr);
    ASSERT_TRUE(child->terminate(seconds(5)).isOk());
  }
  EXPECT_EQ(openFdCount(), before);
}

// A descriptor given as fd 3 reaches the child there, writable, and nothing else above 2 does
// (the copy made to put it there is not inherited, and the parent's own stays open).
TEST(ChildProcess, AnExtraDescriptorArrivesAsFdThreeAlone) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  UniqueFd readEnd(fds[0]);
  UniqueFd writeEnd(fds[1]);
  auto child = spawnOk(
      {.argv = {"/bin/sh", "-c", "echo acked >&3; ls /proc/self/fd | sort -n | tr '\\n' ' '; echo"},
       .fd3 = writeEnd.get()});
  ASSERT_NE(child, nullptr);
  auto lines = stdoutLines(*child);
  // 0 1 2 3, and the fd `ls` opens to read the directory: nothing else.
  const std::vector<std::string> listed = allLines(*lines);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].rfind("0 1 2 3 ", 0), 0u) << listed[0];
  EXPECT_EQ(std::count(listed[0].begin(), listed[0].end(), ' '), 5) << listed[0];
  ASSERT_TRUE(child->wait(seconds(10)).isOk());
  writeEnd.reset();
  char buf[16] = {};
  EXPECT_EQ(::read(readEnd.get(), buf, sizeof buf), 6);
  EXPECT_EQ(std::string(buf), "acked\n");
}

}  // namespace
}  // namespace shoal::runtime
