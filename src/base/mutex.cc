#include "base/mutex.h"

namespace shoal {

void CondVar::wait(Mutex& mu) {
  std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
  cv_.wait(lock);
  lock.release();  // still held: ownership stays with the caller's MutexLock
}

bool CondVar::waitUntil(Mutex& mu, std::chrono::steady_clock::time_point at) {
  std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
  cv_.wait_until(lock, at);
  lock.release();
  return std::chrono::steady_clock::now() < at;
}

}  // namespace shoal
