// OperatorModeServerTest: a GoogleTest fixture with a real nats-server in operator mode (NATS
// decentralized JWT auth) that trusts an operator whose keys the test holds: one system account
// and one application account (`account_`, JetStream on), preloaded into a memory resolver. The
// test mints users of the account with transport/jwt.h and connects with their `.creds`.
//
// Header-only and gtest-dependent. Thread safety: the test thread only.
#pragma once

#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "base/clock.h"
#include "testing/nats_fixture.h"
#include "testing/temp_dir.h"
#include "transport/connection.h"
#include "transport/jwt.h"
#include "transport/nkey.h"

#include <gtest/gtest.h>

namespace shoal::testing {

class OperatorModeServerTest : public NatsServerTest {
 protected:
  static transport::NKeyPair freshKey(transport::NKeyRole role) {
    return *transport::generateNKey(role);
  }
  static int64_t nowSeconds() { return Clock::real().wallMs() / 1000; }

  TestNatsServerOptions serverOptions() override {
    using namespace transport;
    const int64_t now = nowSeconds();
    auto opJwt =
        encodeOperatorJwt({"shoal-test", op_.publicKey, sys_.publicKey, {}}, op_.seed, now);
    auto sysJwt = encodeAccountJwt({"SYS", sys_.publicKey, false, {}, {}}, op_.seed, now);
    auto accJwt = encodeAccountJwt({"main", account_.publicKey, true, {}, {}}, op_.seed, now);
    EXPECT_TRUE(opJwt.isOk() && sysJwt.isOk() && accJwt.isOk());
    TestNatsServerOptions options;
    // An agent's JWT holds its whole grant table: longer than the default 4 KiB CONNECT line.
    options.extraConfig = "max_control_line: 32768\noperator: \"" + *opJwt +
                          "\"\nsystem_account: " + sys_.publicKey +
                          "\nresolver: MEMORY\nresolver_preload: {\n  " + sys_.publicKey + ": \"" +
                          *sysJwt + "\"\n  " + account_.publicKey + ": \"" + *accJwt + "\"\n}\n";
    return options;
  }

  void SetUp() override {
    auto dir = TempDir::create("creds");
    ASSERT_TRUE(dir.isOk());
    credsDir_.emplace(std::move(dir).value());
    NatsServerTest::SetUp();
    if (HasFatalFailure()) return;
    // The port opens a moment before the preloaded accounts admit users (a first connect
    // within ~20 ms of the start was once refused `authentication error`): the server is
    // ready when a user of the account can connect.
    const std::string probe = mintAllowAll("ready-probe");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
      if (connectWith(probe).isOk()) return;
      ASSERT_LT(std::chrono::steady_clock::now(), deadline)
          << "no user of the account could connect\n"
          << server_->logTail();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  // A `.creds` file for a fresh user of the account with `permissions`, signed by `signerSeed`
  // (the account's own by default), expiring at `expiresAt` (0: never).
  std::string mintCreds(const std::string& name, transport::UserPermissions permissions,
                        int64_t expiresAt = 0, std::string signerSeed = "") {
    transport::NKeyPair user = freshKey(transport::NKeyRole::kUser);
    transport::UserClaims claims{name, user.publicKey, account_.publicKey, std::move(permissions),
                                 expiresAt};
    auto token = transport::encodeUserJwt(claims, signerSeed.empty() ? account_.seed : signerSeed,
                                          nowSeconds());
    EXPECT_TRUE(token.isOk()) << token.status().toString();
    const std::string path = credsDir_->join(name + ".creds");
    std::ofstream(path) << transport::formatCreds(token.isOk() ? *token : "", user.seed);
    return path;
  }

  // A user allowed everything: what a test uses to set the space up.
  std::string mintAllowAll(const std::string& name) {
    transport::UserPermissions all;
    all.publish.allow = {">"};
    all.subscribe.allow = {">"};
    return mintCreds(name, all);
  }

  Result<std::unique_ptr<transport::Connection>> connectWith(const std::string& creds,
                                                             ConnectionEvents* events = nullptr,
                                                             const std::string& inboxPrefix = "") {
    transport::ConnectOptions options = optionsForServer();
    options.credentialsFile = creds;
    options.allowReconnect = false;
    options.inboxPrefix = inboxPrefix;
    if (events != nullptr) options.onEvent = events->handler();
    return transport::Connection::connect(options);
  }

  transport::NKeyPair op_ = freshKey(transport::NKeyRole::kOperator);
  transport::NKeyPair sys_ = freshKey(transport::NKeyRole::kAccount);
  transport::NKeyPair account_ = freshKey(transport::NKeyRole::kAccount);
  std::optional<TempDir> credsDir_;
};

}  // namespace shoal::testing
