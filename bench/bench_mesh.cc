#include "bench_mesh.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <unistd.h>

#include "planes/space_provisioner.h"

namespace shoal::bench {
namespace {

// The running server's pid, so a failure that exits the process does not leave it behind
// (std::exit runs no destructor of the mesh).
std::atomic<pid_t> liveServerPid{0};

}  // namespace

void orDie(const Status& status, std::string_view what) {
  if (status.isOk()) return;
  std::fprintf(stderr, "bench setup failed: %.*s: %s\n", static_cast<int>(what.size()), what.data(),
               status.toString().c_str());
  if (pid_t pid = liveServerPid.load(); pid > 0) kill(pid, SIGTERM);
  std::exit(1);
}

std::unique_ptr<BenchMesh> BenchMesh::start(std::string space) {
  std::unique_ptr<BenchMesh> mesh(new BenchMesh());
  mesh->space_ = std::move(space);
  mesh->server_ = orDie(testing::TestNatsServer::start(), "starting nats-server");
  liveServerPid.store(mesh->server_->pid());
  transport::ConnectOptions options;
  options.servers = {mesh->server_->url()};
  options.name = "bench manager";
  options.sendAsap = true;  // the manager plane answers requests (manager_plane.h)
  options.onEvent = [m = mesh.get()](const transport::ConnectionEvent& event) {
    if (m->manager_) m->manager_->onConnectionEvent(event);
  };
  mesh->conn_ = orDie(transport::Connection::connect(std::move(options)), "manager connect");
  mesh->js_.emplace(orDie(transport::JetStream::create(*mesh->conn_), "manager JetStream"));
  orDie(planes::ensureSpace(*mesh->js_, mesh->space_).status(), "ensureSpace");
  mesh->manager_ =
      orDie(planes::ManagerPlane::start(*mesh->conn_, *mesh->js_, mesh->space_), "manager plane");
  return mesh;
}

BenchMesh::~BenchMesh() {
  manager_.reset();
  js_.reset();
  conn_.reset();
  liveServerPid.store(0);
  server_.reset();
}

LatencySummary summarize(std::vector<int64_t> samplesUs) {
  LatencySummary s;
  s.n = samplesUs.size();
  if (samplesUs.empty()) return s;
  std::sort(samplesUs.begin(), samplesUs.end());
  auto rank = [&](double p) {
    // Nearest rank: the smallest sample with at least p of the samples at or below it.
    size_t i = static_cast<size_t>(p * static_cast<double>(samplesUs.size()) + 0.999999);
    i = std::clamp<size_t>(i, 1, samplesUs.size());
    return static_cast<double>(samplesUs[i - 1]) / 1000.0;
  };
  s.p50Ms = rank(0.50);
  s.p99Ms = rank(0.99);
  s.maxMs = static_cast<double>(samplesUs.back()) / 1000.0;
  double sum = 0;
  for (int64_t v : samplesUs)
    sum += static_cast<double>(v);
  s.meanMs = sum / static_cast<double>(samplesUs.size()) / 1000.0;
  return s;
}

std::string ratio(double a, double b) {
  if (b <= 0) return "—";
  return fmt::format("{:.2f}×", a / b);
}

double processCpuSeconds(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(in, line)) return 0;
  // Field 2 (comm) may contain spaces; everything after its closing ')' is space-separated,
  // starting at field 3. utime and stime are fields 14 and 15, in clock ticks.
  size_t close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(line.substr(close + 1));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int index = 3; rest >> field; ++index) {
    if (index == 14) utime = std::strtoull(field.c_str(), nullptr, 10);
    if (index == 15) {
      stime = std::strtoull(field.c_str(), nullptr, 10);
      break;
    }
  }
  long ticks = sysconf(_SC_CLK_TCK);
  if (ticks <= 0) return 0;
  return static_cast<double>(utime + stime) / static_cast<double>(ticks);
}

}  // namespace shoal::bench
