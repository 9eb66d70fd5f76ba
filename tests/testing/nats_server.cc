#include "testing/nats_server.h"

#include <csignal>
#include <fstream>
#include <string>
#include <thread>

#include <signal.h>
#include <stdlib.h>

namespace shoal::testing {

Result<std::unique_ptr<TestNatsServer>> TestNatsServer::start(TestNatsServerOptions options) {
  SHOAL_ASSIGN_OR_RETURN(TempDir dir, TempDir::create("nats"));
  if (getenv("SHOAL_KEEP_TEST_DIRS") != nullptr) dir.keep();
  transport::LocalBrokerOptions broker;
  broker.host = "127.0.0.1";
  broker.port = 0;  // a free ephemeral port
  broker.storeDir = dir.join("store");
  broker.jetstream = options.jetstream;
  broker.extraConfig = std::move(options.extraConfig);
  broker.maxPayload = options.maxPayload;
  broker.startTimeout = std::chrono::seconds(20);  // a loaded CI machine is slow
  broker.stopGrace = std::chrono::seconds(5);
  auto started = transport::LocalBroker::start(std::move(broker));
  if (!started.isOk()) return started.status().withContext("starting the test nats-server");
  return std::unique_ptr<TestNatsServer>(
      new TestNatsServer(std::move(dir), std::move(started).value()));
}

namespace {

// The state letter of /proc/<pid>/stat (after the parenthesised command name).
char processState(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  const auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() ? '?' : line[close + 2];
}

}  // namespace

Status TestNatsServer::stall() {
  if (::kill(pid(), SIGSTOP) != 0)
    return internalError("stall-failed", "SIGSTOP of nats-server failed");
  for (int i = 0; i < 2000; ++i) {
    if (processState(pid()) == 'T') return Status::ok();
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return internalError("stall-failed", "nats-server did not stop within 1 s of SIGSTOP");
}

Status TestNatsServer::resume() {
  if (::kill(pid(), SIGCONT) != 0)
    return internalError("resume-failed", "SIGCONT of nats-server failed");
  return Status::ok();
}

TestNatsServer::~TestNatsServer() {
  if (broker_) (void)broker_->stop();
}

}  // namespace shoal::testing
