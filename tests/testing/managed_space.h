// ManagedSpaceTest: JetStreamServerTest plus the space `main` provisioned (planes::ensureSpace)
// and a running manager plane on its own connection — what a mesh::Endpoint needs to open
// (it asks the manager for its durables).
//
// Header-only and gtest-dependent; the test target must link shoal_planes.
// Thread safety: the fixture runs on the test thread.
#pragma once

#include <memory>
#include <optional>

#include "planes/manager_plane.h"
#include "planes/space_provisioner.h"
#include "testing/nats_fixture.h"

namespace shoal::testing {

class ManagedSpaceTest : public JetStreamServerTest {
 protected:
  void SetUp() override {
    JetStreamServerTest::SetUp();
    if (HasFatalFailure()) return;
    auto space = planes::ensureSpace(*js_, "main");
    ASSERT_TRUE(space.isOk()) << space.status().toString();
    auto options = optionsForServer();
    options.sendAsap = true;  // as `shoal serve` runs it
    managerConn_ = connect(options);
    ASSERT_NE(managerConn_, nullptr);
    auto js = transport::JetStream::create(*managerConn_);
    ASSERT_TRUE(js.isOk()) << js.status().toString();
    managerJs_.emplace(std::move(js).value());
    auto plane = planes::ManagerPlane::start(*managerConn_, *managerJs_, "main");
    ASSERT_TRUE(plane.isOk()) << plane.status().toString();
    manager_ = std::move(plane).value();
  }

  // Subclasses close their endpoints first, then call this.
  void TearDown() override {
    manager_.reset();
    managerJs_.reset();
    managerConn_.reset();
  }

  std::unique_ptr<transport::Connection> managerConn_;
  std::optional<transport::JetStream> managerJs_;
  std::unique_ptr<planes::ManagerPlane> manager_;
};

}  // namespace shoal::testing
