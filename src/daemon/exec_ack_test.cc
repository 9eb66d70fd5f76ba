// The exec acknowledgement protocol against a real seat (issue 18 item 2): a seat added with
// `--ack` surfaces a message only when its program writes `ack <id>` to $SHOAL_ACK_FD — here a
// /bin/sh script calling the real `shoal-ack` helper — and a message it read but never
// acknowledged fails `runtime-exited-before-ack` when the program ends, never `surfaced`.
#include <fstream>
#include <map>
#include <set>

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
namespace {

using shoal::testing::eventually;
using std::chrono::milliseconds;
namespace json = boost::json;

// Reads delivery blocks; for each DM whose text holds "ack-me" it runs `shoal-ack <id>` (the id
// as the head shows it after ", id "). "exit-now" in a text makes it ack that one and exit 3
// at once, before reading anything else; "bogus" makes it acknowledge things never handed
// over. It never acknowledges the rest, though it reads them.
constexpr const char* kAckingAgent = R"(ack=$1
while IFS= read -r line; do
  case "$line" in
    "[dm]"*)
      id=${line#*, id }; id=${id%%:*}
      case "$line" in
        *exit-now*) "$ack" "$id"; exit 3 ;;
        *bogus*) "$ack" never-handed-over; echo "not an ack" >&3; echo "ack" >&3 ;;
        *ack-me*) "$ack" "$id" ;;
      esac ;;
  esac
done
)";

class ExecAckTest : public shoal::testing::ManagedSpaceTest {
 protected:
  void SetUp() override {
    ManagedSpaceTest::SetUp();
    if (HasFatalFailure()) return;
    auto dir = shoal::testing::TempDir::create("exec-ack");
    ASSERT_TRUE(dir.isOk());
    dir_.emplace(std::move(dir).value());
    std::ofstream(dir_->join("agent.sh")) << kAckingAgent;
    alice_ = openSender("alice");
    ASSERT_NE(alice_, nullptr);
  }

  void TearDown() override {
    alice_.reset();
    ManagedSpaceTest::TearDown();
  }

  SeatProfile profile() {
    SeatProfile p;
    p.name = "Reviewer";
    p.principal = wire::Principal{"local", "reviewer"};
    p.command = {"/bin/sh", dir_->join("agent.sh"), SHOAL_ACK_BINARY};
    p.cwd = dir_->join("reviewer");
    p.lifecycleUid = "abcdefghijklmnopqrstuvwxyz";
    p.acks = true;
    return p;
  }

  std::unique_ptr<Seat> startSeat(const SeatProfile& p) {
    SeatOptions so;
    so.url = server_->url();
    so.space = "main";
    so.restartBackoff = milliseconds(50);
    auto seat = Seat::open(p, so);
    EXPECT_TRUE(seat.isOk()) << seat.status().toString();
    return seat.isOk() ? std::move(seat).value() : nullptr;
  }

  // The seat's ended records by id: the tombstone's state and reason.
  std::map<std::string, journal::OwnershipRecord> ended(const SeatProfile& p) {
    std::map<std::string, journal::OwnershipRecord> out;
    auto view = journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(p.cwd));
    if (!view.isOk()) return out;
    for (const auto& t : view->tombstones)
      out[t.id] = t;
    return out;
  }

  std::string send(const std::string& text) {
    auto sent = alice_->sendDirect("local.reviewer", text);
    EXPECT_TRUE(sent.isOk()) << sent.status().toString();
    return sent.isOk() ? sent->stored.messageId : "";
  }

  // The evidence kinds of the surfaced receipts Alice holds, by message id.
  std::map<std::string, std::string> surfacedEvidence() {
    std::map<std::string, std::string> out;
    for (uint64_t seq = 1;; ++seq) {
      auto m = js_->findMessage("WAKE_main", seq, "cotal.main.rcpt.local.alice.>");
      if (!m.isOk()) break;
      seq = m->seq;
      json::value v = json::parse(m->data);
      const json::object& o = v.as_object();
      if (o.contains("surfacedAt"))
        out[std::string(o.at("id").as_string())] = std::string(o.at("evidence").as_string());
    }
    return out;
  }

  std::optional<shoal::testing::TempDir> dir_;
  std::unique_ptr<mesh::Endpoint> alice_;
};

// Reading is not acknowledging: of six DMs the program reads, the three it acknowledges
// surface (evidence `runtime-ack`), and the three it does not fail when it is stopped.
TEST_F(ExecAckTest, OnlyAcknowledgedMessagesSurface) {
  SeatProfile p = profile();
  auto seat = startSeat(p);
  ASSERT_NE(seat, nullptr);
  std::set<std::string> acked, readOnly;
  for (int i = 0; i < 6; ++i)
    (i % 2 == 0 ? acked : readOnly)
        .insert(
            send(i % 2 == 0 ? "ack-me " + std::to_string(i) : "just read " + std::to_string(i)));
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 3; }))
      << "the three acknowledged DMs surface";
  // The other three stay written-and-awaiting: the program read them long ago.
  EXPECT_EQ(seat->snapshot().counters.surfaced, 3u);
  seat->stop();
  auto out = ended(p);
  ASSERT_EQ(out.size(), 6u);
  for (const auto& id : acked) {
    EXPECT_EQ(out[id].state, journal::OwnerState::kSurfaced) << id;
    EXPECT_EQ(out[id].reason.rfind("runtime-ack: the program acknowledged it", 0), 0u)
        << out[id].reason;
  }
  for (const auto& id : readOnly) {
    EXPECT_NE(out[id].state, journal::OwnerState::kSurfaced) << id;
    EXPECT_EQ(out[id].reason.rfind("runtime-exited-before-ack: the runtime was stopped", 0), 0u)
        << out[id].reason;
  }
  auto evidence = surfacedEvidence();
  EXPECT_EQ(evidence.size(), 3u);
  for (const auto& id : acked)
    EXPECT_EQ(evidence[id], "runtime-ack") << id;
}

// An acknowledgement written just before the program exits still counts (it is read before
// the generation's end is reported); what it had not acknowledged fails with the exit named.
TEST_F(ExecAckTest, AnAckWrittenJustBeforeExitCounts) {
  SeatProfile p = profile();
  auto seat = startSeat(p);
  ASSERT_NE(seat, nullptr);
  const std::string first = send("just read");
  const std::string last = send("exit-now");
  ASSERT_TRUE(eventually([&] { return ended(p).size() == 2; })) << "both DMs end";
  seat->stop();
  auto out = ended(p);
  EXPECT_EQ(out[last].state, journal::OwnerState::kSurfaced) << out[last].reason;
  EXPECT_EQ(
      out[first].reason.rfind("runtime-exited-before-ack: the runtime exited (exit code 3)", 0), 0u)
      << out[first].reason;
}

// Acknowledgements of messages never handed over, and lines that are not acknowledgements,
// surface nothing; the runtime log says they were ignored.
TEST_F(ExecAckTest, StrayAcknowledgementsSurfaceNothing) {
  SeatProfile p = profile();
  auto seat = startSeat(p);
  ASSERT_NE(seat, nullptr);
  const std::string id = send("bogus");
  const std::string log = p.cwd + "/.shoal/runtime.log";
  ASSERT_TRUE(eventually([&] {
    return FileSystem::posix().readFile(log).valueOr("").find("acknowledged nothing") !=
           std::string::npos;
  })) << FileSystem::posix().readFile(log).valueOr("");
  EXPECT_EQ(seat->snapshot().counters.surfaced, 0u);
  seat->stop();
  EXPECT_EQ(ended(p)[id].reason.rfind("runtime-exited-before-ack", 0), 0u);
}

}  // namespace
}  // namespace shoal::daemon
