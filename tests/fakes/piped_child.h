// PipedChild: a program run by a test with its stdin and stdout on pipes, for checking a
// line protocol (the runtime fakes in this folder). The test writes stdin lines; a reader
// thread queues every stdout line, so the test waits for the line it expects with a deadline
// instead of sleeping. stderr goes to a file the test can read.
//
// Thread safety: one test thread uses the object; the reader thread only fills the queue.
// Lifetime: move-free (held by unique_ptr). The destructor SIGKILLs a child still running,
// reaps it and joins the reader.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>
#include <sys/types.h>

#include "base/subprocess.h"
#include "testing/eventually.h"

namespace shoal::testing {

class PipedChild {
 public:
  // Starts argv[0] (a path) with `argv`; stderr is appended to `stderrPath`. nullptr (and a
  // message on stderr) when spawning fails.
  static std::unique_ptr<PipedChild> start(const std::vector<std::string>& argv,
                                           const std::string& stderrPath);

  PipedChild(const PipedChild&) = delete;
  PipedChild& operator=(const PipedChild&) = delete;
  ~PipedChild();

  pid_t pid() const { return pid_; }

  // Writes `text` (whole) to the child's stdin; false if the pipe is closed.
  bool write(const std::string& text);
  bool writeLine(const std::string& line) { return write(line + "\n"); }
  void closeStdin();
  // Switches stdin to non-blocking and writes `chunk` until the pipe is full or `maxBytes`
  // went in; returns the bytes written (a stdin backpressure probe).
  size_t writeUntilFull(const std::string& chunk, size_t maxBytes);

  // The next stdout line; nullopt at end of output or when `timeout` passes.
  std::optional<std::string> nextLine(std::chrono::milliseconds timeout = kDefaultWait);
  // The next stdout line parsed as a JSON object; nullopt as above or when it is not one
  // (the line is then in the transcript).
  std::optional<boost::json::object> nextObject(std::chrono::milliseconds timeout = kDefaultWait);
  // The next object whose "type" (and "subtype", when given) match; lines before it are
  // skipped.
  std::optional<boost::json::object> nextOfType(const std::string& type,
                                                const std::string& subtype = "",
                                                std::chrono::milliseconds timeout = kDefaultWait);
  // True when stdout ends (EOF) with no further line within `timeout`.
  bool outputEnds(std::chrono::milliseconds timeout = kDefaultWait);

  // Waits for the exit (nullopt if the child still runs after `timeout`).
  std::optional<ExitStatus> waitExit(std::chrono::milliseconds timeout = kDefaultWait);
  void signal(int sig);

  // Every stdout line seen so far (for failure messages).
  std::string transcript() const;

 private:
  PipedChild() = default;

  pid_t pid_ = -1;
  int stdinFd_ = -1;
  int stdoutFd_ = -1;
  std::optional<ExitStatus> exit_;
  std::thread reader_;
  EventQueue<std::optional<std::string>> lines_;  // nullopt: end of output
  bool ended_ = false;
  mutable std::mutex mu_;
  std::vector<std::string> seen_;  // guarded by mu_
};

}  // namespace shoal::testing
