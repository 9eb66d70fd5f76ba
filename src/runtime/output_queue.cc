#include "runtime/output_queue.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "base/assert.h"
#include "runtime/reasons.h"

namespace shoal::runtime {
namespace {

std::string bytesText(size_t n) {
  return std::to_string(n) + (n == 1 ? " byte" : " bytes");
}

}  // namespace

TranslatedOutputQueue::TranslatedOutputQueue(uint64_t generation, OutputQueueLimits limits)
    : generation_(generation), limits_(limits) {
  SHOAL_CHECK(limits_.maxEntries >= 1 && limits_.maxLineBytes >= 1 &&
                  limits_.maxBytes >= limits_.maxLineBytes,
              "output queue limits: maxEntries %zu, maxBytes %zu, maxLineBytes %zu (need "
              "maxEntries >= 1 and maxBytes >= maxLineBytes >= 1)",
              limits_.maxEntries, limits_.maxBytes, limits_.maxLineBytes);
}

void TranslatedOutputQueue::WakeAll::operator()() const {
  MutexLock lock(queue->mu_);  // ordered with the waiter's stop check: no lost wakeup
  queue->cv_.notifyAll();
}

bool TranslatedOutputQueue::fits(size_t bytes) const {
  return entries_.size() < limits_.maxEntries && bytes <= limits_.maxBytes - bytes_;
}

TranslatedOutputQueue::Wait TranslatedOutputQueue::waitOnce(const std::stop_token& cancel,
                                                            const Deadline& deadline) {
  if (cancel.stop_requested()) return Wait::kCancelled;
  if (deadline.isNever()) {
    cv_.wait(mu_);
  } else if (!cv_.waitUntil(mu_, *deadline.at())) {
    return Wait::kTimedOut;
  }
  return Wait::kNotified;
}

void TranslatedOutputQueue::removeTicket(uint64_t ticket) {
  auto it = std::find(waitingTickets_.begin(), waitingTickets_.end(), ticket);
  if (it != waitingTickets_.end()) waitingTickets_.erase(it);
  cv_.notifyAll();  // the next ticket may be the head now
}

Status TranslatedOutputQueue::abortedError() const {
  std::string msg = "translated-output queue of generation " + std::to_string(generation_) +
                    " was aborted (" + std::to_string(abandoned_) + " queued entries abandoned)";
  if (!abortReason_.isOk()) msg += ": " + abortReason_.toString();
  return cancelled(reason::kAborted, msg);
}

Status TranslatedOutputQueue::sealedError() const {
  std::string msg = "translated-output queue of generation " + std::to_string(generation_) +
                    " is sealed; nothing more is admitted";
  msg +=
      sealReason_.isOk() ? " (source reached end of stream)" : " (" + sealReason_.toString() + ")";
  return failedPrecondition(reason::kQueueSealed, msg);
}

Status TranslatedOutputQueue::cancelledError(std::string_view what) const {
  return cancelled(reason::kCancelled, std::string(what) +
                                           " on the translated-output queue of generation " +
                                           std::to_string(generation_) + " was cancelled");
}

Status TranslatedOutputQueue::timedOutError(std::string_view what, std::string_view why) const {
  return deadlineExceeded(why, std::string(what) +
                                   " on the translated-output queue of generation " +
                                   std::to_string(generation_) + " timed out");
}

void TranslatedOutputQueue::sealLocked(Status why) {
  if (sealed_ || aborted_) return;
  sealed_ = true;
  sealReason_ = std::move(why);
  cv_.notifyAll();
}

Status TranslatedOutputQueue::push(std::string wireBytes, const std::stop_token& cancel,
                                   std::optional<std::chrono::nanoseconds> timeout) {
  const size_t size = wireBytes.size();
  // Validate outside the lock (scanning up to a line cap of bytes).
  Status invalid;
  if (size > limits_.maxLineBytes) {
    invalid = resourceExhausted(
        reason::kLineTooLong,
        "a translated event of generation " + std::to_string(generation_) + " encodes to " +
            bytesText(size) + " including its newline, over the " +
            std::to_string(limits_.maxLineBytes) +
            "-byte line cap; the output stream is transport-fatal and the queue is sealed");
  } else if (size == 0 || wireBytes.back() != '\n' ||
             std::memchr(wireBytes.data(), '\n', size - 1) != nullptr) {
    invalid = internalError(
        reason::kNotOneLine,
        "a translated event of generation " + std::to_string(generation_) + " (" + bytesText(size) +
            ") is not exactly one newline-terminated line (an encoder bug); the queue is sealed");
  }

  // Registered before locking and destroyed after unlocking (declared first): the callback
  // takes mu_, and its destructor waits for a callback running on another thread.
  std::optional<std::stop_callback<WakeAll>> onStop;
  if (cancel.stop_possible()) onStop.emplace(cancel, WakeAll{this});
  const Deadline deadline = Deadline::afterOrNever(timeout);

  MutexLock lock(mu_);
  if (aborted_) return abortedError();
  if (sealed_) return sealedError();
  if (!invalid.isOk()) {
    sealLocked(invalid);
    return invalid;
  }
  auto admit = [&]() SHOAL_REQUIRES(mu_) {
    bytes_ += size;
    ++admitted_;
    entries_.push_back(std::move(wireBytes));
    cv_.notifyAll();
    return Status::ok();
  };
  if (waitingTickets_.empty() && fits(size)) return admit();

  const uint64_t ticket = nextTicket_++;
  waitingTickets_.push_back(ticket);
  cv_.notifyAll();  // waitForWaitersForTest
  for (;;) {
    if (aborted_) {
      removeTicket(ticket);
      return abortedError();
    }
    if (sealed_) {
      removeTicket(ticket);
      return sealedError();
    }
    if (waitingTickets_.front() == ticket && fits(size)) {
      waitingTickets_.pop_front();
      return admit();  // notifies: the next ticket may fit too
    }
    switch (waitOnce(cancel, deadline)) {
      case Wait::kNotified:
        break;
      case Wait::kCancelled:
        removeTicket(ticket);
        return cancelledError("a producer's push of " + bytesText(size));
      case Wait::kTimedOut:
        if (waitingTickets_.front() == ticket && fits(size) && !aborted_ && !sealed_) {
          waitingTickets_.pop_front();
          return admit();
        }
        removeTicket(ticket);
        return timedOutError("a producer's push of " + bytesText(size) +
                                 " (the queue stayed full at " + std::to_string(entries_.size()) +
                                 " entries / " + bytesText(bytes_) + ")",
                             reason::kQueueFull);
    }
  }
}

void TranslatedOutputQueue::seal(Status why) {
  MutexLock lock(mu_);
  sealLocked(std::move(why));
}

size_t TranslatedOutputQueue::abort(Status why) {
  MutexLock lock(mu_);
  if (aborted_) return 0;
  aborted_ = true;
  abortReason_ = std::move(why);
  const size_t abandoned = entries_.size();
  abandoned_ = abandoned;
  entries_.clear();
  bytes_ = 0;
  cv_.notifyAll();
  return abandoned;
}

Result<std::optional<std::string>> TranslatedOutputQueue::pop(
    std::optional<std::chrono::nanoseconds> timeout, const std::stop_token& cancel) {
  std::optional<std::stop_callback<WakeAll>> onStop;
  if (cancel.stop_possible()) onStop.emplace(cancel, WakeAll{this});
  const Deadline deadline = Deadline::afterOrNever(timeout);

  MutexLock lock(mu_);
  bool counted = false;
  auto stopWaiting = [&]() SHOAL_REQUIRES(mu_) {
    if (counted) --waitingConsumers_;
    counted = false;
  };
  for (;;) {
    if (aborted_) {
      stopWaiting();
      return abortedError();
    }
    if (!entries_.empty()) {
      stopWaiting();
      std::string entry = std::move(entries_.front());
      entries_.pop_front();
      bytes_ -= entry.size();
      ++popped_;
      cv_.notifyAll();  // room for producers
      return std::optional<std::string>(std::move(entry));
    }
    if (sealed_) {
      stopWaiting();
      drained_ = true;
      cv_.notifyAll();
      return std::optional<std::string>();
    }
    if (!counted) {
      counted = true;
      ++waitingConsumers_;
      cv_.notifyAll();  // waitForWaitersForTest
    }
    switch (waitOnce(cancel, deadline)) {
      case Wait::kNotified:
        break;
      case Wait::kCancelled:
        stopWaiting();
        return cancelledError("the consumer's pop");
      case Wait::kTimedOut:
        if (!entries_.empty() || sealed_ || aborted_) break;  // decide on the next pass
        stopWaiting();
        return timedOutError("the consumer's pop", reason::kTimedOut);
    }
  }
}

Status TranslatedOutputQueue::awaitDrained(const std::stop_token& cancel,
                                           std::optional<std::chrono::nanoseconds> timeout) {
  std::optional<std::stop_callback<WakeAll>> onStop;
  if (cancel.stop_possible()) onStop.emplace(cancel, WakeAll{this});
  const Deadline deadline = Deadline::afterOrNever(timeout);

  MutexLock lock(mu_);
  for (;;) {
    if (drained_) return Status::ok();
    if (aborted_) return abortedError();
    switch (waitOnce(cancel, deadline)) {
      case Wait::kNotified:
        break;
      case Wait::kCancelled:
        return cancelledError("waiting for the flusher to drain");
      case Wait::kTimedOut:
        if (drained_ || aborted_) break;
        return timedOutError("waiting for the flusher to drain (" +
                                 std::to_string(entries_.size()) + " entries still queued)",
                             reason::kTimedOut);
    }
  }
}

OutputQueueStats TranslatedOutputQueue::stats() const {
  MutexLock lock(mu_);
  OutputQueueStats s;
  s.entries = entries_.size();
  s.bytes = bytes_;
  s.blockedProducers = waitingTickets_.size();
  s.admitted = admitted_;
  s.popped = popped_;
  s.abandoned = abandoned_;
  s.sealed = sealed_;
  s.drained = drained_;
  s.aborted = aborted_;
  return s;
}

Status TranslatedOutputQueue::sealReason() const {
  MutexLock lock(mu_);
  return sealReason_;
}

void TranslatedOutputQueue::waitForWaitersForTest(size_t producers, size_t consumers) {
  MutexLock lock(mu_);
  while (waitingTickets_.size() < producers || waitingConsumers_ < consumers) {
    cv_.wait(mu_);
  }
}

}  // namespace shoal::runtime
