// FakeRuntimeSeatTest: the fixture of the seat tests whose runtime is one of the test fakes in
// tests/fakes/ (fake_codex, fake_opencode) — a real broker and space (ManagedSpaceTest), a
// temporary directory, a sender `local.alice`, and readers for what the fake logged (its
// `--fake-log`, one JSON object per line), the seat's wake events and its journal tombstones.
//
// A test names its seat's profile through profile(); open() starts a Seat on it.
// Test support only.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "base/file_system.h"
#include "daemon/seat.h"
#include "daemon/seat_files.h"
#include "journal/ownership_journal.h"
#include "mesh/endpoint.h"
#include "testing/eventually.h"
#include "testing/managed_space.h"
#include "testing/temp_dir.h"

#include <gtest/gtest.h>

namespace shoal::daemon {

class FakeRuntimeSeatTest : public shoal::testing::ManagedSpaceTest {
 protected:
  // The seat under test (its principal must be `local.<actor>`).
  virtual SeatProfile profile() = 0;
  // Options on top of the test defaults (fast restarts, a short stop grace).
  virtual void tune(SeatOptions&) {}

  void SetUp() override {
    ManagedSpaceTest::SetUp();
    if (HasFatalFailure()) return;
    auto dir = shoal::testing::TempDir::create("fake-runtime-seat");
    ASSERT_TRUE(dir.isOk());
    dir_.emplace(std::move(dir).value());
    alice_ = openSender("alice");
    ASSERT_NE(alice_, nullptr);
  }

  void TearDown() override {
    alice_.reset();
    ManagedSpaceTest::TearDown();
  }

  std::unique_ptr<Seat> open() {
    SeatOptions so;
    so.url = server_->url();
    so.space = "main";
    so.restartBackoff = std::chrono::milliseconds(50);
    so.stopGrace = std::chrono::milliseconds(1500);
    tune(so);
    auto seat = Seat::open(profile(), so);
    EXPECT_TRUE(seat.isOk()) << seat.status().toString();
    return seat.isOk() ? std::move(seat).value() : nullptr;
  }

  // The fake's log (pass it as --fake-log in profile()).
  std::string log() { return dir_->join("fake-runtime.log"); }

  // The fake's log lines of `event`, in order.
  std::vector<boost::json::object> logged(const std::string& event) {
    std::vector<boost::json::object> out;
    std::string text = FileSystem::posix().readFile(log()).valueOr("");
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      boost::system::error_code ec;
      boost::json::value v =
          boost::json::parse(std::string_view(text).substr(start, end - start), ec);
      start = end + 1;
      if (!ec && v.is_object() && v.at("event").as_string() == event) {
        out.push_back(v.as_object());
      }
    }
    return out;
  }

  // How many `input` lines carry `needle` in their text.
  size_t inputsWith(const std::string& needle) {
    auto inputs = logged("input");
    return std::count_if(inputs.begin(), inputs.end(), [&](const boost::json::object& o) {
      return std::string(o.at("text").as_string()).find(needle) != std::string::npos;
    });
  }

  // The seat's wake events, in order.
  std::vector<boost::json::object> wakes() {
    std::vector<boost::json::object> out;
    const std::string subject = "cotal.main.wake.local." + profile().principal.actor;
    for (uint64_t seq = 1;;) {
      auto m = js_->findMessage("WAKE_main", seq, subject);
      if (!m.isOk()) break;
      out.push_back(boost::json::parse(m->data).as_object());
      seq = m->seq + 1;
    }
    return out;
  }

  std::vector<std::string> wakeKinds() {
    std::vector<std::string> out;
    for (const auto& w : wakes())
      out.emplace_back(w.at("kind").as_string());
    return out;
  }

  size_t wakesOf(const std::string& kind) {
    auto kinds = wakeKinds();
    return static_cast<size_t>(std::count(kinds.begin(), kinds.end(), kind));
  }

  // The `detail` of the newest wake event of `kind` ("" when none has one).
  std::string lastWakeDetail(const std::string& kind) {
    std::string detail;
    for (const auto& w : wakes()) {
      const auto* d = w.if_contains("detail");
      if (w.at("kind").as_string() == kind && d != nullptr) detail = std::string(d->as_string());
    }
    return detail;
  }

  std::optional<journal::OwnershipRecord> tombstone(const std::string& id) {
    auto view =
        journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(profile().cwd));
    if (!view.isOk()) return std::nullopt;
    for (auto& t : view->tombstones)
      if (t.id == id) return t;
    return std::nullopt;
  }

  // A DM from alice to the seat; its message id.
  std::string send(const std::string& text) {
    auto sent = alice_->sendDirect(profile().principal.dotForm(), text);
    EXPECT_TRUE(sent.isOk()) << sent.status().toString();
    return sent.isOk() ? sent->stored.messageId : std::string();
  }

  std::optional<shoal::testing::TempDir> dir_;
  std::unique_ptr<mesh::Endpoint> alice_;
};

}  // namespace shoal::daemon
