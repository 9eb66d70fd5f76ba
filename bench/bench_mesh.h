// BenchMesh: a throw-away mesh for one benchmark run — a real nats-server (JetStream on, free
// port, private temporary store; the test harness's TestNatsServer), the space provisioned with
// planes::ensureSpace, and a planes::ManagerPlane serving the provisioning rail in-process, so
// mesh::Endpoint::open works against it. Plus the few helpers the benchmarks share: a steady
// clock in microseconds, latency summaries and fixed-width table rows.
//
// Benchmarks measure; they never assert (bench/README.md). A failed setup step prints the
// Status and exits the process: a benchmark that cannot run has nothing to report.
//
// Thread safety: BenchMesh is used by the main thread only; the helpers are pure functions.
// Lifetime: endpoints and connections opened against url() must be closed before the mesh is
// destroyed (the destructor stops the manager plane, then the server, then removes the store).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "planes/manager_plane.h"
#include "testing/nats_server.h"
#include "transport/connection.h"
#include "transport/jetstream.h"

namespace shoal::bench {

// Prints `what: status` to stderr and exits(1) when `status` is not OK.
void orDie(const Status& status, std::string_view what);

template <typename T>
T orDie(Result<T> result, std::string_view what) {
  if (!result.isOk()) orDie(result.status(), what);
  return std::move(result).value();
}

class BenchMesh {
 public:
  // Starts the server, ensures `space` and starts its manager plane.
  static std::unique_ptr<BenchMesh> start(std::string space);
  ~BenchMesh();
  BenchMesh(const BenchMesh&) = delete;
  BenchMesh& operator=(const BenchMesh&) = delete;

  std::string url() const { return server_->url(); }
  pid_t serverPid() const { return server_->pid(); }
  const std::string& space() const { return space_; }
  // The manager's JetStream context (setup work: provisioning, consumer info).
  transport::JetStream& js() { return *js_; }

 private:
  BenchMesh() = default;

  std::string space_;
  std::unique_ptr<testing::TestNatsServer> server_;
  std::unique_ptr<transport::Connection> conn_;
  std::optional<transport::JetStream> js_;
  std::unique_ptr<planes::ManagerPlane> manager_;
};

// Microseconds on std::chrono::steady_clock (comparable across threads of one process).
inline int64_t nowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct LatencySummary {
  size_t n = 0;
  double p50Ms = 0;
  double p99Ms = 0;
  double maxMs = 0;
  double meanMs = 0;
};

// Nearest-rank percentiles of `samplesUs` (microseconds), reported in milliseconds.
LatencySummary summarize(std::vector<int64_t> samplesUs);

// "a / b" as text ("—" when b is 0), e.g. "3.4×".
std::string ratio(double a, double b);

// CPU seconds (utime + stime) consumed so far by `pid`, from /proc/<pid>/stat; 0 when unreadable.
double processCpuSeconds(pid_t pid);

}  // namespace shoal::bench
