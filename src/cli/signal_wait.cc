#include "cli/signal_wait.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

namespace shoal::cli {
namespace {

sigset_t stopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

void blockStopSignals() {
  sigset_t set = stopSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

std::optional<int> waitForStopSignal(std::chrono::milliseconds timeout) {
  sigset_t set = stopSignals();
  timespec ts;
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  ts.tv_nsec = static_cast<long>((timeout.count() % 1000) * 1000000);
  int sig = sigtimedwait(&set, nullptr, &ts);
  if (sig > 0) return sig;
  return std::nullopt;
}

}  // namespace shoal::cli
