// Clock: the only way Shoal code reads time, so tests can drive it.
//
// Two readings: `wallMs()` is Unix epoch milliseconds (the wire's `ts`, presence ages), and
// `monotonicNs()` is a steady counter for deadlines and intervals (never goes back).
// Production code takes a `Clock&`; tests pass a FakeClock and move it by hand.
//
// Thread safety: every method may be called from any thread.
// Lifetime: a Clock must outlive everything it was handed to.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace shoal {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t wallMs() const = 0;
  virtual int64_t monotonicNs() const = 0;

  // The process-wide real clock.
  static Clock& real();
};

class RealClock final : public Clock {
 public:
  int64_t wallMs() const override;
  int64_t monotonicNs() const override;
};

// A clock that moves only when told. Starts at the given wall time; monotonic starts at 0.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t startWallMs = 1'700'000'000'000) : wallMs_(startWallMs) {}

  int64_t wallMs() const override { return wallMs_.load(std::memory_order_relaxed); }
  int64_t monotonicNs() const override { return monoNs_.load(std::memory_order_relaxed); }

  // Moves both readings forward by `d`.
  void advance(std::chrono::nanoseconds d);
  // Sets the wall reading only (wall clocks can jump; monotonic cannot).
  void setWallMs(int64_t ms) { wallMs_.store(ms, std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> wallMs_;
  std::atomic<int64_t> monoNs_{0};
};

}  // namespace shoal
