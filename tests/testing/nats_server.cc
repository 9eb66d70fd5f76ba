#include "testing/nats_server.h"

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

TestNatsServer::~TestNatsServer() {
  if (broker_) (void)broker_->stop();
}

}  // namespace shoal::testing
