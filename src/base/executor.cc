#include "base/executor.h"

#include "base/assert.h"

namespace shoal {

void TaskQueue::push(Task task) {
  ready_.push_back(std::move(task));
}

TimerId TaskQueue::pushTimer(int64_t dueNs, Task task) {
  TimerId id = nextId_++;
  timers_.emplace(std::make_pair(dueNs, id), std::move(task));
  dueById_.emplace(id, dueNs);
  return id;
}

void TaskQueue::cancel(TimerId id) {
  auto it = dueById_.find(id);
  if (it == dueById_.end()) return;
  timers_.erase({it->second, id});
  dueById_.erase(it);
}

bool TaskQueue::popRunnable(int64_t nowNs, Task* out) {
  if (!ready_.empty()) {
    *out = std::move(ready_.front());
    ready_.pop_front();
    return true;
  }
  if (!timers_.empty() && timers_.begin()->first.first <= nowNs) {
    auto node = timers_.extract(timers_.begin());
    dueById_.erase(node.key().second);
    *out = std::move(node.mapped());
    return true;
  }
  return false;
}

int64_t TaskQueue::nextDueNs() const {
  return timers_.empty() ? -1 : timers_.begin()->first.first;
}

EventLoopThread::EventLoopThread(const Clock& clock) : clock_(clock) {
  thread_ = std::thread([this] { loop(); });
}

EventLoopThread::~EventLoopThread() {
  stop();
}

void EventLoopThread::post(Task task) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    queue_.push(std::move(task));
  }
  cv_.notify_one();
}

TimerId EventLoopThread::postAfter(std::chrono::nanoseconds delay, Task task) {
  TimerId id;
  {
    std::lock_guard lock(mu_);
    id = queue_.pushTimer(clock_.monotonicNs() + delay.count(), std::move(task));
  }
  cv_.notify_one();
  return id;
}

void EventLoopThread::cancel(TimerId id) {
  std::lock_guard lock(mu_);
  queue_.cancel(id);
}

void EventLoopThread::stop() {
  SHOAL_CHECK(!inExecutor(), "EventLoopThread::stop() from its own thread would deadlock");
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void EventLoopThread::loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    Task task;
    if (queue_.popRunnable(clock_.monotonicNs(), &task)) {
      lock.unlock();
      task();
      task = nullptr;  // destroy captures outside the lock
      lock.lock();
      continue;
    }
    int64_t due = queue_.nextDueNs();
    if (due < 0) {
      cv_.wait(lock);
    } else {
      cv_.wait_for(lock, std::chrono::nanoseconds(due - clock_.monotonicNs()));
    }
  }
}

void ManualExecutor::post(Task task) {
  std::lock_guard lock(mu_);
  queue_.push(std::move(task));
}

TimerId ManualExecutor::postAfter(std::chrono::nanoseconds delay, Task task) {
  std::lock_guard lock(mu_);
  return queue_.pushTimer(clock_.monotonicNs() + delay.count(), std::move(task));
}

void ManualExecutor::cancel(TimerId id) {
  std::lock_guard lock(mu_);
  queue_.cancel(id);
}

int ManualExecutor::runReady() {
  int ran = 0;
  for (;;) {
    Task task;
    {
      std::lock_guard lock(mu_);
      if (!queue_.popRunnable(clock_.monotonicNs(), &task)) return ran;
    }
    running_ = true;
    task();
    running_ = false;
    ++ran;
  }
}

int ManualExecutor::advance(std::chrono::nanoseconds d) {
  const int64_t end = clock_.monotonicNs() + d.count();
  int ran = runReady();
  for (;;) {
    int64_t due;
    {
      std::lock_guard lock(mu_);
      due = queue_.nextDueNs();
    }
    if (due < 0 || due > end) break;
    int64_t now = clock_.monotonicNs();
    if (due > now) clock_.advance(std::chrono::nanoseconds(due - now));
    ran += runReady();
  }
  int64_t now = clock_.monotonicNs();
  if (end > now) clock_.advance(std::chrono::nanoseconds(end - now));
  return ran + runReady();
}

}  // namespace shoal
