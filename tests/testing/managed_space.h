// ManagedSpaceTest: JetStreamServerTest plus the space `main` provisioned (planes::ensureSpace)
// and a running manager plane on its own connection — what a mesh::Endpoint needs to open
// (it asks the manager for its durables).
//
// openSender() opens a peer that only sends (no DM durable), as the daemon and CLI tests need.
//
// Header-only and gtest-dependent; the test target must link shoal_planes (and shoal_mesh
// for openSender).
// Thread safety: the fixture runs on the test thread.
#pragma once

#include <memory>
#include <optional>

#include "mesh/endpoint.h"
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

  // A peer `local.<actor>` on this space that sends but binds no DM durable; nullptr (with a
  // test failure) if it does not open.
  std::unique_ptr<mesh::Endpoint> openSender(const std::string& actor) {
    mesh::EndpointOptions o;
    o.servers = {server_->url()};
    o.principal = wire::Principal{"local", actor};
    o.receiveDirect = false;
    o.onWarning = [](const Status&) {};
    auto opened = mesh::Endpoint::open(o);
    if (!opened.isOk()) {
      ADD_FAILURE() << "opening local." << actor << ": " << opened.status().toString();
      return nullptr;
    }
    return std::move(opened).value();
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
