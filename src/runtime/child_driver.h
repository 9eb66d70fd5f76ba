// ChildDriver: what every stdio runtime driver shares — the child in its own process group,
// the stdin writer, the runtime log (stdout transcript + stderr), the reader thread and the
// single kExited event that closes a generation (driver.h).
//
// Subclasses choose how stdout is read: `readOutput()` runs on the reader thread and returns
// the transport fault that ended it ("" on a clean EOF). After it returns the child is waited
// for and kExited is reported exactly once, carrying the exit status and the fault.
//
// Thread safety: as RuntimeDriver; emit() may be called from the reader thread.
// Lifetime: the destructor kills the group (if the subclass did not), then joins the reader.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/child_process.h"
#include "runtime/driver.h"
#include "runtime/fd.h"

namespace shoal::runtime {

class ChildDriver : public RuntimeDriver {
 public:
  ~ChildDriver() override;

  StdinWrite handoff(const Handoff& handoff) override;
  void closeInput() override;
  void kill(std::chrono::milliseconds grace) override;
  pid_t pid() const override { return child_->pid(); }

 protected:
  ChildDriver(LaunchSpec spec, RuntimeTraits traits)
      : RuntimeDriver(traits), spec_(std::move(spec)) {}
  // Spawns `argv` in the spec's cwd with its environment and starts the reader thread.
  Status spawn(std::vector<std::string> argv);
  // The bytes one handoff puts on stdin.
  virtual std::string frame(const Handoff& handoff) const = 0;
  // Runs on the reader thread; returns the transport fault that ended the stream ("" = EOF).
  virtual std::string readOutput(UniqueFd out) = 0;

  // Reads `out` line by line until EOF: each line is appended to the runtime log, and each
  // non-empty one is handed to `onLine`, which returns "" or the fault that ends the stream.
  // Returns the transport fault ("" on a clean EOF). For readOutput() implementations.
  std::string readLines(UniqueFd out, const std::string& streamName,
                        const std::function<std::string(const std::string&)>& onLine);

  // Kills the group (if kill() did not) and joins the reader: what a subclass destructor calls
  // first, so readOutput() never runs on a half-destroyed subclass. Idempotent.
  void stopChild();
  // Runs on the reader thread after the child was waited for, just before kExited is emitted:
  // the last moment to report facts about this generation.
  virtual void beforeExitEvent() {}

  void emit(DriverEvent event);
  // Appends `bytes` to the runtime log (any thread; one write(2) per call on an O_APPEND fd).
  void appendToLog(std::string_view bytes);

  const LaunchSpec spec_;
  std::unique_ptr<ChildProcess> child_;
  // Set by a subclass before spawn(): variables the runtime gets beyond the profile's (e.g. the
  // MCP bearer token Codex reads from its environment).
  std::vector<std::pair<std::string, std::string>> extraEnv_;
  // Set by a subclass before spawn(): a descriptor the runtime gets as its fd 3 (-1: none).
  int fd3_ = -1;

 private:
  void readerMain();

  int logFd_ = -1;
  std::thread reader_;
  std::atomic<bool> killed_{false};
};

}  // namespace shoal::runtime
