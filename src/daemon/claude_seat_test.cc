// A seat running the fake Claude Code CLI (tests/fakes/fake_claude) against a real nats-server
// and manager plane: surfaced only on the replayed uuid, turn ends, mid-turn continuation,
// sleeping seats and cold start, unexpected exits, error results, strong stops. The fake's own
// log is the witness of what the runtime read.
#include <algorithm>
#include <csignal>
#include <functional>
#include <stdexcept>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include "base/clock.h"
#include "base/file_system.h"
#include "daemon/seat.h"
#include "daemon/seat_files.h"
#include "journal/ownership_journal.h"
#include "mcp/client.h"
#include "mesh/endpoint.h"
#include "planes/delivery_plane.h"
#include "testing/eventually.h"
#include "testing/managed_space.h"
#include "testing/temp_dir.h"
#include "transport/kv.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

namespace json = boost::json;
using shoal::testing::eventually;
using std::chrono::milliseconds;

struct FakeLine {
  std::string event;
  int pid = 0;
  std::string uuid;
  std::string content;
  bool isError = false;
};

class ClaudeSeatTest : public shoal::testing::ManagedSpaceTest {
 protected:
  void SetUp() override {
    ManagedSpaceTest::SetUp();
    if (HasFatalFailure()) return;
    auto dir = shoal::testing::TempDir::create("claude-seat");
    ASSERT_TRUE(dir.isOk());
    dir_.emplace(std::move(dir).value());
    alice_ = openSender("alice");
    ASSERT_NE(alice_, nullptr);
  }

  void TearDown() override {
    alice_.reset();
    ManagedSpaceTest::TearDown();
  }

  SeatProfile profile(std::vector<std::string> extra = {}) {
    SeatProfile p;
    p.name = "Reviewer";
    p.principal = wire::Principal{"local", "reviewer"};
    p.runtime = RuntimeKind::kClaude;
    p.command = {FAKE_CLAUDE_BINARY, "--fake-log", fakeLog()};
    p.command.insert(p.command.end(), extra.begin(), extra.end());
    p.cwd = dir_->join("reviewer");
    p.lifecycleUid = "abcdefghijklmnopqrstuvwxyz";
    return p;
  }

  std::unique_ptr<Seat> open(const SeatProfile& p, SeatMode mode = SeatMode::kRunning,
                             const std::function<void(SeatOptions&)>& tweak = {}) {
    SeatOptions so;
    so.url = server_->url();
    so.space = "main";
    so.mode = mode;
    so.restartBackoff = milliseconds(50);
    so.stopGrace = milliseconds(1500);
    if (tweak) tweak(so);
    auto seat = Seat::open(p, so);
    EXPECT_TRUE(seat.isOk()) << seat.status().toString();
    return seat.isOk() ? std::move(seat).value() : nullptr;
  }

  std::string fakeLog() { return dir_->join("fake.log"); }

  std::vector<FakeLine> fakeLines(const std::string& event) {
    std::vector<FakeLine> out;
    std::string text = FileSystem::posix().readFile(fakeLog()).valueOr("");
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      boost::system::error_code ec;
      json::value v = json::parse(std::string_view(text).substr(start, end - start), ec);
      start = end + 1;
      if (ec || !v.is_object()) continue;
      const json::object& o = v.as_object();
      FakeLine line;
      line.event = std::string(o.at("event").as_string());
      if (line.event != event) continue;
      line.pid = static_cast<int>(o.at("pid").to_number<int64_t>());
      if (const auto* u = o.if_contains("uuid"); u != nullptr && u->is_string())
        line.uuid = std::string(u->as_string());
      if (const auto* c = o.if_contains("content"); c != nullptr && c->is_string())
        line.content = std::string(c->as_string());
      if (const auto* e = o.if_contains("is_error"); e != nullptr && e->is_bool())
        line.isError = e->as_bool();
      out.push_back(std::move(line));
    }
    return out;
  }

  // How many `input` lines (what the runtime read) mention `text`.
  size_t inputsWith(const std::string& text) {
    auto inputs = fakeLines("input");
    return static_cast<size_t>(std::count_if(inputs.begin(), inputs.end(), [&](const FakeLine& l) {
      return l.content.find(text) != std::string::npos;
    }));
  }

  // Every lifecycle event of the seat so far, as JSON objects.
  std::vector<json::object> wakeEvents() {
    std::vector<json::object> out;
    uint64_t seq = 1;
    while (true) {
      auto m = js_->findMessage("WAKE_main", seq, "cotal.main.wake.local.reviewer");
      if (!m.isOk()) break;
      boost::system::error_code ec;
      json::value v = json::parse(m->data, ec);
      EXPECT_FALSE(ec) << "wake event " << m->seq << " on " << m->subject << ": " << m->data;
      if (!ec && v.is_object()) out.push_back(v.as_object());
      seq = m->seq + 1;
    }
    return out;
  }
  bool hasEvent(const std::string& kind) {
    auto events = wakeEvents();
    return std::any_of(events.begin(), events.end(),
                       [&](const json::object& o) { return o.at("kind").as_string() == kind; });
  }

  // Makes the (closed) seat's journal forget its durable memberships, as one an older Shoal
  // wrote (channel_rejoin.h).
  void forgetDurableChannels(const SeatProfile& p) {
    auto j = journal::OwnershipJournal::open(FileSystem::posix(), Clock::real(),
                                             seatFilesDir(p.cwd), {});
    ASSERT_TRUE(j.isOk()) << j.status().toString();
    auto set = (*j)->setSection(journal::SetSection{"seat.durable_channels", "[]", std::nullopt});
    ASSERT_TRUE(set.isOk()) << set.status().toString();
  }

  std::optional<journal::OwnershipRecord> tombstone(const std::string& id) {
    auto view =
        journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(profile().cwd));
    if (!view.isOk()) return std::nullopt;
    for (auto& t : view->tombstones) {
      if (t.id == id) return t;
    }
    return std::nullopt;
  }

  // The ids of the seat's queued records (its local inbox), oldest admission first.
  std::vector<std::string> queuedIds() {
    std::vector<std::string> out;
    auto view =
        journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(profile().cwd));
    if (!view.isOk()) return out;
    for (const auto& r : view->live) {
      if (r.state == journal::OwnerState::kQueued) out.push_back(r.id);
    }
    return out;
  }
  // Whether the journal holds any record of `id`, live or terminal.
  bool journalKnows(const std::string& id) {
    auto view =
        journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(profile().cwd));
    if (!view.isOk()) return false;
    auto named = [&](const journal::OwnershipRecord& r) { return r.id == id; };
    return std::any_of(view->live.begin(), view->live.end(), named) ||
           std::any_of(view->tombstones.begin(), view->tombstones.end(), named);
  }

  std::string send(const std::string& text) {
    auto sent = alice_->sendDirect("local.reviewer", text);
    EXPECT_TRUE(sent.isOk()) << sent.status().toString();
    return sent.isOk() ? sent->stored.messageId : std::string();
  }

  // The seat's MCP endpoint, as its runtime would reach it (the config the seat wrote).
  mcp::Client mcpClient() {
    auto c = mcp::Client::fromConfigFile(profile().cwd + "/.shoal/mcp.json");
    if (!c.isOk()) throw std::runtime_error("no MCP client: " + c.status().toString());
    mcp::Client client = std::move(c).value();
    auto init = client.initialize();
    EXPECT_TRUE(init.isOk()) << init.status().toString();
    return client;
  }

  // A first DM starts a turn; behind it, 14 DMs of 15 kB wait queued — an inbox page of them is
  // far more than the socket buffers hold, so its write stays open while the client does not
  // read. Their ids (empty when they did not queue).
  std::vector<std::string> queueBigDmsBehindATurn(Seat& seat) {
    send("first FIRST_MARK");
    if (!eventually([&] { return inputsWith("FIRST_MARK") == 1; })) return {};
    std::vector<std::string> ids;
    for (int i = 0; i < 14; ++i)
      ids.push_back(send(std::string(15000, 'x') + " BIG_MARK " + std::to_string(i)));
    if (!eventually([&] { return seat.snapshot().queued == 14; })) return {};
    return ids;
  }

  // The wake-result events of the seat, by message id.
  std::multimap<std::string, json::object> wakeResults() {
    std::multimap<std::string, json::object> out;
    for (auto& e : wakeEvents()) {
      if (e.at("kind").as_string() == "wake-result")
        out.emplace(std::string(e.at("message").as_string()), e);
    }
    return out;
  }

  std::optional<shoal::testing::TempDir> dir_;
  std::unique_ptr<mesh::Endpoint> alice_;
};

// An inbox page held open: a raw HTTP/1.1 connection with a tiny receive buffer that sends one
// tools/call and reads nothing until told to — the response write cannot complete meanwhile.
class StalledCall {
 public:
  StalledCall(const mcp::Client& session, const std::string& body) : socket_(io_) {
    namespace asio = boost::asio;
    namespace http = boost::beast::http;
    const std::string rest = session.endpoint().url.substr(7);  // http://HOST:PORT/mcp
    const std::string authority = rest.substr(0, rest.find('/'));
    const auto colon = authority.rfind(':');
    socket_.open(asio::ip::tcp::v4());
    socket_.set_option(asio::socket_base::receive_buffer_size(4096));
    socket_.connect(
        asio::ip::tcp::endpoint(asio::ip::make_address(authority.substr(0, colon)),
                                static_cast<uint16_t>(std::stoi(authority.substr(colon + 1)))));
    http::request<http::string_body> req(http::verb::post, "/mcp", 11);
    req.set("Host", authority);
    for (const auto& h : session.endpoint().headers)
      req.set(h.name, h.value);  // the bearer token
    req.set("Content-Type", "application/json");
    req.set("Accept", "application/json");
    req.set("Mcp-Session-Id", session.sessionId());
    req.set("MCP-Protocol-Version", session.protocolVersion());
    req.body() = body;
    req.prepare_payload();
    http::write(socket_, req);
  }
  // Hang up with a reset: the server's write fails.
  void reset() {
    socket_.set_option(boost::asio::socket_base::linger(true, 0));
    socket_.close();
  }
  // Read the whole response: the server's write completes.
  std::string readAll() {
    namespace http = boost::beast::http;
    boost::beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(std::uint64_t{64} * 1024 * 1024);
    http::read(socket_, buffer, parser);
    return parser.get().body();
  }

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
};

TEST_F(ClaudeSeatTest, DmIsSurfacedOnTheReplayedUuidExactlyOnce) {
  auto seat = open(profile());
  ASSERT_NE(seat, nullptr);
  const std::string id = send("please review PR 12");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 1; }));
  ASSERT_TRUE(eventually([&] { return hasEvent("turn-completed"); }));

  // What the runtime read: one stdin line carrying the block, replayed with the same uuid.
  auto inputs = fakeLines("input");
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_NE(inputs[0].content.find("please review PR 12"), std::string::npos);
  EXPECT_NE(inputs[0].content.find("=== shoal delivery for Reviewer (local.reviewer)"),
            std::string::npos);
  auto replays = fakeLines("replay");
  ASSERT_EQ(replays.size(), 1u);
  EXPECT_EQ(replays[0].uuid, inputs[0].uuid);
  auto t = tombstone(id);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->state, journal::OwnerState::kSurfaced);

  // The sender's receipt and the turn's lifecycle event, naming the seat publicly.
  auto rcpt = js_->findMessage("WAKE_main", 1, "cotal.main.rcpt.local.alice.local.reviewer");
  ASSERT_TRUE(rcpt.isOk()) << rcpt.status().toString();
  EXPECT_EQ(json::parse(rcpt->data).at("id").as_string(), id);
  for (const auto& e : wakeEvents()) {
    EXPECT_EQ(e.at("seat").at("name").as_string(), "Reviewer");
    if (e.at("kind").as_string() == "turn-completed") {
      EXPECT_EQ(e.at("messages").as_array()[0].as_string(), id);
    }
  }
}

TEST_F(ClaudeSeatTest, MidTurnArrivalsWaitForTheTurnEndAndGoOutInOrder) {
  auto seat = open(profile({"--fake-turn-ms", "400"}));
  ASSERT_NE(seat, nullptr);
  send("first FIRST_MARK");
  ASSERT_TRUE(eventually([&] { return inputsWith("FIRST_MARK") == 1; }));
  // The first turn is running (400 ms): these two must wait for its result.
  send("second SECOND_MARK");
  send("third THIRD_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 3; },
                         std::chrono::seconds(10)));
  auto inputs = fakeLines("input");
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].content.find("SECOND_MARK"), std::string::npos);
  const std::string& second = inputs[1].content;
  ASSERT_NE(second.find("SECOND_MARK"), std::string::npos);
  ASSERT_NE(second.find("THIRD_MARK"), std::string::npos);
  EXPECT_LT(second.find("SECOND_MARK"), second.find("THIRD_MARK"));
  // The second stdin line was written after the first turn's result.
  std::string log = FileSystem::posix().readFile(fakeLog()).valueOr("");
  EXPECT_LT(log.find("\"event\":\"result\""), log.find("SECOND_MARK"));
}

TEST_F(ClaudeSeatTest, SleepingSeatColdStartsOnAFreshDmAndKeepsBacklogQueued) {
  // A first life provisions the durable; asleep, stopped, then two DMs arrive: backlog.
  {
    auto seat = open(profile(), SeatMode::kSleeping);
    ASSERT_NE(seat, nullptr);
    EXPECT_FALSE(seat->snapshot().processRunning);
    seat->stop();
  }
  send("old one OLD_MARK");
  send("old two OLD_MARK");
  auto seat = open(profile(), SeatMode::kSleeping);
  ASSERT_NE(seat, nullptr);
  ASSERT_TRUE(eventually([&] { return seat->snapshot().queued == 2; }));
  EXPECT_FALSE(seat->snapshot().processRunning);
  EXPECT_EQ(seat->snapshot().state, "sleeping");
  EXPECT_EQ(seat->snapshot().counters.launches, 0u);
  EXPECT_TRUE(fakeLines("start").empty()) << "backlog must never start a sleeping seat";

  // A fresh DM is the current event: it cold-starts the runtime as the launch input, alone.
  send("fresh FRESH_MARK");
  ASSERT_TRUE(eventually([&] { return inputsWith("FRESH_MARK") == 1; }));
  EXPECT_EQ(seat->snapshot().counters.coldStarts, 1u);
  auto inputs = fakeLines("input");
  EXPECT_EQ(inputs[0].content.find("OLD_MARK"), std::string::npos);
  EXPECT_NE(inputs[0].content.find("FRESH_MARK"), std::string::npos);
  // Awake now, the backlog follows at the turn boundary.
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 3; }));
  EXPECT_EQ(inputsWith("OLD_MARK"), 1u);
}

TEST_F(ClaudeSeatTest, CrashMidTurnFailsTheWakeWithoutReplayAndRestarts) {
  auto seat = open(profile());
  ASSERT_NE(seat, nullptr);
  const std::string id = send("this one crashes FAKE_CRASH");
  ASSERT_TRUE(eventually([&] { return hasEvent("exited-unexpectedly"); }));
  ASSERT_TRUE(eventually([&] { return hasEvent("wake-failed"); }));
  // The fake replayed it (the CLI acks at turn start), so it surfaced before the crash.
  ASSERT_TRUE(eventually([&] { return tombstone(id).has_value(); }));
  EXPECT_EQ(tombstone(id)->state, journal::OwnerState::kSurfaced);
  // The seat comes back with a new Process; the next DM goes to it, the crashed one never again.
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.launches == 2; }));
  send("after the crash AFTER_MARK");
  ASSERT_TRUE(eventually([&] { return inputsWith("AFTER_MARK") == 1; }));
  EXPECT_EQ(inputsWith("FAKE_CRASH"), 1u);
  EXPECT_EQ(seat->snapshot().counters.unexpectedExits, 1u);
}

TEST_F(ClaudeSeatTest, CrashBeforeTheAckFailsTheOwnerWithAReason) {
  // Without the uuid preserved the ack never comes; a crash then leaves it inflight → failed.
  auto seat = open(profile({"--fake-no-uuid"}));
  ASSERT_NE(seat, nullptr);
  const std::string id = send("crash unacknowledged FAKE_CRASH");
  ASSERT_TRUE(eventually([&] { return tombstone(id).has_value(); }));
  EXPECT_EQ(tombstone(id)->state, journal::OwnerState::kFailed);
  EXPECT_EQ(tombstone(id)->reason.rfind("no-read-reconciliation", 0), 0u) << tombstone(id)->reason;
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.launches == 2; }));
  EXPECT_EQ(inputsWith("FAKE_CRASH"), 1u) << "a failed owner is never replayed";
  // The sender got a failed receipt with the reason.
  auto rcpt = js_->findMessage("WAKE_main", 1, "cotal.main.rcpt.local.alice.local.reviewer");
  ASSERT_TRUE(rcpt.isOk());
  EXPECT_TRUE(json::parse(rcpt->data).as_object().contains("failedAt"));
}

TEST_F(ClaudeSeatTest, TurnWithoutTheReplayedUuidFailsTheDelivery) {
  auto seat = open(profile({"--fake-no-uuid"}));
  ASSERT_NE(seat, nullptr);
  const std::string id = send("is my uuid kept?");
  ASSERT_TRUE(eventually([&] { return tombstone(id).has_value(); }));
  EXPECT_EQ(tombstone(id)->state, journal::OwnerState::kFailed);
  EXPECT_EQ(tombstone(id)->reason.rfind("no-runtime-ack", 0), 0u) << tombstone(id)->reason;
}

TEST_F(ClaudeSeatTest, ErrorResultFailsTheWakeWithItsDetail) {
  auto seat = open(profile());
  ASSERT_NE(seat, nullptr);
  send("model trouble FAKE_API_ERROR");
  ASSERT_TRUE(eventually([&] { return hasEvent("wake-failed"); }));
  bool detailed = false;
  for (const auto& e : wakeEvents()) {
    if (e.at("kind").as_string() != "wake-failed") continue;
    detailed = json::serialize(e).find("API Error") != std::string::npos;
  }
  EXPECT_TRUE(detailed);
  EXPECT_FALSE(hasEvent("turn-completed"));
  EXPECT_NE(seat->snapshot().note.find("API Error"), std::string::npos) << seat->snapshot().note;
  // Presence carries the runtime's trouble: idle, with the condition the error result named.
  ASSERT_TRUE(eventually([&] {
    auto row = alice_->findPeer("local.reviewer");
    return row.isOk() && row->presence.condition &&
           row->presence.condition->code == wire::ConditionCode::kServer &&
           row->presence.status == wire::PresenceStatus::kIdle;
  }));
}

TEST_F(ClaudeSeatTest, PresenceIsWorkingDuringATurnAndIdleAfter) {
  auto seat = open(profile({"--fake-turn-ms", "1500"}));
  ASSERT_NE(seat, nullptr);
  send("a slow turn");
  ASSERT_TRUE(eventually([&] {
    auto row = alice_->findPeer("local.reviewer");
    return row.isOk() && row->presence.status == wire::PresenceStatus::kWorking;
  }));
  ASSERT_TRUE(eventually(
      [&] {
        auto row = alice_->findPeer("local.reviewer");
        return row.isOk() && row->presence.status == wire::PresenceStatus::kIdle &&
               seat->snapshot().counters.turns == 1;
      },
      std::chrono::seconds(10)));
}

TEST_F(ClaudeSeatTest, ShutdownDeadlineCutsTheGraceForAHungRuntime) {
  SeatOptions so;
  so.url = server_->url();
  so.space = "main";
  so.stopGrace = milliseconds(20000);  // far longer than the shutdown deadline
  auto opened = Seat::open(profile(), so);
  ASSERT_TRUE(opened.isOk()) << opened.status().toString();
  auto seat = std::move(opened).value();
  send("hang here FAKE_HANG");
  ASSERT_TRUE(eventually([&] { return inputsWith("FAKE_HANG") == 1; }));
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + milliseconds(800);
  seat->requestStop(deadline);
  EXPECT_TRUE(seat->waitStopped(deadline + milliseconds(2000)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2800))
      << "the stop must not wait out the 20 s grace";
  EXPECT_FALSE(seat->snapshot().processRunning);
  EXPECT_EQ(seat->snapshot().state, "stopped");
}

// `shoal seat interrupt`: the interrupt control request stops a hung turn; the turn ends failed
// (`interrupted …`), the DM it held stays surfaced (Claude read it), the same process takes the
// DM that waited behind it. With no turn running there is nothing to interrupt.
TEST_F(ClaudeSeatTest, InterruptStopsTheRunningTurnAndTheNextDmGoesOut) {
  auto seat = open(profile());
  ASSERT_NE(seat, nullptr);
  ASSERT_TRUE(eventually([&] { return seat->snapshot().state == "running"; }));
  Status idle = seat->interrupt();
  EXPECT_EQ(idle.reason(), "not-in-a-turn") << idle.toString();
  const std::string hung = send("never answered FAKE_HANG");
  ASSERT_TRUE(eventually([&] { return inputsWith("FAKE_HANG") == 1; }));
  ASSERT_TRUE(eventually([&] { return tombstone(hung).has_value(); }));
  const std::string next = send("waiting behind it NEXT_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().queued == 1; }));
  Status asked = seat->interrupt();
  ASSERT_TRUE(asked.isOk()) << asked.toString();
  ASSERT_TRUE(eventually([&] { return inputsWith("NEXT_MARK") == 1; }));
  ASSERT_TRUE(eventually([&] { return tombstone(next).has_value(); }));
  EXPECT_EQ(tombstone(hung)->state, journal::OwnerState::kSurfaced);
  EXPECT_EQ(tombstone(next)->state, journal::OwnerState::kSurfaced);
  std::string detail;
  for (const auto& e : wakeEvents()) {
    if (e.at("kind").as_string() == "wake-failed") detail = std::string(e.at("detail").as_string());
  }
  EXPECT_EQ(detail.rfind("interrupted by `shoal seat interrupt`", 0), 0u) << detail;
  EXPECT_EQ(seat->snapshot().counters.launches, 1u);
}

TEST_F(ClaudeSeatTest, SleepIsAStrongBoundaryEvenForAHungTurn) {
  auto seat = open(profile());
  ASSERT_NE(seat, nullptr);
  const std::string id = send("never answered FAKE_HANG");
  ASSERT_TRUE(eventually([&] { return inputsWith("FAKE_HANG") == 1; }));
  // Two concurrent callers both return only once the Process is gone.
  std::thread other([&] { EXPECT_TRUE(seat->sleep().isOk()); });
  EXPECT_TRUE(seat->sleep().isOk());
  other.join();
  SeatSnapshot snap = seat->snapshot();
  EXPECT_FALSE(snap.processRunning);
  EXPECT_EQ(snap.state, "sleeping");
  EXPECT_EQ(snap.inflight, 0u);
  // It was acknowledged (replayed) before the hang, so it stays surfaced; the wake failed.
  ASSERT_TRUE(tombstone(id).has_value());
  EXPECT_EQ(tombstone(id)->state, journal::OwnerState::kSurfaced);
  EXPECT_TRUE(hasEvent("wake-failed"));
  // Sleeping: a fresh DM wakes it again.
  send("wake up WAKE_MARK");
  ASSERT_TRUE(eventually([&] { return inputsWith("WAKE_MARK") == 1; }));
}

// The runtime session survives a restart: the next Process resumes it (`--resume <id>`), so the
// agent keeps its context; a session the runtime no longer knows falls back to a fresh one once.
TEST_F(ClaudeSeatTest, TheSessionIsResumedAfterARestart) {
  std::string session;
  {
    auto seat = open(profile());
    ASSERT_NE(seat, nullptr);
    send("remember this");
    ASSERT_TRUE(eventually([&] { return hasEvent("turn-completed"); }));
    auto replays = fakeLines("start");
    ASSERT_EQ(replays.size(), 1u);
    seat->stop();
  }
  std::string log = FileSystem::posix().readFile(fakeLog()).valueOr("");
  json::value first = json::parse(log.substr(0, log.find('\n')));
  session = std::string(first.at("session_id").as_string());
  auto seat = open(profile());
  ASSERT_NE(seat, nullptr);
  send("do you remember RESUMED_MARK");
  ASSERT_TRUE(eventually([&] { return inputsWith("RESUMED_MARK") == 1; }));
  auto starts = fakeLines("start");
  ASSERT_EQ(starts.size(), 2u);
  log = FileSystem::posix().readFile(fakeLog()).valueOr("");
  EXPECT_NE(log.find("\"--resume\",\"" + session + "\""), std::string::npos) << log;
  EXPECT_EQ(seat->snapshot().counters.unexpectedExits, 0u);
}

TEST_F(ClaudeSeatTest, AnUnknownSessionFallsBackToAFreshOneWithoutLosingTheDm) {
  {
    auto seat = open(profile({"--fake-forget-sessions"}));
    ASSERT_NE(seat, nullptr);
    send("first life");
    ASSERT_TRUE(eventually([&] { return hasEvent("turn-completed"); }));
    seat->stop();
  }
  auto seat = open(profile({"--fake-forget-sessions"}));
  ASSERT_NE(seat, nullptr);
  const std::string id = send("after the fallback FALLBACK_MARK");
  ASSERT_TRUE(eventually([&] { return inputsWith("FALLBACK_MARK") == 1; }));
  ASSERT_TRUE(eventually([&] { return tombstone(id).has_value(); }));
  EXPECT_EQ(tombstone(id)->state, journal::OwnerState::kSurfaced);
  bool explained = false;
  for (const auto& e : wakeEvents()) {
    if (e.at("kind").as_string() == "runtime-error" &&
        json::serialize(e).find("starting a fresh session") != std::string::npos)
      explained = true;
  }
  EXPECT_TRUE(explained);
  // Surfaced at the replay; the turn ends a moment later and the seat is idle and running.
  EXPECT_TRUE(eventually([&] { return seat->snapshot().state == "running"; }))
      << seat->snapshot().state;
}

// Commands that arrive while a retirement runs wait for it; a stop that ends the seat finishes
// every one of them (none hangs), and a wake after the stop is refused by name.
TEST_F(ClaudeSeatTest, CommandsRacingAStopAllReturn) {
  auto seat = open(profile());
  ASSERT_NE(seat, nullptr);
  send("keep busy FAKE_HANG");
  ASSERT_TRUE(eventually([&] { return inputsWith("FAKE_HANG") == 1; }));
  std::thread sleeper([&] { EXPECT_TRUE(seat->sleep().isOk()); });
  ASSERT_TRUE(eventually([&] { return seat->snapshot().state == "retiring"; }));
  Status woken;
  std::thread waker([&] { woken = seat->wake(); });  // deferred behind the retirement
  seat->stop();
  sleeper.join();
  waker.join();
  EXPECT_EQ(woken.reason(), "seat-stopped") << woken.toString();
  EXPECT_EQ(seat->snapshot().state, "stopped");
  EXPECT_EQ(seat->wake().reason(), "seat-stopped");
}

// --- Inbox receipts (seed 004 §2.1) and visible-reply settlement (§3.1) ----------------------

constexpr auto kSurfacedState = journal::OwnerState::kSurfaced;
constexpr auto kFailedState = journal::OwnerState::kFailed;
const std::string kInboxCall =
    R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"shoal_inbox",)"
    R"("arguments":{"limit":50}}})";

TEST_F(ClaudeSeatTest, InboxPageIsSurfacedByItsCompleteWriteAndNeverReplayed) {
  auto seat = open(profile({"--fake-turn-ms", "3000"}));
  ASSERT_NE(seat, nullptr);
  send("first FIRST_MARK");
  ASSERT_TRUE(eventually([&] { return inputsWith("FIRST_MARK") == 1; }));
  const std::string second = send("second SECOND_MARK");
  const std::string third = send("third THIRD_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().queued == 2; }));

  mcp::Client client = mcpClient();
  auto page = client.callTool("shoal_inbox", {});
  ASSERT_TRUE(page.isOk()) << page.status().toString();
  const std::string text = mcp::Client::textOf(*page);
  EXPECT_FALSE(page->at("isError").as_bool()) << text;
  // The receipt markers lead the text; the messages follow, oldest first.
  ASSERT_EQ(text.rfind("shoal_inbox receipts [shoal-rcpt-", 0), 0u) << text;
  ASSERT_NE(text.find("SECOND_MARK"), std::string::npos);
  EXPECT_LT(text.find("SECOND_MARK"), text.find("THIRD_MARK"));
  const auto& receipts = page->at("_meta").at("shoal/receipts").as_array();
  ASSERT_EQ(receipts.size(), 2u);
  EXPECT_EQ(receipts[0].at("messageId").as_string(), second);
  EXPECT_EQ(receipts[1].at("messageId").as_string(), third);
  EXPECT_LT(text.find(std::string(receipts[1].at("receipt").as_string())),
            text.find("SECOND_MARK"));

  // The complete write of that response is the surfaced boundary.
  ASSERT_TRUE(eventually([&] {
    auto t = tombstone(third);
    return t && t->state == kSurfacedState;
  }));
  EXPECT_EQ(tombstone(second)->state, kSurfacedState);
  EXPECT_EQ(seat->snapshot().counters.inboxClaimed, 2u);
  EXPECT_EQ(seat->snapshot().inboxLeases, 0u);

  // Never twice: the next page is empty and the turn end hands nothing more to the runtime.
  auto again = client.callTool("shoal_inbox", {});
  ASSERT_TRUE(again.isOk());
  EXPECT_NE(mcp::Client::textOf(*again).find("no new messages"), std::string::npos);
  ASSERT_TRUE(
      eventually([&] { return seat->snapshot().counters.turns == 1; }, std::chrono::seconds(10)));
  EXPECT_EQ(seat->snapshot().queued, 0u);
  EXPECT_EQ(inputsWith("SECOND_MARK"), 0u);
  EXPECT_EQ(fakeLines("input").size(), 1u);
}

TEST_F(ClaudeSeatTest, HangUpMidResponseKeepsTheLeaseThenFailsWithoutReplay) {
  auto seat = open(profile({"--fake-turn-ms", "4000"}), SeatMode::kRunning, [](SeatOptions& o) {
    o.finalHopLease = milliseconds(1500);
    o.mcpSendBufferBytes = 4096;
  });
  ASSERT_NE(seat, nullptr);
  std::vector<std::string> ids = queueBigDmsBehindATurn(*seat);
  ASSERT_EQ(ids.size(), 14u);
  mcp::Client client = mcpClient();
  StalledCall call(client, kInboxCall);
  ASSERT_TRUE(eventually([&] { return seat->snapshot().inboxLeases == 14; }));
  call.reset();
  // No acknowledgement: the leases are kept, nothing surfaced.
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(seat->snapshot().inboxLeases, 14u);
  EXPECT_EQ(seat->snapshot().counters.surfaced, 1u);  // the first DM only

  // At the lease's end: terminal failed, never replayed.
  ASSERT_TRUE(eventually(
      [&] {
        auto t = tombstone(ids.back());
        return t && t->state == kFailedState;
      },
      std::chrono::seconds(10)));
  for (const auto& id : ids) {
    auto t = tombstone(id);
    ASSERT_TRUE(t.has_value()) << id;
    EXPECT_EQ(t->state, kFailedState);
    EXPECT_NE(t->reason.find("final-hop-unconfirmed"), std::string::npos) << t->reason;
  }
  ASSERT_TRUE(
      eventually([&] { return seat->snapshot().counters.turns == 1; }, std::chrono::seconds(10)));
  EXPECT_EQ(inputsWith("BIG_MARK"), 0u);
  EXPECT_EQ(seat->snapshot().counters.failed, 14u);
}

TEST_F(ClaudeSeatTest, AReplacementProcessNeverReceivesTheOldAcknowledgement) {
  auto seat = open(profile({"--fake-turn-ms", "20000"}), SeatMode::kRunning, [](SeatOptions& o) {
    o.finalHopLease = milliseconds(6000);
    o.mcpSendBufferBytes = 4096;
  });
  ASSERT_NE(seat, nullptr);
  std::vector<std::string> ids = queueBigDmsBehindATurn(*seat);
  ASSERT_EQ(ids.size(), 14u);
  mcp::Client client = mcpClient();
  StalledCall call(client, kInboxCall);
  ASSERT_TRUE(eventually([&] { return seat->snapshot().inboxLeases == 14; }));
  const uint64_t claimedBy = seat->snapshot().generation;
  ASSERT_EQ(::kill(seat->snapshot().pid, SIGKILL), 0);
  ASSERT_TRUE(eventually(
      [&] {
        auto s = seat->snapshot();
        return s.generation == claimedBy + 1 && s.processRunning;
      },
      std::chrono::seconds(15)));
  // Only now does the page reach its client whole: the write completes for a retired
  // generation, and its replacement is not handed the acknowledgement.
  std::string body = call.readAll();
  EXPECT_NE(body.find("BIG_MARK 13"), std::string::npos);
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(seat->snapshot().inboxLeases, 14u);
  ASSERT_TRUE(eventually(
      [&] {
        auto t = tombstone(ids.back());
        return t && t->state == kFailedState;
      },
      std::chrono::seconds(15)));
  for (const auto& id : ids)
    EXPECT_EQ(tombstone(id)->state, kFailedState) << id;
  EXPECT_EQ(inputsWith("BIG_MARK"), 0u);  // nothing replayed into the new process
}

TEST_F(ClaudeSeatTest, VisibleReplySettlesOnlyItsTargetAndTheTurnEndClosesTheRest) {
  auto seat = open(profile({"--fake-turn-ms", "2500"}));
  ASSERT_NE(seat, nullptr);
  const std::string fromAlice = send("from alice ALICE_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 1; }));
  auto bob = openSender("bob");
  ASSERT_NE(bob, nullptr);
  auto sent = bob->sendDirect("local.reviewer", "from bob BOB_MARK");
  ASSERT_TRUE(sent.isOk()) << sent.status().toString();
  const std::string fromBob = sent->stored.messageId;
  ASSERT_TRUE(eventually([&] { return seat->snapshot().queued == 1; }));

  mcp::Client client = mcpClient();
  ASSERT_TRUE(client.callTool("shoal_inbox", {}).isOk());  // bob's DM surfaces mid-turn
  ASSERT_TRUE(eventually([&] { return seat->snapshot().awaitingReply == 2; }));

  auto reply = client.callTool("shoal_dm", {{"to", "local.alice"}, {"text", "done ALICE_REPLY"}});
  ASSERT_TRUE(reply.isOk()) << reply.status().toString();
  ASSERT_FALSE(reply->at("isError").as_bool()) << mcp::Client::textOf(*reply);
  const std::string replyId =
      std::string(reply->at("_meta").at("shoal/receipt").at("messageId").as_string());
  ASSERT_TRUE(eventually([&] { return wakeResults().count(fromAlice) == 1; }));
  auto aliceResult = wakeResults().find(fromAlice)->second;
  EXPECT_EQ(aliceResult.at("result").as_string(), "replied");
  EXPECT_EQ(aliceResult.at("replyId").as_string(), replyId);
  EXPECT_EQ(aliceResult.at("target").as_string(), "peer:local.alice");
  EXPECT_EQ(wakeResults().count(fromBob), 0u);  // another target: untouched
  EXPECT_EQ(seat->snapshot().awaitingReply, 1u);

  // The turn ends without a word to bob: exactly one completed_without_visible_reply.
  ASSERT_TRUE(
      eventually([&] { return wakeResults().count(fromBob) == 1; }, std::chrono::seconds(10)));
  EXPECT_EQ(wakeResults().find(fromBob)->second.at("result").as_string(),
            "completed_without_visible_reply");
  EXPECT_EQ(wakeResults().count(fromAlice), 1u);
  auto snap = seat->snapshot();
  EXPECT_EQ(snap.awaitingReply, 0u);
  EXPECT_EQ(snap.counters.replied, 1u);
  EXPECT_EQ(snap.counters.noVisibleReply, 1u);
  ASSERT_EQ(snap.recentResults.size(), 2u);
  EXPECT_EQ(snap.recentResults[1].messageId, fromBob);
}

TEST_F(ClaudeSeatTest, QuietChannelsWaitForTheInboxAndMutedOnesAreDropped) {
  SeatProfile p = profile();
  p.channels = {"general"};
  auto seat = open(p);
  ASSERT_NE(seat, nullptr);
  mcp::Client client = mcpClient();
  auto quiet = client.callTool("shoal_channel_mode", {{"channel", "general"}, {"mode", "quiet"}});
  ASSERT_TRUE(quiet.isOk());
  ASSERT_FALSE(quiet->at("isError").as_bool()) << mcp::Client::textOf(*quiet);

  auto posted = alice_->post("general", "ambient QUIET_MARK", {});
  ASSERT_TRUE(posted.isOk()) << posted.status().toString();
  send("a dm DM_MARK");  // directed: arrives as usual
  ASSERT_TRUE(eventually([&] { return inputsWith("DM_MARK") == 1; }));
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.turns == 1; }));
  // The post stays queued through the turn end: only an inbox page takes it.
  ASSERT_TRUE(eventually([&] { return seat->snapshot().queued == 1; }));
  EXPECT_EQ(inputsWith("QUIET_MARK"), 0u);
  auto page = client.callTool("shoal_inbox", {});
  ASSERT_TRUE(page.isOk());
  EXPECT_NE(mcp::Client::textOf(*page).find("QUIET_MARK"), std::string::npos);

  auto muted = client.callTool("shoal_channel_mode", {{"channel", "general"}, {"mode", "muted"}});
  ASSERT_TRUE(muted.isOk());
  const uint64_t admitted = seat->snapshot().counters.admitted;
  // Same channel, same order: the muted post is handled before the mention.
  ASSERT_TRUE(alice_->post("general", "ambient MUTED_MARK", {}).isOk());
  ASSERT_TRUE(alice_->post("general", "for you MENTION_MARK", {"local.reviewer"}).isOk());
  ASSERT_TRUE(eventually([&] { return inputsWith("MENTION_MARK") == 1; }));
  EXPECT_EQ(seat->snapshot().counters.admitted, admitted + 1);  // the mention only
  EXPECT_EQ(inputsWith("MUTED_MARK"), 0u);
  EXPECT_EQ(seat->snapshot().channelModes.at("general"), "muted");
  auto bad = client.callTool("shoal_channel_mode", {{"channel", "general"}, {"mode", "loud"}});
  ASSERT_TRUE(bad.isOk());
  EXPECT_TRUE(bad->at("isError").as_bool());
}

// Replay on join (seed 000 "Replay on join"): the seat's channel joins with the registry's replay
// (on by default). Historical ambient posts never reach the runtime by themselves — only an
// inbox page takes them — while a historical @mention of the seat stays automatic.
TEST_F(ClaudeSeatTest, HistoricalAmbientWaitsForTheInboxAndAHistoricalMentionIsDelivered) {
  {
    // The seat is present (a mention must resolve) but has not joined #general yet.
    auto before = open(profile());
    ASSERT_NE(before, nullptr);
    ASSERT_TRUE(eventually([&] { return alice_->findPeer("local.reviewer").isOk(); }));
    ASSERT_TRUE(alice_->post("general", "old news HIST_AMBIENT", {}).isOk());
    auto mention = alice_->post("general", "earlier, for you HIST_MENTION", {"local.reviewer"});
    ASSERT_TRUE(mention.isOk()) << mention.status().toString();
  }
  SeatProfile p = profile();
  p.channels = {"general"};
  auto seat = open(p);
  ASSERT_NE(seat, nullptr);
  ASSERT_TRUE(eventually([&] { return inputsWith("HIST_MENTION") == 1; }));
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.turns == 1; }));
  ASSERT_TRUE(eventually([&] { return seat->snapshot().queued == 1; }));
  EXPECT_EQ(inputsWith("HIST_AMBIENT"), 0u);
  mcp::Client client = mcpClient();
  auto page = client.callTool("shoal_inbox", {});
  ASSERT_TRUE(page.isOk());
  const std::string text = mcp::Client::textOf(*page);
  EXPECT_NE(text.find("HIST_AMBIENT"), std::string::npos) << text;
  EXPECT_EQ(text.find("HIST_MENTION"), std::string::npos) << text;  // already delivered
  EXPECT_EQ(seat->snapshot().counters.admitted, 2u);
}

// A durable channel (the space default) keeps a seat's posts while the seat is down: the
// delivery plane copies them to the seat's DLV durable, and the returning seat takes each once
// (its rejoin's replay of the same post is a duplicate, never a second record).
TEST_F(ClaudeSeatTest, ADurableChannelPostMadeWhileTheSeatWasDownArrivesOnce) {
  planes::DeliveryPlaneOptions po;
  po.space = "main";
  po.holder = "local.delivery-test";
  auto plane = planes::DeliveryPlane::start(*managerConn_, *managerJs_, po);
  ASSERT_TRUE(plane.isOk()) << plane.status().toString();
  SeatProfile p = profile();
  p.channels = {"general"};
  auto seat = open(p);
  ASSERT_NE(seat, nullptr);
  auto members = transport::KeyValue::openBucket(*js_, "cotal_members_main");
  ASSERT_TRUE(members.isOk());
  ASSERT_TRUE(
      eventually([&] { return members->get("general/local.reviewer." + p.lifecycleUid).isOk(); }));
  seat.reset();  // down; the membership stays

  auto posted = alice_->post("general", "while you were down DOWN_MARK", {});
  ASSERT_TRUE(posted.isOk());
  auto dlv = [&] {
    auto info = js_->consumerInfo("DLV_main", "dlv_local-reviewer-" + p.lifecycleUid);
    return info.isOk() ? info->numPending + static_cast<uint64_t>(info->numAckPending) : 999;
  };
  ASSERT_TRUE(eventually([&] { return dlv() == 1; }));

  seat = open(p);
  ASSERT_NE(seat, nullptr);
  ASSERT_TRUE(eventually([&] { return dlv() == 0; }));  // taken and acked
  ASSERT_TRUE(eventually([&] { return inputsWith("DOWN_MARK") == 1; }))
      << "whichever copy came first, the post reaches the runtime by itself";
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_EQ(seat->snapshot().counters.admitted, 1u);
  EXPECT_LE(inputsWith("DOWN_MARK"), 1u);
  seat.reset();
  (void)(*plane)->stop();
}

// The same, when the rejoin's replay reaches the post before its durable copy does (the delivery
// plane is down across the restart, and the seat's journal does not remember the membership, as
// one an older Shoal wrote): the replay takes it in as historical, pull-only — and the durable
// copy that follows makes it ordinary traffic again, so it reaches the runtime by itself, once
// (found by the soak: it used to stay queued for an inbox page forever).
TEST_F(ClaudeSeatTest, APostMissedWhileDownIsNotHistoricalWhenItsCopyComesAfterTheReplay) {
  planes::DeliveryPlaneOptions po;
  po.space = "main";
  po.holder = "local.delivery-test";
  auto plane = planes::DeliveryPlane::start(*managerConn_, *managerJs_, po);
  ASSERT_TRUE(plane.isOk()) << plane.status().toString();
  SeatProfile p = profile();
  p.channels = {"general"};
  auto seat = open(p);
  ASSERT_NE(seat, nullptr);
  auto members = transport::KeyValue::openBucket(*js_, "cotal_members_main");
  ASSERT_TRUE(members.isOk());
  ASSERT_TRUE(
      eventually([&] { return members->get("general/local.reviewer." + p.lifecycleUid).isOk(); }));
  seat.reset();
  (void)(*plane)->stop();  // the plane is down too: no durable copy yet
  forgetDurableChannels(p);

  ASSERT_TRUE(alice_->post("general", "while you were down LATE_COPY_MARK", {}).isOk());
  seat = open(p);
  ASSERT_NE(seat, nullptr);
  ASSERT_TRUE(eventually([&] { return seat->snapshot().queued == 1; }))
      << "the replay took it in, historical";
  EXPECT_EQ(inputsWith("LATE_COPY_MARK"), 0u);

  auto again = planes::DeliveryPlane::start(*managerConn_, *managerJs_, po);
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  ASSERT_TRUE(eventually([&] { return inputsWith("LATE_COPY_MARK") == 1; }))
      << "the durable copy promotes it to ordinary traffic";
  EXPECT_EQ(seat->snapshot().counters.admitted, 1u);
  seat.reset();
  (void)(*again)->stop();
}

// A seat remembers its durable memberships in its journal, so a rejoin while the delivery plane is
// down (a whole-mesh crash restarts the daemon first) replays nothing: nothing is taken in as
// historical — the soak found posts surfaced long before queued again that way, once their
// tombstones were pruned — and the post made meanwhile comes by its durable copy once the plane
// is back, once.
TEST_F(ClaudeSeatTest, ARejoinWhileThePlaneIsDownReplaysNothing) {
  planes::DeliveryPlaneOptions po;
  po.space = "main";
  po.holder = "local.delivery-test";
  auto plane = planes::DeliveryPlane::start(*managerConn_, *managerJs_, po);
  ASSERT_TRUE(plane.isOk()) << plane.status().toString();
  SeatProfile p = profile();
  p.channels = {"general"};
  auto seat = open(p);
  ASSERT_NE(seat, nullptr);
  seat.reset();
  auto view = journal::OwnershipJournal::inspect(FileSystem::posix(), seatFilesDir(p.cwd));
  ASSERT_TRUE(view.isOk()) << view.status().toString();
  ASSERT_EQ(view->sections.count("seat.durable_channels"), 1u);
  EXPECT_EQ(view->sections.at("seat.durable_channels").valueJson, R"(["general"])");
  (void)(*plane)->stop();

  ASSERT_TRUE(alice_->post("general", "while you were down HELD_MARK", {}).isOk());
  seat = open(p);
  ASSERT_NE(seat, nullptr);
  // Seat::open returns after its joins; a replay would have queued the post by now.
  EXPECT_EQ(seat->snapshot().queued, 0u) << "the rejoin replayed history";
  EXPECT_EQ(inputsWith("HELD_MARK"), 0u);

  auto again = planes::DeliveryPlane::start(*managerConn_, *managerJs_, po);
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  ASSERT_TRUE(eventually([&] { return inputsWith("HELD_MARK") == 1; }))
      << "the durable copy brings it";
  EXPECT_EQ(seat->snapshot().counters.admitted, 1u);
  seat.reset();
  (void)(*again)->stop();
  EXPECT_EQ(inputsWith("HELD_MARK"), 1u);
}

// Attention × traffic (seed 000 "Attention"): what reaches the runtime by itself in each mode.
TEST_F(ClaudeSeatTest, AttentionDecidesWhatChannelTrafficReachesTheRuntime) {
  SeatProfile p = profile();
  p.channels = {"general"};
  auto seat = open(p);
  ASSERT_NE(seat, nullptr);
  mcp::Client client = mcpClient();
  auto setAttention = [&](const char* mode) {
    auto r = client.callTool("shoal_status", {{"attention", mode}});
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    ASSERT_FALSE(r->at("isError").as_bool()) << mcp::Client::textOf(*r);
  };
  auto post = [&](const std::string& text, std::vector<std::string> mentions = {}) {
    auto posted = alice_->post("general", text, mentions);
    ASSERT_TRUE(posted.isOk()) << posted.status().toString();
  };
  auto turns = [&] { return seat->snapshot().counters.turns; };

  // open: an ambient post starts a turn by itself.
  post("ambient OPEN_MARK");
  ASSERT_TRUE(eventually([&] { return inputsWith("OPEN_MARK") == 1; }));
  ASSERT_TRUE(eventually([&] { return turns() == 1; }));

  // dnd: an ambient post waits; the turn the next DM starts carries it.
  setAttention("dnd");
  post("ambient DND_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().queued == 1; }));
  EXPECT_EQ(inputsWith("DND_MARK"), 0u);
  send("a dm DND_DM");
  ASSERT_TRUE(eventually([&] { return inputsWith("DND_DM") == 1; }));
  auto inputs = fakeLines("input");
  EXPECT_NE(inputs.back().content.find("DND_MARK"), std::string::npos) << inputs.back().content;
  EXPECT_EQ(inputsWith("DND_MARK"), 1u);
  ASSERT_TRUE(eventually([&] { return turns() == 2; }));

  // focus: ambient waits for an inbox page even through a DM's turn; a mention arrives.
  setAttention("focus");
  post("ambient FOCUS_MARK");
  post("for you FOCUS_MENTION", {"local.reviewer"});
  ASSERT_TRUE(eventually([&] { return inputsWith("FOCUS_MENTION") == 1; }));
  ASSERT_TRUE(eventually([&] { return turns() == 3; }));
  send("a dm FOCUS_DM");
  ASSERT_TRUE(eventually([&] { return inputsWith("FOCUS_DM") == 1; }));
  ASSERT_TRUE(eventually([&] { return turns() == 4; }));
  EXPECT_EQ(inputsWith("FOCUS_MARK"), 0u);
  EXPECT_EQ(seat->snapshot().queued, 1u);
  // Presence mirrors it, as advice to peers.
  EXPECT_TRUE(eventually([&] {
    for (const auto& row : alice_->roster().rows) {
      if (row.id == "local.reviewer") return row.presence.attention == wire::Attention::kFocus;
    }
    return false;
  }));
  auto page = client.callTool("shoal_inbox", {});
  ASSERT_TRUE(page.isOk());
  EXPECT_NE(mcp::Client::textOf(*page).find("FOCUS_MARK"), std::string::npos);

  // A bad mode is the model's error to fix, not a protocol error.
  auto bad = client.callTool("shoal_status", {{"attention", "asleep"}});
  ASSERT_TRUE(bad.isOk());
  EXPECT_TRUE(bad->at("isError").as_bool());
}

// The bounded local inbox (local_inbox.h, decision 007): when it is full, pull-only backlog gives
// way first, then channel traffic — a mention included: directed-ness comes from the subject —
// oldest first; a queued DM never does, even when it is the oldest.
TEST_F(ClaudeSeatTest, AFullInboxEvictsPullOnlyBacklogThenChannelTrafficOldestFirst) {
  SeatProfile p = profile();
  p.channels = {"general", "ops"};
  auto seat = open(p, SeatMode::kRunning, [](SeatOptions& so) { so.inboxCapacity = 5; });
  ASSERT_NE(seat, nullptr);
  mcp::Client client = mcpClient();
  auto quiet = client.callTool("shoal_channel_mode", {{"channel", "general"}, {"mode", "quiet"}});
  ASSERT_TRUE(quiet.isOk());
  ASSERT_FALSE(quiet->at("isError").as_bool()) << mcp::Client::textOf(*quiet);
  // A turn that never ends: nothing more is handed over, everything after it stays queued.
  send("hold the turn FAKE_HANG");
  ASSERT_TRUE(eventually([&] { return inputsWith("FAKE_HANG") == 1; }));
  uint64_t admitted = seat->snapshot().counters.admitted;
  // One at a time, each admitted before the next goes: admission order is sending order.
  auto admit = [&](const std::function<std::string()>& sendIt) {
    std::string id = sendIt();
    EXPECT_TRUE(eventually([&] { return seat->snapshot().counters.admitted == admitted + 1; }))
        << id;
    ++admitted;
    return id;
  };
  auto post = [&](const std::string& channel, const std::string& text,
                  std::vector<std::string> mentions = {}) {
    return admit([&] {
      auto posted = alice_->post(channel, text, mentions);
      EXPECT_TRUE(posted.isOk()) << posted.status().toString();
      return posted.isOk() ? posted->stored.messageId : std::string();
    });
  };
  const std::string d1 = admit([&] { return send("directed D1_MARK"); });
  const std::string m1 = post("ops", "for you M1_MARK", {"local.reviewer"});
  const std::string q1 = post("general", "quiet Q1_MARK");
  const std::string a1 = post("ops", "ambient A1_MARK");
  const std::string q2 = post("general", "quiet Q2_MARK");
  ASSERT_EQ(queuedIds(), (std::vector<std::string>{d1, m1, q1, a1, q2}));
  EXPECT_EQ(seat->snapshot().counters.inboxEvicted, 0u);

  const std::string a2 = post("ops", "ambient A2_MARK");  // pull-only first: q1, then q2
  EXPECT_EQ(queuedIds(), (std::vector<std::string>{d1, m1, a1, q2, a2}));
  const std::string a3 = post("ops", "ambient A3_MARK");
  EXPECT_EQ(queuedIds(), (std::vector<std::string>{d1, m1, a1, a2, a3}));
  const std::string a4 = post("ops", "ambient A4_MARK");  // then channel traffic: the mention
  EXPECT_EQ(queuedIds(), (std::vector<std::string>{d1, a1, a2, a3, a4}));
  const std::string a5 = post("ops", "ambient A5_MARK");
  EXPECT_EQ(queuedIds(), (std::vector<std::string>{d1, a2, a3, a4, a5}));

  // The evicted records were acknowledged already: they end failed, with the reason.
  for (const auto& id : {q1, q2, m1, a1}) {
    auto t = tombstone(id);
    ASSERT_TRUE(t.has_value()) << id;
    EXPECT_EQ(t->state, journal::OwnerState::kFailed) << id;
    EXPECT_EQ(t->reason.rfind("local-inbox-evicted", 0), 0u) << t->reason;
  }
  SeatSnapshot snap = seat->snapshot();
  EXPECT_EQ(snap.counters.inboxEvicted, 4u);
  EXPECT_EQ(snap.counters.inboxRefused, 0u);
  EXPECT_EQ(snap.counters.inboxDropped, 0u);
  EXPECT_EQ(snap.queued, 5u);
}

// A directed arrival into an inbox full of directed messages is not acknowledged: nothing
// directed is dropped, and the broker redelivers it until the session drains the inbox; then it
// lands exactly once, not marked as a possible repeat.
TEST_F(ClaudeSeatTest, ADmIntoAnAllDirectedFullInboxWaitsAtTheBrokerAndLandsOnce) {
  auto seat = open(profile(), SeatMode::kRunning, [](SeatOptions& so) { so.inboxCapacity = 3; });
  ASSERT_NE(seat, nullptr);
  send("hold the turn FAKE_HANG");
  ASSERT_TRUE(eventually([&] { return inputsWith("FAKE_HANG") == 1; }));
  std::vector<std::string> queued;
  for (const char* text : {"one D1_MARK", "two D2_MARK", "three D3_MARK"})
    queued.push_back(send(text));
  ASSERT_TRUE(eventually([&] { return seat->snapshot().queued == 3; }));
  const std::string late = send("four LATE_MARK");
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.inboxRefused >= 1; }));
  SeatSnapshot snap = seat->snapshot();
  EXPECT_EQ(snap.counters.admitted, 4u);
  EXPECT_EQ(snap.counters.inboxEvicted, 0u);
  EXPECT_EQ(snap.counters.inboxDropped, 0u);
  EXPECT_EQ(snap.counters.failed, 0u);
  EXPECT_EQ(queuedIds(), queued);  // every queued DM kept
  EXPECT_FALSE(journalKnows(late));

  // The session drains the inbox (a page claims what is queued): the DM comes back and enters.
  mcp::Client client = mcpClient();
  auto first = client.callTool("shoal_inbox", {{"limit", 10}});
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  const std::string firstText = mcp::Client::textOf(*first);
  for (const char* mark : {"D1_MARK", "D2_MARK", "D3_MARK"})
    EXPECT_NE(firstText.find(mark), std::string::npos) << mark;
  EXPECT_EQ(firstText.find("LATE_MARK"), std::string::npos);
  // (The journal file, once the admission's commit returned: the snapshot may be ahead of it.)
  ASSERT_TRUE(eventually([&] { return queuedIds() == std::vector<std::string>{late}; },
                         std::chrono::seconds(10)));
  auto second = client.callTool("shoal_inbox", {{"limit", 10}});
  ASSERT_TRUE(second.isOk()) << second.status().toString();
  const std::string secondText = mcp::Client::textOf(*second);
  const size_t at = secondText.find("LATE_MARK");
  ASSERT_NE(at, std::string::npos) << secondText;
  EXPECT_EQ(secondText.find("LATE_MARK", at + 1), std::string::npos) << secondText;
  // The copies the full inbox refused never reached the runtime: not a possible repeat.
  EXPECT_EQ(secondText.find(", may repeat an earlier delivery"), std::string::npos) << secondText;
  ASSERT_TRUE(eventually([&] {
    auto t = tombstone(late);
    return t && t->state == journal::OwnerState::kSurfaced;
  }));
  snap = seat->snapshot();
  EXPECT_EQ(snap.counters.admitted, 5u);  // admitted once
  EXPECT_EQ(snap.counters.failed, 0u);
  EXPECT_EQ(snap.counters.inboxDropped, 0u);
}

// A channel post (a mention too) finding the inbox full of directed messages is the victim
// itself; a live copy has nothing to redeliver it, so it is dropped (acked, never journaled) and
// counted.
TEST_F(ClaudeSeatTest, AChannelPostIntoAnAllDirectedFullInboxIsDroppedAsALiveCopy) {
  SeatProfile p = profile();
  p.channels = {"ops"};
  auto seat = open(p, SeatMode::kRunning, [](SeatOptions& so) { so.inboxCapacity = 2; });
  ASSERT_NE(seat, nullptr);
  send("hold the turn FAKE_HANG");
  ASSERT_TRUE(eventually([&] { return inputsWith("FAKE_HANG") == 1; }));
  const std::vector<std::string> queued{send("one D1_MARK"), send("two D2_MARK")};
  ASSERT_TRUE(eventually([&] { return seat->snapshot().queued == 2; }));

  auto ambient = alice_->post("ops", "ambient DROP_MARK", {});
  ASSERT_TRUE(ambient.isOk()) << ambient.status().toString();
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.inboxDropped == 1; }));
  auto mention = alice_->post("ops", "for you MENTION_MARK", {"local.reviewer"});
  ASSERT_TRUE(mention.isOk()) << mention.status().toString();
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.inboxDropped == 2; }));

  SeatSnapshot snap = seat->snapshot();
  EXPECT_EQ(snap.counters.admitted, 3u);  // the three DMs only
  EXPECT_EQ(snap.counters.inboxEvicted, 0u);
  EXPECT_EQ(snap.counters.inboxRefused, 0u);
  EXPECT_EQ(queuedIds(), queued);
  EXPECT_FALSE(journalKnows(ambient->stored.messageId));
  EXPECT_FALSE(journalKnows(mention->stored.messageId));
}

// A sleeping seat whose inbox is full of backlog still wakes for a fresh DM: the DM waits at the
// broker, its refusal starts the runtime, the backlog drains, and then the DM lands.
TEST_F(ClaudeSeatTest, AFreshDmRefusedByAFullInboxStillColdStartsASleepingSeat) {
  {
    auto seat = open(profile(), SeatMode::kSleeping);  // provisions the DM durable
    ASSERT_NE(seat, nullptr);
    seat->stop();
  }
  send("old one OLD_MARK");
  send("old two OLD_MARK");
  auto seat = open(profile(), SeatMode::kSleeping, [](SeatOptions& so) { so.inboxCapacity = 2; });
  ASSERT_NE(seat, nullptr);
  ASSERT_TRUE(eventually([&] { return seat->snapshot().queued == 2; }));
  EXPECT_EQ(seat->snapshot().counters.launches, 0u);

  const std::string fresh = send("fresh FRESH_MARK");
  ASSERT_TRUE(eventually([&] { return inputsWith("FRESH_MARK") == 1; }, std::chrono::seconds(15)));
  SeatSnapshot snap = seat->snapshot();
  EXPECT_GE(snap.counters.inboxRefused, 1u);
  EXPECT_EQ(snap.counters.coldStarts, 1u);
  EXPECT_EQ(inputsWith("OLD_MARK"), 1u);
  auto inputs = fakeLines("input");
  ASSERT_GE(inputs.size(), 2u);
  EXPECT_NE(inputs[0].content.find("OLD_MARK"), std::string::npos);  // the backlog went first
  EXPECT_EQ(inputs[0].content.find("FRESH_MARK"), std::string::npos);
  ASSERT_TRUE(eventually([&] { return seat->snapshot().counters.surfaced == 3; }));
  EXPECT_EQ(inputsWith("FRESH_MARK"), 1u);
}

}  // namespace
}  // namespace shoal::daemon
