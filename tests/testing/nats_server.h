// TestNatsServer: a real nats-server (JetStream on) for one test, on a free port with a private
// temporary store directory.
//
// start() returns once the server accepts connections (transport::LocalBroker does the
// waiting; no sleeps, no fixed ports). kill9() crashes it; restart() brings it back on the
// same port and store, so JetStream data survives. The destructor stops the server and removes
// the temporary directory (kept if the environment variable SHOAL_KEEP_TEST_DIRS is set, for
// post-mortems; the server log is <dir>/store/nats-server.log). stall()/resume() freeze it
// in place (SIGSTOP/SIGCONT), the soak's broker stall.
//
// A missing nats-server is a failed start naming scripts/bootstrap — tests fail, never skip.
//
// Thread safety: one thread at a time. Lifetime: move-only via unique_ptr; outlive every
// Connection to it (or accept that those connections see it disappear).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <sys/types.h>

#include "base/result.h"
#include "testing/temp_dir.h"
#include "transport/local_broker.h"

namespace shoal::testing {

struct TestNatsServerOptions {
  bool jetstream = true;
  // Extra nats-server configuration, e.g. an `authorization { users = [...] }` block.
  std::string extraConfig{};
  std::optional<int64_t> maxPayload{};
};

class TestNatsServer {
 public:
  static Result<std::unique_ptr<TestNatsServer>> start(TestNatsServerOptions options = {});

  TestNatsServer(const TestNatsServer&) = delete;
  TestNatsServer& operator=(const TestNatsServer&) = delete;
  ~TestNatsServer();

  std::string url() const { return broker_->url(); }
  int port() const { return broker_->port(); }
  pid_t pid() const { return broker_->pid(); }
  const std::string& dir() const { return dir_.path(); }
  std::string logTail() const { return broker_->logTail(); }
  transport::LocalBroker& broker() { return *broker_; }

  Status stop() { return broker_->stop(); }
  Status kill9() { return broker_->kill9(); }
  Status restart() { return broker_->restart(); }
  // SIGSTOPs the server and returns once the kernel reports it stopped (a signal is only
  // queued when kill() returns: on another core the server could still answer meanwhile);
  // resume() SIGCONTs it. A stalled broker keeps its sockets, so what clients send meanwhile
  // is read when it resumes.
  Status stall();
  Status resume();

 private:
  TestNatsServer(TempDir dir, std::unique_ptr<transport::LocalBroker> broker)
      : dir_(std::move(dir)), broker_(std::move(broker)) {}

  TempDir dir_;  // destroyed after broker_ (declared first)
  std::unique_ptr<transport::LocalBroker> broker_;
};

}  // namespace shoal::testing
