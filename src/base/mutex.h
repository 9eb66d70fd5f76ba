// Mutex, MutexLock and CondVar with clang thread-safety annotations (-Wthread-safety), so every
// `SHOAL_GUARDED_BY` member is checked by the compiler under clang; under gcc the annotation
// macros expand to nothing.
//
// CondVar waits on the real monotonic clock: a condition variable cannot wait on a FakeClock,
// so its timeouts are bounds on blocking, never logical time.
//
// Thread safety: a Mutex is a mutex; a CondVar may be notified from any thread. MutexLock is a
// scoped lock used by one thread.
// Lifetime: a Mutex must outlive every MutexLock and every CondVar wait on it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define SHOAL_TSA(x) __attribute__((x))
#else
#define SHOAL_TSA(x)
#endif
#define SHOAL_CAPABILITY(x) SHOAL_TSA(capability(x))
#define SHOAL_SCOPED_CAPABILITY SHOAL_TSA(scoped_lockable)
#define SHOAL_GUARDED_BY(x) SHOAL_TSA(guarded_by(x))
#define SHOAL_REQUIRES(...) SHOAL_TSA(requires_capability(__VA_ARGS__))
#define SHOAL_EXCLUDES(...) SHOAL_TSA(locks_excluded(__VA_ARGS__))
#define SHOAL_ACQUIRE(...) SHOAL_TSA(acquire_capability(__VA_ARGS__))
#define SHOAL_RELEASE(...) SHOAL_TSA(release_capability(__VA_ARGS__))

namespace shoal {

class CondVar;

class SHOAL_CAPABILITY("mutex") Mutex {
 public:
  void lock() SHOAL_ACQUIRE() { mu_.lock(); }
  void unlock() SHOAL_RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

class SHOAL_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) SHOAL_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() SHOAL_RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

class CondVar {
 public:
  // Atomically releases `mu`, blocks until notified (or spuriously), re-acquires `mu`.
  void wait(Mutex& mu) SHOAL_REQUIRES(mu);
  // As wait(), but also returns once `at` passes. Returns false iff `at` has passed.
  bool waitUntil(Mutex& mu, std::chrono::steady_clock::time_point at) SHOAL_REQUIRES(mu);
  void notifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace shoal
