// The daemon's control socket and seat registry against a real nats-server.
#include "daemon/daemon_service.h"

#include <cstdio>
#include <cstdlib>

#include <boost/json.hpp>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/file_system.h"
#include "testing/eventually.h"
#include "testing/managed_space.h"
#include "testing/temp_dir.h"

#include <gtest/gtest.h>

namespace shoal::daemon {
namespace {

namespace json = boost::json;

class DaemonServiceTest : public shoal::testing::ManagedSpaceTest {
 protected:
  void SetUp() override {
    ManagedSpaceTest::SetUp();
    if (HasFatalFailure()) return;
    auto dir = shoal::testing::TempDir::create("daemon");
    ASSERT_TRUE(dir.isOk());
    dir_.emplace(std::move(dir).value());
    DaemonOptions options;
    options.space = "main";
    options.url = server_->url();
    options.socketPath = dir_->join("run/main.sock");
    options.profileKeyFile = dir_->join("secrets/main-seats.key");
    auto service = DaemonService::start(options);
    ASSERT_TRUE(service.isOk()) << service.status().toString();
    service_ = std::move(service).value();
  }

  void TearDown() override {
    service_.reset();
    ManagedSpaceTest::TearDown();
  }

  Result<json::value> call(const std::string& op, const std::string& args = "{}") {
    SHOAL_ASSIGN_OR_RETURN(
        std::string out,
        controlRequest(service_->socketPath(), ControlRequest{op, args}, std::chrono::seconds(5)));
    return json::parse(out);
  }

  std::optional<shoal::testing::TempDir> dir_;
  std::unique_ptr<DaemonService> service_;
};

TEST_F(DaemonServiceTest, SocketIsOwnerOnly) {
  struct stat st {};
  ASSERT_EQ(::stat(service_->socketPath().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::string dir = service_->socketPath().substr(0, service_->socketPath().rfind('/'));
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

// A seat's cwd must exist (or be made on request), and no two seats share one: they would share
// one journal file, and the second would fail to open with a lock error.
TEST_F(DaemonServiceTest, ACwdMustExistAndBelongToOneSeat) {
  auto add = [&](const std::string& id, const std::string& cwd, bool create) {
    return call("seat.add", R"({"name":")" + id + R"(","id":"local.)" + id +
                                R"(","runtime":"exec","command":["/bin/cat"],"cwd":")" + cwd +
                                R"(",)" + (create ? R"("createCwd":true,)" : "") +
                                R"("channels":[],"env":[]})");
  };
  const std::string missing = dir_->join("not/there/yet");
  auto refused = add("one", missing, false);
  EXPECT_EQ(refused.status().reason(), "bad-cwd");
  EXPECT_NE(refused.status().message().find("--create-cwd"), std::string::npos);
  EXPECT_FALSE(FileSystem::posix().exists(missing));
  EXPECT_EQ(call("seat.list")->as_array().size(), 0u);
  EXPECT_EQ(add("one", "/etc/hostname", false).status().reason(), "bad-cwd");

  ASSERT_TRUE(add("one", missing, true).isOk());
  EXPECT_TRUE(FileSystem::posix().exists(missing));
  auto shared = add("two", missing, false);
  EXPECT_EQ(shared.status().reason(), "cwd-in-use");
  EXPECT_NE(shared.status().message().find("local.one"), std::string::npos);
  EXPECT_EQ(call("seat.list")->as_array().size(), 1u);
}

// A full disk poisons a seat's journal (nothing is lost: the DM stays unacknowledged at the
// broker). Once space is freed the seat heals by itself — no `seat stop`/`seat start` — and the
// DM surfaces. A real full disk: a tiny tmpfs mounted over the seat's .shoal (needs root).
TEST_F(DaemonServiceTest, AHealedDiskHealsTheSeat) {
  const std::string cwd = dir_->join("full");
  const std::string files = cwd + "/.shoal";
  ASSERT_TRUE(FileSystem::posix().createDirs(files).isOk());
  if (std::system(("mount -t tmpfs -o size=512k tmpfs " + files + " 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "mounting a tmpfs needs root; the full-disk test cannot run here";
  struct Unmount {
    std::string path;
    ~Unmount() { (void)!std::system(("umount -l " + path).c_str()); }
  } unmount{files};
  auto added = call("seat.add", R"({"name":"Full","id":"local.full","runtime":"exec",)"
                                R"("command":["/bin/cat"],"cwd":")" +
                                    cwd + R"(","channels":[],"env":[]})");
  ASSERT_TRUE(added.isOk()) << added.status().toString();
  auto row = [&]() -> json::object {
    auto st = call("status");
    if (!st.isOk()) return {};
    for (const auto& s : st->at("seats").as_array())
      if (s.at("id").as_string() == "local.full") return s.as_object();
    return {};
  };
  ASSERT_TRUE(shoal::testing::eventually([&] { return row()["running"] == true; }));

  // Fill the disk, then send.
  const std::string filler = files + "/filler";
  (void)!std::system(("dd if=/dev/zero of=" + filler + " bs=4k 2>/dev/null").c_str());
  auto alice = openSender("alice");
  ASSERT_NE(alice, nullptr);
  ASSERT_TRUE(alice->sendDirect("local.full", "written while the disk was full").isOk());
  std::string seen;
  ASSERT_TRUE(shoal::testing::eventually(
      [&] {
        json::object r = row();
        seen = json::serialize(r);
        if (auto* j = r.if_contains("journal"))
          return j->at("poisoned").as_string().find("disk-full") != std::string::npos;
        if (auto* f = r.if_contains("openFailure")) return f->at("reason") == "disk-full";
        return false;
      },
      std::chrono::seconds(20)))
      << seen;

  // Free the space: the seat comes back by itself and the DM surfaces, once.
  ASSERT_EQ(::unlink(filler.c_str()), 0);
  ASSERT_TRUE(shoal::testing::eventually(
      [&] {
        return FileSystem::posix()
                   .readFile(files + "/runtime.log")
                   .valueOr("")
                   .find("written while the disk was full") != std::string::npos;
      },
      std::chrono::seconds(45)))
      << json::serialize(row());
  json::object healed = row();
  EXPECT_EQ(healed.count("journal"), 0u) << json::serialize(healed);
  EXPECT_EQ(healed.count("openFailure"), 0u) << json::serialize(healed);
  EXPECT_EQ(healed["running"], true);
  alice.reset();
}

TEST_F(DaemonServiceTest, AddListShowRemove) {
  auto added = call("seat.add", R"({"name":"Reviewer","id":"local.reviewer","runtime":"exec",)"
                                R"("command":["/bin/cat"],"createCwd":true,"cwd":")" +
                                    dir_->join("reviewer") +
                                    R"(","role":"reviewer",)"
                                    R"("channels":["team.backend"],"env":[]})");
  ASSERT_TRUE(added.isOk()) << added.status().toString();
  const json::object& snap = added->as_object();
  EXPECT_GT(snap.at("revision").as_int64(), 0);
  EXPECT_EQ(snap.at("profile").at("id").as_string(), "local.reviewer");
  EXPECT_EQ(snap.at("profile").at("lifecycleUid").as_string().size(), 26u);

  auto again = call("seat.add", R"({"name":"Reviewer","id":"local.reviewer","runtime":"exec",)"
                                R"("command":["/bin/cat"],"cwd":"/tmp/r","channels":[],"env":[]})");
  EXPECT_EQ(again.status().reason(), "seat-exists");

  auto list = call("seat.list");
  ASSERT_TRUE(list.isOk());
  ASSERT_EQ(list->as_array().size(), 1u);
  auto shown = call("seat.show", R"({"id":"local.reviewer"})");
  ASSERT_TRUE(shown.isOk());
  EXPECT_EQ(shown->at("revision"), snap.at("revision"));

  // Removing at a revision it is no longer at is refused; at the right one it works.
  int64_t rev = snap.at("revision").as_int64();
  EXPECT_EQ(
      call("seat.rm", R"({"id":"local.reviewer","revision":)" + std::to_string(rev + 99) + "}")
          .status()
          .reason(),
      "stale-revision");
  ASSERT_TRUE(call("seat.rm", R"({"id":"local.reviewer"})").isOk());
  EXPECT_EQ(call("seat.show", R"({"id":"local.reviewer"})").status().reason(), "unknown-seat");
  auto status = call("status");
  ASSERT_TRUE(status.isOk());
  EXPECT_EQ(status->at("seats").as_array().size(), 0u);
}

// A registered exec seat runs; stop and start control it; the status reports it.
TEST_F(DaemonServiceTest, SeatsRunAndAreControlled) {
  auto added = call("seat.add", R"({"name":"Echo","id":"local.echo","runtime":"exec",)"
                                R"("command":["/bin/cat"],"createCwd":true,"cwd":")" +
                                    dir_->join("echo") + R"(","channels":[],"env":[]})");
  ASSERT_TRUE(added.isOk()) << added.status().toString();
  EXPECT_TRUE(added->at("running").as_bool()) << json::serialize(*added);
  auto status = call("status");
  ASSERT_TRUE(status.isOk());
  ASSERT_EQ(status->at("seats").as_array().size(), 1u);
  EXPECT_TRUE(status->at("seats").as_array()[0].at("running").as_bool());

  auto stopped = call("seat.stop", R"({"id":"local.echo"})");
  ASSERT_TRUE(stopped.isOk());
  EXPECT_FALSE(stopped->at("running").as_bool());
  EXPECT_EQ(stopped->at("desired").as_string(), "stopped");
  EXPECT_EQ(stopped->at("state").as_string(), "stopped");
  // The desired state is part of the profile: a new revision, read back.
  auto shown = call("seat.show", R"({"id":"local.echo"})");
  ASSERT_TRUE(shown.isOk());
  EXPECT_EQ(shown->at("profile").at("state").as_string(), "stopped");
  EXPECT_GT(shown->at("revision").as_int64(), added->at("revision").as_int64());

  auto slept = call("seat.sleep", R"({"id":"local.echo"})");
  ASSERT_TRUE(slept.isOk()) << slept.status().toString();
  EXPECT_FALSE(slept->at("running").as_bool());
  EXPECT_EQ(slept->at("state").as_string(), "sleeping");
  auto started = call("seat.start", R"({"id":"local.echo"})");
  ASSERT_TRUE(started.isOk()) << started.status().toString();
  EXPECT_TRUE(started->at("running").as_bool());
  EXPECT_EQ(started->at("desired").as_string(), "running");

  // A seat whose runtime program is missing is refused with the install hint, and nothing is
  // registered (it would only park later).
  for (const char* command : {R"(["/nonexistent/opencode","serve"])"}) {
    auto broken =
        call("seat.add", std::string(R"({"name":"C","id":"local.c","runtime":"opencode",)") +
                             R"("command":)" + command + R"(,"createCwd":true,"cwd":")" +
                             dir_->join("c") + R"(","channels":[],"env":[]})");
    ASSERT_FALSE(broken.isOk());
    EXPECT_EQ(broken.status().reason(), "runtime-missing");
    EXPECT_NE(broken.status().message().find("npm install -g opencode-ai"), std::string::npos)
        << broken.status().message();
  }
  EXPECT_EQ(call("seat.show", R"({"id":"local.c"})").status().reason(), "unknown-seat");
}

// seat.mcp names an open seat's MCP client config (what `shoal mcp --seat` reads); a stopped or
// unknown seat has none, and the error says so.
TEST_F(DaemonServiceTest, SeatMcpNamesTheConfigOfAnOpenSeatOnly) {
  auto added = call("seat.add", R"({"name":"Echo","id":"local.echo","runtime":"exec",)"
                                R"("command":["/bin/cat"],"createCwd":true,"cwd":")" +
                                    dir_->join("echo") + R"(","channels":[],"env":[]})");
  ASSERT_TRUE(added.isOk()) << added.status().toString();
  auto mcp = call("seat.mcp", R"({"id":"local.echo"})");
  ASSERT_TRUE(mcp.isOk()) << mcp.status().toString();
  const std::string config(mcp->at("config").as_string());
  EXPECT_EQ(config, dir_->join("echo") + "/.shoal/mcp.json");
  struct stat st {};
  ASSERT_EQ(::stat(config.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);  // the token is the seat's identity

  ASSERT_TRUE(call("seat.stop", R"({"id":"local.echo"})").isOk());
  EXPECT_EQ(call("seat.mcp", R"({"id":"local.echo"})").status().reason(), "seat-not-running");
  EXPECT_EQ(call("seat.mcp", R"({"id":"local.nobody"})").status().reason(), "unknown-seat");
  EXPECT_EQ(call("seat.mcp", R"({"id":"local.echo","extra":1})").status().reason(),
            "unknown-argument");
}

TEST_F(DaemonServiceTest, BadRequestsAreNamedErrors) {
  EXPECT_EQ(call("frobnicate").status().reason(), "unknown-op");
  EXPECT_EQ(call("seat.list", R"({"x":1})").status().reason(), "unknown-argument");
  EXPECT_EQ(call("seat.add", R"({"name":"x","lifecycleUid":"abc"})").status().reason(),
            "unknown-argument");
  EXPECT_EQ(call("seat.add", R"({"name":"x","id":"local.x","runtime":"exec","cwd":"/t",)"
                             R"("channels":[],"env":[],"colour":"red"})")
                .status()
                .reason(),
            "bad-seat-profile");
  EXPECT_EQ(call("seat.show", "{}").status().reason(), "missing-id");
}

// Clients that connect and send nothing (or connect by the dozen) delay nobody: `status` is
// answered at once while they sit there; each idle one is told why it was closed; beyond the
// connection bound a client is refused by name; shutdown does not wait on them.
TEST_F(DaemonServiceTest, IdleClientsDoNotHoldTheControlSocket) {
  auto connectIdle = [&] {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", service_->socketPath().c_str());
    EXPECT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
    return fd;
  };
  std::vector<int> idle;
  for (size_t i = 0; i < kMaxControlConnections; ++i)
    idle.push_back(connectIdle());
  // One more than the bound is refused by name at once.
  int extra = connectIdle();
  char buf[512] = {};
  ssize_t n = ::recv(extra, buf, sizeof buf - 1, 0);
  EXPECT_GT(n, 0);
  EXPECT_NE(std::string(buf).find("control-busy"), std::string::npos) << buf;
  ::close(extra);
  // The idle ones are told after the first-byte bound; then the socket serves normally.
  n = ::recv(idle.front(), buf, sizeof buf - 1, 0);
  ASSERT_GT(n, 0);
  buf[n] = '\0';
  EXPECT_NE(std::string(buf).find("control-idle"), std::string::npos) << buf;
  for (int fd : idle)
    ::close(fd);
  EXPECT_TRUE(shoal::testing::eventually([&] { return call("status").isOk(); }));

  // A single idle client beside a real request: the request is answered well before its bound.
  int one = connectIdle();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(call("status").isOk());
  EXPECT_LT(std::chrono::steady_clock::now() - start, kControlFirstByte);
  // Shutdown with an idle client connected is prompt too.
  const auto stopAt = std::chrono::steady_clock::now();
  service_.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - stopAt, std::chrono::seconds(4));
  ::close(one);
}

TEST_F(DaemonServiceTest, SecondDaemonOnTheSocketIsRefused) {
  DaemonOptions options;
  options.space = "main";
  options.url = server_->url();
  options.socketPath = service_->socketPath();
  options.profileKeyFile = dir_->join("secrets/main-seats.key");
  auto second = DaemonService::start(options);
  ASSERT_FALSE(second.isOk());
  EXPECT_EQ(second.status().reason(), "daemon-running");
  // The first one still answers.
  EXPECT_TRUE(call("status").isOk());
}

TEST_F(DaemonServiceTest, NoDaemonNamesTheRemedy) {
  std::string path = service_->socketPath();
  service_.reset();
  auto r = controlRequest(path, ControlRequest{"status", "{}"}, std::chrono::seconds(1));
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().reason(), "daemon-not-running");
  EXPECT_NE(r.status().message().find("shoal daemon"), std::string::npos);
}

}  // namespace
}  // namespace shoal::daemon
