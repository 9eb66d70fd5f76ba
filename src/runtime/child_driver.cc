#include "runtime/child_driver.h"

#include <algorithm>
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include "base/log.h"
#include "runtime/byte_source.h"
#include "runtime/line_reader.h"

namespace shoal::runtime {
Status ChildDriver::spawn(std::vector<std::string> argv) {
  logFd_ = ::open(spec_.runtimeLogPath.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (logFd_ < 0) {
    return unavailable("runtime-log-unwritable", "cannot open the runtime log " +
                                                     spec_.runtimeLogPath + ": " +
                                                     std::string(std::strerror(errno)));
  }
  ChildOptions co;
  co.argv = std::move(argv);
  co.cwd = spec_.cwd;
  co.envAllowList = spec_.envAllowList;
  co.envAllowList->push_back("PATH");
  co.envAllowList->push_back("HOME");
  co.env = spec_.env;
  if (spec_.mcp) co.env.emplace_back("SHOAL_MCP_CONFIG", spec_.mcp->configPath);
  for (const auto& kv : extraEnv_)
    co.env.push_back(kv);
  co.stderrTarget = StderrTarget::appendTo(spec_.runtimeLogPath);
  co.fd3 = fd3_;
  SHOAL_ASSIGN_OR_RETURN(child_, ChildProcess::spawn(co));
  reader_ = std::thread([this] { readerMain(); });
  return Status::ok();
}

ChildDriver::~ChildDriver() {
  stopChild();
  if (logFd_ >= 0) ::close(logFd_);
}

void ChildDriver::stopChild() {
  if (child_ && !killed_.load()) kill(std::chrono::milliseconds(0));
  if (reader_.joinable()) reader_.join();
}

StdinWrite ChildDriver::handoff(const Handoff& handoff) {
  return child_->writeStdin(frame(handoff), spec_.stdinWriteTimeout);
}

void ChildDriver::closeInput() {
  child_->closeStdin();
}

void ChildDriver::kill(std::chrono::milliseconds grace) {
  killed_.store(true);
  child_->closeStdin();
  (void)child_->terminate(grace);
}

void ChildDriver::emit(DriverEvent event) {
  event.generation = spec_.generation;
  if (spec_.sink) spec_.sink(std::move(event));
}

void ChildDriver::appendToLog(std::string_view bytes) {
  if (logFd_ < 0) return;
  while (!bytes.empty()) {
    ssize_t n = ::write(logFd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a full disk loses transcript, never delivery state
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

std::string ChildDriver::readLines(UniqueFd out, const std::string& streamName,
                                   const std::function<std::string(const std::string&)>& onLine) {
  auto source = FdByteSource::create(std::move(out));
  if (!source.isOk()) return source.status().toString();
  LineReaderOptions ro;
  ro.streamName = streamName;
  LineReader reader(std::move(source).value(), ro);
  while (true) {
    auto line = reader.next();
    if (!line.isOk()) return line.status().toString();
    if (!line->has_value()) return "";
    appendToLog(**line + "\n");
    if ((*line)->empty()) continue;
    if (std::string fault = onLine(**line); !fault.empty()) return fault;
  }
}

void ChildDriver::readerMain() {
  std::string fault = readOutput(child_->takeStdout());
  if (!fault.empty()) {
    // The stream can no longer prove what the runtime did: the generation is over.
    log::warn("runtime {} (pid {}): {}", child_->program(), child_->pid(), fault);
    (void)child_->signalGroup(SIGKILL);
  }
  DriverEvent exited;
  exited.kind = DriverEvent::Kind::kExited;
  exited.detail = fault;
  auto status = child_->wait();
  if (status.isOk()) exited.exit = *status;
  beforeExitEvent();
  emit(std::move(exited));
}

}  // namespace shoal::runtime
