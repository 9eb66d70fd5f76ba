// Mutex and MutexLock with clang thread-safety annotations (-Wthread-safety), for the journal.
//
// The annotation macros expand to nothing on compilers without the analysis (gcc), so the
// default build sees plain code. They are defined only if nobody defined them first.
//
// Thread safety: a Mutex is a mutex. MutexLock is a scoped lock used by one thread.
// Lifetime: a Mutex must outlive every MutexLock on it.
#pragma once

#include <mutex>

#if defined(__clang__)
#define SHOAL_JOURNAL_TSA(x) __attribute__((x))
#else
#define SHOAL_JOURNAL_TSA(x)
#endif
#ifndef SHOAL_CAPABILITY
#define SHOAL_CAPABILITY(x) SHOAL_JOURNAL_TSA(capability(x))
#endif
#ifndef SHOAL_SCOPED_CAPABILITY
#define SHOAL_SCOPED_CAPABILITY SHOAL_JOURNAL_TSA(scoped_lockable)
#endif
#ifndef SHOAL_GUARDED_BY
#define SHOAL_GUARDED_BY(x) SHOAL_JOURNAL_TSA(guarded_by(x))
#endif
#ifndef SHOAL_REQUIRES
#define SHOAL_REQUIRES(...) SHOAL_JOURNAL_TSA(requires_capability(__VA_ARGS__))
#endif
#ifndef SHOAL_EXCLUDES
#define SHOAL_EXCLUDES(...) SHOAL_JOURNAL_TSA(locks_excluded(__VA_ARGS__))
#endif
#ifndef SHOAL_ACQUIRE
#define SHOAL_ACQUIRE(...) SHOAL_JOURNAL_TSA(acquire_capability(__VA_ARGS__))
#endif
#ifndef SHOAL_RELEASE
#define SHOAL_RELEASE(...) SHOAL_JOURNAL_TSA(release_capability(__VA_ARGS__))
#endif

namespace shoal::journal {

class SHOAL_CAPABILITY("mutex") Mutex {
 public:
  void lock() SHOAL_ACQUIRE() { mu_.lock(); }
  void unlock() SHOAL_RELEASE() { mu_.unlock(); }

 private:
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

}  // namespace shoal::journal
