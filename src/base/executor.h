// Executor: where an object's work runs. Each stateful actor (a mesh endpoint, a seat, a
// plane) owns one executor and touches its state only from tasks posted to it, so it needs no
// locks (docs/architecture.md, Threads and ownership). Callbacks from other threads (nats.c,
// child readers, HTTP handlers) copy what they received and post() it.
//
// Two implementations:
// - EventLoopThread: one dedicated thread; timers run on the monotonic clock.
// - ManualExecutor: for tests; nothing runs until the test calls runReady() / advance(), and
//   time is a FakeClock the test moves. Deterministic: no threads, no sleeps.
//
// Ordering: tasks posted from one thread run in the order posted. A timer runs no earlier than
// its delay; timers due at the same instant run in the order they were set.
//
// Thread safety: post/postAfter/cancel may be called from any thread, including from tasks.
// Lifetime: tasks still queued when an EventLoopThread is stopped are dropped, not run.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "base/clock.h"

namespace shoal {

using Task = std::function<void()>;
using TimerId = uint64_t;

class Executor {
 public:
  virtual ~Executor() = default;
  virtual void post(Task task) = 0;
  // Runs `task` once `delay` has passed. Returns an id for cancel().
  virtual TimerId postAfter(std::chrono::nanoseconds delay, Task task) = 0;
  // A timer that has not started yet will not run. Cancelling a run or unknown id is a no-op.
  virtual void cancel(TimerId id) = 0;
  virtual const Clock& clock() const = 0;
  // True on the executor's own thread (ManualExecutor: while it is running tasks).
  virtual bool inExecutor() const = 0;
};

// Shared queue + timer bookkeeping used by both implementations.
class TaskQueue {
 public:
  void push(Task task);
  TimerId pushTimer(int64_t dueNs, Task task);
  void cancel(TimerId id);
  // Pops the next runnable task (ready tasks first, then timers due at or before nowNs).
  bool popRunnable(int64_t nowNs, Task* out);
  // Monotonic time of the earliest timer, or -1.
  int64_t nextDueNs() const;
  bool hasReady() const { return !ready_.empty(); }

 private:
  std::deque<Task> ready_;
  std::map<std::pair<int64_t, TimerId>, Task> timers_;
  std::map<TimerId, int64_t> dueById_;
  TimerId nextId_ = 1;
};

class EventLoopThread final : public Executor {
 public:
  explicit EventLoopThread(const Clock& clock = Clock::real());
  ~EventLoopThread() override;  // stop()s
  EventLoopThread(const EventLoopThread&) = delete;
  EventLoopThread& operator=(const EventLoopThread&) = delete;

  void post(Task task) override;
  TimerId postAfter(std::chrono::nanoseconds delay, Task task) override;
  void cancel(TimerId id) override;
  const Clock& clock() const override { return clock_; }
  bool inExecutor() const override { return std::this_thread::get_id() == thread_.get_id(); }

  // Stops the thread after the task running now; queued tasks are dropped. Idempotent; must
  // not be called from the loop's own thread.
  void stop();

 private:
  void loop();

  const Clock& clock_;
  std::mutex mu_;
  std::condition_variable cv_;
  TaskQueue queue_;        // guarded by mu_
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

class ManualExecutor final : public Executor {
 public:
  explicit ManualExecutor(FakeClock& clock) : clock_(clock) {}

  void post(Task task) override;
  TimerId postAfter(std::chrono::nanoseconds delay, Task task) override;
  void cancel(TimerId id) override;
  const Clock& clock() const override { return clock_; }
  bool inExecutor() const override { return running_; }

  // Runs every task that is ready now (including ones they post). Returns how many ran.
  int runReady();
  // Moves the fake clock forward by `d`, running each timer at its due time, in order.
  int advance(std::chrono::nanoseconds d);

 private:
  FakeClock& clock_;
  std::mutex mu_;
  TaskQueue queue_;  // guarded by mu_
  bool running_ = false;
};

}  // namespace shoal
