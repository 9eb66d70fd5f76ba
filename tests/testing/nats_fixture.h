// NatsServerTest: a GoogleTest fixture with a fresh TestNatsServer per test, plus helpers to
// connect to it and to collect connection events. JetStreamServerTest adds a ready connection
// and JetStream context.
//
// Header-only and gtest-dependent: include it only from test sources. Override
// serverOptions() to configure the server (permissions, max payload).
//
// Thread safety: the fixture runs on the test thread; ConnectionEvents is filled from nats.c
// threads.
#pragma once

#include <memory>
#include <optional>

#include "testing/eventually.h"
#include "testing/nats_server.h"
#include "transport/connection.h"
#include "transport/jetstream.h"

#include <gtest/gtest.h>

namespace shoal::testing {

// Collects a connection's events for a test to wait on.
class ConnectionEvents {
 public:
  transport::ConnectionEventHandler handler() {
    return [this](const transport::ConnectionEvent& e) { queue_.push(e); };
  }
  // The next event of `kind` (earlier events of other kinds are dropped), or nullopt.
  std::optional<transport::ConnectionEvent> waitFor(
      transport::ConnectionEventKind kind, std::chrono::milliseconds timeout = kDefaultWait) {
    return queue_.popUntil([kind](const transport::ConnectionEvent& e) { return e.kind == kind; },
                           timeout);
  }

 private:
  EventQueue<transport::ConnectionEvent> queue_;
};

class NatsServerTest : public ::testing::Test {
 protected:
  virtual TestNatsServerOptions serverOptions() { return {}; }

  void SetUp() override {
    auto started = TestNatsServer::start(serverOptions());
    ASSERT_TRUE(started.isOk()) << started.status().toString();
    server_ = std::move(started).value();
  }

  // Options aimed at this test's server, with a fast reconnect for crash tests.
  transport::ConnectOptions optionsForServer() const {
    transport::ConnectOptions options;
    options.servers = {server_->url()};
    options.name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    options.reconnectWait = std::chrono::milliseconds(50);
    options.reconnectWaitMax = std::chrono::milliseconds(250);
    return options;
  }

  // A connection to this test's server; nullptr (and a test failure) if it cannot connect.
  std::unique_ptr<transport::Connection> connect(transport::ConnectOptions options) {
    auto conn = transport::Connection::connect(std::move(options));
    if (!conn.isOk()) {
      ADD_FAILURE() << "connect: " << conn.status().toString() << "\nserver log:\n"
                    << server_->logTail();
      return nullptr;
    }
    return std::move(conn).value();
  }
  std::unique_ptr<transport::Connection> connect() { return connect(optionsForServer()); }

  std::unique_ptr<TestNatsServer> server_;
};

// NatsServerTest plus one connection (conn_) and its JetStream context (js_), ready in SetUp.
class JetStreamServerTest : public NatsServerTest {
 protected:
  void SetUp() override {
    NatsServerTest::SetUp();
    if (HasFatalFailure()) return;
    conn_ = connect();
    ASSERT_NE(conn_, nullptr);
    auto js = transport::JetStream::create(*conn_);
    ASSERT_TRUE(js.isOk()) << js.status().toString();
    js_.emplace(std::move(js).value());
  }

  std::unique_ptr<transport::Connection> conn_;
  std::optional<transport::JetStream> js_;
};

}  // namespace shoal::testing
