// eventually(): waits for a condition with a deadline, by polling it with short pauses.
//
// For tests that must observe something another thread or process makes true (a message
// arrived, a process exited). Never a fixed sleep: it returns as soon as the condition holds,
// and the deadline only bounds a failure. Prefer waiting on a real event (a condition
// variable, EventQueue below) when one exists.
//
// Thread safety: eventually() runs on the calling thread; EventQueue may be pushed from any
// thread and popped from one.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace shoal::testing {

// Default bound for a test wait: generous, because a loaded 2-core CI machine is slow, and
// only reached when the test fails anyway.
inline constexpr std::chrono::milliseconds kDefaultWait{10000};

// True as soon as `condition()` is true; false if it is still false after `timeout`.
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = kDefaultWait,
                       std::chrono::milliseconds pollEvery = std::chrono::milliseconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pollEvery);
  }
}

// A queue that callbacks (nats.c threads) push into and the test pops from with a deadline.
template <typename T>
class EventQueue {
 public:
  void push(T value) {
    {
      std::lock_guard lock(mu_);
      items_.push_back(std::move(value));
    }
    cv_.notify_all();
  }

  // The next item, or nullopt after `timeout`.
  std::optional<T> pop(std::chrono::milliseconds timeout = kDefaultWait) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, timeout, [&] { return !items_.empty(); })) return std::nullopt;
    T value = std::move(items_.front());
    items_.pop_front();
    return value;
  }

  // The first item satisfying `match` (earlier non-matching items are dropped), or nullopt.
  std::optional<T> popUntil(const std::function<bool(const T&)>& match,
                            std::chrono::milliseconds timeout = kDefaultWait) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() < 0) return std::nullopt;
      auto item = pop(left);
      if (!item) return std::nullopt;
      if (match(*item)) return item;
    }
  }

  size_t size() const {
    std::lock_guard lock(mu_);
    return items_.size();
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> items_;
};

}  // namespace shoal::testing
